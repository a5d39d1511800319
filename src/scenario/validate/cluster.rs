//! `[cluster]`: at least one broker, a request latency range with its min at most its max, an
//! `__consumer_offsets` with partitions, broker racks (all or none, each named, no more than
//! the rack-aware assignors tell apart); and each topic's replication factor against the
//! brokers there are.

use crate::scenario::file::{ClusterFile, TopicFile};
use crate::scenario::members::Invalid;
use crate::scenario::ClusterSpec;
use toml::Spanned;

/// The cluster the topics live on (`topics`: the `[[topics]]` entries, already checked by
/// `topics.rs`, for their replication factors). An error names the offending key, or the
/// topic's entry.
pub(super) fn cluster_spec(
    file: &ClusterFile,
    topics: &[Spanned<TopicFile>],
) -> Result<ClusterSpec, Invalid> {
    let brokers = *file.brokers.get_ref();
    if brokers == 0 {
        return Err((
            Some(file.brokers.span()),
            "cluster.brokers must be at least 1".into(),
        ));
    }
    let latency = *file.request_latency_ms.get_ref();
    if latency.min > latency.max {
        return Err((
            Some(file.request_latency_ms.span()),
            format!(
                "cluster.request_latency_ms: min {} is above max {}",
                latency.min, latency.max
            ),
        ));
    }
    if file.offsets_topic_partitions == 0 {
        return Err((
            None,
            "cluster.offsets_topic_partitions must be at least 1".into(),
        ));
    }
    let broker_racks = match &file.broker_racks {
        None => Vec::new(),
        Some(racks) => {
            let bad = |e: String| Err((Some(racks.span()), e));
            if racks.get_ref().len() != brokers as usize {
                // Kafka's rack-aware placement refuses brokers without a rack among racked ones.
                return bad(format!(
                    "cluster.broker_racks lists {} racks, the cluster has {brokers} brokers (every broker needs one)",
                    racks.get_ref().len()
                ));
            }
            if racks.get_ref().iter().any(|r| r.is_empty()) {
                return bad("cluster.broker_racks: a rack name is empty".into());
            }
            let mut distinct = racks.get_ref().clone();
            distinct.sort();
            distinct.dedup();
            if distinct.len() > crate::assignor::racks::MAX_RACKS {
                return bad(format!(
                    "cluster.broker_racks names {} racks: cgsim tells at most {} apart",
                    distinct.len(),
                    crate::assignor::racks::MAX_RACKS
                ));
            }
            racks.get_ref().clone()
        }
    };
    for t in topics {
        let (span, t) = (t.span(), t.get_ref());
        let rf = t.replication_factor;
        if rf == 0 || rf > brokers {
            // InvalidReplicationFactorException.
            return Err((
                Some(span),
                format!(
                    "topic {:?}: replication_factor {rf} must be between 1 and the {brokers} brokers",
                    t.name
                ),
            ));
        }
    }
    Ok(ClusterSpec {
        brokers,
        latency_min_us: latency.min * 1000,
        latency_max_us: latency.max * 1000,
        offsets_topic_partitions: file.offsets_topic_partitions,
        broker_racks,
        replication_delay_us: file.replication_delay_ms * 1000,
        broker_session_timeout_ms: file.broker_session_timeout_ms,
        leader_election_ms: file.leader_election_ms,
        coordinator_load_ms: file.coordinator_load_ms,
        leader_imbalance_check_interval_ms: file.leader_imbalance_check_interval_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// A `[cluster]` table and the topics on it, as a scenario file writes them.
    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        cluster: ClusterFile,
        #[serde(default)]
        topics: Vec<Spanned<TopicFile>>,
    }

    fn doc(text: &str) -> Doc {
        toml::from_str(text).expect("a valid snippet")
    }

    fn refusal(text: &str) -> Invalid {
        let d = doc(text);
        cluster_spec(&d.cluster, &d.topics).unwrap_err()
    }

    /// The text a span covers.
    fn at(text: &str, e: &Invalid) -> String {
        text[e.0.clone().expect("a span")].to_string()
    }

    #[test]
    fn the_cluster_is_read_with_kafkas_defaults_and_times_in_microseconds() {
        let d = doc(r#"
            [cluster]
            brokers = 3
            request_latency_ms = { min = 2, max = 7 }
            broker_racks = ["a", "b", "a"]

            [[topics]]
            name = "orders"
            partitions = 2
            replication_factor = 3
            "#);
        let c = cluster_spec(&d.cluster, &d.topics).unwrap();
        assert_eq!(c.brokers, 3);
        assert_eq!((c.latency_min_us, c.latency_max_us), (2_000, 7_000));
        assert_eq!(c.broker_racks, ["a", "b", "a"]);
        assert_eq!(c.offsets_topic_partitions, 50);
        assert_eq!(c.replication_delay_us, 5_000);
        let none = cluster_spec(&doc("").cluster, &[]).unwrap();
        assert_eq!(none.brokers, 3);
        assert!(none.broker_racks.is_empty());
    }

    #[test]
    fn a_cluster_without_brokers_or_with_latency_upside_down_is_refused_at_its_key() {
        let text = "[cluster]\nbrokers = 0\n";
        let e = refusal(text);
        assert_eq!(e.1, "cluster.brokers must be at least 1");
        assert_eq!(at(text, &e), "0");
        let text = "[cluster]\nrequest_latency_ms = { min = 9, max = 3 }\n";
        let e = refusal(text);
        assert_eq!(e.1, "cluster.request_latency_ms: min 9 is above max 3");
        assert_eq!(at(text, &e), "{ min = 9, max = 3 }");
        assert_eq!(
            refusal("[cluster]\noffsets_topic_partitions = 0\n"),
            (
                None,
                "cluster.offsets_topic_partitions must be at least 1".into()
            )
        );
    }

    #[test]
    fn every_broker_needs_a_named_rack() {
        let text = "[cluster]\nbrokers = 3\nbroker_racks = [\"a\", \"b\"]\n";
        let e = refusal(text);
        assert_eq!(
            e.1,
            "cluster.broker_racks lists 2 racks, the cluster has 3 brokers (every broker needs one)"
        );
        assert_eq!(at(text, &e), "[\"a\", \"b\"]");
        assert_eq!(
            refusal("[cluster]\nbrokers = 2\nbroker_racks = [\"a\", \"\"]\n").1,
            "cluster.broker_racks: a rack name is empty"
        );
    }

    #[test]
    fn a_replication_factor_above_the_brokers_is_refused_at_its_topic() {
        let text = r#"
            [cluster]
            brokers = 2

            [[topics]]
            name = "orders"
            partitions = 1

            [[topics]]
            name = "prices"
            partitions = 1
            replication_factor = 3
        "#;
        let d = doc(text);
        assert_eq!(
            cluster_spec(&d.cluster, &d.topics).unwrap_err(),
            (
                Some(d.topics[1].span()),
                "topic \"prices\": replication_factor 3 must be between 1 and the 2 brokers".into()
            )
        );
    }
}
