//! Where each partition's replicas live, and which replica serves a member's fetches.
//!
//! Placement follows Kafka's `AdminUtils.assignReplicasToBrokers` (server-common): without
//! broker racks, replicas go round-robin from a random start broker, followers shifted by a
//! random amount that grows by one every full round of brokers; with racks, the same walk over
//! a rack-alternated broker list (racks sorted, one broker of each in turn), a follower skipped
//! while its rack (or broker) already holds a replica and some rack (or broker) holds none, so
//! a partition's replicas span `min(replication_factor, racks)` racks. KRaft's controller
//! places with `StripedReplicaPlacer`, which shuffles differently but gives the same spread
//! over racks, which is what the assignors and the fetchers read.
//!
//! Fetch from follower (KIP-392): with `RackAwareReplicaSelector`, a member with a rack reads
//! from the leader when the leader is in its rack, else from a replica in its rack (the most
//! caught-up; here every follower is equally so and the first in replica order is taken), else
//! from the leader.

use crate::scenario::Scenario;
use crate::sim::rng::Stream;

/// Which replica serves a member's fetches of one partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadReplica {
    pub broker: u32,
    /// A follower: its log end trails the leader's by the replication delay.
    pub follower: bool,
    /// The broker is in another rack than the member (both racks known).
    pub cross_rack: bool,
}

#[derive(Clone, Debug)]
pub struct Replicas {
    /// Each broker's rack, by broker id; empty when the brokers have none.
    broker_racks: Vec<String>,
    /// Every partition's replica brokers, leader first, laid end to end by global index.
    brokers: Vec<u32>,
    /// Where partition `p`'s replicas start in `brokers` (one more entry at the end).
    first: Vec<u32>,
}

impl Replicas {
    /// Places every topic's partitions (all it ever has: partitions added later continue the
    /// walk), drawing each topic's start and shift from `placement`. A replication factor of 1
    /// draws only the start, so the leaders of such topics are `(start + p) % brokers`.
    pub fn place(scenario: &Scenario, placement: &mut Stream) -> Replicas {
        let n = scenario.cluster.brokers;
        let racks = &scenario.cluster.broker_racks;
        let arranged = if racks.is_empty() {
            (0..n).collect()
        } else {
            rack_alternated(racks)
        };
        let rack_count = {
            let mut r: Vec<&String> = racks.iter().collect();
            r.sort();
            r.dedup();
            r.len() as u32
        };
        let mut brokers = Vec::new();
        let mut first = Vec::new();
        for t in &scenario.topics {
            let start = placement.between(0, u64::from(n) - 1) as u32;
            let rf = t.replication_factor;
            let mut shift = if rf > 1 {
                placement.between(0, u64::from(n) - 1) as u32
            } else {
                0
            };
            for p in 0..t.max_partitions() {
                if p > 0 && p % n == 0 {
                    shift += 1;
                }
                first.push(brokers.len() as u32);
                let lead = (p + start) % n;
                brokers.push(arranged[lead as usize]);
                if racks.is_empty() {
                    for j in 0..rf - 1 {
                        brokers.push(arranged[replica_index(lead, shift, j, n) as usize]);
                    }
                } else {
                    let placed =
                        rack_aware_followers(&arranged, racks, rack_count, lead, shift, rf);
                    brokers.extend(placed);
                }
            }
        }
        first.push(brokers.len() as u32);
        Replicas {
            broker_racks: racks.clone(),
            brokers,
            first,
        }
    }

    /// Partition `p`'s replica brokers, leader first.
    pub fn of(&self, p: usize) -> &[u32] {
        &self.brokers[self.first[p] as usize..self.first[p + 1] as usize]
    }

    pub fn leader(&self, p: usize) -> u32 {
        self.of(p)[0]
    }

    /// Every partition's leader, by global index.
    pub fn leaders(&self) -> Vec<u32> {
        (0..self.first.len() - 1).map(|p| self.leader(p)).collect()
    }

    pub fn has_racks(&self) -> bool {
        !self.broker_racks.is_empty()
    }

    pub fn broker_rack(&self, broker: u32) -> Option<&str> {
        self.broker_racks.get(broker as usize).map(String::as_str)
    }

    /// The racks of partition `p`'s replicas, in replica order (empty without broker racks).
    pub fn racks_of(&self, p: usize) -> Vec<String> {
        self.of(p)
            .iter()
            .filter_map(|&b| self.broker_rack(b).map(str::to_string))
            .collect()
    }

    /// The replica serving a member in `client_rack` (KIP-392's `RackAwareReplicaSelector`
    /// when `fetch_from_follower`, else always the leader).
    pub fn read_replica(
        &self,
        p: usize,
        client_rack: Option<&str>,
        fetch_from_follower: bool,
    ) -> ReadReplica {
        let replicas = self.of(p);
        let leader = replicas[0];
        let broker = match client_rack {
            Some(rack) if fetch_from_follower && self.broker_rack(leader) != Some(rack) => replicas
                .iter()
                .copied()
                .find(|&b| self.broker_rack(b) == Some(rack))
                .unwrap_or(leader),
            _ => leader,
        };
        let cross_rack = match (client_rack, self.broker_rack(broker)) {
            (Some(member), Some(replica)) => member != replica,
            _ => false,
        };
        ReadReplica {
            broker,
            follower: broker != leader,
            cross_rack,
        }
    }
}

/// `replicaIndex`: the `j`-th follower's position, shifted from the leader's.
fn replica_index(lead: u32, shift: u32, j: u32, n: u32) -> u32 {
    let step = 1 + (shift + j) % (n - 1);
    (lead + step) % n
}

/// `getRackAlternatedBrokerList`: racks in sorted order, each broker list ascending, one broker
/// of each rack in turn.
fn rack_alternated(racks: &[String]) -> Vec<u32> {
    let mut by_rack: std::collections::BTreeMap<&str, Vec<u32>> = Default::default();
    for (b, r) in racks.iter().enumerate() {
        by_rack.entry(r).or_default().push(b as u32);
    }
    let lists: Vec<Vec<u32>> = by_rack.into_values().collect();
    let mut out = Vec::with_capacity(racks.len());
    let mut round = 0;
    while out.len() < racks.len() {
        for list in &lists {
            if let Some(&b) = list.get(round) {
                out.push(b);
            }
        }
        round += 1;
    }
    out
}

/// The followers of the partition led from position `lead` of `arranged`: the shifted walk,
/// skipping a broker whose rack already has a replica while some rack has none, or that already
/// has one while some broker has none.
fn rack_aware_followers(
    arranged: &[u32],
    racks: &[String],
    rack_count: u32,
    lead: u32,
    shift: u32,
    rf: u32,
) -> Vec<u32> {
    let n = arranged.len() as u32;
    let leader = arranged[lead as usize];
    let mut with_replica = vec![leader];
    let mut racks_with: Vec<&str> = vec![&racks[leader as usize]];
    let mut k = 0;
    for _ in 0..rf - 1 {
        loop {
            let broker = arranged[replica_index(lead, shift * rack_count, k, n) as usize];
            let rack = racks[broker as usize].as_str();
            k += 1;
            let rack_ok = !racks_with.contains(&rack) || racks_with.len() as u32 == rack_count;
            let broker_ok = !with_replica.contains(&broker) || with_replica.len() as u32 == n;
            if rack_ok && broker_ok {
                with_replica.push(broker);
                if !racks_with.contains(&rack) {
                    racks_with.push(rack);
                }
                break;
            }
        }
    }
    with_replica.split_off(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(r: &[&str]) -> Vec<String> {
        r.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn brokers_alternate_over_sorted_racks() {
        // Brokers 0..5 in racks c, a, b, a, b, c: a's [1, 3], b's [2, 4], c's [0, 5].
        let racks = names(&["c", "a", "b", "a", "b", "c"]);
        assert_eq!(rack_alternated(&racks), [1, 2, 0, 3, 4, 5]);
        // Uneven racks: the short one drops out of the rotation.
        assert_eq!(rack_alternated(&names(&["a", "a", "a", "b"])), [0, 3, 1, 2]);
    }

    #[test]
    fn followers_spread_over_racks_before_doubling_up() {
        let racks = names(&["a", "b", "c", "a", "b", "c"]);
        let arranged = rack_alternated(&racks);
        for lead in 0..6 {
            for shift in 0..6 {
                let followers = rack_aware_followers(&arranged, &racks, 3, lead, shift, 3);
                let mut all: Vec<&str> = std::iter::once(arranged[lead as usize])
                    .chain(followers.iter().copied())
                    .map(|b| racks[b as usize].as_str())
                    .collect();
                all.sort();
                assert_eq!(all, ["a", "b", "c"], "lead {lead} shift {shift}");
            }
        }
        // Two racks, RF 3: both racks first, then a second broker in one of them.
        let racks = names(&["a", "b", "a", "b"]);
        let arranged = rack_alternated(&racks);
        let f = rack_aware_followers(&arranged, &racks, 2, 0, 0, 3);
        assert_eq!(racks[f[0] as usize], "b");
        assert_eq!(f.len(), 2);
        assert_ne!(f[1], arranged[0]);
    }

    #[test]
    fn replica_index_shifts_like_kafka() {
        // 5 brokers, leader at 2, shift 0: followers at 3, 4; shift 3: at 1 (2+4), 3 (2+1).
        assert_eq!(replica_index(2, 0, 0, 5), 3);
        assert_eq!(replica_index(2, 0, 1, 5), 4);
        assert_eq!(replica_index(2, 3, 0, 5), 1);
        assert_eq!(replica_index(2, 3, 1, 5), 3);
    }

    #[test]
    fn the_selector_prefers_the_leader_then_the_members_rack() {
        let r = Replicas {
            broker_racks: names(&["a", "b", "c"]),
            brokers: vec![0, 1, 2],
            first: vec![0, 3],
        };
        let read = |rack: Option<&str>, ffs| r.read_replica(0, rack, ffs);
        assert_eq!(
            read(Some("a"), true),
            ReadReplica {
                broker: 0,
                follower: false,
                cross_rack: false
            }
        );
        assert_eq!(
            read(Some("c"), true),
            ReadReplica {
                broker: 2,
                follower: true,
                cross_rack: false
            }
        );
        assert_eq!(
            read(Some("c"), false),
            ReadReplica {
                broker: 0,
                follower: false,
                cross_rack: true
            }
        );
        assert_eq!(
            read(Some("z"), true),
            ReadReplica {
                broker: 0,
                follower: false,
                cross_rack: true
            }
        );
        // A member without a rack is never counted as crossing one.
        assert_eq!(
            read(None, true),
            ReadReplica {
                broker: 0,
                follower: false,
                cross_rack: false
            }
        );
        assert_eq!(r.racks_of(0), ["a", "b", "c"]);
    }
}
