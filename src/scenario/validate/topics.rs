//! `[[topics]]`: at least one topic, each named once with at least one partition; and
//! `co_partitioned`: groups of declared topics that start with equal partition counts (a join
//! over them reads partition i of each on one member). A topic's replication factor is the
//! cluster's to check (`cluster.rs`): it is bounded by the brokers.

use crate::scenario::file::TopicFile;
use crate::scenario::members::Invalid;
use crate::scenario::TopicSpec;
use toml::Spanned;

/// The topics in file order, as they start: a timeline's `add_partitions` adds their resizes
/// later. An error names the offending entry.
pub(super) fn topic_specs(entries: &[Spanned<TopicFile>]) -> Result<Vec<TopicSpec>, Invalid> {
    let mut topics = Vec::new();
    for t in entries {
        let span = Some(t.span());
        let t = t.get_ref();
        if t.partitions == 0 {
            return Err((
                span,
                format!("topic {:?}: partitions must be at least 1", t.name),
            ));
        }
        if topics.iter().any(|x: &TopicSpec| x.name == t.name) {
            return Err((span, format!("topic {:?} is declared twice", t.name)));
        }
        topics.push(TopicSpec {
            name: t.name.clone(),
            partitions: t.partitions,
            resizes: Vec::new(),
            replication_factor: t.replication_factor,
        });
    }
    if topics.is_empty() {
        return Err((
            None,
            "a scenario needs at least one [[topics]] entry".into(),
        ));
    }
    Ok(topics)
}

/// Each `co_partitioned` group as indexes into `topics`. Only the starting partition counts
/// must match: a resize that breaks co-partitioning later is the report's to name. An error
/// names the whole `co_partitioned` key.
pub(super) fn co_partitioned(
    groups: &Spanned<Vec<Vec<String>>>,
    topics: &[TopicSpec],
) -> Result<Vec<Vec<usize>>, Invalid> {
    let mut co_partitioned = Vec::new();
    for group_names in groups.get_ref() {
        let span = Some(groups.span());
        let mut idx = Vec::new();
        for name in group_names {
            let t = topics.iter().position(|t| &t.name == name).ok_or_else(|| {
                (
                    span.clone(),
                    format!("co_partitioned: unknown topic {name:?}"),
                )
            })?;
            idx.push(t);
        }
        let counts: Vec<String> = idx
            .iter()
            .map(|&t| format!("{} has {}", topics[t].name, topics[t].partitions))
            .collect();
        if idx
            .windows(2)
            .any(|w| topics[w[0]].partitions != topics[w[1]].partitions)
        {
            return Err((
                span,
                format!(
                    "co_partitioned topics must have equal partition counts: {}",
                    counts.join(", ")
                ),
            ));
        }
        co_partitioned.push(idx);
    }
    Ok(co_partitioned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// The two keys this file reads, as a scenario file writes them.
    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        topics: Vec<Spanned<TopicFile>>,
        co_partitioned: Option<Spanned<Vec<Vec<String>>>>,
    }

    fn doc(text: &str) -> Doc {
        toml::from_str(text).expect("a valid snippet")
    }

    const TWO: &str = r#"
        [[topics]]
        name = "prices"
        partitions = 4

        [[topics]]
        name = "notifications"
        partitions = 4
        replication_factor = 3
    "#;

    #[test]
    fn topics_start_as_declared_in_file_order() {
        let topics = topic_specs(&doc(TWO).topics).unwrap();
        let seen: Vec<(&str, u32, u32)> = topics
            .iter()
            .map(|t| (t.name.as_str(), t.partitions, t.replication_factor))
            .collect();
        assert_eq!(seen, [("prices", 4, 1), ("notifications", 4, 3)]);
        assert!(topics.iter().all(|t| t.resizes.is_empty()));
    }

    #[test]
    fn a_topic_without_partitions_is_refused_at_its_entry() {
        let d = doc(&format!(
            "{TWO}\n[[topics]]\nname = \"empty\"\npartitions = 0\n"
        ));
        assert_eq!(
            topic_specs(&d.topics).unwrap_err(),
            (
                Some(d.topics[2].span()),
                "topic \"empty\": partitions must be at least 1".into()
            )
        );
    }

    #[test]
    fn a_topic_declared_twice_is_refused_at_its_second_entry() {
        let d = doc(&format!(
            "{TWO}\n[[topics]]\nname = \"prices\"\npartitions = 4\n"
        ));
        assert_eq!(
            topic_specs(&d.topics).unwrap_err(),
            (
                Some(d.topics[2].span()),
                "topic \"prices\" is declared twice".into()
            )
        );
    }

    #[test]
    fn a_scenario_without_topics_is_refused() {
        assert_eq!(
            topic_specs(&[]).unwrap_err(),
            (
                None,
                "a scenario needs at least one [[topics]] entry".into()
            )
        );
    }

    #[test]
    fn co_partitioned_topics_are_indexes_into_the_topics() {
        let d = doc(&format!(
            "co_partitioned = [[\"notifications\", \"prices\"]]\n{TWO}"
        ));
        let topics = topic_specs(&d.topics).unwrap();
        let groups = d.co_partitioned.unwrap();
        assert_eq!(co_partitioned(&groups, &topics).unwrap(), [vec![1, 0]]);
    }

    #[test]
    fn co_partitioned_topics_must_exist_and_start_equal() {
        let d = doc(&format!(
            "{TWO}\n[[topics]]\nname = \"orders\"\npartitions = 6\n"
        ));
        let topics = topic_specs(&d.topics).unwrap();
        let groups = |names: &[&str]| {
            Spanned::new(
                3..40,
                vec![names.iter().map(|n| n.to_string()).collect::<Vec<_>>()],
            )
        };
        assert_eq!(
            co_partitioned(&groups(&["prices", "trades"]), &topics).unwrap_err(),
            (
                Some(3..40),
                "co_partitioned: unknown topic \"trades\"".into()
            )
        );
        assert_eq!(
            co_partitioned(&groups(&["prices", "orders"]), &topics).unwrap_err(),
            (
                Some(3..40),
                "co_partitioned topics must have equal partition counts: prices has 4, orders has 6"
                    .into()
            )
        );
    }
}
