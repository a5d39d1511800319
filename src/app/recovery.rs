//! One member's application state: the partition-local join's map, and state recovery after
//! an assignment (none, a changelog replay at `restore_records_per_sec`, or a standby
//! takeover), during which the task is paused (Kafka Streams, `pause_during_restore`) or
//! notifications flow and miss (a plain consumer). The consumer calls it with what it owns and
//! where it stands; it answers what happened (join outcomes, a restore to time), and the
//! consumer turns that into facts and timers.

use super::join::{JoinState, MemberView};
use super::standby::StandbyPlacement;
use crate::cluster::PartitionSpace;
use crate::facts::Miss;
use crate::scenario::{JoinApp, Recovery, Scenario};
use crate::workload::partitioner::default_partition;
use crate::workload::producer::Logs;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default)]
pub struct TaskState {
    /// The local join's state (the latest price per symbol).
    join: JoinState,
    /// Price partitions whose state is being rebuilt.
    restoring: BTreeSet<usize>,
    /// Price partitions whose join state this member holds (processed or restored).
    state_partitions: BTreeSet<usize>,
    /// Partitions not processed while their task restores (`pause_during_restore`).
    paused: BTreeSet<usize>,
    /// Each newly assigned partition's previous owner (who a standby replica follows).
    previous_owner: BTreeMap<usize, Option<usize>>,
}

/// A restore begun: how many records it replays and whether a standby takes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restore {
    pub records: u64,
    pub duration_us: u64,
    pub standby: bool,
}

/// Where the member stands, for the join's classification.
pub struct Owned<'a> {
    pub owned: &'a [usize],
    /// Next offset to process per owned partition.
    pub positions: &'a dyn super::join::Positions,
}

impl TaskState {
    /// Whether the task of `p` is paused while its state restores.
    pub fn is_paused(&self, p: usize) -> bool {
        self.paused.contains(&p)
    }

    /// `p` was just assigned; `previous_owner` owned it before.
    pub fn assigned(&mut self, p: usize, previous_owner: Option<usize>) {
        self.previous_owner.insert(p, previous_owner);
    }

    /// Partitions leave the member (revoked or lost): restores stop, and the join state goes
    /// unless the app keeps state across revocations.
    pub fn dropped(&mut self, parts: &[usize], keep_state: bool) {
        for p in parts {
            self.restoring.remove(p);
            self.paused.remove(p);
        }
        if !keep_state {
            self.join.forget(parts);
            for p in parts {
                self.state_partitions.remove(p);
            }
        }
    }

    /// The application on records `[from, to)` of partition `p`, in order: prices fill the
    /// local map, notifications look it up. Returns each notification's outcome and latency.
    #[allow(clippy::too_many_arguments)]
    pub fn process(
        &mut self,
        scenario: &Scenario,
        partitions: &PartitionSpace,
        logs: &Logs,
        member: Owned,
        now_us: u64,
        p: usize,
        from: u64,
        to: u64,
    ) -> Vec<(Result<(), Miss>, u64)> {
        let mut outcomes = Vec::new();
        let Some(app) = scenario.app.as_ref() else {
            return outcomes;
        };
        let topic = partitions.topic(p);
        for offset in from..to {
            let Some(record) = logs.record(p, offset) else {
                continue;
            };
            if topic == app.prices {
                self.join.apply_price(record.key, p, offset);
            } else if topic == app.notifications {
                let latency_us = now_us.saturating_sub(record.time_us);
                if self.join.has(record.key) {
                    outcomes.push((Ok(()), latency_us));
                    continue;
                }
                let count = scenario.topics[app.prices].partitions_at(record.time_us / 1000);
                let key_name = logs.key(record.key);
                let home = partitions.first(app.prices)
                    + default_partition(key_name.as_bytes(), count) as usize;
                let view = MemberView {
                    owned: member.owned,
                    positions: member.positions,
                    restoring: &self.restoring,
                };
                let outcome =
                    self.join
                        .classify(app, logs, &view, record.key, record.time_us, home);
                outcomes.push((outcome, latency_us));
            }
        }
        outcomes
    }

    /// A price partition was assigned and its start position is known: rebuild its state as
    /// the app's recovery mode says. `None` when nothing is to be replayed (the member kept a
    /// current state, the mode is `none`, or the changelog is empty); otherwise the restore
    /// begun, which the caller ends with [`TaskState::restore_done`] after its duration.
    #[allow(clippy::too_many_arguments)]
    pub fn rebuild(
        &mut self,
        app: &JoinApp,
        partitions: &PartitionSpace,
        logs: &Logs,
        standby: &StandbyPlacement,
        me: usize,
        p: usize,
        start: u64,
    ) -> Option<Restore> {
        if partitions.topic(p) != app.prices {
            return None;
        }
        // Kept state is current only if nobody else owned the partition in between.
        let previous = self.previous_owner.get(&p).copied().flatten();
        if self.state_partitions.contains(&p) && previous == Some(me) {
            return None;
        }
        let state = logs.compacted(p, start);
        let by_standby = match app.recovery {
            Recovery::None => {
                // The map starts empty for this partition; only new prices fill it.
                self.state_partitions.insert(p);
                return None;
            }
            Recovery::Changelog => false,
            Recovery::Standby => standby.standby_holder(previous) == Some(me),
        };
        let records = if by_standby { 0 } else { state.len() as u64 };
        if records == 0 && !by_standby {
            // An empty changelog: nothing to replay.
            self.state_partitions.insert(p);
            return None;
        }
        let duration_us =
            (u128::from(records) * 1_000_000 / u128::from(app.restore_records_per_sec)) as u64;
        self.restoring.insert(p);
        if app.pause_during_restore {
            // Kafka Streams: the whole task (index p of both topics) waits for its state.
            let index = partitions.number(p) as usize;
            let partner = partitions.first(app.notifications) + index;
            self.paused.insert(p);
            if partner < partitions.len() && partitions.topic(partner) == app.notifications {
                self.paused.insert(partner);
            }
        }
        Some(Restore {
            records,
            duration_us,
            standby: by_standby,
        })
    }

    /// The restore of `p` has taken its time: the state is loaded and the task resumes.
    /// `false` when `p` was revoked meanwhile.
    pub fn restore_done(
        &mut self,
        partitions: &PartitionSpace,
        logs: &Logs,
        p: usize,
        start: u64,
    ) -> bool {
        if !self.restoring.remove(&p) {
            return false;
        }
        for (key, offset) in logs.compacted(p, start) {
            self.join.restore(key, p, offset);
        }
        self.state_partitions.insert(p);
        let index = partitions.number(p);
        self.paused.retain(|&q| partitions.number(q) != index);
        true
    }
}
