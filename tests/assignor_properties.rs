//! Properties every assignor of the foundation must keep, on random groups.

use cgsim::assignor::racks::PartitionRacks;
use cgsim::assignor::{by_name, GroupSpec, Member, RebalanceProtocol, Topic, TopicPartition};
use proptest::prelude::*;
use std::collections::BTreeMap;

const EXACT_ONCE: &[&str] = &["range", "roundrobin", "server-range", "co-partition"];
const ORDER_FREE: &[&str] = &["range", "roundrobin", "server-range"];

/// A random group: 1-5 topics of 0-12 partitions, 1-9 members each subscribed to a non-empty
/// subset, some of them static. `identical` gives every member all topics.
fn group_strategy(identical: bool) -> impl Strategy<Value = GroupSpec> {
    (prop::collection::vec(0i32..13, 1..6), 1usize..10).prop_flat_map(move |(counts, n_members)| {
        let n_topics = counts.len();
        let subsets = prop::collection::vec(
            (
                prop::collection::vec(any::<bool>(), n_topics),
                any::<bool>(),
                0u32..1000,
            ),
            n_members,
        );
        (Just(counts), subsets).prop_map(move |(counts, subs)| build(&counts, &subs, identical))
    })
}

fn build(counts: &[i32], subs: &[(Vec<bool>, bool, u32)], identical: bool) -> GroupSpec {
    let topics: Vec<Topic> = counts
        .iter()
        .enumerate()
        .map(|(i, &p)| Topic {
            name: format!("t{i}"),
            partitions: p,
            id: None,
        })
        .collect();
    let members = subs
        .iter()
        .enumerate()
        .map(|(i, (picks, is_static, salt))| {
            let mut idx: Vec<u32> = (0..topics.len() as u32)
                .filter(|&t| identical || picks[t as usize])
                .collect();
            if idx.is_empty() {
                idx.push(i as u32 % topics.len() as u32);
            }
            Member {
                member_id: format!("consumer-{salt}-{i}"),
                group_instance_id: is_static.then(|| format!("pod-{}", (salt * 7 + i as u32) % 50)),
                subscription: idx
                    .iter()
                    .map(|&t| topics[t as usize].name.clone())
                    .collect(),
                topics: idx,
                owned: vec![],
                generation: None,
                subscription_generation: None,
                rack: None,
            }
        })
        .collect();
    GroupSpec {
        topics,
        members,
        protocol: RebalanceProtocol::Eager,
        racks: Default::default(),
    }
}

fn owners(
    group: &GroupSpec,
    assignment: &[Vec<TopicPartition>],
) -> BTreeMap<TopicPartition, Vec<usize>> {
    let mut owners: BTreeMap<TopicPartition, Vec<usize>> = BTreeMap::new();
    for (m, parts) in assignment.iter().enumerate() {
        for tp in parts {
            owners.entry(*tp).or_default().push(m);
            assert!(
                group.members[m].subscribes(tp.topic),
                "{tp:?} given to a non-subscriber"
            );
        }
    }
    owners
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_subscribed_partition_assigned_exactly_once(group in group_strategy(false)) {
        // Instance ids must be unique in a group; drop duplicates.
        let mut group = group;
        let mut seen = std::collections::BTreeSet::new();
        for m in &mut group.members {
            if let Some(id) = &m.group_instance_id {
                if !seen.insert(id.clone()) { m.group_instance_id = None; }
            }
        }
        for name in EXACT_ONCE {
            let a = by_name(name).unwrap().assign(&group).unwrap().assignment;
            let owners = owners(&group, &a);
            for t in group.subscribed_topics() {
                for p in 0..group.topic(t).partitions {
                    let tp = TopicPartition::new(t, p);
                    prop_assert_eq!(owners.get(&tp).map(Vec::len), Some(1), "{} {:?}", name, tp);
                }
            }
            prop_assert_eq!(owners.len(), group.subscribed_topics().iter().map(|&t| group.topic(t).partitions as usize).sum::<usize>());
        }
    }

    #[test]
    fn roundrobin_balances_identical_subscriptions_within_one(group in group_strategy(true)) {
        let a = by_name("roundrobin").unwrap().assign(&group).unwrap().assignment;
        let counts: Vec<usize> = a.iter().map(Vec::len).collect();
        prop_assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1, "{:?}", counts);
    }

    #[test]
    fn sorted_assignors_ignore_member_order(group in group_strategy(false), seed in any::<u64>()) {
        let mut shuffled = group.clone();
        // A deterministic permutation from the seed.
        let n = shuffled.members.len();
        for i in (1..n).rev() {
            let j = (seed.wrapping_mul(6364136223846793005).wrapping_add(i as u64) % (i as u64 + 1)) as usize;
            shuffled.members.swap(i, j);
        }
        for name in ORDER_FREE {
            let assignor = by_name(name).unwrap();
            let by_id = |g: &GroupSpec| -> BTreeMap<String, Vec<TopicPartition>> {
                let a = assignor.assign(g).unwrap().assignment;
                g.members.iter().zip(a).map(|(m, mut p)| { p.sort(); (m.member_id.clone(), p) }).collect()
            };
            prop_assert_eq!(by_id(&group), by_id(&shuffled), "{}", name);
        }
    }

    /// Racks (KIP-881) never cost balance or coverage: with random member racks and replica
    /// racks, range keeps each topic's per-member counts, the sticky pair keeps identical
    /// subscriptions within one, and every subscribed partition has one owner.
    #[test]
    fn racks_never_cost_coverage_or_balance(
        group in group_strategy(true),
        member_racks in prop::collection::vec(0usize..4, 9),
        replica_racks in prop::collection::vec(prop::collection::vec(0usize..3, 1..4), 60),
    ) {
        let names = ["az-a", "az-b", "az-c"];
        let mut racked = group.clone();
        for (m, &r) in racked.members.iter_mut().zip(&member_racks) {
            // 3 means no rack.
            m.rack = names.get(r).map(|n| n.to_string());
        }
        let mut next = replica_racks.iter().cycle();
        let per_topic: Vec<Vec<Vec<String>>> = racked
            .topics
            .iter()
            .map(|t| (0..t.partitions).map(|_| next.next().unwrap().iter().map(|&r| names[r].to_string()).collect()).collect())
            .collect();
        racked.racks = PartitionRacks::from_names(&per_topic).unwrap();
        for name in ["range", "sticky", "cooperative-sticky"] {
            let assignor = by_name(name).unwrap();
            let with = assignor.assign(&racked).unwrap().assignment;
            let without = assignor.assign(&group).unwrap().assignment;
            let owners = owners(&racked, &with);
            let total: usize = racked.topics.iter().map(|t| t.partitions as usize).sum();
            prop_assert_eq!(owners.len(), total, "{}", name);
            prop_assert!(owners.values().all(|o| o.len() == 1), "{}", name);
            if name == "range" {
                for t in 0..racked.topics.len() as u32 {
                    let counts = |a: &[Vec<TopicPartition>]| {
                        let mut c: Vec<usize> = a.iter().map(|l| l.iter().filter(|tp| tp.topic == t).count()).collect();
                        c.sort_unstable();
                        c
                    };
                    prop_assert_eq!(counts(&with), counts(&without), "range topic {}", t);
                }
            } else {
                let counts: Vec<usize> = with.iter().map(Vec::len).collect();
                prop_assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1, "{} {:?}", name, counts);
            }
        }
    }
}
