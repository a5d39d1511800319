//! The target assignment: which server assignor runs and what it answers, given each member's
//! subscription and current target (`TargetAssignmentBuilder`).
//!
//! Which assignor (Kafka 4.3.1, `GroupMetadataManager.maybeUpdateTargetAssignment`, GMM:3880):
//! `ConsumerGroup.computePreferredServerAssignor(member, updatedMember)` (ConsumerGroup.java:603),
//! the most requested `server_assignor` counting the heartbeat's own change, else the first of
//! `group.consumer.assignors`. A tie is *not* settled by the names alone: Kafka copies its
//! counts into `new HashMap<>(serverAssignors)` (:608), then applies the heartbeating member's
//! old and new request with `compute` (:609, :997-1011), and `Stream.max` keeps the first of
//! equals (:611). The copy of {uniform, range} has 4 buckets and both names in bucket 1, and
//! `compute` drops a name whose count falls to 0 and links a new one at the *head* of its
//! bucket, so a member whose own request is its assignor's only one moves it to the front:
//! a 1:1 tie goes to the heartbeating (or joining) member's assignor
//! ([`preferred_for_target`]). The group's reported preferred assignor is another method,
//! `preferredServerAssignor()` (:626), the first maximum of the persisted `TimelineHashMap`,
//! where uniform always comes before range ([`preferred_assignor`]).

use super::{ConsumerMember, Partitions};
use crate::assignor::{by_name, server_assignor, GroupSpec, Member, RebalanceProtocol, Topic};
use crate::java::{string_compare, Capacity, JavaHashMap, TimelineHashSet};
use std::collections::{BTreeMap, BTreeSet};

/// `ConsumerGroup.serverAssignors` (ConsumerGroup.java:128): how many members ask for each
/// server assignor, in its `TimelineHashMap`'s iteration order. That order is slot order, and
/// insertion order within a slot; the names a member may ask for (`uniform`, `range`) never
/// share a slot (slots 0 and 1 of 2, 0 and 2 of 4), so it does not depend on the order the
/// requests came in, and the names go in in the members' order here.
fn server_assignor_counts<'m>(
    members: impl Iterator<Item = &'m ConsumerMember>,
) -> Vec<(String, u32)> {
    let mut names: TimelineHashSet<String> = TimelineHashSet::new();
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for m in members {
        if let Some(a) = &m.server_assignor {
            let n = counts.entry(a.as_str()).or_insert(0);
            if *n == 0 {
                names.put(a.clone());
            }
            *n += 1;
        }
    }
    names
        .iter()
        .map(|name| (name.clone(), counts[name.as_str()]))
        .collect()
}

/// The first of the largest counts (`Stream.max` with `BinaryOperator.maxBy` keeps the first
/// of equals).
fn first_max<'a>(counts: impl Iterator<Item = (&'a String, u32)>) -> Option<String> {
    let mut best: Option<(&String, u32)> = None;
    for (name, n) in counts {
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((name, n));
        }
    }
    best.map(|(name, _)| name.clone())
}

/// `ConsumerGroup.preferredServerAssignor()` (ConsumerGroup.java:626): the group's preferred
/// assignor as it reports it (describe, the conformance traces' `preferred_server_assignor`):
/// the most requested, ties to the first in the persisted map's order (uniform before range).
pub fn preferred_assignor<'m>(members: impl Iterator<Item = &'m ConsumerMember>) -> Option<String> {
    let counts = server_assignor_counts(members);
    first_max(counts.iter().map(|(name, n)| (name, *n)))
}

/// `ConsumerGroup.computePreferredServerAssignor(member, updatedMember)` (ConsumerGroup.java:
/// 603-614): the assignor a target computed in `after`'s heartbeat uses. `members` holds
/// `after` already; `before` is the member as the group held it before this heartbeat (a new
/// member asks for nothing; a static member's new process carries its predecessor's request).
/// Kafka's persisted counts are every other member's requests and `before`'s; it copies them
/// into `new HashMap<>(serverAssignors)` (:608) and applies `compute(before's, decValue)`, then
/// `compute(after's, incValue)` (:609 -> :997-1011; `Utils.decValue` returns null at 1, which
/// removes the entry, and `HashMap.compute` links an absent key at the head of its bucket).
pub fn preferred_for_target(
    members: &JavaHashMap<String, ConsumerMember>,
    before: &ConsumerMember,
    after: &ConsumerMember,
) -> Option<String> {
    let persisted = server_assignor_counts(
        members
            .iter()
            .map(|(_, m)| m)
            .filter(|m| m.member_id != after.member_id)
            .chain(std::iter::once(before)),
    );
    let mut counts: JavaHashMap<String, u32> =
        JavaHashMap::new(Capacity::CopyOfMap(persisted.len()));
    for (name, n) in persisted {
        counts.insert(name, n);
    }
    if let Some(a) = &before.server_assignor {
        match counts.get(a.as_str()).copied() {
            Some(1) => {
                counts.remove(a.as_str());
            }
            Some(n) => {
                counts.insert(a.clone(), n - 1);
            }
            None => {}
        }
    }
    if let Some(a) = &after.server_assignor {
        match counts.get(a.as_str()).copied() {
            Some(n) => {
                counts.insert(a.clone(), n + 1);
            }
            None => {
                counts.insert_first(a.clone(), 1);
            }
        }
    }
    first_max(counts.iter().map(|(name, &n)| (name, n)))
}

/// Each topic's index by name (the first of a name, as a search from the start finds it):
/// looked up by name, a group subscribed to many topics costs no search of the topic list for
/// each member's each topic (100 members on 1,000 topics: 50 M string comparisons).
pub(super) fn topics_by_name(topics: &[Topic]) -> BTreeMap<&str, usize> {
    let mut by_name = BTreeMap::new();
    for (i, t) in topics.iter().enumerate() {
        by_name.entry(t.name.as_str()).or_insert(i);
    }
    by_name
}

/// The order the assignor meets the members in: `TargetAssignmentBuilder.build` puts them in a
/// fresh `HashMap` (`memberSpecs`, TargetAssignmentBuilder.java:456-466), so they iterate in
/// Java's hash order for a HashMap sized for the members there are now (`memberIds()`,
/// GroupSpecImpl.java:82). Members sharing one of its buckets come in the order it was filled
/// in, which in Kafka is `group.members()`'s, a `TimelineHashMap`'s (slot order, a slot's
/// members newest first, SnapshottableHashTable.java:172), then a new member's; here it is the
/// group's own map's order, join order for such members: not yet Kafka's when they share a
/// bucket (branch uniform-after-range-timeline-order has Kafka's, and the snapshots it moves).
fn member_spec_order(members: &JavaHashMap<String, ConsumerMember>) -> Vec<&ConsumerMember> {
    let mut specs: JavaHashMap<String, &ConsumerMember> = JavaHashMap::new(Capacity::Default);
    for (id, m) in members.iter() {
        specs.insert(id.clone(), m);
    }
    specs.iter().map(|(_, &m)| m).collect()
}

/// The new target of every member, by the server assignor `name` (a `group.remote.assignor`
/// name). Members are given to the assignor in the order of the builder's member-spec map
/// ([`member_spec_order`]; the updated member is in the group's map already).
pub fn compute(
    topics: &[Topic],
    members: &JavaHashMap<String, ConsumerMember>,
    current: &BTreeMap<String, Partitions>,
    name: &str,
) -> BTreeMap<String, Partitions> {
    let topic_index = topics_by_name(topics);
    let spec_members: Vec<Member> = member_spec_order(members)
        .into_iter()
        .map(|m| {
            let mut subscription = m.subscribed_topic_names.clone();
            subscription.sort_by(|a, b| string_compare(a, b));
            subscription.dedup();
            let topic_idx: Vec<u32> = subscription
                .iter()
                .filter_map(|t| {
                    let i = *topic_index.get(t.as_str())?;
                    (topics[i].partitions > 0).then_some(i as u32)
                })
                .collect();
            let subscribed: BTreeSet<u32> = topic_idx.iter().copied().collect();
            let owned = current
                .get(&m.member_id)
                .map(|p| {
                    p.iter()
                        .filter(|tp| subscribed.contains(&tp.topic))
                        .copied()
                        .collect()
                })
                .unwrap_or_default();
            Member {
                member_id: m.member_id.clone(),
                group_instance_id: m.instance_id.clone(),
                subscription,
                topics: topic_idx,
                owned,
                generation: None,
                subscription_generation: None,
                // KIP-848's server assignors ignore racks in Kafka 4.3 (KAFKA-16694).
                rack: None,
            }
        })
        .collect();
    let spec = GroupSpec {
        topics: topics.to_vec(),
        members: spec_members,
        protocol: RebalanceProtocol::Cooperative,
        racks: Default::default(),
    };
    let assignor = by_name(server_assignor(name)).expect("a server assignor the group was given");
    let result = assignor
        .assign(&spec)
        .expect("the server assignors answer every group the coordinator builds");
    spec.members
        .iter()
        .zip(result.assignment)
        .map(|(m, parts)| (m.member_id.clone(), parts.into_iter().collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, assignor: Option<&str>) -> ConsumerMember {
        let mut m = ConsumerMember::new(id.to_string());
        m.server_assignor = assignor.map(str::to_string);
        m
    }

    fn group_of(members: &[ConsumerMember]) -> JavaHashMap<String, ConsumerMember> {
        let mut map: JavaHashMap<String, ConsumerMember> = JavaHashMap::new(Capacity::Default);
        for m in members {
            map.insert(m.member_id.clone(), m.clone());
        }
        map
    }

    /// `TargetAssignmentBuilder.build` hands the assignor a fresh `HashMap` of member specs: a
    /// group that once had 13 members (its map grown to 32 buckets, which it keeps) and now has
    /// "q" (hash 113) and "b" (98) gives them in a 16-bucket map's order, q (bucket 1) before
    /// b (bucket 2), where the group's own map has b (bucket 2) before q (bucket 17).
    #[test]
    fn members_reach_the_assignor_in_a_fresh_hash_maps_order() {
        let mut members: JavaHashMap<String, ConsumerMember> = JavaHashMap::new(Capacity::Default);
        let others: Vec<String> = (0..11).map(|i| format!("member-{i}")).collect();
        for id in others.iter().map(String::as_str).chain(["q", "b"]) {
            members.insert(id.to_string(), ConsumerMember::new(id.to_string()));
        }
        assert_eq!(members.capacity(), 32);
        for id in &others {
            members.remove(id.as_str());
        }
        let group_order: Vec<&str> = members.keys().map(String::as_str).collect();
        assert_eq!(group_order, ["b", "q"]);
        let spec_order: Vec<&str> = member_spec_order(&members)
            .iter()
            .map(|m| m.member_id.as_str())
            .collect();
        assert_eq!(spec_order, ["q", "b"]);
    }

    /// ConsumerGroup.java:603-614, run on JDK 17 with Kafka 4.3.1's classes: a 1:1 tie goes to
    /// the assignor of the member whose heartbeat computes the target, where the group's
    /// reported preferred assignor (ConsumerGroup.java:626) is uniform either way.
    #[test]
    fn a_one_to_one_tie_goes_to_the_heartbeating_members_assignor() {
        let a = member("a", Some("range"));
        let c = member("c", Some("uniform"));
        let group = group_of(&[a.clone(), c.clone()]);
        assert_eq!(
            preferred_assignor(group.values()).as_deref(),
            Some("uniform")
        );
        assert_eq!(
            preferred_for_target(&group, &a, &a).as_deref(),
            Some("range")
        );
        assert_eq!(
            preferred_for_target(&group, &c, &c).as_deref(),
            Some("uniform")
        );
        // A joining member (asking for nothing before) ties 1:1 with the other: its own wins.
        let fresh = ConsumerMember::new("c".to_string());
        assert_eq!(
            preferred_for_target(&group, &fresh, &c).as_deref(),
            Some("uniform")
        );
        let b = member("b", Some("range"));
        let group = group_of(&[c.clone(), b.clone()]);
        let fresh = ConsumerMember::new("b".to_string());
        assert_eq!(
            preferred_for_target(&group, &fresh, &b).as_deref(),
            Some("range")
        );
        // A majority is a majority, whoever heartbeats.
        let group = group_of(&[a.clone(), b.clone(), c.clone()]);
        assert_eq!(
            preferred_for_target(&group, &c, &c).as_deref(),
            Some("range")
        );
        // A member asking for nothing leaves the copy in the persisted order: uniform first.
        let d = member("d", None);
        let group = group_of(&[a.clone(), c.clone(), d.clone()]);
        assert_eq!(
            preferred_for_target(&group, &d, &d).as_deref(),
            Some("uniform")
        );
        // Nobody asks: the caller falls back to the first configured assignor.
        let group = group_of(std::slice::from_ref(&d));
        assert_eq!(preferred_for_target(&group, &d, &d), None);
    }
}
