//! Kafka's client `RangeAssignor` (EAGER only): each topic on its own, its subscribers in
//! `MemberInfo` order, contiguous ranges with the remainder on the first members. Because every
//! topic puts its remainder on the same first members, those members collect the extras of every
//! topic (seed 001's "3,3,3,0" with four consumers). History is ignored.
//!
//! With racks (KIP-881) a rack pass runs first when some topic needs it ([`with_racks`]): it
//! places what it can on members in a replica's rack without exceeding any member's quota, and
//! the plain range pass places the rest.

use super::racks::{member_racks, use_rack_aware, RackSet};
use super::{
    member_info_order, AssignError, AssignResult, Assignor, GroupSpec, TopicIdx, TopicPartition,
};
use std::collections::BTreeMap;
use std::ops::Range;

pub struct RangeAssignor;

impl Assignor for RangeAssignor {
    fn name(&self) -> &'static str {
        "range"
    }

    fn assign(&self, group: &GroupSpec) -> Result<AssignResult, AssignError> {
        if let Some(assignment) = with_racks(group) {
            return Ok(AssignResult::plain(assignment));
        }
        Ok(AssignResult::plain(assign_ranges(
            group,
            group.same_topics(),
        )))
    }
}

/// One topic's `TopicAssignmentState`: its subscribers in `MemberInfo` order, what is left, and
/// each subscriber's quota (`numPartitionsPerConsumer`, one more while extras remain).
struct TopicState {
    topic: TopicIdx,
    consumers: Vec<usize>,
    /// Per partition, the racks of its replicas.
    racks: Vec<RackSet>,
    /// Some subscriber has a rack (Kafka only reads the partitions' racks then).
    racked: bool,
    needs_racks: bool,
    unassigned: Vec<bool>,
    left: usize,
    /// Per position in `consumers`.
    assigned: Vec<usize>,
    per_consumer: usize,
    extra: usize,
}

impl TopicState {
    /// `racksMatch`: a member without a rack matches every partition.
    fn racks_match(&self, rack: Option<RackSet>, p: usize) -> bool {
        rack.is_none_or(|r| self.racks[p] & r != 0)
    }

    fn max_assignable(&self, c: usize) -> usize {
        (self.per_consumer + usize::from(self.extra > 0)).saturating_sub(self.assigned[c])
    }

    /// `onAssigned`: the extras count down once per call that takes a member past the base
    /// quota, as Kafka's does.
    fn on_assigned(&mut self, c: usize, partitions: &[usize]) {
        self.assigned[c] += partitions.len();
        if self.assigned[c] > self.per_consumer {
            self.extra -= 1;
        }
        for &p in partitions {
            self.unassigned[p] = false;
        }
        self.left -= partitions.len();
    }
}

/// Client `RangeAssignor.assignPartitions` when some topic needs rack-aware assignment; `None`
/// when none does (the plain pass alone gives the answer).
fn with_racks(group: &GroupSpec) -> Option<Vec<Vec<TopicPartition>>> {
    if group.racks.is_empty() {
        return None;
    }
    let member_rack = member_racks(group);
    if member_rack.iter().all(Option::is_none) {
        return None;
    }
    let order = member_info_order(&group.members);
    let mut states: Vec<TopicState> = Vec::new();
    for (t, topic) in group.topics.iter().enumerate() {
        let t = t as TopicIdx;
        let n = topic.partitions.max(0) as usize;
        let consumers: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&m| group.members[m].subscribes(t))
            .collect();
        if n == 0 || consumers.is_empty() {
            continue;
        }
        let racks: Vec<RackSet> = group.racks.of_topic(t, topic.partitions).collect();
        let consumer_racks = consumers.iter().filter_map(|&m| member_rack[m]);
        let racked = consumer_racks.clone().next().is_some();
        let needs_racks = use_rack_aware(consumer_racks, racks.iter().copied());
        let k = consumers.len();
        states.push(TopicState {
            topic: t,
            assigned: vec![0; k],
            per_consumer: n / k,
            extra: n % k,
            consumers,
            racks,
            racked,
            needs_racks,
            unassigned: vec![true; n],
            left: n,
        });
    }
    if !states.iter().any(|s| s.needs_racks) {
        return None;
    }
    let mut assignment: Vec<Vec<TopicPartition>> = vec![Vec::new(); group.members.len()];

    // Topics grouped by subscribers, then by the size of their partition-rack map (the
    // partition count when a subscriber has a rack, else 0). Groups touch disjoint topics, so
    // the order Kafka's HashMaps visit them in does not change the outcome.
    let mut groups: BTreeMap<(&[usize], usize), Vec<usize>> = BTreeMap::new();
    for (i, s) in states.iter().enumerate() {
        let size = if s.racked { s.racks.len() } else { 0 };
        groups.entry((&s.consumers, size)).or_default().push(i);
    }
    let groups: Vec<(usize, Vec<usize>)> = groups
        .into_iter()
        .map(|((_, size), ts)| (size, ts))
        .collect();
    for (size, topics) in groups {
        if topics.len() > 1 {
            co_partitioned(&mut states, &topics, size, &member_rack, &mut assignment);
        } else if states[topics[0]].needs_racks {
            assign_ranges_matching(&mut states[topics[0]], &member_rack, true, &mut assignment);
        }
    }
    for state in &mut states {
        assign_ranges_matching(state, &member_rack, false, &mut assignment);
    }
    for list in &mut assignment {
        list.sort_unstable();
    }
    Some(assignment)
}

/// `assignRanges`: each subscriber in turn takes, up to its quota, the lowest unassigned
/// partitions it may take (rack-matching ones only when `match_racks`).
fn assign_ranges_matching(
    state: &mut TopicState,
    member_rack: &[Option<RackSet>],
    match_racks: bool,
    assignment: &mut [Vec<TopicPartition>],
) {
    for c in 0..state.consumers.len() {
        if state.left == 0 {
            break;
        }
        let m = state.consumers[c];
        let limit = state.max_assignable(c);
        let taken: Vec<usize> = (0..state.unassigned.len())
            .filter(|&p| {
                state.unassigned[p] && (!match_racks || state.racks_match(member_rack[m], p))
            })
            .take(limit)
            .collect();
        if taken.is_empty() {
            continue;
        }
        assignment[m].extend(
            taken
                .iter()
                .map(|&p| TopicPartition::new(state.topic, p as i32)),
        );
        state.on_assigned(c, &taken);
    }
}

/// `assignCoPartitionedWithRackMatching`: topics with the same subscribers and partition count
/// keep partition `p` of all of them together, on the first remaining subscriber whose rack
/// matches every one of them and that has quota left in all.
fn co_partitioned(
    states: &mut [TopicState],
    topics: &[usize],
    partitions: usize,
    member_rack: &[Option<RackSet>],
    assignment: &mut [Vec<TopicPartition>],
) {
    let consumers = states[topics[0]].consumers.clone();
    let mut remaining: Vec<usize> = (0..consumers.len()).collect();
    for p in 0..partitions {
        let found = remaining.iter().position(|&c| {
            topics.iter().all(|&t| {
                let s = &states[t];
                s.racks_match(member_rack[consumers[c]], p) && s.max_assignable(c) > 0
            })
        });
        let Some(i) = found else { continue };
        let c = remaining[i];
        for &t in topics {
            let s = &mut states[t];
            assignment[consumers[c]].push(TopicPartition::new(s.topic, p as i32));
            s.on_assigned(c, &[p]);
        }
        if topics.iter().all(|&t| states[t].max_assignable(c) == 0) {
            remaining.remove(i);
            if remaining.is_empty() {
                break;
            }
        }
    }
}

/// Contiguous ranges per topic over its subscribers in `MemberInfo` order. Shared with the
/// server-side range assignor, which differs only in what surrounds it.
///
/// Each member's list is written whole, at its final size, topic by topic, from each topic's
/// quotient and remainder and the member's position among the topic's subscribers. Writing member
/// by member keeps the stores sequential: on a million partitions the old topic-by-topic pass
/// scattered them over every member's list and was most of the time. When every member subscribes
/// to the same topics (the usual group), a member's position is its rank in every topic and the
/// lists are stamped from templates ([`same_subscriptions`]); otherwise a first pass numbers each
/// member within each of its topics' subscriber lists ([`mixed_subscriptions`]).
///
/// `same_topics` is [`GroupSpec::same_topics`], which callers may need too.
pub(crate) fn assign_ranges(group: &GroupSpec, same_topics: bool) -> Vec<Vec<TopicPartition>> {
    let order = member_info_order(&group.members);
    if same_topics {
        same_subscriptions(group, &order)
    } else {
        mixed_subscriptions(group, &order)
    }
}

/// Per topic with `subscribers` subscribers: partitions per subscriber and how many subscribers
/// take one more.
fn shares(group: &GroupSpec, subscribers: impl Fn(usize) -> u32) -> Vec<(i32, i32)> {
    group
        .topics
        .iter()
        .enumerate()
        .map(|(t, topic)| match subscribers(t) {
            0 => (0, 0),
            k => (topic.partitions / k as i32, topic.partitions % k as i32),
        })
        .collect()
}

/// A position from which no topic gives anything (a topic with fewer partitions than
/// subscribers gives one each to its first `extra`).
fn reach(shares: &[(i32, i32)]) -> u32 {
    shares
        .iter()
        .map(|&(base, extra)| if base > 0 { u32::MAX } else { extra as u32 })
        .max()
        .unwrap_or(0)
}

/// The member at `position` among a topic's subscribers, with the topic's share: its range.
fn range_at(position: u32, (base, extra): (i32, i32)) -> Range<i32> {
    let i = position as i32;
    let start = base * i + i.min(extra);
    start..start + base + i32::from(i < extra)
}

/// Every member subscribes to `topics`. Then consecutive topics with the same share give a member
/// the same partition numbers in each of them, so its part of the list for such a run of topics
/// is a template (each topic, partitions `0..count`) with the member's first partition added: one
/// template per count, built once, copied with an add per member. On a million partitions
/// (`benches/data` T2) this is a quarter of the time of generating each range on its own, which
/// costs a loop set-up per topic for a handful of partitions.
fn same_subscriptions(group: &GroupSpec, order: &[usize]) -> Vec<Vec<TopicPartition>> {
    let members = &group.members;
    let topics = members.first().map_or(&[][..], |m| &m.topics[..]);
    let count = members.len() as u32;
    let shares = shares(group, |t| {
        count * u32::from(topics.binary_search(&(t as TopicIdx)).is_ok())
    });
    let reach = reach(&shares);
    let runs: Vec<TopicRun> = topics
        .chunk_by(|a, b| shares[*a as usize] == shares[*b as usize])
        .map(|run| {
            let share = shares[run[0] as usize];
            let template = |count: i32| -> Vec<TopicPartition> {
                run.iter()
                    .flat_map(|&t| (0..count).map(move |p| TopicPartition::new(t, p)))
                    .collect()
            };
            let templates = [
                template(share.0),
                template(share.0 + i32::from(share.1 > 0)),
            ];
            TopicRun { share, templates }
        })
        .collect();
    let mut rank = vec![0u32; members.len()];
    for (r, &m) in order.iter().enumerate() {
        rank[m] = r as u32;
    }
    rank.into_iter()
        .map(|r| {
            if r >= reach {
                return Vec::new();
            }
            let size = runs.iter().map(|run| run.stamp(r).1.len()).sum();
            let mut list = Vec::with_capacity(size);
            for run in &runs {
                let (start, template) = run.stamp(r);
                list.extend(
                    template
                        .iter()
                        .map(|tp| TopicPartition::new(tp.topic, start + tp.partition)),
                );
            }
            list
        })
        .collect()
}

/// Consecutive topics of a group's subscription with the same share.
struct TopicRun {
    share: (i32, i32),
    /// The template for members past the extras (`base` partitions per topic), then for those
    /// before them (`base + 1`).
    templates: [Vec<TopicPartition>; 2],
}

impl TopicRun {
    /// For the member of rank `r`: its first partition in every topic of the run, and the
    /// template to add it to.
    fn stamp(&self, r: u32) -> (i32, &[TopicPartition]) {
        let extra = usize::from((r as i32) < self.share.1);
        (range_at(r, self.share).start, &self.templates[extra])
    }
}

/// Members subscribe to different topics. A first pass numbers each member within each of its
/// topics' subscriber lists (members' topics are sorted, so a member's entries line up with its
/// topics) and counts every topic's subscribers; the second writes each member's ranges.
fn mixed_subscriptions(group: &GroupSpec, order: &[usize]) -> Vec<Vec<TopicPartition>> {
    let members = &group.members;
    // Member m's position among the subscribers of its j-th topic: `index[first[m] + j]`.
    let mut first = Vec::with_capacity(members.len() + 1);
    let mut total = 0usize;
    for m in members {
        first.push(total);
        total += m.topics.len();
    }
    let mut index = vec![0u32; total];
    let mut subscribers = vec![0u32; group.topics.len()];
    // Each member's smallest position: one past every topic's last taker, it gets nothing.
    let mut lowest = vec![u32::MAX; members.len()];
    for &m in order {
        for (j, &t) in members[m].topics.iter().enumerate() {
            let i = subscribers[t as usize];
            index[first[m] + j] = i;
            lowest[m] = lowest[m].min(i);
            subscribers[t as usize] += 1;
        }
    }
    let shares = shares(group, |t| subscribers[t]);
    let reach = reach(&shares);
    members
        .iter()
        .enumerate()
        .map(|(m, member)| {
            if lowest[m] >= reach {
                return Vec::new();
            }
            let ranges = member
                .topics
                .iter()
                .zip(&index[first[m]..first[m] + member.topics.len()])
                .map(|(&t, &i)| (t, range_at(i, shares[t as usize])));
            let size = ranges.clone().map(|(_, r)| r.len()).sum();
            let mut list = Vec::with_capacity(size);
            for (t, range) in ranges {
                list.extend(range.map(|p| TopicPartition::new(t, p)));
            }
            list
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{group, named};
    use super::*;

    /// The template path and the general path agree wherever both apply: every member on the
    /// same topics, with runs of equal-sized topics, a topic smaller than the group, an empty one,
    /// and more members than any topic has partitions.
    #[test]
    fn same_subscriptions_match_the_general_pass() {
        let sizes: [&[i32]; 5] = [
            &[7, 7, 7, 12, 12, 3, 7],
            &[2, 2],
            &[0, 5, 5],
            &[1],
            &[40, 41],
        ];
        for sizes in sizes {
            for members in [1usize, 3, 4, 6, 9] {
                let names: Vec<String> = (0..sizes.len()).map(|t| format!("t{t}")).collect();
                let topics: Vec<(&str, i32)> = names
                    .iter()
                    .map(String::as_str)
                    .zip(sizes.iter().copied())
                    .collect();
                let ids: Vec<String> = (0..members).map(|m| format!("m{}", (m * 5) % 11)).collect();
                let subscribed: Vec<&str> = names.iter().map(String::as_str).collect();
                let g = group(
                    &topics,
                    &ids.iter()
                        .map(|id| (id.as_str(), &subscribed[..]))
                        .collect::<Vec<_>>(),
                );
                let order = member_info_order(&g.members);
                assert_eq!(
                    same_subscriptions(&g, &order),
                    mixed_subscriptions(&g, &order),
                    "sizes {sizes:?}, {members} members"
                );
            }
        }
    }

    #[test]
    fn remainders_pile_on_first_members() {
        let g = group(
            &[("t3a", 3), ("t3b", 3), ("t3c", 3)],
            &[
                ("c1", &["t3a", "t3b", "t3c"]),
                ("c2", &["t3a", "t3b", "t3c"]),
                ("c3", &["t3a", "t3b", "t3c"]),
                ("c4", &["t3a", "t3b", "t3c"]),
            ],
        );
        let a = RangeAssignor.assign(&g).unwrap().assignment;
        let counts: Vec<usize> = a.iter().map(Vec::len).collect();
        assert_eq!(counts, [3, 3, 3, 0]);
        assert_eq!(named(&g, &a)[0].1, ["t3a-0", "t3b-0", "t3c-0"]);
        // 10 over 4: the first two take the extras, each a contiguous range.
        let g = group(
            &[("t", 10)],
            &[("a", &["t"]), ("b", &["t"]), ("c", &["t"]), ("d", &["t"])],
        );
        let a = RangeAssignor.assign(&g).unwrap().assignment;
        let ranges: Vec<Vec<i32>> = a
            .iter()
            .map(|l| l.iter().map(|tp| tp.partition).collect())
            .collect();
        assert_eq!(
            ranges,
            [vec![0, 1, 2], vec![3, 4, 5], vec![6, 7], vec![8, 9]]
        );
    }
}
