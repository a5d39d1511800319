//! The rebalance under way, from PreparingRebalance to Stable, with its trigger and cause,
//! the formation, the fewest moves a balanced assignment needed, and co-partitioning broken by
//! added partitions.

use super::*;
use serde::Serialize;

/// The group's formation: its first rebalance until the first Stable with every running
/// member in it.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Formation {
    pub generation: i32,
    pub start_ms: u64,
    pub end_ms: u64,
    pub duration_ms: u64,
}

/// Co-partitioned topics whose partition counts differ since a topic grew.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct CoPartitionBreak {
    pub at_ms: u64,
    pub topics: Vec<String>,
    pub partition_counts: Vec<u32>,
    pub unmatched_indexes: Vec<u32>,
}

impl Ledger {
    /// A topic grew: co-partitioned groups whose counts now differ are reported with the
    /// indexes that exist in some of their topics but not all.
    pub(super) fn partitions_added(&mut self, now: SimTime, counts: &[u32]) {
        self.partitions_added_at = Some(now);
        let mut p = 0;
        for (t, topic) in self.topics.iter().enumerate() {
            for i in 0..topic.max_partitions {
                self.partition_exists[p] = i < counts[t];
                p += 1;
            }
        }
        for group in &self.topics_co_partitioned {
            let c: Vec<u32> = group.iter().map(|&t| counts[t]).collect();
            let (min, max) = (
                c.iter().copied().min().unwrap_or(0),
                c.iter().copied().max().unwrap_or(0),
            );
            if min != max {
                self.tallies.co_partitioning.push(CoPartitionBreak {
                    at_ms: now.as_millis(),
                    topics: group.iter().map(|&t| self.topics[t].name.clone()).collect(),
                    partition_counts: c,
                    unmatched_indexes: (min..max).collect(),
                });
            }
        }
    }

    pub(super) fn rebalance_started(
        &mut self,
        now: SimTime,
        generation: i32,
        trigger: Trigger,
        member: Option<usize>,
    ) {
        self.mark(now, Mark::RebalanceStart { generation });
        if !self.formed() {
            self.first_rebalance_start.get_or_insert(now);
            return;
        }
        let cause = member.map_or(now, |m| match trigger {
            Trigger::MemberJoined => self.joining_at[m],
            Trigger::MemberRestarted => self.started_at[m],
            Trigger::MemberLeft => self.close_requested_at[m].unwrap_or(now),
            Trigger::MemberExpired => self.crashed_at[m].unwrap_or(now),
            Trigger::PollTimeout => self.stall_started_at[m].unwrap_or(now),
            Trigger::MetadataChanged => self.partitions_added_at.unwrap_or(now),
            _ => now,
        });
        self.tell(Change::RebalanceStarted {
            cause: cause.min(now),
        });
        let owners: BTreeSet<usize> = self.owner.iter().flatten().copied().collect();
        let members: BTreeSet<usize> = (0..self.in_group.len())
            .filter(|&m| self.in_group[m])
            .collect();
        let (owners_at_start, members_at_start, last_owner_at_start) = match self.running.take() {
            // Superseded before it was Stable: the pauses it began go on.
            Some(r) => (
                r.owners_at_start.union(&owners).copied().collect(),
                r.members_at_start,
                r.last_owner_at_start,
            ),
            None => (owners, members, self.last_owner.clone()),
        };
        self.running = Some(Running {
            generation,
            trigger,
            member,
            start: now,
            cause: cause.min(now),
            join_end: None,
            assignor: String::new(),
            owners_at_start,
            members_at_start,
            revoked_by: BTreeMap::new(),
            last_owner_at_start,
        });
    }

    pub(super) fn join_completed(&mut self, now: SimTime, generation: i32, assignor: &str) {
        self.mark(now, Mark::JoinComplete { generation });
        if let Some(r) = self.running.as_mut() {
            r.generation = generation;
            r.assignor = assignor.to_string();
            r.join_end = Some(now);
        }
    }

    pub(super) fn group_stable(&mut self, now: SimTime, generation: i32) {
        self.mark(now, Mark::Stable { generation });
        let everyone_in =
            (0..self.in_group.len()).all(|m| !self.running_process[m] || self.in_group[m]);
        if !self.formed() && self.incremental_join && !everyone_in {
            return;
        }
        if !self.formed() {
            let start = self.first_rebalance_start.unwrap_or(now);
            let (start_ms, end_ms) = (start.as_millis(), now.as_millis());
            self.formation = Some(Formation {
                generation,
                start_ms,
                end_ms,
                duration_ms: end_ms - start_ms,
            });
            return;
        }
        let Some(r) = self.running.take() else {
            return;
        };
        for (&m, &n) in &r.revoked_by {
            if self.in_group[m] && r.members_at_start.contains(&m) {
                self.tallies.revocations_by_staying += n;
            }
        }
        // A cooperative follow-up finishes the rebalance that caused it: the minimum was
        // counted there.
        if r.trigger != Trigger::FollowUp {
            self.tallies.moved_minimum += self.minimum_moves(&r.last_owner_at_start);
        }
        let stopped: Vec<usize> = r
            .owners_at_start
            .iter()
            .copied()
            .filter(|&m| self.in_group[m])
            .collect();
        self.tallies.stopped_members.extend(stopped);
        self.completed.push(CompletedRebalance {
            generation,
            trigger: r.trigger,
            member: r.member,
            cause: r.cause,
            start: r.start,
            join_end: r.join_end,
            end: now,
            assignor: r.assignor,
        });
        self.tell(Change::RebalanceCompleted);
    }

    /// The fewest owner changes a balanced assignment of every existing partition over the
    /// members now in the group needed, given each partition's last owner (identical
    /// subscriptions): every previously owned partition is a move unless its owner stays and
    /// keeps it within its quota (the larger quotas going to the members that hold the most).
    /// A partition nobody owned before (a new one) is not a move.
    fn minimum_moves(&self, last_owner: &[Option<usize>]) -> u64 {
        let members: Vec<usize> = (0..self.in_group.len())
            .filter(|&m| self.in_group[m])
            .collect();
        if members.is_empty() {
            return 0;
        }
        let existing: Vec<usize> = (0..last_owner.len())
            .filter(|&p| self.partition_exists[p])
            .collect();
        let total = existing.len() as u64;
        let previously_owned = existing
            .iter()
            .filter(|&&p| last_owner[p].is_some())
            .count() as u64;
        // What each member in the group held, counted in one pass over the partitions.
        let mut held_by = vec![0u64; self.in_group.len()];
        for &p in &existing {
            if let Some(m) = last_owner[p] {
                held_by[m] += 1;
            }
        }
        let mut held: Vec<u64> = members.iter().map(|&m| held_by[m]).collect();
        held.sort_unstable_by(|a, b| b.cmp(a));
        let n = members.len() as u64;
        let (base, extra) = (total / n, total % n);
        let kept: u64 = held
            .iter()
            .enumerate()
            .map(|(i, &h)| h.min(base + u64::from((i as u64) < extra)))
            .sum();
        previously_owned - kept
    }
}
