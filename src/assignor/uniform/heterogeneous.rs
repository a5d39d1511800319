//! Kafka 4.3.1's `UniformHeterogeneousAssignmentBuilder` (the KAFKA-17710 rework): members
//! subscribe to different topics, so balance is pursued per member total, moving partitions only
//! through topics two members share.
//!
//! Steps, as Kafka runs them:
//! 1. keep each member's previous partitions of topics it still subscribes to;
//! 2. topic by topic (in [`topic_order`]), hand the still-unowned partitions, ascending, to the
//!    least-loaded subscribers, filling the lowest level before the next one ([`Balancer`]);
//! 3. up to 16 rounds over the topics with at least two subscribers: move partitions of a topic
//!    from its most-loaded subscribers (their highest-numbered partition first) to its
//!    least-loaded ones until the two levels are within one; stop once a whole round moved
//!    nothing.
//!
//! Members are numbered in `memberIds()` order, which breaks every tie between equally loaded
//! members; topic ids break ties between topics. Nothing else depends on Java collection order.

use super::{collect_owners, PreviousOwners};
use crate::assignor::{AssignError, GroupSpec, MemberPartitions, TopicIdx};
use crate::java::Uuid;
use std::cmp::Ordering;

/// Kafka's `MAX_ITERATION_COUNT`: rounds of the final balancing phase.
const MAX_BALANCE_ROUNDS: usize = 16;

/// `order`: `memberIds()` order as indexes into `group.members`; position in it is the member
/// index Kafka's builder uses.
pub(super) fn assign(
    group: &GroupSpec,
    ids: &[Option<Uuid>],
    order: &[usize],
    previous: &PreviousOwners,
) -> Result<MemberPartitions, AssignError> {
    let mut b = Builder::new(group, ids, order);
    if b.subscribed.is_empty() {
        return Ok(vec![Vec::new(); group.members.len()]);
    }
    b.keep_previous(previous);
    b.assign_unowned();
    b.balance();
    Ok(collect_owners(group, order, &b.owners, &b.sizes))
}

struct Builder<'a> {
    group: &'a GroupSpec,
    ids: &'a [Option<Uuid>],
    /// Per topic index: its subscribers' member indexes, ascending.
    subscribers: Vec<Vec<u32>>,
    /// Topics somebody subscribes to, ascending index.
    subscribed: Vec<TopicIdx>,
    /// Per topic index: owner member index per partition, -1 if none (empty if unsubscribed).
    owners: Vec<Vec<i32>>,
    /// Per member index: partitions in the target assignment so far.
    sizes: Vec<i32>,
    order: &'a [usize],
}

impl<'a> Builder<'a> {
    fn new(group: &'a GroupSpec, ids: &'a [Option<Uuid>], order: &'a [usize]) -> Self {
        let mut subscribers: Vec<Vec<u32>> = vec![Vec::new(); group.topics.len()];
        for (idx, &m) in order.iter().enumerate() {
            for &t in &group.members[m].topics {
                subscribers[t as usize].push(idx as u32);
            }
        }
        let subscribed: Vec<TopicIdx> = (0..group.topics.len() as TopicIdx)
            .filter(|&t| !subscribers[t as usize].is_empty())
            .collect();
        let mut owners = vec![Vec::new(); group.topics.len()];
        for &t in &subscribed {
            owners[t as usize] = vec![-1; group.topic(t).partitions as usize];
        }
        Builder {
            group,
            ids,
            subscribers,
            subscribed,
            owners,
            sizes: vec![0; order.len()],
            order,
        }
    }

    /// Step 1 (`maybeRevokePartitions`): previous partitions of still-subscribed topics stay.
    fn keep_previous(&mut self, previous: &PreviousOwners) {
        for (idx, &m) in self.order.iter().enumerate() {
            let member = &self.group.members[m];
            let keeps_all = previous.keeps_all(m);
            for tp in &member.owned {
                if keeps_all || member.subscribes(tp.topic) {
                    self.owners[tp.topic as usize][tp.partition as usize] = idx as i32;
                    self.sizes[idx] += 1;
                }
            }
        }
    }

    /// Step 2 (`assignRemainingPartitions`).
    fn assign_unowned(&mut self) {
        let mut topics: Vec<TopicIdx> = self
            .subscribed
            .iter()
            .copied()
            .filter(|&t| self.owners[t as usize].contains(&-1))
            .collect();
        self.sort_topics(&mut topics);
        let mut balancer = Balancer::default();
        for t in topics {
            balancer.reset(&self.subscribers[t as usize], &self.sizes);
            for p in 0..self.owners[t as usize].len() {
                if self.owners[t as usize][p] == -1 {
                    let to = balancer.next_least_loaded(&self.sizes);
                    self.move_partition(t, p, to);
                }
            }
        }
    }

    /// Step 3 (`balance` / `balanceTopics`).
    fn balance(&mut self) {
        let mut topics: Vec<TopicIdx> = self
            .subscribed
            .iter()
            .copied()
            .filter(|&t| self.subscribers[t as usize].len() >= 2)
            .collect();
        if topics.is_empty() {
            return;
        }
        self.sort_topics(&mut topics);
        let mut scratch = TopicScratch::new(self.order.len());
        let mut balancer = Balancer::default();
        // The topic that last moved something (or the first topic visited): coming back to it
        // after a full round means a round without moves.
        let mut last_active: Option<usize> = None;
        for _ in 0..MAX_BALANCE_ROUNDS {
            for (i, &t) in topics.iter().enumerate() {
                if last_active == Some(i) {
                    return;
                }
                let moved = self.balance_topic(t, &mut balancer, &mut scratch);
                if moved > 0 || last_active.is_none() {
                    last_active = Some(i);
                }
            }
        }
    }

    /// `balanceTopic`: moves partitions of `topic` from its most-loaded subscribers to its
    /// least-loaded ones. Returns how many moved.
    fn balance_topic(
        &mut self,
        topic: TopicIdx,
        balancer: &mut Balancer,
        scratch: &mut TopicScratch,
    ) -> usize {
        let subscribers = &self.subscribers[topic as usize];
        if balancer.reset(subscribers, &self.sizes) <= 1 {
            return 0;
        }
        // The topic's partitions grouped by owner (ascending member index, then partition), and
        // each owner's slice of that list; a donor gives up the last of its slice, i.e. its
        // highest-numbered partition of the topic. A counting sort: owners are subscribers,
        // which are listed ascending, so counting each one's partitions places every slice.
        let owners = &self.owners[topic as usize];
        debug_assert!(owners
            .iter()
            .all(|&o| o < 0 || subscribers.binary_search(&(o as u32)).is_ok()));
        for &s in subscribers {
            scratch.range[s as usize] = (0, 0);
        }
        for &o in owners.iter().filter(|&&o| o >= 0) {
            scratch.range[o as usize].1 += 1;
        }
        let mut placed = 0;
        for &s in subscribers {
            let r = &mut scratch.range[s as usize];
            let count = r.1;
            *r = (placed, placed);
            placed += count;
        }
        scratch.partitions.clear();
        scratch.partitions.resize(placed as usize, 0);
        for (p, &o) in owners.iter().enumerate() {
            if o >= 0 {
                let r = &mut scratch.range[o as usize];
                scratch.partitions[r.1 as usize] = p as i32;
                r.1 += 1;
            }
        }

        let mut moved = 0;
        while !balancer.is_balanced() {
            let donor = loop {
                match balancer.next_most_loaded(&self.sizes) {
                    None => break None,
                    Some(m) => {
                        let (start, end) = scratch.range[m as usize];
                        if end > start {
                            break Some(m);
                        }
                        // Nothing of this topic to give: out of the most-loaded range.
                        balancer.exclude_last_most_loaded();
                    }
                }
            };
            let Some(donor) = donor else { break };
            let r = &mut scratch.range[donor as usize];
            r.1 -= 1;
            let partition = scratch.partitions[r.1 as usize];
            let receiver = balancer.next_least_loaded(&self.sizes);
            if balancer.is_balanced() {
                break;
            }
            self.move_partition(topic, partition as usize, receiver);
            moved += 1;
        }
        moved
    }

    fn move_partition(&mut self, topic: TopicIdx, partition: usize, to: u32) {
        let slot = &mut self.owners[topic as usize][partition];
        if *slot >= 0 {
            self.sizes[*slot as usize] -= 1;
        }
        *slot = to as i32;
        self.sizes[to as usize] += 1;
    }

    fn sort_topics(&self, topics: &mut [TopicIdx]) {
        topics.sort_by(|&a, &b| topic_order(self.group, self.ids, &self.subscribers, a, b));
    }
}

/// Kafka's topic order: partitions per subscriber descending (compared as doubles, as
/// `Double.compare` does), then subscriber count ascending, then topic id ascending
/// (`Uuid.compareTo`, signed halves).
pub(super) fn topic_order(
    group: &GroupSpec,
    ids: &[Option<Uuid>],
    subscribers: &[Vec<u32>],
    a: TopicIdx,
    b: TopicIdx,
) -> Ordering {
    let (sa, sb) = (subscribers[a as usize].len(), subscribers[b as usize].len());
    let ra = f64::from(group.topic(a).partitions) / sa as f64;
    let rb = f64::from(group.topic(b).partitions) / sb as f64;
    rb.total_cmp(&ra).then(sa.cmp(&sb)).then_with(|| {
        let ia = ids[a as usize].expect("subscribed topics have ids (checked)");
        let ib = ids[b as usize].expect("subscribed topics have ids (checked)");
        ia.java_cmp(&ib)
    })
}

/// Reusable per-topic buffers for the balancing phase.
struct TopicScratch {
    partitions: Vec<i32>,
    /// Per member index: its `[start, end)` slice of `partitions`.
    range: Vec<(u32, u32)>,
}

impl TopicScratch {
    fn new(members: usize) -> Self {
        TopicScratch {
            partitions: Vec::new(),
            range: vec![(0, 0); members],
        }
    }
}

/// Kafka's `MemberAssignmentBalancer`: a topic's subscribers sorted by load (then index), with a
/// least-loaded range growing from the left and a most-loaded range growing from the right.
/// Each range hands out its members one by one at the range's level; when it runs out, the level
/// moves by one and the range absorbs the neighbours now at that level. Sizes are read live, so
/// the ranges see the moves made meanwhile, exactly like Kafka's.
#[derive(Default)]
struct Balancer {
    /// Sort keys, kept to reuse their allocation.
    keys: Vec<u64>,
    sorted: Vec<u32>,
    /// `[0, least_end)` is the least-loaded range, at level `least_level` before this round.
    least_end: usize,
    least_level: i32,
    next_least: usize,
    /// `[most_start, most_end)` is the most-loaded range, at level `most_level`.
    most_start: usize,
    most_end: usize,
    most_level: i32,
    /// Position of the next donor; -1 once the range is exhausted.
    next_most: isize,
}

impl Balancer {
    /// Starts over with `members` (non-empty); returns the spread between the most and least
    /// loaded.
    fn reset(&mut self, members: &[u32], sizes: &[i32]) -> i32 {
        // By (size, member) packed into one integer (sizes are counts, never negative): sorting
        // plain integers is several times faster than sorting by a looked-up pair, and this sort
        // runs for every topic of every balancing round.
        self.keys.clear();
        self.keys.extend(
            members
                .iter()
                .map(|&m| u64::from(sizes[m as usize] as u32) << 32 | u64::from(m)),
        );
        self.keys.sort_unstable();
        self.sorted.clear();
        self.sorted.extend(self.keys.iter().map(|&k| k as u32));
        let n = self.sorted.len();
        let lowest = sizes[self.sorted[0] as usize];
        let highest = sizes[self.sorted[n - 1] as usize];
        self.least_end = 0;
        self.least_level = lowest - 1;
        self.next_least = 0;
        self.most_start = n;
        self.most_end = n;
        self.most_level = highest + 1;
        self.next_most = n as isize - 1;
        highest - lowest
    }

    fn size_at(&self, sizes: &[i32], pos: usize) -> i32 {
        sizes[self.sorted[pos] as usize]
    }

    /// The member to receive the next partition; assumes it will.
    fn next_least_loaded(&mut self, sizes: &[i32]) -> u32 {
        if self.next_least >= self.least_end {
            // Everyone in the range got one: the range is a level higher; take in the members
            // already at that level, and start again from the left.
            self.least_level += 1;
            while self.least_end < self.sorted.len()
                && self.size_at(sizes, self.least_end) == self.least_level
            {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let m = self.sorted[self.next_least];
        self.next_least += 1;
        m
    }

    /// The member to give up the next partition, or `None` when no member is left.
    fn next_most_loaded(&mut self, sizes: &[i32]) -> Option<u32> {
        if self.next_most < self.most_start as isize {
            if self.most_end <= self.most_start && self.most_start > 0 {
                // Exclusions emptied the range: restart the level from the next member down,
                // so the range surely grows.
                self.most_level = self.size_at(sizes, self.most_start - 1);
            } else {
                self.most_level -= 1;
            }
            while self.most_start > 0 && self.size_at(sizes, self.most_start - 1) == self.most_level
            {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as isize - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let m = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(m)
    }

    /// Drops the member [`Self::next_most_loaded`] just returned from the most-loaded range by
    /// swapping it to the range's end and shrinking the range.
    fn exclude_last_most_loaded(&mut self) {
        let pos = (self.next_most + 1) as usize;
        self.sorted.swap(pos, self.most_end - 1);
        self.most_end -= 1;
    }

    /// The two ranges' levels are within one: moving more would not help.
    fn is_balanced(&self) -> bool {
        self.most_level - self.least_level <= 1
    }
}

#[cfg(test)]
mod balancer_tests {
    use super::*;

    #[test]
    fn least_loaded_fills_the_lowest_level_first() {
        // Sizes by member index: 0:3, 1:1, 2:1, 3:2. Sorted: 1, 2, 3, 0.
        let mut sizes = vec![3, 1, 1, 2];
        let mut b = Balancer::default();
        assert_eq!(b.reset(&[0, 1, 2, 3], &sizes), 2);
        let mut got = Vec::new();
        for _ in 0..6 {
            let m = b.next_least_loaded(&sizes);
            sizes[m as usize] += 1;
            got.push(m);
        }
        // Level 1: members 1, 2; level 2: 1, 2, 3; level 3: 1, 2, 3, 0 (only one more here).
        assert_eq!(got, [1, 2, 1, 2, 3, 1]);
    }

    #[test]
    fn most_loaded_walks_down_from_the_top_and_skips_excluded() {
        let sizes = vec![5, 5, 1, 4];
        let mut b = Balancer::default();
        b.reset(&[0, 1, 2, 3], &sizes);
        // Sorted: 2(1), 3(4), 0(5), 1(5). The top range is {0, 1}, handed out right to left.
        assert_eq!(b.next_most_loaded(&sizes), Some(1));
        b.exclude_last_most_loaded();
        assert_eq!(b.next_most_loaded(&sizes), Some(0));
        // Range exhausted: the level drops to 4 and takes in member 3; member 1 stays out, and
        // the range is handed out again from its right end (sizes here did not change).
        assert_eq!(b.next_most_loaded(&sizes), Some(0));
        assert_eq!(b.next_most_loaded(&sizes), Some(3));
    }
}
