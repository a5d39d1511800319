//! What the elected leader does with the JoinGroup response (`ConsumerCoordinator
//! .onLeaderElected`): rebuild every member's subscription as the assignor sees it, in the
//! broker's member order, and run the group's assignor.

use crate::assignor::racks::PartitionRacks;
use crate::assignor::{by_name, GroupSpec, Member, RebalanceProtocol, Topic, TopicPartition};
use crate::cluster::{PartitionSpace, Replicas};
use crate::facts::{FatalError, JavaException};
use crate::java::string_compare;
use crate::messages::{JoinedMember, Subscription};
use crate::scenario::Scenario;

/// One member of a JoinGroup answer as the assignor sees it: its subscription in Java order and
/// deduplicated, the subscribed topics the metadata has, and its `history` (what it owned, as
/// topic indexes of `group`) without partitions the metadata no longer has, sorted, at
/// `generation` (the assignor's memberData).
pub fn assignor_member(
    m: &JoinedMember,
    group: &GroupSpec,
    history: impl Iterator<Item = TopicPartition>,
    generation: Option<i32>,
) -> Member {
    let mut subscription = m.subscription.topics.clone();
    subscription.sort_by(|a, b| string_compare(a, b));
    subscription.dedup();
    let topics = subscription
        .iter()
        .filter_map(|s| group.topic_index(s))
        .collect();
    let mut owned: Vec<TopicPartition> = history
        .filter(|tp| tp.partition < group.topics[tp.topic as usize].partitions)
        .collect();
    owned.sort();
    Member {
        member_id: m.member_id.clone(),
        group_instance_id: m.group_instance_id.clone(),
        subscription,
        topics,
        owned,
        generation,
        subscription_generation: m.subscription.generation,
        rack: m.subscription.rack_id.clone(),
    }
}

/// The replica racks of every partition in the leader's metadata (its `Cluster`'s
/// `PartitionInfo`s), topics in the spec's (sorted) order.
fn partition_racks(
    scenario: &Scenario,
    space: &PartitionSpace,
    replicas: &Replicas,
    order: &[usize],
    partition_counts: &[u32],
) -> PartitionRacks {
    if !replicas.has_racks() {
        return PartitionRacks::default();
    }
    let per_topic: Vec<Vec<Vec<String>>> = order
        .iter()
        .map(|&t| {
            (0..partition_counts[t].min(scenario.topics[t].max_partitions()))
                .map(|p| replicas.racks_of(space.global(t, p)))
                .collect()
        })
        .collect();
    PartitionRacks::from_names(&per_topic)
        .expect("the scenario's broker racks are validated to fit the assignors' rack sets")
}

/// What the leader's `KafkaConsumer.poll` throws when its assignor fails (`assign`'s error):
/// the Java exception Kafka's assignor throws at the same point, which the error names, or
/// else a limit of the model's own.
pub fn thrown(error: &str) -> FatalError {
    JavaException::ALL
        .into_iter()
        .find(|e| error.contains(e.name()))
        .map_or(FatalError::AssignorFailed, FatalError::KafkasAssignorThrew)
}

/// What `protocol`'s assignor reads as a member's history and its generation (`memberData`).
fn member_data<'a>(protocol: &str, s: &'a Subscription) -> (&'a [usize], Option<i32>) {
    match protocol {
        // StickyAssignor reads userData alone: the last assignment and its generation (none
        // before the first).
        "sticky" => (&s.previous_assignment, s.assigned_generation),
        // CooperativeStickyAssignor reads ownedPartitions and the Subscription's generationId,
        // or without one (-1, after a reset) the generation its userData keeps: -1 before the
        // first assignment.
        "cooperative-sticky" => (
            &s.owned,
            s.generation.or(Some(s.assigned_generation.unwrap_or(-1))),
        ),
        // The others read ownedPartitions (empty under EAGER); no generation.
        _ => (&s.owned, s.generation),
    }
}

/// The leader's assignment: member id -> global partition indexes.
pub fn assign(
    scenario: &Scenario,
    space: &PartitionSpace,
    replicas: &Replicas,
    protocol: &str,
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
        // The subscriptions are as each member sent them: an EAGER member's carries no owned
        // partitions (it revoked everything first), a COOPERATIVE one's what it kept. Kafka's
        // assignor reads them so whatever the leader's own protocol, and adjustAssignment
        // withholds what another member still claims: in a group upgrading member by member an
        // EAGER leader still withholds the COOPERATIVE members' moving partitions (KIP-429).
        protocol: RebalanceProtocol::Cooperative,
        racks: partition_racks(scenario, space, replicas, &order, partition_counts),
    };
    for m in members {
        let (history, generation) = member_data(protocol, &m.subscription);
        let history = history.iter().map(|&p| to_spec(p));
        group
            .members
            .push(assignor_member(m, &group, history, generation));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// After a reset (no generationId), StickyAssignor still reads the generation of the last
    /// assignment from its userData, and so does CooperativeStickyAssignor, which otherwise
    /// reads the Subscription's.
    #[test]
    fn each_sticky_assignor_reads_its_own_member_data() {
        let reset = Subscription {
            topics: vec!["t".into()],
            owned: Vec::new(),
            previous_assignment: vec![0, 1],
            generation: None,
            assigned_generation: Some(3),
            user_data: None,
            rack_id: None,
        };
        assert_eq!(member_data("sticky", &reset), (&[0, 1][..], Some(3)));
        assert_eq!(member_data("cooperative-sticky", &reset).1, Some(3));
        let joined = Subscription {
            generation: Some(4),
            owned: vec![2],
            ..reset.clone()
        };
        assert_eq!(member_data("sticky", &joined), (&[0, 1][..], Some(3)));
        assert_eq!(
            member_data("cooperative-sticky", &joined),
            (&[2][..], Some(4))
        );
        let fresh = Subscription {
            previous_assignment: Vec::new(),
            assigned_generation: None,
            ..reset
        };
        assert_eq!(member_data("sticky", &fresh).1, None);
        assert_eq!(member_data("cooperative-sticky", &fresh).1, Some(-1));
    }

    #[test]
    fn an_assignors_failure_is_named_by_the_exception_kafka_throws_there() {
        let sticky_npe = "sticky: the previous owner of a partition takes no part in \
                          reassignment (Kafka throws NullPointerException)";
        assert_eq!(
            thrown(sticky_npe),
            FatalError::KafkasAssignorThrew(JavaException::NullPointerException)
        );
        let sticky_ise =
            "sticky: a member did not reach minQuota (Kafka throws IllegalStateException)";
        assert_eq!(
            thrown(sticky_ise),
            FatalError::KafkasAssignorThrew(JavaException::IllegalStateException)
        );
        assert_eq!(
            thrown("70000 partitions to assign: more than the sticky assignors can index"),
            FatalError::AssignorFailed
        );
    }
}
