//! What a run measured: observers only. The group's history (`crate::history`) reads the facts
//! once, in order; the figures here fold what it says: its ledger (who owned and processed
//! what, the rebalance under way, the tallies of revocations, pauses and unavailability) and
//! the changes each fact made (a rebalance begun or completed, records processed,
//! notifications, restores). Kafka's consumer sensors (`kafka.rs`) alone read the facts
//! themselves, as Kafka's client records them. Nothing here feeds back into the simulation,
//! and no model imports it.
//!
//! One concern per file: `rebalances.rs` (each rebalance's entry, follow-ups folded in),
//! `lag.rs`, `records.rs`, `join.rs`, `migration.rs`, `describe.rs`; `outcome.rs` is the
//! report's schema and builds it at the end of the run. The safety and liveness properties are
//! the checkers' (`crate::check`), not figures.
//!
//! Definitions are DESIGN.md's ("What is measured", "What counts").

mod describe;
mod join;
mod kafka;
mod lag;
mod migration;
pub mod outcome;
mod rebalances;
mod records;
mod stats;

pub use crate::history::ledger::{ByCause, CoordinatorEntry, PauseCause};
pub use migration::Migration;

pub use stats::{nearest_rank, Summary};

use crate::facts::Fact;
use crate::history::{Change, Ledger, Recorder};
use crate::scenario::Scenario;
use crate::sim::SimTime;
use crate::workload::producer::Logs;
use outcome::{JoinMetrics, MemberError, RebalanceEntry, Recovery, Window};
use std::collections::BTreeMap;

pub struct Metrics {
    member_names: Vec<String>,
    partition_names: Vec<String>,
    rebalances: Vec<RebalanceEntry>,
    // Records.
    accounted_upto: Vec<u64>,
    processed: u64,
    processed_twice: u64,
    skipped: u64,
    /// Per partition, the record ranges an offset reset skipped that nobody has processed
    /// since: a zombie batch may still process them. Indexed, not a map: every batch looks.
    skipped_ranges: Vec<Vec<(u64, u64)>>,
    /// Per member, records fetched from a replica in another rack; `None` without broker racks.
    cross_rack_fetched: Option<Vec<u64>>,
    join: JoinMetrics,
    join_latencies_ms: Vec<u64>,
    recovery: Recovery,
    /// The processed position of each partition's current owner.
    position: Vec<u64>,
    lag_peak: Vec<u64>,
    /// What the lag samples keep between them (`lag.rs`).
    lag: lag::LagState,
    lag_series: Vec<(u64, u64)>,
    last_total_lag: u64,
    /// The current rebalance window's figures, and the entry they belong to once it is Stable.
    window: Window,
    window_entry: Option<usize>,
    batch_records: u64,
    errors: Vec<MemberError>,
    /// The group's conversions between the protocols (`migration.rs`).
    migrations: Vec<Migration>,
    /// Kafka's consumer sensors, per member (`kafka.rs`).
    sensors: Vec<kafka::Sensors>,
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
            partition_names,
            rebalances: Vec::new(),
            accounted_upto: vec![0; p],
            processed: 0,
            processed_twice: 0,
            skipped: 0,
            skipped_ranges: vec![Vec::new(); p],
            cross_rack_fetched: (!scenario.cluster.broker_racks.is_empty()).then(|| vec![0; n]),
            join: JoinMetrics::default(),
            join_latencies_ms: Vec::new(),
            recovery: Recovery::default(),
            position: vec![0; p],
            lag_peak: vec![0; p],
            lag: lag::LagState::new(p),
            lag_series: Vec::new(),
            last_total_lag: 0,
            window: Window::default(),
            window_entry: None,
            batch_records: scenario.group.max_poll_records,
            errors: Vec::new(),
            migrations: Vec::new(),
            sensors: vec![kafka::Sensors::default(); n],
        }
    }

    /// Takes in one fact, after the group's history took it in (the world calls this for
    /// every fact, in order): Kafka's sensors read the fact, the figures what it changed.
    pub fn observe(&mut self, now: SimTime, fact: &Fact, history: &Recorder) {
        self.observe_sensors(now, fact);
        if let Some(change) = history.change() {
            self.apply(now, change, history.ledger());
        }
    }

    fn apply(&mut self, now: SimTime, change: Change, group: &Ledger) {
        match change {
            Change::RebalanceStarted { cause } => self.rebalance_started(cause),
            Change::RebalanceCompleted => {
                if let Some(r) = group.completed_rebalances().last() {
                    self.rebalance_completed(r, group.incremental_join())
                }
            }
            Change::Processed {
                partition,
                from,
                to,
                by_owner,
            } => self.processed(partition, from, to, by_owner),
            Change::PositionSet {
                partition,
                position,
            } => self.position_set(partition, position),
            Change::CrossRackFetched { member, records } => self.cross_rack(member, records),
            Change::Notification {
                outcome,
                latency_us,
            } => self.notification(outcome, latency_us, self.in_window(group)),
            Change::RestoreStarted {
                standby,
                records,
                duration_us,
            } => self.restore_started(standby, records, duration_us, self.in_window(group)),
            Change::MemberFailed { member, error } => self.errors.push(MemberError {
                at_ms: ms(now),
                member: self.member_names[member].clone(),
                error: error.name().to_string(),
                cause: error,
            }),
            Change::GroupConverted => {
                if let Some(c) = group.conversions().last() {
                    self.group_converted(c)
                }
            }
        }
    }

    /// Whether a rebalance's window is open: from its start until the next one starts.
    fn in_window(&self, group: &Ledger) -> bool {
        group.formed() && (group.rebalance_running() || self.window_entry.is_some())
    }
}
