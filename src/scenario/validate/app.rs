//! `[app]`: the application the members run, the partition-local join: its `prices` and
//! `notifications` are declared topics written with keys (a join looks records up by key, so
//! null-key records could never match), and a changelog restore has a positive rate.

use crate::scenario::file::{AppFile, AppKindFile, RecoveryFile};
use crate::scenario::members::Invalid;
use crate::scenario::{JoinApp, ProducerSpec, Recovery, TopicSpec};
use toml::Spanned;

/// The join, if the file has an `[app]`; `producers` say which topics get null keys. An error
/// names the `[app]` table.
pub(super) fn join_app(
    file: Option<&Spanned<AppFile>>,
    topics: &[TopicSpec],
    producers: &[ProducerSpec],
) -> Result<Option<JoinApp>, Invalid> {
    let Some(a) = file else {
        return Ok(None);
    };
    let span = Some(a.span());
    let a = a.get_ref();
    let find = |name: &str| {
        topics
            .iter()
            .position(|t| t.name == name)
            .ok_or_else(|| (span.clone(), format!("app: unknown topic {name:?}")))
    };
    // The one application kind so far; the match makes a new kind a compile error here.
    match a.kind {
        AppKindFile::LocalJoin => {}
    }
    let (prices, notifications) = (find(&a.prices)?, find(&a.notifications)?);
    for t in [prices, notifications] {
        if producers.iter().any(|p| p.topic == t && !p.kind.is_keyed()) {
            return Err((
                span,
                format!("app: the join needs keyed records in {:?}", topics[t].name),
            ));
        }
    }
    if a.restore_records_per_sec == 0 {
        return Err((span, "app.restore_records_per_sec must be positive".into()));
    }
    Ok(Some(JoinApp {
        prices,
        notifications,
        wait_for_prices_ms: a.wait_for_prices_ms,
        recovery: match a.recovery {
            RecoveryFile::None => Recovery::None,
            RecoveryFile::Changelog => Recovery::Changelog,
            RecoveryFile::Standby => Recovery::Standby,
        },
        restore_records_per_sec: a.restore_records_per_sec,
        pause_during_restore: a.pause_during_restore,
        keep_state_on_revoke: a.keep_state_on_revoke,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ProducerKind;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Doc {
        app: Option<Spanned<AppFile>>,
    }

    fn app(text: &str) -> Option<Spanned<AppFile>> {
        toml::from_str::<Doc>(text).expect("a valid snippet").app
    }

    fn topics() -> Vec<TopicSpec> {
        ["notifications", "prices"]
            .map(|name| TopicSpec {
                name: name.into(),
                partitions: 2,
                resizes: Vec::new(),
                replication_factor: 1,
            })
            .into()
    }

    /// A producer of `topic` (an index into `topics()`), keyed or not.
    fn producer(topic: usize, keyed: bool) -> ProducerSpec {
        ProducerSpec {
            topic,
            start_ms: 0,
            end_ms: 1_000,
            kind: if keyed {
                ProducerKind::Script {
                    keys: vec!["AAPL".into()],
                    per_key: 1,
                    interval_ms: 1,
                }
            } else {
                ProducerKind::NullKeys { records_per_sec: 1 }
            },
            stream_partitioner: None,
            stream_partitioner_keys: None,
        }
    }

    const JOIN: &str = r#"
        [app]
        kind = "local_join"
        prices = "prices"
        notifications = "notifications"
        recovery = "changelog"
    "#;

    #[test]
    fn the_join_reads_its_topics_by_index_with_kafka_streams_defaults() {
        let a = join_app(app(JOIN).as_ref(), &topics(), &[producer(1, true)])
            .unwrap()
            .expect("an app");
        assert_eq!((a.prices, a.notifications), (1, 0));
        assert_eq!(a.recovery, Recovery::Changelog);
        assert_eq!(a.restore_records_per_sec, 1_000);
        assert_eq!(a.wait_for_prices_ms, 0);
        assert!(!a.pause_during_restore && !a.keep_state_on_revoke);
        assert!(join_app(None, &topics(), &[]).unwrap().is_none());
    }

    #[test]
    fn the_join_is_refused_over_null_keys_or_an_unknown_topic() {
        let file = app(JOIN);
        let e = join_app(file.as_ref(), &topics(), &[producer(0, false)]).unwrap_err();
        assert_eq!(
            e,
            (
                Some(file.as_ref().unwrap().span()),
                "app: the join needs keyed records in \"notifications\"".into()
            )
        );
        let unknown = app(&JOIN.replace("\"prices\"\n", "\"quotes\"\n"));
        assert_eq!(
            join_app(unknown.as_ref(), &topics(), &[]).unwrap_err().1,
            "app: unknown topic \"quotes\""
        );
        let stalled = app(&format!("{JOIN}restore_records_per_sec = 0\n"));
        assert_eq!(
            join_app(stalled.as_ref(), &topics(), &[]).unwrap_err().1,
            "app.restore_records_per_sec must be positive"
        );
    }
}
