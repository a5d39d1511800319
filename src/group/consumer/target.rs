//! The target assignment: which server assignor runs (the most requested `server_assignor`,
//! ties in Java `HashMap` order, else the first of `group.consumer.assignors`) and what it
//! answers, given each member's subscription and current target (`TargetAssignmentBuilder`).

use super::{ConsumerMember, Partitions};
use crate::assignor::{by_name, server_assignor, GroupSpec, Member, RebalanceProtocol, Topic};
use crate::java::{string_compare, Capacity, JavaHashMap};
use std::collections::{BTreeMap, BTreeSet};

/// `ConsumerGroup.computePreferredServerAssignor`: the most requested; ties go to the first in
/// the counting map's Java iteration order (`Stream.max` keeps the first of equals).
pub fn preferred_assignor<'m>(members: impl Iterator<Item = &'m ConsumerMember>) -> Option<String> {
    let mut counts: JavaHashMap<String, u32> = JavaHashMap::new(Capacity::Default);
    for m in members {
        if let Some(a) = &m.server_assignor {
            let n = counts.get(a.as_str()).copied().unwrap_or(0);
            counts.insert(a.clone(), n + 1);
        }
    }
    let mut best: Option<(&String, u32)> = None;
    for (name, &n) in counts.iter() {
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((name, n));
        }
    }
    best.map(|(name, _)| name.clone())
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
/// fresh `HashMap` (`memberSpecs`), filled in the group's map order, so they iterate in Java's
/// hash order (not the order they joined in) for a HashMap sized for the members there are now,
/// not for the most the group ever had (the group's own map never shrinks).
fn member_spec_order(members: &JavaHashMap<String, ConsumerMember>) -> Vec<&ConsumerMember> {
    let mut specs: JavaHashMap<String, &ConsumerMember> = JavaHashMap::new(Capacity::Default);
    for (id, m) in members.iter() {
        specs.insert(id.clone(), m);
    }
    specs.iter().map(|(_, &m)| m).collect()
}

/// The new target of every member. Members are given to the assignor in the order of the
/// builder's member-spec map ([`member_spec_order`]; the updated member is in the group's map
/// already).
pub fn compute(
    topics: &[Topic],
    members: &JavaHashMap<String, ConsumerMember>,
    current: &BTreeMap<String, Partitions>,
    default_assignor: &str,
) -> BTreeMap<String, Partitions> {
    let name = preferred_assignor(members.values()).unwrap_or_else(|| default_assignor.to_string());
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
    let assignor = by_name(server_assignor(&name)).expect("a server assignor the group was given");
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
}
