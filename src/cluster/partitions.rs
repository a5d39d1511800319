//! The partition space: every partition any topic ever has (its largest count over the run),
//! laid end to end in scenario topic order, each with a dense global index. Built once; the
//! one place that turns (topic, partition number) into a global index and back, and either
//! into the `topic-p` name.

use crate::scenario::Scenario;

#[derive(Clone, Debug)]
pub struct PartitionSpace {
    /// Global index of each topic's partition 0.
    first: Vec<usize>,
    /// The scenario topic of each global partition.
    topic: Vec<usize>,
    /// `topic-p` of each global partition.
    names: Vec<String>,
}

impl PartitionSpace {
    pub fn new(scenario: &Scenario) -> Self {
        let mut space = PartitionSpace {
            first: Vec::with_capacity(scenario.topics.len()),
            topic: Vec::new(),
            names: Vec::new(),
        };
        for (t, spec) in scenario.topics.iter().enumerate() {
            space.first.push(space.names.len());
            for p in 0..spec.max_partitions() {
                space.names.push(format!("{}-{p}", spec.name));
                space.topic.push(t);
            }
        }
        space
    }

    /// How many partitions there are, over every topic.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Every partition's `topic-p` name, by global index.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn name(&self, p: usize) -> &str {
        &self.names[p]
    }

    /// The scenario topic index of global partition `p`.
    pub fn topic(&self, p: usize) -> usize {
        self.topic[p]
    }

    /// The partition's number within its topic.
    pub fn number(&self, p: usize) -> u32 {
        (p - self.first[self.topic[p]]) as u32
    }

    /// Global index of topic `t`'s partition 0.
    pub fn first(&self, t: usize) -> usize {
        self.first[t]
    }

    /// Global index of partition `number` of topic `t`.
    pub fn global(&self, t: usize, number: u32) -> usize {
        self.first[t] + number as usize
    }

    /// The global index of the partition named `topic-p`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// `[t-0 t-3]`: partition names for a log line.
    pub fn list(&self, parts: &[usize]) -> String {
        let names: Vec<&str> = parts.iter().map(|&p| self.name(p)).collect();
        format!("[{}]", names.join(" "))
    }
}

/// "Is partition `p` in this list?" in O(log n). The lists compared when an assignment is taken
/// or reported (what a member owns, what it is given, what it revokes, what OffsetFetch
/// answered; what the checkers and metrics record of them) run to a whole topic, and a linear
/// `contains` for each entry of another made those steps quadratic: one member handed 100,000
/// partitions spent 2 s of a 2.3 s run there, ten KIP-848 members sharing 200,000 took 53 s.
#[derive(Clone, Debug, Default)]
pub struct PartitionLookup(Vec<usize>);

impl PartitionLookup {
    pub fn of(partitions: &[usize]) -> Self {
        let mut sorted = partitions.to_vec();
        sorted.sort_unstable();
        PartitionLookup(sorted)
    }

    pub fn contains(&self, p: &usize) -> bool {
        self.0.binary_search(p).is_ok()
    }

    /// The partitions, ascending.
    pub fn iter(&self) -> impl Iterator<Item = &usize> + '_ {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_str, LoadOptions};

    #[test]
    fn topics_take_their_largest_count_end_to_end() {
        let toml = "name = \"s\"\nduration_ms = 1000\n\n\
            [[topics]]\nname = \"a\"\npartitions = 2\n\n\
            [[topics]]\nname = \"b\"\npartitions = 3\n\n\
            [[members]]\nname = \"c\"\n\n\
            [[timeline]]\nat_ms = 500\naction = \"add_partitions\"\ntopic = \"a\"\npartitions = 4\n";
        let scenario = load_str("s", toml, &LoadOptions::default()).expect("valid");
        let space = PartitionSpace::new(&scenario);
        assert_eq!(space.len(), 7);
        assert_eq!(space.first(1), 4);
        assert_eq!(space.name(3), "a-3");
        assert_eq!(space.name(4), "b-0");
        assert_eq!((space.topic(5), space.number(5)), (1, 1));
        assert_eq!(space.global(1, 2), 6);
        assert_eq!(space.find("b-2"), Some(6));
        assert_eq!(space.find("a-3"), Some(3));
        assert_eq!(space.list(&[0, 6]), "[a-0 b-2]");
        assert_eq!(space.list(&[]), "[]");
    }

    /// The lookup answers as `contains` on the list does, in any order and with repeats.
    #[test]
    fn a_lookup_answers_as_the_list_does() {
        let list = [7, 3, 3, 12, 0, 9];
        let lookup = PartitionLookup::of(&list);
        for p in 0..15 {
            assert_eq!(lookup.contains(&p), list.contains(&p), "{p}");
        }
        assert_eq!(
            lookup.iter().copied().collect::<Vec<_>>(),
            [0, 3, 3, 7, 9, 12]
        );
        assert!(!PartitionLookup::default().contains(&0));
    }
}
