//! `[group]` and the variant run: the chosen variant applied to the group's assignor list and
//! protocol (a built-in or one of the file's `[variants]`), the group's consumer and broker
//! settings held to Kafka's bounds, and the notices for settings the run does not apply
//! (classic-only settings under the consumer protocol, follower fetching without racks).

use super::{BUILT_IN_VARIANTS, DEFAULT_VARIANT};
use crate::scenario::file::{
    CommitAfterBatchFile, GroupFile, MemberFile, OffsetResetFile, Protocol, VariantFile,
};
use crate::scenario::members::{Invalid, MAX_SESSION_TIMEOUT_MS, MIN_SESSION_TIMEOUT_MS};
use crate::scenario::{CommitAfterBatch, GroupSpec, OffsetReset};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// The group's protocol and assignor list once the variant run is applied.
#[derive(Debug, PartialEq)]
pub(super) struct AppliedVariant {
    /// The variant's name (`default` when none is chosen): the scenario's `variant`.
    pub name: String,
    pub protocol: Protocol,
    /// The assignor list a member without its own takes.
    pub assignors: Vec<String>,
    /// Where that list is written (the group's key or the variant's table), for its errors.
    pub assignors_span: Option<Range<usize>>,
    /// The variant sets the assignors: members' own lists give way to it.
    pub clear_member_assignors: bool,
}

/// `chosen` (`--variant`, if any) over the group's `protocol` and `assignors`. The file's own
/// `[variants]` win over a built-in of the same name; `default` not among them is the file as
/// written. An unknown name is refused with the names the scenario has.
pub(super) fn apply_variant(
    g: &GroupFile,
    variants: &BTreeMap<String, Spanned<VariantFile>>,
    chosen: Option<&String>,
) -> Result<AppliedVariant, Invalid> {
    let mut protocol = *g.protocol.get_ref();
    let mut group_assignors = g.assignors.get_ref().clone();
    let mut assignors_span = Some(g.assignors.span());
    let mut clear_member_assignors = false;
    let variant = chosen.cloned().unwrap_or_else(|| DEFAULT_VARIANT.into());
    let chosen = chosen.filter(|v| v.as_str() != DEFAULT_VARIANT || variants.contains_key(*v));
    if let Some(name) = chosen {
        if let Some(v) = variants.get(name) {
            assignors_span = Some(v.span());
            let v = v.get_ref();
            if let Some(a) = &v.assignors {
                group_assignors = a.clone();
                clear_member_assignors = true;
            }
            if let Some(p) = v.protocol {
                protocol = p;
            }
        } else {
            match name.as_str() {
                "eager" => group_assignors = vec!["range".into()],
                "cooperative" => group_assignors = vec!["cooperative-sticky".into()],
                "consumer" => {
                    protocol = Protocol::Consumer;
                    group_assignors = vec!["uniform".into()];
                }
                _ => {
                    let mut known: Vec<&str> = BUILT_IN_VARIANTS.to_vec();
                    known.extend(variants.keys().map(String::as_str));
                    return Err((
                        None,
                        format!(
                            "unknown variant {name:?} (this scenario has: {})",
                            known.join(", ")
                        ),
                    ));
                }
            }
            clear_member_assignors = true;
        }
    }
    Ok(AppliedVariant {
        name: variant,
        protocol,
        assignors: group_assignors,
        assignors_span,
        clear_member_assignors,
    })
}

/// The group's settings under `protocol` (the variant's): the classic session and heartbeat
/// within the broker's bounds, the KIP-848 ones in order, a remote assignor only where the
/// consumer protocol runs and only one the broker has. An error names the offending key when
/// it has a span of its own.
pub(super) fn group_spec(g: &GroupFile, protocol: Protocol) -> Result<GroupSpec, Invalid> {
    let session = *g.session_timeout_ms.get_ref();
    if !(MIN_SESSION_TIMEOUT_MS..=MAX_SESSION_TIMEOUT_MS).contains(&session) {
        return Err((
            Some(g.session_timeout_ms.span()),
            format!(
                "group.session_timeout_ms = {session} is outside the broker's bounds \
                 [{MIN_SESSION_TIMEOUT_MS}, {MAX_SESSION_TIMEOUT_MS}] (Kafka answers INVALID_SESSION_TIMEOUT)"
            ),
        ));
    }
    let heartbeat = *g.heartbeat_interval_ms.get_ref();
    if heartbeat == 0 || heartbeat >= session {
        return Err((
            Some(g.heartbeat_interval_ms.span()),
            format!("group.heartbeat_interval_ms = {heartbeat} must be positive and below session_timeout_ms ({session})"),
        ));
    }
    if *g.max_poll_interval_ms.get_ref() == 0 {
        return Err((
            Some(g.max_poll_interval_ms.span()),
            "group.max_poll_interval_ms must be positive".into(),
        ));
    }
    if *g.max_poll_records.get_ref() == 0 {
        return Err((
            Some(g.max_poll_records.span()),
            "group.max_poll_records must be at least 1".into(),
        ));
    }
    if g.auto_commit_interval_ms == 0
        || g.fetch_max_wait_ms == 0
        || g.retry_backoff_ms == 0
        || g.retry_backoff_max_ms == 0
    {
        return Err((
            None,
            "group.auto_commit_interval_ms, fetch_max_wait_ms, retry_backoff_ms and retry_backoff_max_ms must be positive".into(),
        ));
    }
    let group = GroupSpec {
        group_id: g.group_id.clone(),
        protocol,
        session_timeout_ms: session,
        heartbeat_interval_ms: heartbeat,
        max_poll_interval_ms: *g.max_poll_interval_ms.get_ref(),
        initial_rebalance_delay_ms: g.initial_rebalance_delay_ms,
        enable_auto_commit: g.enable_auto_commit,
        auto_commit_interval_ms: g.auto_commit_interval_ms,
        auto_offset_reset: match g.auto_offset_reset {
            OffsetResetFile::Earliest => OffsetReset::Earliest,
            OffsetResetFile::Latest => OffsetReset::Latest,
        },
        max_poll_records: *g.max_poll_records.get_ref(),
        record_processing_us: g.record_processing_us,
        fetch_max_wait_ms: g.fetch_max_wait_ms,
        retry_backoff_ms: g.retry_backoff_ms,
        retry_backoff_max_ms: g.retry_backoff_max_ms,
        request_timeout_ms: g.request_timeout_ms,
        poll_timeout_ms: g.poll_timeout_ms,
        commit_after_batch: match g.commit_after_batch {
            CommitAfterBatchFile::None => CommitAfterBatch::None,
            CommitAfterBatchFile::Sync => CommitAfterBatch::Sync,
            CommitAfterBatchFile::Async => CommitAfterBatch::Async,
        },
        commit_on_revoke: g.commit_on_revoke,
        on_partitions_revoked_ms: g.on_partitions_revoked_ms,
        on_partitions_assigned_ms: g.on_partitions_assigned_ms,
        metadata_max_age_ms: g.metadata_max_age_ms,
        fetch_from_follower: g.fetch_from_follower,
        remote_assignor: g.remote_assignor.as_ref().map(|a| a.get_ref().clone()),
        consumer_heartbeat_interval_ms: g.consumer_heartbeat_interval_ms,
        consumer_session_timeout_ms: g.consumer_session_timeout_ms,
        consumer_assignment_interval_ms: g.consumer_assignment_interval_ms,
        migration_policy: g.migration_policy,
    };
    if group.consumer_heartbeat_interval_ms == 0
        || group.consumer_heartbeat_interval_ms >= group.consumer_session_timeout_ms
    {
        return Err((
            None,
            format!(
                "group.consumer_heartbeat_interval_ms = {} must be positive and below consumer_session_timeout_ms ({})",
                group.consumer_heartbeat_interval_ms, group.consumer_session_timeout_ms
            ),
        ));
    }
    if let Some(a) = &g.remote_assignor {
        if !crate::assignor::SERVER_ASSIGNORS.contains(&a.get_ref().as_str()) {
            return Err((
                Some(a.span()),
                format!(
                    "group.remote_assignor {:?} is not a server assignor the broker has (uniform, range)",
                    a.get_ref()
                ),
            ));
        }
        if protocol == Protocol::Classic {
            return Err((
                Some(a.span()),
                "group.remote_assignor applies only to protocol = \"consumer\" (Kafka's ConsumerConfig refuses group.remote.assignor with group.protocol=classic)".into(),
            ));
        }
    }
    if group.metadata_max_age_ms == 0 {
        return Err((None, "group.metadata_max_age_ms must be positive".into()));
    }
    Ok(group)
}

/// Settings the file sets that the run does not apply, each in words: the classic-only ones
/// under the consumer protocol, and follower fetching without broker racks to match.
pub(super) fn notices(
    g: &GroupFile,
    members: &[Spanned<MemberFile>],
    group: &GroupSpec,
    broker_racks: &[String],
) -> Vec<String> {
    let mut notices = if group.protocol == Protocol::Consumer {
        classic_only_settings(g, members)
    } else {
        Vec::new()
    };
    if group.fetch_from_follower && broker_racks.is_empty() {
        // RackAwareReplicaSelector matches client.rack against broker.rack: without broker
        // racks every fetch goes to the leader.
        notices.push(
            "group.fetch_from_follower = true does nothing without cluster.broker_racks (the \
             replica selector matches a member's client_rack against the brokers' racks)"
                .into(),
        );
    }
    notices
}

/// Classic-only client settings the file sets, which the consumer protocol does not apply (as
/// in the Java client: the broker assigns and decides the session and heartbeat timing).
fn classic_only_settings(g: &GroupFile, members: &[Spanned<MemberFile>]) -> Vec<String> {
    let mut notices = Vec::new();
    let mut note = |key: String, value: String, instead: &str| {
        notices.push(format!(
            "{key} = {value} does not apply under the consumer protocol ({instead})"
        ));
    };
    if !g.assignors.span().is_empty() {
        note(
            "group.assignors".into(),
            format!("{:?}", g.assignors.get_ref()),
            "the broker's server assignor assigns; see remote_assignor",
        );
    }
    if !g.session_timeout_ms.span().is_empty() {
        note(
            "group.session_timeout_ms".into(),
            g.session_timeout_ms.get_ref().to_string(),
            "the broker's group.consumer.session.timeout.ms decides: consumer_session_timeout_ms",
        );
    }
    if !g.heartbeat_interval_ms.span().is_empty() {
        note(
            "group.heartbeat_interval_ms".into(),
            g.heartbeat_interval_ms.get_ref().to_string(),
            "the broker hands out group.consumer.heartbeat.interval.ms: consumer_heartbeat_interval_ms",
        );
    }
    for m in members {
        let m = m.get_ref();
        if let Some(a) = &m.assignors {
            note(
                format!("members {:?} assignors", m.name),
                format!("{a:?}"),
                "the broker's server assignor assigns",
            );
        }
        if let Some(s) = m.session_timeout_ms {
            note(
                format!("members {:?} session_timeout_ms", m.name),
                s.to_string(),
                "the broker's session timeout applies",
            );
        }
        if let Some(h) = m.heartbeat_interval_ms {
            note(
                format!("members {:?} heartbeat_interval_ms", m.name),
                h.to_string(),
                "the broker's heartbeat interval applies",
            );
        }
    }
    notices
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// The keys this file reads, as a scenario file writes them.
    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        group: GroupFile,
        #[serde(default)]
        variants: BTreeMap<String, Spanned<VariantFile>>,
        #[serde(default)]
        members: Vec<Spanned<MemberFile>>,
    }

    fn doc(text: &str) -> Doc {
        toml::from_str(text).expect("a valid snippet")
    }

    fn group_refusal(text: &str) -> Invalid {
        let g = doc(text).group;
        group_spec(&g, *g.protocol.get_ref()).unwrap_err()
    }

    const UPGRADE: &str = r#"
        [group]
        assignors = ["range"]

        [variants.sticky]
        assignors = ["cooperative-sticky"]

        [variants.eager]
        protocol = "consumer"
    "#;

    #[test]
    fn without_a_variant_the_group_runs_as_written() {
        let d = doc(UPGRADE);
        for chosen in [None, Some("default".to_string())] {
            let v = apply_variant(&d.group, &d.variants, chosen.as_ref()).unwrap();
            assert_eq!(v.name, "default");
            assert_eq!(v.protocol, Protocol::Classic);
            assert_eq!(v.assignors, ["range"]);
            assert_eq!(v.assignors_span, Some(d.group.assignors.span()));
            assert!(!v.clear_member_assignors);
        }
    }

    #[test]
    fn a_variant_replaces_the_assignors_and_the_files_own_win_over_built_ins() {
        let d = doc(UPGRADE);
        let v = |name: &str| apply_variant(&d.group, &d.variants, Some(&name.into())).unwrap();
        let sticky = v("sticky");
        assert_eq!(sticky.assignors, ["cooperative-sticky"]);
        assert_eq!(sticky.assignors_span, Some(d.variants["sticky"].span()));
        assert!(sticky.clear_member_assignors);
        // The file's `eager` sets only the protocol: the group's list stays, members' too.
        let eager = v("eager");
        assert_eq!(
            (eager.protocol, eager.assignors),
            (Protocol::Consumer, vec!["range".into()])
        );
        assert!(!eager.clear_member_assignors);
        let cooperative = v("cooperative");
        assert_eq!(cooperative.assignors, ["cooperative-sticky"]);
        assert!(cooperative.clear_member_assignors);
        let consumer = v("consumer");
        assert_eq!(
            (consumer.protocol, consumer.assignors),
            (Protocol::Consumer, vec!["uniform".into()])
        );
    }

    #[test]
    fn an_unknown_variant_is_refused_with_the_names_the_scenario_has() {
        let d = doc(UPGRADE);
        assert_eq!(
            apply_variant(&d.group, &d.variants, Some(&"sticki".into())).unwrap_err(),
            (
                None,
                "unknown variant \"sticki\" (this scenario has: eager, cooperative, consumer, default, eager, sticky)".into()
            )
        );
    }

    #[test]
    fn the_group_takes_kafkas_defaults_and_the_protocol_given() {
        let g = doc("[group]\ngroup_id = \"payments\"\nauto_offset_reset = \"earliest\"\n").group;
        let spec = group_spec(&g, Protocol::Consumer).unwrap();
        assert_eq!(spec.group_id, "payments");
        assert_eq!(spec.protocol, Protocol::Consumer);
        assert_eq!(spec.auto_offset_reset, OffsetReset::Earliest);
        assert_eq!(
            (spec.session_timeout_ms, spec.heartbeat_interval_ms),
            (45_000, 3_000)
        );
        assert_eq!(spec.commit_after_batch, CommitAfterBatch::None);
        assert_eq!(spec.remote_assignor, None);
    }

    #[test]
    fn a_session_timeout_outside_the_brokers_bounds_is_refused_at_its_key() {
        let text = "[group]\nsession_timeout_ms = 1000\n";
        let e = group_refusal(text);
        assert_eq!(
            e.1,
            "group.session_timeout_ms = 1000 is outside the broker's bounds [6000, 1800000] (Kafka answers INVALID_SESSION_TIMEOUT)"
        );
        assert_eq!(&text[e.0.unwrap()], "1000");
        assert_eq!(
            group_refusal("[group]\nheartbeat_interval_ms = 45000\n").1,
            "group.heartbeat_interval_ms = 45000 must be positive and below session_timeout_ms (45000)"
        );
        assert_eq!(
            group_refusal("[group]\nmetadata_max_age_ms = 0\n"),
            (None, "group.metadata_max_age_ms must be positive".into())
        );
    }

    #[test]
    fn a_remote_assignor_needs_the_consumer_protocol_and_a_server_assignor() {
        let g = doc("[group]\nremote_assignor = \"range\"\n").group;
        assert!(group_spec(&g, Protocol::Consumer).is_ok());
        assert_eq!(
            group_spec(&g, Protocol::Classic).unwrap_err().1,
            "group.remote_assignor applies only to protocol = \"consumer\" (Kafka's ConsumerConfig refuses group.remote.assignor with group.protocol=classic)"
        );
        let g = doc("[group]\nremote_assignor = \"sticky\"\n").group;
        assert_eq!(
            group_spec(&g, Protocol::Consumer).unwrap_err().1,
            "group.remote_assignor \"sticky\" is not a server assignor the broker has (uniform, range)"
        );
    }

    #[test]
    fn classic_only_settings_written_are_noticed_under_the_consumer_protocol() {
        let d = doc(r#"
            [group]
            session_timeout_ms = 30000
            fetch_from_follower = true

            [[members]]
            name = "c"
            heartbeat_interval_ms = 2000
            "#);
        let consumer = group_spec(&d.group, Protocol::Consumer).unwrap();
        assert_eq!(
            notices(&d.group, &d.members, &consumer, &["a".into()]),
            [
                "group.session_timeout_ms = 30000 does not apply under the consumer protocol (the broker's group.consumer.session.timeout.ms decides: consumer_session_timeout_ms)",
                "members \"c\" heartbeat_interval_ms = 2000 does not apply under the consumer protocol (the broker's heartbeat interval applies)",
            ]
        );
        // Classic applies them all; only follower fetching without racks is noticed.
        let classic = group_spec(&d.group, Protocol::Classic).unwrap();
        assert_eq!(
            notices(&d.group, &d.members, &classic, &[]),
            ["group.fetch_from_follower = true does nothing without cluster.broker_racks (the replica selector matches a member's client_rack against the brokers' racks)"]
        );
        assert!(notices(&d.group, &d.members, &classic, &["a".into()]).is_empty());
    }
}
