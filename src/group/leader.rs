//! What the elected leader does with the JoinGroup response (`ConsumerCoordinator
//! .onLeaderElected`): rebuild every member's subscription as the assignor sees it, in the
//! broker's member order, and run the group's assignor.

use super::messages::JoinedMember;
use crate::assignor::{by_name, GroupSpec, Member, RebalanceProtocol, Topic, TopicPartition};
use crate::cluster::PartitionSpace;
use crate::java::string_compare;
use crate::scenario::Scenario;

/// The leader's assignment: member id -> global partition indexes.
pub fn assign(
    scenario: &Scenario,
    space: &PartitionSpace,
    protocol: &str,
    client_protocol: RebalanceProtocol,
    members: &[JoinedMember],
    partition_counts: &[u32],
) -> Result<Vec<(String, Vec<usize>)>, String> {
    let assignor = by_name(protocol).map_err(|e| e.0)?;
    let mut order: Vec<usize> = (0..scenario.topics.len()).collect();
    order.sort_by(|&a, &b| string_compare(&scenario.topics[a].name, &scenario.topics[b].name));
    let topics: Vec<Topic> = order
        .iter()
        .map(|&t| Topic {
            name: scenario.topics[t].name.clone(),
            // The leader's metadata, which may lag the cluster's.
            partitions: partition_counts[t] as i32,
            id: None,
        })
        .collect();
    // Scenario topic -> its index in the spec's (sorted) topics.
    let mut spec_index = vec![0u32; order.len()];
    for (i, &t) in order.iter().enumerate() {
        spec_index[t] = i as u32;
    }
    let to_spec = |global: usize| -> TopicPartition {
        TopicPartition::new(spec_index[space.topic(global)], space.number(global) as i32)
    };
    let mut group = GroupSpec {
        topics,
        members: Vec::with_capacity(members.len()),
        protocol: client_protocol,
    };
    for m in members {
        let mut subscription = m.subscription.topics.clone();
        subscription.sort_by(|a, b| string_compare(a, b));
        let topics = subscription
            .iter()
            .filter_map(|s| group.topic_index(s))
            .collect();
        // StickyAssignor reads its history from userData (the previous assignment), the
        // others from ownedPartitions (empty under EAGER).
        let history = if protocol == "sticky" {
            &m.subscription.previous_assignment
        } else {
            &m.subscription.owned
        };
        let mut owned: Vec<TopicPartition> = history
            .iter()
            .map(|&p| to_spec(p))
            .filter(|tp| tp.partition < group.topics[tp.topic as usize].partitions)
            .collect();
        owned.sort();
        group.members.push(Member {
            member_id: m.member_id.clone(),
            group_instance_id: m.group_instance_id.clone(),
            subscription,
            topics,
            owned,
            generation: m.subscription.generation,
        });
    }
    let result = assignor.assign(&group).map_err(|e| e.0)?;
    Ok(group
        .members
        .iter()
        .zip(result.assignment)
        .map(|(m, parts)| {
            let mut global: Vec<usize> = parts
                .iter()
                .map(|tp| space.global(order[tp.topic as usize], tp.partition as u32))
                .collect();
            global.sort_unstable();
            (m.member_id.clone(), global)
        })
        .collect())
}
