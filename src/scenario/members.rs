//! A member entry into the member it makes: its assignors and the rebalance protocol they
//! allow, its consumer settings (the group's, with the entry's own over them), its
//! subscription and static id; and a restart's `set` entries over the entry (an upgrade by
//! restart, KIP-726's bounces).

use super::file::{MemberFile, Protocol};
use super::limits;
use super::{ClientSettings, GroupSpec, MemberSpec};
use crate::assignor::{by_name, RebalanceProtocol};
use std::ops::Range;

/// A validation error: the byte span of the offending entry (for its line) and what is wrong.
pub(super) type Invalid = (Option<Range<usize>>, String);

/// Kafka's broker bounds on a classic member's session timeout
/// (`group.min.session.timeout.ms`, `group.max.session.timeout.ms`).
pub(super) const MIN_SESSION_TIMEOUT_MS: u64 = 6_000;
pub(super) const MAX_SESSION_TIMEOUT_MS: u64 = 1_800_000;

/// What every member is built against: the group's settings, the assignor list a member
/// without its own takes (a variant's, which also overrides the members' own lists) and the
/// topics.
pub(super) struct MemberContext<'a> {
    pub group: &'a GroupSpec,
    pub group_assignors: &'a [String],
    /// Where the group's (or the variant's) list is written, for its errors.
    pub assignors_span: Option<Range<usize>>,
    /// A variant that sets the assignors replaces every member's own list.
    pub clear_member_assignors: bool,
    /// Every topic's name (a member without `topics` subscribes to all).
    pub topics: Vec<String>,
}

/// The member `name` an entry makes (`number`: its place in a `count` family, from 1, for the
/// `{n}` of a static id template). Errors carry `span`, the entry that is wrong.
pub(super) fn member_spec(
    m: &MemberFile,
    name: String,
    number: usize,
    span: Option<Range<usize>>,
    cx: &MemberContext,
) -> Result<MemberSpec, Invalid> {
    let bad = |e: String| (span.clone(), e);
    // A member may use another protocol than the group's (`group.protocol` is each client's
    // own setting): a mixed group is what the online migration between them goes through.
    let protocol = m.protocol.unwrap_or(cx.group.protocol);
    let remote_assignor = m
        .remote_assignor
        .clone()
        .or_else(|| cx.group.remote_assignor.clone());
    let (assignors, rebalance_protocol) = match protocol {
        // ConsumerConfig refuses `group.remote.assignor` with `group.protocol=classic`.
        Protocol::Classic if m.remote_assignor.is_some() => {
            return Err(bad(format!(
                "member {:?}: remote_assignor applies only to protocol = \"consumer\" \
                 (Kafka's ConsumerConfig refuses group.remote.assignor with group.protocol=classic)",
                m.name
            )))
        }
        Protocol::Classic => {
            let (assignors, a_span) = match (&m.assignors, cx.clear_member_assignors) {
                (Some(a), false) => (a.clone(), span.clone()),
                _ => (cx.group_assignors.to_vec(), cx.assignors_span.clone()),
            };
            let rebalance_protocol = client_protocol(&assignors).map_err(|e| (a_span, e))?;
            (assignors, rebalance_protocol)
        }
        // The broker assigns: partition.assignment.strategy does not apply; the member asks
        // for a server assignor (or lets the broker choose uniform). Reconciliation is
        // incremental, like COOPERATIVE.
        Protocol::Consumer => {
            if let Some(a) = remote_assignor.as_deref().filter(|a| !crate::assignor::SERVER_ASSIGNORS.contains(a)) {
                return Err(bad(format!(
                    "member {:?}: remote_assignor {a:?} is not a server assignor the broker has (uniform, range)",
                    m.name
                )));
            }
            let shown = remote_assignor.clone().unwrap_or_else(|| "uniform".into());
            (vec![shown], RebalanceProtocol::Cooperative)
        }
    };
    let mut settings = member_settings(m, cx.group).map_err(bad)?;
    if protocol == Protocol::Consumer {
        // The broker's session timeout and heartbeat interval apply, not the client's.
        settings.session_timeout_ms = cx.group.consumer_session_timeout_ms;
        settings.heartbeat_interval_ms = cx.group.consumer_heartbeat_interval_ms;
    }
    let topics = match &m.topics {
        Some(ts) => {
            if let Some(t) = ts.iter().find(|t| !cx.topics.contains(t)) {
                return Err(bad(format!(
                    "member {:?} subscribes to unknown topic {t:?}",
                    m.name
                )));
            }
            ts.clone()
        }
        None => cx.topics.clone(),
    };
    Ok(MemberSpec {
        client_id: m
            .client_id
            .clone()
            .unwrap_or_else(|| format!("consumer-{}-1", cx.group.group_id)),
        name,
        // With `count`, a static id is a template: `{n}` is each member's number (pod-{n}).
        group_instance_id: m
            .group_instance_id
            .as_ref()
            .map(|id| id.replace("{n}", &number.to_string())),
        assignors,
        rebalance_protocol,
        topics,
        start_ms: Some(m.start_ms.unwrap_or(0)),
        settings,
        protocol,
        remote_assignor,
        client_rack: m.client_rack.clone().filter(|r| !r.is_empty()),
    })
}

/// A restart's `set` entries (`KEY=VALUE`, values as `--set` reads them) over the member's
/// entry as it stands: later entries win over earlier ones.
pub(super) fn overlay_restart_set(
    entry: &MemberFile,
    set: &[String],
) -> Result<MemberFile, String> {
    let mut doc = toml_edit::DocumentMut::new();
    doc.insert("name", toml_edit::value(entry.name.as_str()));
    for item in set {
        let (key, raw) = item
            .split_once('=')
            .ok_or_else(|| format!("set entry {item:?}: expected KEY=VALUE"))?;
        let key = key.trim();
        if !MemberFile::RESTART_KEYS.contains(&key) {
            return Err(format!(
                "set entry {item:?}: {key:?} is not a setting a restart can change (it can change: {})",
                MemberFile::RESTART_KEYS.join(", ")
            ));
        }
        let value = super::value::parse_value(raw.trim())
            .map_err(|m| format!("set entry {item:?}: {m}"))?;
        doc.insert(key, toml_edit::Item::Value(value));
    }
    let over: MemberFile = toml::from_str(&doc.to_string()).map_err(|e| {
        format!(
            "set entries {set:?}: {}",
            e.message().trim_end_matches('\n')
        )
    })?;
    Ok(entry.overlaid(over))
}

/// The client's protocol: the highest protocol every listed assignor supports
/// (`ConsumerCoordinator`), so `[cooperative-sticky, range]` is EAGER.
pub(super) fn client_protocol(assignors: &[String]) -> Result<RebalanceProtocol, String> {
    if assignors.is_empty() {
        return Err("assignors must list at least one assignor".into());
    }
    let mut common = vec![RebalanceProtocol::Eager, RebalanceProtocol::Cooperative];
    for name in assignors {
        let a = by_name(name).map_err(|e| format!("assignors: {e}"))?;
        if a.is_server_side() {
            return Err(format!(
                "assignors: {name:?} is a KIP-848 server-side assignor; the classic protocol needs client assignors"
            ));
        }
        common.retain(|p| a.supported_protocols().contains(p));
    }
    common
        .into_iter()
        .max()
        .ok_or_else(|| format!("assignors {assignors:?} have no rebalance protocol in common"))
}

/// A member's consumer settings: the group's, with its entry's own over them, held to the
/// same rules as the group's.
fn member_settings(m: &MemberFile, g: &GroupSpec) -> Result<ClientSettings, String> {
    let s = ClientSettings {
        record_processing_us: m.record_processing_us.unwrap_or(g.record_processing_us),
        max_poll_records: m.max_poll_records.unwrap_or(g.max_poll_records),
        session_timeout_ms: m.session_timeout_ms.unwrap_or(g.session_timeout_ms),
        heartbeat_interval_ms: m.heartbeat_interval_ms.unwrap_or(g.heartbeat_interval_ms),
        max_poll_interval_ms: m.max_poll_interval_ms.unwrap_or(g.max_poll_interval_ms),
        on_partitions_revoked_ms: m
            .on_partitions_revoked_ms
            .unwrap_or(g.on_partitions_revoked_ms),
        on_partitions_assigned_ms: m
            .on_partitions_assigned_ms
            .unwrap_or(g.on_partitions_assigned_ms),
    };
    let name = &m.name;
    for (key, value) in [
        ("record_processing_us", s.record_processing_us),
        ("max_poll_interval_ms", s.max_poll_interval_ms),
        ("on_partitions_revoked_ms", s.on_partitions_revoked_ms),
        ("on_partitions_assigned_ms", s.on_partitions_assigned_ms),
    ] {
        if value > limits::MAX_TIME_MS {
            return Err(format!(
                "member {name:?}: {key} = {value} is above the limit of {} (the limit of every time, Kafka's int maximum)",
                limits::MAX_TIME_MS
            ));
        }
    }
    if s.max_poll_records > limits::MAX_POLL_RECORDS {
        return Err(format!(
            "member {name:?}: max_poll_records = {} is above the limit of {}",
            s.max_poll_records,
            limits::MAX_POLL_RECORDS
        ));
    }
    if !(MIN_SESSION_TIMEOUT_MS..=MAX_SESSION_TIMEOUT_MS).contains(&s.session_timeout_ms) {
        return Err(format!(
            "member {name:?}: session_timeout_ms = {} is outside the broker's bounds \
             [{MIN_SESSION_TIMEOUT_MS}, {MAX_SESSION_TIMEOUT_MS}] (Kafka answers INVALID_SESSION_TIMEOUT)",
            s.session_timeout_ms
        ));
    }
    if s.heartbeat_interval_ms == 0 || s.heartbeat_interval_ms >= s.session_timeout_ms {
        return Err(format!(
            "member {name:?}: heartbeat_interval_ms = {} must be positive and below its session_timeout_ms ({})",
            s.heartbeat_interval_ms, s.session_timeout_ms
        ));
    }
    if s.max_poll_interval_ms == 0 {
        return Err(format!(
            "member {name:?}: max_poll_interval_ms must be positive"
        ));
    }
    if s.max_poll_records == 0 {
        return Err(format!(
            "member {name:?}: max_poll_records must be at least 1"
        ));
    }
    Ok(s)
}
