//! What a run measured: the record of the truth (who owns which partition, who processes it),
//! the invariant checker, pauses, rebalances and record accounting. The coordinator and members
//! report what happened; nothing here feeds back into the simulation.
//!
//! Definitions are DESIGN.md's ("What is measured", "What counts"): a member owns a partition
//! from its assignment until the first of its revoke or lost callback, its crash, or the
//! coordinator removing it from the group.

mod history;
pub mod outcome;
mod stats;

pub use history::{History, Mark};

pub use stats::{nearest_rank, Summary};

use crate::app::join::Miss;
use crate::facts::Fact;
pub use crate::group::messages::Trigger;
use crate::scenario::Scenario;
use crate::sim::SimTime;
use crate::workload::producer::Logs;
use outcome::{
    CoPartitionBreak, Formation, Invariants, JoinMetrics, Lag, Lost, Moved, Pauses, Percentiles,
    RebalanceEntry, Rebalances, Records, Recovery, Report, ReportMember, Revocations, Window,
};
use std::collections::{BTreeMap, BTreeSet};

/// A rebalance from PreparingRebalance until Stable.
struct Running {
    generation: i32,
    trigger: Trigger,
    member: Option<usize>,
    start: SimTime,
    cause: SimTime,
    join_end: Option<SimTime>,
    /// Members that owned partitions when it began (stop-the-world counts only them).
    owners_at_start: BTreeSet<usize>,
    /// Members in the group when it began.
    members_at_start: BTreeSet<usize>,
    revoked_by: BTreeMap<usize, u64>,
    /// Each partition's last owner when it began, for `moved`.
    last_owner_at_start: Vec<Option<usize>>,
}

pub struct Metrics {
    member_names: Vec<String>,
    member_ids: Vec<String>,
    partition_names: Vec<String>,
    started_at: Vec<SimTime>,
    /// When the member last started joining as a new member (no member id).
    joining_at: Vec<SimTime>,
    close_requested_at: Vec<Option<SimTime>>,
    crashed_at: Vec<Option<SimTime>>,
    stall_started_at: Vec<Option<SimTime>>,
    stalled_parts: Vec<Vec<usize>>,
    in_group: Vec<bool>,
    // Ownership and processing truth, per partition.
    owner: Vec<Option<usize>>,
    /// Partitions each member owns (the count of `owner` entries naming it).
    owned_count: Vec<u32>,
    last_owner: Vec<Option<usize>>,
    active: Vec<Option<usize>>,
    unavailable_since: Vec<Option<SimTime>>,
    unavailable_us: Vec<u64>,
    // Group history.
    first_rebalance_start: Option<SimTime>,
    formation: Option<Formation>,
    running: Option<Running>,
    rebalances: Vec<RebalanceEntry>,
    // Pauses.
    paused_since: Vec<Option<SimTime>>,
    stop_the_world_us: Vec<u64>,
    stopped_members: BTreeSet<usize>,
    // Counters.
    revocations_total: u64,
    revocations_by_staying: u64,
    revocations_per_member: Vec<u64>,
    lost_total: u64,
    lost_by_crash: u64,
    moved_total: u64,
    moved_minimum: u64,
    // Records.
    accounted_upto: Vec<u64>,
    processed: u64,
    processed_twice: u64,
    skipped: u64,
    co_partitioning: Vec<CoPartitionBreak>,
    /// Partitions that exist now (added partitions exist from when they are added).
    partition_exists: Vec<bool>,
    partitions_added_at: Option<SimTime>,
    join: JoinMetrics,
    join_latencies_ms: Vec<u64>,
    recovery: Recovery,
    /// The processed position of each partition's current owner.
    position: Vec<u64>,
    lag_peak: Vec<u64>,
    lag_series: Vec<(u64, u64)>,
    last_total_lag: u64,
    /// The current rebalance window's figures, and the entry they belong to once it is Stable.
    window: Window,
    window_entry: Option<usize>,
    batch_records: u64,
    history: Option<History>,
    errors: Vec<String>,
}

fn ms(t: SimTime) -> u64 {
    t.as_millis()
}

impl Metrics {
    pub fn new(scenario: &Scenario, partition_names: Vec<String>) -> Self {
        let n = scenario.members.len();
        let p = partition_names.len();
        Metrics {
            member_names: scenario.members.iter().map(|m| m.name.clone()).collect(),
            member_ids: vec![String::new(); n],
            partition_names,
            started_at: vec![SimTime::ZERO; n],
            joining_at: vec![SimTime::ZERO; n],
            close_requested_at: vec![None; n],
            crashed_at: vec![None; n],
            stall_started_at: vec![None; n],
            stalled_parts: vec![Vec::new(); n],
            in_group: vec![false; n],
            owner: vec![None; p],
            owned_count: vec![0; n],
            last_owner: vec![None; p],
            active: vec![None; p],
            unavailable_since: vec![None; p],
            unavailable_us: vec![0; p],
            first_rebalance_start: None,
            formation: None,
            running: None,
            rebalances: Vec::new(),
            paused_since: vec![None; n],
            stop_the_world_us: vec![0; n],
            stopped_members: BTreeSet::new(),
            revocations_total: 0,
            revocations_by_staying: 0,
            revocations_per_member: vec![0; n],
            lost_total: 0,
            lost_by_crash: 0,
            moved_total: 0,
            moved_minimum: 0,
            accounted_upto: vec![0; p],
            processed: 0,
            processed_twice: 0,
            skipped: 0,
            co_partitioning: Vec::new(),
            partition_exists: scenario
                .topics
                .iter()
                .flat_map(|t| (0..t.max_partitions()).map(move |p| p < t.partitions))
                .collect(),
            partitions_added_at: None,
            join: JoinMetrics::default(),
            join_latencies_ms: Vec::new(),
            recovery: Recovery::default(),
            position: vec![0; p],
            lag_peak: vec![0; p],
            lag_series: Vec::new(),
            last_total_lag: 0,
            window: Window::default(),
            window_entry: None,
            batch_records: scenario.group.max_poll_records,
            history: None,
            errors: Vec::new(),
        }
    }

    /// Keep a [`History`] of the run.
    pub fn record_history(&mut self) {
        self.history = Some(History {
            member_names: self.member_names.clone(),
            partition_names: self.partition_names.clone(),
            marks: Vec::new(),
        });
    }

    fn mark(&mut self, now: SimTime, mark: Mark) {
        if let Some(h) = self.history.as_mut() {
            h.marks.push((now.as_micros(), mark));
        }
    }

    /// The recorded history, if any.
    pub fn take_history(&mut self) -> Option<History> {
        self.history.take()
    }

    fn formed(&self) -> bool {
        self.formation.is_some()
    }

    /// Takes in one fact from a model (the world calls this for every fact, in order).
    pub fn observe(&mut self, now: SimTime, fact: &Fact) {
        match fact {
            Fact::MemberAdded { member, member_id }
            | Fact::MemberReplaced { member, member_id } => self.member_added(*member, member_id),
            Fact::MemberRemoved { member, member_id } => {
                self.member_removed(now, *member, member_id)
            }
            Fact::RebalanceStarted {
                generation,
                trigger,
                member,
            } => self.rebalance_started(now, *generation, *trigger, *member),
            Fact::JoinCompleted { generation } => self.join_completed(now, *generation),
            Fact::GroupStable { generation } => self.group_stable(now, *generation),
            Fact::GroupEmpty => self.group_empty(now),
            Fact::ProcessStarted { member } => self.process_started(now, *member),
            Fact::Joining { member } => self.joining(now, *member),
            Fact::CloseRequested { member } => self.close_requested(now, *member),
            Fact::ProcessStopped { member } => self.process_stopped(now, *member),
            Fact::Crashed { member, owned } => self.crashed(now, *member, owned),
            Fact::Stalled { member, until } => self.stalled(now, *member, *until),
            Fact::StallEnded { member } => self.stall_ended(now, *member),
            Fact::FatalError { member, error } => self.fatal_error(now, *member, error),
            Fact::Assigned { member, partitions } => self.assigned(now, *member, partitions),
            Fact::Revoked { member, partitions } => self.revoked(now, *member, partitions),
            Fact::RevokedOnClose { member, partitions } => {
                self.revoked_on_close(now, *member, partitions)
            }
            Fact::Lost { member, partitions } => self.lost(now, *member, partitions),
            Fact::ProcessingStarted { member, partitions } => {
                self.processing_started(now, *member, partitions)
            }
            Fact::PositionSet {
                partition,
                position,
            } => self.position_set(*partition, *position),
            Fact::Processed {
                member,
                partition,
                from,
                to,
            } => self.processed(*member, *partition, *from, *to),
            Fact::Notification {
                outcome,
                latency_us,
            } => self.notification(*outcome, *latency_us),
            Fact::RestoreStarted {
                member,
                partition,
                standby,
                records,
                duration_us,
            } => self.restore_started(now, *member, *partition, *standby, *records, *duration_us),
            // The checkers' concern (check/offsets.rs).
            Fact::OffsetCommitted { .. } => {}
        }
    }

    // ---- Member lifecycle ----

    /// A member's process starts.
    pub fn process_started(&mut self, now: SimTime, m: usize) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "start",
            },
        );
        self.started_at[m] = now;
        self.close_requested_at[m] = None;
        self.crashed_at[m] = None;
    }

    /// The member sends a JoinGroup without a member id: it joins as a new member.
    pub fn joining(&mut self, now: SimTime, m: usize) {
        self.joining_at[m] = now;
    }

    pub fn close_requested(&mut self, now: SimTime, m: usize) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "close",
            },
        );
        self.close_requested_at[m] = Some(now);
    }

    pub fn process_stopped(&mut self, _now: SimTime, m: usize) {
        self.paused_since[m] = None;
    }

    pub fn crashed(&mut self, now: SimTime, m: usize, owned: &[usize]) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "crash",
            },
        );
        self.crashed_at[m] = Some(now);
        self.paused_since[m] = None;
        if self.formed() {
            self.lost_by_crash += owned.len() as u64;
        }
        for &p in owned {
            self.release(now, m, p);
        }
    }

    pub fn stalled(&mut self, now: SimTime, m: usize, _until: SimTime) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "stall_begin",
            },
        );
        self.stall_started_at[m] = Some(now);
        let parts: Vec<usize> = (0..self.active.len())
            .filter(|&p| self.active[p] == Some(m))
            .collect();
        for &p in &parts {
            self.stop_processing(now, p);
        }
        self.stalled_parts[m] = parts;
    }

    /// A topic grew: co-partitioned groups whose counts now differ are reported with the
    /// indexes that exist in some of their topics but not all.
    pub fn partitions_added(&mut self, now: SimTime, scenario: &Scenario, counts: &[u32]) {
        self.partitions_added_at = Some(now);
        let mut p = 0;
        for (t, topic) in scenario.topics.iter().enumerate() {
            for i in 0..topic.max_partitions() {
                self.partition_exists[p] = i < counts[t];
                p += 1;
            }
        }
        for group in &scenario.co_partitioned {
            let c: Vec<u32> = group.iter().map(|&t| counts[t]).collect();
            let (min, max) = (
                c.iter().copied().min().unwrap_or(0),
                c.iter().copied().max().unwrap_or(0),
            );
            if min != max {
                self.co_partitioning.push(CoPartitionBreak {
                    at_ms: ms(now),
                    topics: group
                        .iter()
                        .map(|&t| scenario.topics[t].name.clone())
                        .collect(),
                    partition_counts: c,
                    unmatched_indexes: (min..max).collect(),
                });
            }
        }
    }

    /// A notification was joined (or missed, for one reason) `latency_us` after it was produced.
    pub fn notification(&mut self, outcome: Result<(), Miss>, latency_us: u64) {
        self.join.notifications += 1;
        let in_window = self.formed() && (self.running.is_some() || self.window_entry.is_some());
        for misses in [
            Some(&mut self.join.misses),
            in_window.then_some(&mut self.window.join_misses),
        ]
        .into_iter()
        .flatten()
        {
            match outcome {
                Ok(()) => {}
                Err(Miss::NotCoLocated) => misses.not_co_located += 1,
                Err(Miss::NoPriceYet) => misses.no_price_yet += 1,
                Err(Miss::OutOfOrder) => misses.out_of_order += 1,
                Err(Miss::Restoring) => misses.restoring += 1,
                Err(Miss::StateEmpty) => misses.state_empty += 1,
            }
        }
        if outcome.is_ok() {
            self.join.local_hits += 1;
        }
        self.join_latencies_ms.push(latency_us / 1000);
    }

    /// A member begins rebuilding a price partition's state: `records` replayed over
    /// `duration_us` (0 for a standby takeover).
    pub fn restore_started(
        &mut self,
        now: SimTime,
        m: usize,
        p: usize,
        standby: bool,
        records: u64,
        duration_us: u64,
    ) {
        self.mark(
            now,
            Mark::Restore {
                member: m,
                partition: p,
                until_us: now.as_micros() + duration_us,
            },
        );
        let in_window = self.formed() && (self.running.is_some() || self.window_entry.is_some());
        let r = &mut self.recovery;
        r.restores += 1;
        r.standby_takeovers += u64::from(standby);
        r.restored_records += records;
        r.restore_ms += duration_us / 1000;
        if in_window {
            let w = &mut self.window;
            w.restores += 1;
            w.standby_takeovers += u64::from(standby);
            w.restored_records += records;
            w.restore_ms += duration_us / 1000;
        }
    }

    /// Samples consumer lag: every existing partition's log end offset minus the processed
    /// position of its owner.
    pub fn sample_lag(&mut self, now: SimTime, logs: &Logs) {
        let mut total = 0u64;
        for p in 0..self.position.len() {
            if !self.partition_exists[p] {
                continue;
            }
            let lag = logs.end_offset(p, now).saturating_sub(self.position[p]);
            // Peaks count after formation: before it nobody consumes yet.
            if self.formation.is_some() {
                self.lag_peak[p] = self.lag_peak[p].max(lag);
            }
            total += lag;
        }
        self.last_total_lag = total;
        self.lag_series.push((ms(now), total));
        if !self.formed() {
            return;
        }
        // The window's peak: from the rebalance's start until lag has caught up.
        if (self.running.is_some() || self.window_entry.is_some())
            && self.window.catch_up_ms.is_none()
        {
            self.window.lag_peak = self.window.lag_peak.max(total);
        }
        if let Some(i) = self.window_entry {
            let end = self.rebalances[i].end_ms;
            if self.window.catch_up_ms.is_none()
                && self.running.is_none()
                && total <= self.window.lag_before + self.batch_records
            {
                self.window.catch_up_ms = Some(ms(now).saturating_sub(end));
            }
        }
    }

    /// How finely to sample lag now: up to 100 times finer while a rebalance runs, 10 while its
    /// window catches up (for at most a minute after its end), 1 otherwise; a group with many
    /// partitions samples less finely (each sample reads every partition).
    pub fn lag_sampling_factor(&self, now: SimTime) -> u64 {
        let partitions = self.position.len().max(1) as u64;
        let budget = |most: u64, per_sample: u64| (per_sample / partitions).clamp(1, most);
        if self.running.is_some() {
            return budget(100, 100_000);
        }
        match self.window_entry {
            Some(i)
                if self.window.catch_up_ms.is_none()
                    && ms(now) < self.rebalances[i].end_ms + 60_000 =>
            {
                budget(10, 10_000)
            }
            _ => 1,
        }
    }

    /// The current window's figures go to its rebalance's entry.
    fn close_window(&mut self) {
        if let Some(i) = self.window_entry.take() {
            self.rebalances[i].window = std::mem::take(&mut self.window);
        }
    }

    pub fn fatal_error(&mut self, now: SimTime, m: usize, what: &str) {
        self.errors.push(format!(
            "{} ms: {} failed: {what}",
            ms(now),
            self.member_names[m]
        ));
    }

    // ---- Coordinator side ----

    pub fn member_added(&mut self, m: usize, member_id: &str) {
        self.member_ids[m] = member_id.to_string();
        self.in_group[m] = true;
    }

    /// The coordinator removed the member: its ownership ends now.
    pub fn member_removed(&mut self, now: SimTime, m: usize, member_id: &str) {
        if self.member_ids[m] == member_id {
            self.in_group[m] = false;
        }
        if self.owned_count[m] > 0 {
            for p in 0..self.owner.len() {
                if self.owner[p] == Some(m) {
                    self.release(now, m, p);
                }
            }
        }
        self.paused_since[m] = None;
    }

    pub fn rebalance_started(
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
        self.close_window();
        // The lag before the rebalance: at its cause (a crash 45 s earlier, say), not its start.
        let cause_ms = ms(cause.min(now));
        self.window.lag_before = self
            .lag_series
            .iter()
            .rev()
            .find(|&&(at, _)| at <= cause_ms)
            .map_or(self.last_total_lag, |&(_, lag)| lag);
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
            owners_at_start,
            members_at_start,
            revoked_by: BTreeMap::new(),
            last_owner_at_start,
        });
    }

    pub fn join_completed(&mut self, now: SimTime, generation: i32) {
        self.mark(now, Mark::JoinComplete { generation });
        if let Some(r) = self.running.as_mut() {
            r.generation = generation;
            r.join_end = Some(now);
        }
    }

    pub fn group_stable(&mut self, now: SimTime, generation: i32) {
        self.mark(now, Mark::Stable { generation });
        if !self.formed() {
            let start = self.first_rebalance_start.unwrap_or(now);
            self.formation = Some(Formation {
                generation,
                start_ms: ms(start),
                end_ms: ms(now),
                duration_ms: ms(now) - ms(start),
            });
            return;
        }
        let Some(r) = self.running.take() else {
            return;
        };
        for (&m, &n) in &r.revoked_by {
            if self.in_group[m] && r.members_at_start.contains(&m) {
                self.revocations_by_staying += n;
            }
        }
        // A cooperative follow-up finishes the rebalance that caused it: the minimum was
        // counted there.
        if r.trigger != Trigger::FollowUp {
            self.moved_minimum += self.minimum_moves(&r.last_owner_at_start);
        }
        let join_end = r.join_end.unwrap_or(now);
        if r.trigger == Trigger::FollowUp {
            // Chained follow-ups all belong to the first rebalance that was not one.
            if let Some(cause) = self
                .rebalances
                .iter_mut()
                .rev()
                .find(|e| e.trigger != Trigger::FollowUp.name())
            {
                cause.follow_up_ms = ms(now) - cause.end_ms;
            }
        }
        self.rebalances.push(RebalanceEntry {
            generation,
            trigger: r.trigger.name().to_string(),
            member: r.member.map(|m| self.member_names[m].clone()),
            start_ms: ms(r.start),
            end_ms: ms(now),
            duration_ms: ms(now) - ms(r.start),
            detect_ms: ms(r.start) - ms(r.cause),
            join_ms: ms(join_end) - ms(r.start),
            sync_ms: ms(now) - ms(join_end),
            follow_up_ms: 0,
            window: Window::default(),
        });
        self.window_entry = Some(self.rebalances.len() - 1);
        self.stopped_members
            .extend(r.owners_at_start.iter().filter(|&&m| self.in_group[m]));
    }

    pub fn group_empty(&mut self, _now: SimTime) {
        self.running = None;
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
        let mut held: Vec<u64> = members
            .iter()
            .map(|&m| {
                existing
                    .iter()
                    .filter(|&&p| last_owner[p] == Some(m))
                    .count() as u64
            })
            .collect();
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

    // ---- Member callbacks ----

    /// A member receives partitions (SyncGroup): it owns them from now.
    pub fn assigned(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        self.acquire(now, m, parts);
        if parts.is_empty() {
            self.end_pause(now, m);
        }
    }

    /// Ownership starts (double ownership is the checkers' concern: check/ownership.rs).
    pub fn acquire(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        for &p in parts {
            if self.formed() && self.last_owner[p].is_some_and(|o| o != m) {
                self.moved_total += 1;
            }
            if self.owner[p] != Some(m) {
                if let Some(o) = self.owner[p] {
                    self.owned_count[o] -= 1;
                }
                self.owned_count[m] += 1;
            }
            self.owner[p] = Some(m);
            self.last_owner[p] = Some(m);
            self.mark(
                now,
                Mark::Owner {
                    partition: p,
                    member: Some(m),
                },
            );
        }
    }

    /// `onPartitionsRevoked` in a rebalance: EAGER's `onJoinPrepare`, or COOPERATIVE's
    /// `onJoinComplete` right after a rebalance (counted with it: whether the member stays is
    /// known now).
    pub fn revoked(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        if self.formed() {
            let n = parts.len() as u64;
            match self.running.as_mut() {
                Some(r) => *r.revoked_by.entry(m).or_default() += n,
                None if self.in_group[m] => self.revocations_by_staying += n,
                None => {}
            }
        }
        self.revoked_on_close(now, m, parts);
    }

    /// `onPartitionsRevoked` by `close()`: a leaver's own revocation.
    pub fn revoked_on_close(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        if self.formed() {
            self.revocations_total += parts.len() as u64;
            self.revocations_per_member[m] += parts.len() as u64;
        }
        for &p in parts {
            self.release(now, m, p);
        }
        let owns_nothing = self.owned_count[m] == 0;
        let stops = self
            .running
            .as_ref()
            .is_some_and(|r| r.owners_at_start.contains(&m));
        if owns_nothing && stops {
            self.paused_since[m].get_or_insert(now);
        }
    }

    pub fn lost(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        if self.formed() {
            self.lost_total += parts.len() as u64;
        }
        for &p in parts {
            self.release(now, m, p);
        }
    }

    /// The member has positions for these partitions and processes them from now.
    pub fn processing_started(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        for &p in parts {
            if self.owner[p] == Some(m) {
                self.start_processing(now, m, p);
            }
        }
        self.end_pause(now, m);
    }

    /// The stalled poll loop returned.
    pub fn stall_ended(&mut self, now: SimTime, m: usize) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "stall_end",
            },
        );
        for p in std::mem::take(&mut self.stalled_parts[m]) {
            if self.owner[p] == Some(m) {
                self.start_processing(now, m, p);
            }
        }
    }

    pub fn position_set(&mut self, p: usize, position: u64) {
        self.position[p] = position;
        if position > self.accounted_upto[p] {
            self.skipped += position - self.accounted_upto[p];
            self.accounted_upto[p] = position;
        }
    }

    /// Records `[from, to)` of partition `p` were processed by member `m`.
    pub fn processed(&mut self, m: usize, p: usize, from: u64, to: u64) {
        let n = to - from;
        if self.owner[p] == Some(m) {
            self.position[p] = self.position[p].max(to);
        }
        self.processed += n;
        self.processed_twice += self.accounted_upto[p].min(to).saturating_sub(from);
        self.accounted_upto[p] = self.accounted_upto[p].max(to);
    }

    fn release(&mut self, now: SimTime, m: usize, p: usize) {
        if self.owner[p] == Some(m) {
            self.owner[p] = None;
            self.owned_count[m] -= 1;
            self.mark(
                now,
                Mark::Owner {
                    partition: p,
                    member: None,
                },
            );
        }
        if self.active[p] == Some(m) {
            self.stop_processing(now, p);
        }
    }

    fn stop_processing(&mut self, now: SimTime, p: usize) {
        self.active[p] = None;
        self.mark(
            now,
            Mark::Processing {
                partition: p,
                member: None,
            },
        );
        if self.formed() {
            self.unavailable_since[p].get_or_insert(now);
        }
    }

    fn start_processing(&mut self, now: SimTime, m: usize, p: usize) {
        self.active[p] = Some(m);
        self.mark(
            now,
            Mark::Processing {
                partition: p,
                member: Some(m),
            },
        );
        if let Some(since) = self.unavailable_since[p].take() {
            self.unavailable_us[p] += (now - since).as_micros();
        }
    }

    fn end_pause(&mut self, now: SimTime, m: usize) {
        if let Some(since) = self.paused_since[m].take() {
            self.stop_the_world_us[m] += (now - since).as_micros();
        }
    }

    // ---- The report ----

    pub fn finish(
        mut self,
        end: SimTime,
        digest: &str,
        events: u64,
        invariants: Invariants,
        logs: &Logs,
        scenario: &Scenario,
    ) -> Report {
        self.close_window();
        let catch_up_ms: Vec<Option<u64>> = self
            .rebalances
            .iter()
            .map(|e| e.window.catch_up_ms)
            .collect();
        let mut open_at_end = Vec::new();
        for p in 0..self.unavailable_since.len() {
            if let Some(since) = self.unavailable_since[p].take() {
                self.unavailable_us[p] += (end - since).as_micros();
                open_at_end.push(self.partition_names[p].clone());
            }
        }
        let mut paused_at_end = Vec::new();
        for m in 0..self.paused_since.len() {
            if let Some(since) = self.paused_since[m].take() {
                if self.in_group[m] {
                    self.stop_the_world_us[m] += (end - since).as_micros();
                    self.stopped_members.insert(m);
                    paused_at_end.push(self.member_names[m].clone());
                }
            }
        }
        let stw: BTreeMap<String, u64> = self
            .stopped_members
            .iter()
            .map(|&m| {
                (
                    self.member_names[m].clone(),
                    self.stop_the_world_us[m] / 1000,
                )
            })
            .collect();
        let unavailable: BTreeMap<String, u64> = self
            .partition_names
            .iter()
            .zip(&self.unavailable_us)
            .map(|(n, us)| (n.clone(), us / 1000))
            .collect();
        let counts = logs.produced_by(end);
        let unconsumed: u64 = (0..logs.partitions())
            .map(|p| {
                logs.end_offset(p, end)
                    .saturating_sub(self.accounted_upto[p])
            })
            .sum();
        let distinct = self.processed - self.processed_twice;
        let never = counts
            .written
            .saturating_sub(distinct + self.skipped + unconsumed);
        let mut final_assignment: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (p, owner) in self.owner.iter().enumerate() {
            if let Some(m) = owner {
                final_assignment
                    .entry(self.member_names[*m].clone())
                    .or_default()
                    .push(self.partition_names[p].clone());
            }
        }
        let members = scenario
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| ReportMember {
                name: m.name.clone(),
                member_id: self.member_ids[i].clone(),
                assignors: m.assignors.clone(),
                protocol: m.rebalance_protocol.name().to_string(),
            })
            .collect();
        Report {
            scenario: scenario.name.clone(),
            seed: scenario.seed,
            variant: scenario.variant.clone(),
            digest: digest.to_string(),
            events,
            duration_ms: scenario.duration_ms,
            members,
            formation: self.formation,
            rebalances: Rebalances {
                count: self.rebalances.len() as u64,
                list: self.rebalances,
            },
            revocations: Revocations {
                total: self.revocations_total,
                by_staying_members: self.revocations_by_staying,
                per_member: self
                    .member_names
                    .iter()
                    .zip(&self.revocations_per_member)
                    .filter(|(_, &n)| n > 0)
                    .map(|(name, &n)| (name.clone(), n))
                    .collect(),
            },
            lost: Lost {
                total: self.lost_total,
                by_crash: self.lost_by_crash,
            },
            moved: Moved {
                total: self.moved_total,
                minimum: self.moved_minimum,
            },
            pauses: Pauses {
                stop_the_world_ms: Summary::of(stw, paused_at_end),
                unavailable_ms: Summary::of(unavailable, open_at_end),
            },
            join: {
                let mut l = self.join_latencies_ms;
                l.sort_unstable();
                JoinMetrics {
                    latency_ms: Percentiles {
                        p50: nearest_rank(&l, 50),
                        p99: nearest_rank(&l, 99),
                    },
                    ..self.join
                }
            },
            recovery: self.recovery,
            lag: Lag {
                peak: self
                    .partition_names
                    .iter()
                    .zip(&self.lag_peak)
                    .filter(|(_, &l)| l > 0)
                    .map(|(n, &l)| (n.clone(), l))
                    .collect(),
                catch_up_ms,
                series: self.lag_series,
            },
            records: Records {
                produced: counts.produced,
                written: counts.written,
                dropped: counts.dropped,
                processed: self.processed,
                processed_twice: self.processed_twice,
                skipped_by_offset_reset: self.skipped,
                unconsumed_at_end: unconsumed,
                never_processed: never,
            },
            invariants,
            co_partitioning: self.co_partitioning,
            final_assignment,
            errors: self.errors,
        }
    }
}
