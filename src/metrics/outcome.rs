//! The outcome of a run: the report's schema, the JSON keys of DESIGN.md ("What is measured,
//! and the JSON report"). Built by the metrics (and the checkers' `Invariants`) at the end of a
//! run; `report/` renders it and imports nothing back into the run.

use super::Summary;
pub use crate::check::{Invariants, Violation, Zombie};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize, Debug, Clone)]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    pub variant: String,
    /// SHA-256 over the canonical records of every event processed (never over log wording).
    pub digest: String,
    /// Events the run processed.
    pub events: u64,
    pub duration_ms: u64,
    pub members: Vec<ReportMember>,
    /// The group's first join, until it was first Stable; `null` if it never was.
    pub formation: Option<Formation>,
    pub rebalances: Rebalances,
    pub revocations: Revocations,
    pub lost: Lost,
    pub moved: Moved,
    pub pauses: Pauses,
    pub join: JoinMetrics,
    pub recovery: Recovery,
    pub lag: Lag,
    pub records: Records,
    pub invariants: Invariants,
    /// Co-partitioned topics whose partition counts stopped matching (added partitions): the
    /// indexes that no longer exist in every topic of the group.
    pub co_partitioning: Vec<CoPartitionBreak>,
    /// Who owns what when the run ends: member -> partitions (`topic-p`), members owning
    /// nothing left out.
    pub final_assignment: BTreeMap<String, Vec<String>>,
    /// Members that failed (e.g. INCONSISTENT_GROUP_PROTOCOL).
    pub errors: Vec<String>,
}

impl Report {
    pub fn has_violations(&self) -> bool {
        !self.invariants.violations.is_empty()
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct ReportMember {
    pub name: String,
    /// The Kafka member id it had last.
    pub member_id: String,
    pub assignors: Vec<String>,
    /// The client's rebalance protocol (EAGER or COOPERATIVE).
    pub protocol: String,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Formation {
    pub generation: i32,
    pub start_ms: u64,
    pub end_ms: u64,
    pub duration_ms: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Rebalances {
    pub count: u64,
    pub list: Vec<RebalanceEntry>,
}

#[derive(Serialize, Debug, Clone)]
pub struct RebalanceEntry {
    pub generation: i32,
    pub trigger: String,
    /// The member whose join, leave, expiry... started it.
    pub member: Option<String>,
    pub start_ms: u64,
    pub end_ms: u64,
    /// PreparingRebalance to Stable = join_ms + sync_ms.
    pub duration_ms: u64,
    /// From the cause (a crash, a close, a start, a stall) to PreparingRebalance.
    pub detect_ms: u64,
    pub join_ms: u64,
    pub sync_ms: u64,
    /// Cooperative: from this rebalance's end until the follow-up it caused was Stable (0 when
    /// there was none). The follow-up is also listed as its own generation.
    pub follow_up_ms: u64,
    /// Its window: from its start until the next rebalance starts (or the run ends).
    pub window: Window,
}

/// What happened in a rebalance's window.
#[derive(Serialize, Debug, Clone, Default)]
pub struct Window {
    /// Total lag (every partition's log end offset minus its processed position) at the
    /// rebalance's start, and its peak in the window.
    pub lag_before: u64,
    pub lag_peak: u64,
    /// From the rebalance's end until total lag was back within one batch
    /// (`max_poll_records`) of `lag_before`; `null` if it never was.
    pub catch_up_ms: Option<u64>,
    pub join_misses: JoinMisses,
    /// State restores begun (changelog replays and standby takeovers), records replayed, and
    /// the summed restore time.
    pub restores: u64,
    pub standby_takeovers: u64,
    pub restored_records: u64,
    pub restore_ms: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Revocations {
    pub total: u64,
    pub by_staying_members: u64,
    pub per_member: BTreeMap<String, u64>,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Lost {
    pub total: u64,
    pub by_crash: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Moved {
    pub total: u64,
    pub minimum: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Pauses {
    #[serde(serialize_with = "per_member")]
    pub stop_the_world_ms: Summary,
    #[serde(serialize_with = "per_partition")]
    pub unavailable_ms: Summary,
}

fn per_member<S: serde::Serializer>(s: &Summary, ser: S) -> Result<S::Ok, S::Error> {
    summary_with(s, "per_member", "paused_at_end", ser)
}

fn per_partition<S: serde::Serializer>(s: &Summary, ser: S) -> Result<S::Ok, S::Error> {
    summary_with(s, "per_partition", "open_at_end", ser)
}

fn summary_with<S: serde::Serializer>(
    s: &Summary,
    per: &'static str,
    open: &'static str,
    ser: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = ser.serialize_map(Some(6))?;
    map.serialize_entry(per, &s.per)?;
    map.serialize_entry("total", &s.total)?;
    map.serialize_entry("p50", &s.p50)?;
    map.serialize_entry("p99", &s.p99)?;
    map.serialize_entry("max", &s.max)?;
    map.serialize_entry(open, &s.open_at_end)?;
    map.end()
}

#[derive(Serialize, Debug, Clone, Copy, Default)]
pub struct JoinMisses {
    pub not_co_located: u64,
    pub no_price_yet: u64,
    pub out_of_order: u64,
    pub restoring: u64,
    pub state_empty: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Percentiles {
    pub p50: u64,
    pub p99: u64,
}

/// The partition-local join (zeros when the scenario has none).
#[derive(Serialize, Debug, Clone, Default)]
pub struct JoinMetrics {
    pub notifications: u64,
    pub local_hits: u64,
    pub misses: JoinMisses,
    pub latency_ms: Percentiles,
}

/// Consumer lag: log end offset minus the processed position, sampled every `lag_sample_ms`.
#[derive(Serialize, Debug, Clone, Default)]
pub struct Lag {
    /// Each partition's highest lag (partitions that never lagged left out).
    pub peak: BTreeMap<String, u64>,
    /// Per rebalance after formation, in order: time to catch up (`null`: never).
    pub catch_up_ms: Vec<Option<u64>>,
    /// `[at_ms, total lag]` samples.
    pub series: Vec<(u64, u64)>,
}

/// State recovery for the join, over the whole run.
#[derive(Serialize, Debug, Clone, Default)]
pub struct Recovery {
    pub restores: u64,
    pub standby_takeovers: u64,
    pub restored_records: u64,
    pub restore_ms: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Records {
    pub produced: u64,
    pub written: u64,
    pub dropped: u64,
    pub processed: u64,
    pub processed_twice: u64,
    pub skipped_by_offset_reset: u64,
    pub unconsumed_at_end: u64,
    pub never_processed: u64,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct CoPartitionBreak {
    pub at_ms: u64,
    pub topics: Vec<String>,
    pub partition_counts: Vec<u32>,
    pub unmatched_indexes: Vec<u32>,
}
