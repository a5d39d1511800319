//! `[[producers]]` and `[arrival]`: each producer writes a declared topic, within the run, as
//! a stream (`records_per_sec`, null-key or keyed) or a script (`per_key`), with only the keys
//! its kind uses; a topic is written by null-key streams or by keyed producers, never both (the
//! partitioner spreads the two differently). Arrival's extra fetch delays: a range in order and
//! no more brokers than the cluster has.

use crate::scenario::file::{
    ArrivalFile, KeyDistributionFile, ProducerFile, StreamPartitionerFile,
};
use crate::scenario::members::Invalid;
use crate::scenario::{
    ArrivalSpec, KeyDistribution, ProducerKind, ProducerSpec, StreamPartitioner, TopicSpec,
};
use toml::Spanned;

/// The producers in file order, each writing `topics[topic]` from `start_ms` (default 0) until
/// `end_ms` (default `duration_ms`). An error names the producer's entry and topic.
pub(super) fn producer_specs(
    entries: &[Spanned<ProducerFile>],
    topics: &[TopicSpec],
    duration_ms: u64,
) -> Result<Vec<ProducerSpec>, Invalid> {
    let mut producers: Vec<ProducerSpec> = Vec::new();
    for p in entries {
        let span = Some(p.span());
        let p = p.get_ref();
        let bad =
            |m: String| -> Invalid { (span.clone(), format!("producer for {:?}: {m}", p.topic)) };
        let topic = topics
            .iter()
            .position(|t| t.name == p.topic)
            .ok_or_else(|| bad("unknown topic".into()))?;
        let keys: Option<Vec<String>> = match (&p.keys, p.key_count) {
            (Some(_), Some(_)) => return Err(bad("give keys or key_count, not both".into())),
            (Some(k), None) if k.is_empty() => return Err(bad("keys is empty".into())),
            (Some(k), None) => Some(k.clone()),
            (None, Some(0)) => return Err(bad("key_count must be at least 1".into())),
            (None, Some(n)) => Some((0..n).map(|i| format!("key-{i}")).collect()),
            (None, None) => None,
        };
        let start_ms = p.start_ms.unwrap_or(0);
        let end_ms = p.end_ms.unwrap_or(duration_ms);
        if start_ms >= end_ms {
            return Err(bad(format!(
                "start_ms {start_ms} is not before end_ms {end_ms}"
            )));
        }
        let kind = match (p.records_per_sec, p.per_key) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "give records_per_sec (a stream) or per_key (a script), not both".into(),
                ))
            }
            (None, None) => return Err(bad("needs records_per_sec or per_key".into())),
            (Some(rate), None) => {
                if p.interval_ms.is_some() {
                    return Err(bad("interval_ms applies to a script (per_key)".into()));
                }
                match keys {
                    None if p.key_distribution.is_some() => {
                        return Err(bad("key_distribution needs keys or key_count".into()))
                    }
                    None => ProducerKind::NullKeys {
                        records_per_sec: rate,
                    },
                    Some(keys) => ProducerKind::Keyed {
                        records_per_sec: rate,
                        keys,
                        distribution: match p.key_distribution.unwrap_or(KeyDistributionFile::Cycle)
                        {
                            KeyDistributionFile::Cycle => KeyDistribution::Cycle,
                            KeyDistributionFile::Uniform => KeyDistribution::Uniform,
                            KeyDistributionFile::Skewed => KeyDistribution::Skewed,
                        },
                    },
                }
            }
            (None, Some(per_key)) => {
                let keys =
                    keys.ok_or_else(|| bad("a script (per_key) needs keys or key_count".into()))?;
                if p.key_distribution.is_some() {
                    return Err(bad(
                        "key_distribution applies to a stream (records_per_sec)".into(),
                    ));
                }
                ProducerKind::Script {
                    keys,
                    per_key,
                    interval_ms: p.interval_ms.unwrap_or(1),
                }
            }
        };
        if p.stream_partitioner.is_some() && !kind.is_keyed() {
            return Err(bad("a stream partitioner needs keyed records".into()));
        }
        if p.stream_partitioner_keys.is_some() && p.stream_partitioner.is_none() {
            return Err(bad(
                "stream_partitioner_keys needs a stream_partitioner".into()
            ));
        }
        if let Some(other) = producers
            .iter()
            .find(|q| q.topic == topic && q.kind.is_keyed() != kind.is_keyed())
        {
            let _ = other;
            return Err(bad(
                "a topic's producers must all be keyed or all null-keyed".into(),
            ));
        }
        producers.push(ProducerSpec {
            topic,
            start_ms,
            end_ms,
            kind,
            stream_partitioner: p.stream_partitioner.map(|s| match s {
                StreamPartitionerFile::Default => StreamPartitioner::Default,
                StreamPartitionerFile::Drop => StreamPartitioner::Drop,
                StreamPartitionerFile::Broadcast => StreamPartitioner::Broadcast,
            }),
            stream_partitioner_keys: p.stream_partitioner_keys.clone(),
        });
    }
    Ok(producers)
}

/// The extra fetch delays (none by default), for a cluster of `brokers`.
pub(super) fn arrival_spec(file: &ArrivalFile, brokers: u32) -> Result<ArrivalSpec, Invalid> {
    let partition_lag = file.partition_lag_ms.as_ref();
    let arrival = ArrivalSpec {
        partition_lag_min_ms: partition_lag.map_or(0, |l| l.get_ref().min),
        partition_lag_max_ms: partition_lag.map_or(0, |l| l.get_ref().max),
        broker_lag_ms: file.broker_lag_ms.clone(),
    };
    if arrival.partition_lag_min_ms > arrival.partition_lag_max_ms {
        return Err((
            partition_lag.map(|l| l.span()),
            "arrival.partition_lag_ms: min is above max".into(),
        ));
    }
    if arrival.broker_lag_ms.len() > brokers as usize {
        return Err((
            None,
            format!(
                "arrival.broker_lag_ms lists {} brokers, the cluster has {brokers}",
                arrival.broker_lag_ms.len()
            ),
        ));
    }
    Ok(arrival)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        producers: Vec<Spanned<ProducerFile>>,
        #[serde(default)]
        arrival: ArrivalFile,
    }

    fn doc(text: &str) -> Doc {
        toml::from_str(text).expect("a valid snippet")
    }

    fn topics() -> Vec<TopicSpec> {
        ["orders", "prices"]
            .map(|name| TopicSpec {
                name: name.into(),
                partitions: 3,
                resizes: Vec::new(),
                replication_factor: 1,
            })
            .into()
    }

    fn producers(text: &str) -> Result<Vec<ProducerSpec>, Invalid> {
        producer_specs(&doc(text).producers, &topics(), 10_000)
    }

    #[test]
    fn streams_and_scripts_are_read_with_their_defaults() {
        let p = producers(
            r#"
            [[producers]]
            topic = "prices"
            records_per_sec = 50
            key_count = 2
            key_distribution = "skewed"
            stream_partitioner = "broadcast"

            [[producers]]
            topic = "orders"
            per_key = 3
            keys = ["AAPL"]
            start_ms = 1000
            "#,
        )
        .unwrap();
        assert_eq!((p[0].topic, p[0].start_ms, p[0].end_ms), (1, 0, 10_000));
        assert_eq!(
            p[0].kind,
            ProducerKind::Keyed {
                records_per_sec: 50,
                keys: vec!["key-0".into(), "key-1".into()],
                distribution: KeyDistribution::Skewed,
            }
        );
        assert_eq!(p[0].stream_partitioner, Some(StreamPartitioner::Broadcast));
        assert_eq!((p[1].topic, p[1].start_ms), (0, 1000));
        assert_eq!(
            p[1].kind,
            ProducerKind::Script {
                keys: vec!["AAPL".into()],
                per_key: 3,
                interval_ms: 1,
            }
        );
    }

    #[test]
    fn a_producer_is_refused_at_its_entry_with_its_topic() {
        let text = r#"
            [[producers]]
            topic = "orders"
            records_per_sec = 10

            [[producers]]
            topic = "orders"
            records_per_sec = 10
            end_ms = 20000
            start_ms = 20000
        "#;
        let d = doc(text);
        assert_eq!(
            producer_specs(&d.producers, &topics(), 30_000).unwrap_err(),
            (
                Some(d.producers[1].span()),
                "producer for \"orders\": start_ms 20000 is not before end_ms 20000".into()
            )
        );
        let refusal = |text: &str| producers(text).unwrap_err().1;
        assert_eq!(
            refusal("[[producers]]\ntopic = \"trades\"\nrecords_per_sec = 1\n"),
            "producer for \"trades\": unknown topic"
        );
        assert_eq!(
            refusal("[[producers]]\ntopic = \"orders\"\nper_key = 1\n"),
            "producer for \"orders\": a script (per_key) needs keys or key_count"
        );
        assert_eq!(
            refusal("[[producers]]\ntopic = \"orders\"\nrecords_per_sec = 1\nstream_partitioner = \"drop\"\n"),
            "producer for \"orders\": a stream partitioner needs keyed records"
        );
    }

    #[test]
    fn a_topic_is_written_by_null_key_or_by_keyed_producers_not_both() {
        let text = r#"
            [[producers]]
            topic = "orders"
            records_per_sec = 10

            [[producers]]
            topic = "prices"
            records_per_sec = 10
            key_count = 4

            [[producers]]
            topic = "orders"
            records_per_sec = 10
            key_count = 4
        "#;
        assert_eq!(
            producers(text).unwrap_err().1,
            "producer for \"orders\": a topic's producers must all be keyed or all null-keyed"
        );
    }

    #[test]
    fn arrival_delays_are_none_by_default_and_a_range_in_order() {
        let none = arrival_spec(&ArrivalFile::default(), 3).unwrap();
        assert_eq!(
            (none.partition_lag_min_ms, none.partition_lag_max_ms),
            (0, 0)
        );
        assert!(none.broker_lag_ms.is_empty());
        let text = "[arrival]\npartition_lag_ms = { min = 5, max = 2 }\n";
        let e = arrival_spec(&doc(text).arrival, 3).unwrap_err();
        assert_eq!(e.1, "arrival.partition_lag_ms: min is above max");
        assert_eq!(&text[e.0.unwrap()], "{ min = 5, max = 2 }");
        let d =
            doc("[arrival]\npartition_lag_ms = { min = 2, max = 5 }\nbroker_lag_ms = [0, 40]\n");
        let a = arrival_spec(&d.arrival, 2).unwrap();
        assert_eq!(
            (
                a.partition_lag_min_ms,
                a.partition_lag_max_ms,
                a.broker_lag_ms
            ),
            (2, 5, vec![0, 40])
        );
        assert_eq!(
            arrival_spec(&d.arrival, 1).unwrap_err(),
            (
                None,
                "arrival.broker_lag_ms lists 2 brokers, the cluster has 1".into()
            )
        );
    }
}
