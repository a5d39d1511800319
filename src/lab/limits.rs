//! What the lab's rebalance view runs, at most. The lab is meant to be left running for a team,
//! so every request is bounded before it costs anything: its body, its scenario text, the
//! scenario's size (members, partitions, brokers, keyed records), its simulated
//! length, and each run's events and wall time. A bound that is hit is answered with 413 and a
//! message naming the bound and the value (README "The lab").
//!
//! These are far below the simulator's own limits (`scenario::limits`, which bound `cgsim run`):
//! they keep a run of the page to about a second, and the page drawable.

use super::api::ApiError;
use crate::scenario::{ProducerKind, Scenario};

/// Bytes of any request's body, except `POST /api/assign` (its own, `api::MAX_BODY_BYTES`).
pub const MAX_REQUEST_BODY_BYTES: usize = 64 * 1024;
/// Bytes of a scenario's text (a file of `scenarios/`, or an edited one).
pub const MAX_SCENARIO_BYTES: usize = 64 * 1024;
/// Simulated time of a run: one hour (`cgsim run` takes seven days).
pub const MAX_DURATION_MS: u64 = 3_600_000;
/// Members of a scenario, joins added in the lab included.
pub const MAX_MEMBERS: usize = 50;
/// Partitions in all (each topic at its largest): a row each in every variant's timeline.
pub const MAX_PARTITIONS: u64 = 256;
pub const MAX_BROKERS: u32 = 20;
/// Keyed records in all (each drawn, kept and joined: work the event bound counts only in part).
pub const MAX_KEYED_RECORDS: u128 = 1_000_000;
/// Events one run may process (the shipped scenarios take at most about 310,000).
pub const MAX_EVENTS: u64 = 2_000_000;
/// Wall time of one run, by default (`cgsim lab --run-timeout-ms`).
pub const DEFAULT_RUN_WALL_MS: u64 = 10_000;
/// Faults added in the page.
pub const MAX_FAULTS: usize = 20;
/// Variants run side by side.
pub const MAX_VARIANTS: usize = 6;
/// Runs at once (each takes a core); more wait their turn, up to the wall-time bound.
pub const MAX_CONCURRENT_RUNS: usize = 2;

/// The bounds a run is held to, as the lab was started.
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    pub wall_ms: u64,
    pub max_events: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            wall_ms: DEFAULT_RUN_WALL_MS,
            max_events: MAX_EVENTS,
        }
    }
}

/// The scenario's size against the lab's bounds (`field`: the query field its text came from).
pub fn check_scenario(scenario: &Scenario, field: &str) -> Result<(), ApiError> {
    let refuse = |what: String| Err(ApiError::too_large(field, what));
    if scenario.duration_ms > MAX_DURATION_MS {
        return refuse(format!(
            "duration_ms = {}: the lab runs at most {MAX_DURATION_MS} ms of simulated time (one hour; cgsim run takes longer runs)",
            scenario.duration_ms
        ));
    }
    if scenario.members.len() > MAX_MEMBERS {
        return refuse(format!(
            "{} members: the lab runs at most {MAX_MEMBERS} (cgsim run takes more)",
            scenario.members.len()
        ));
    }
    let partitions: u64 = scenario
        .topics
        .iter()
        .map(|t| u64::from(t.max_partitions()))
        .sum();
    if partitions > MAX_PARTITIONS {
        return refuse(format!(
            "{partitions} partitions in all: the lab draws at most {MAX_PARTITIONS} (cgsim run takes more)"
        ));
    }
    if scenario.cluster.brokers > MAX_BROKERS {
        return refuse(format!(
            "{} brokers: the lab runs at most {MAX_BROKERS}",
            scenario.cluster.brokers
        ));
    }
    let keyed: u128 = scenario
        .producers
        .iter()
        .map(|p| {
            let span_ms = u128::from(
                p.end_ms
                    .min(scenario.duration_ms)
                    .saturating_sub(p.start_ms),
            );
            let made = match &p.kind {
                ProducerKind::NullKeys { .. } => 0,
                ProducerKind::Keyed {
                    records_per_sec, ..
                } => (u128::from(*records_per_sec) * span_ms).div_ceil(1000),
                ProducerKind::Script { keys, per_key, .. } => {
                    u128::from(*per_key) * keys.len() as u128
                }
            };
            let fanout = match p.stream_partitioner {
                Some(crate::scenario::StreamPartitioner::Broadcast) => {
                    u128::from(scenario.topics[p.topic].max_partitions())
                }
                _ => 1,
            };
            made * fanout
        })
        .sum();
    if keyed > MAX_KEYED_RECORDS {
        return refuse(format!(
            "{keyed} keyed records: the lab generates at most {MAX_KEYED_RECORDS} (fewer records_per_sec, keys or a shorter run)"
        ));
    }
    Ok(())
}
