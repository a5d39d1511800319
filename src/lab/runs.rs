//! The lab's runs: each a whole `cgsim run` of one scenario text, seed and variant, with its
//! histories kept (the marks the pictures are drawn from, and the group's history), held to the lab's bounds (events and wall time, asked through
//! [`run_while`], which reads no clock itself), a few at a time, and the recent ones kept so
//! that scrubbing through a run asks nothing of the simulator.
//!
//! Runs are deterministic, so a cached run is the run: the same text, seed and variant give the
//! same report and history whether they come from the cache or not.

use super::api::ApiError;
use super::limits::{RunLimits, MAX_CONCURRENT_RUNS};
use crate::history::GroupHistory;
use crate::history::RunMarks;
use crate::report::history_view::View;
use crate::report::Report;
use crate::scenario::Scenario;
use crate::world::{run_while, RunOptions};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Runs kept.
const CACHED: usize = 24;

/// One run, as the rebalance view reads it.
pub struct LabRun {
    pub scenario: Scenario,
    pub report: Report,
    pub history: RunMarks,
    /// The history folded into intervals (as the SVG timeline and the Perfetto trace fold it).
    pub view: View,
    /// The group's history: each member's and the coordinator's state at any instant.
    pub group: GroupHistory,
}

/// What identifies a run: the scenario text as run, the seed and the variant.
type Key = (String, u64, String);

pub struct Runner {
    limits: RunLimits,
    cache: Mutex<VecDeque<(Key, Arc<LabRun>)>>,
    running: Mutex<usize>,
    turn: Condvar,
}

/// Why a run stopped before its end.
enum Stopped {
    Events,
    WallTime,
}

impl Runner {
    pub fn new(limits: RunLimits) -> Runner {
        Runner {
            limits,
            cache: Mutex::new(VecDeque::new()),
            running: Mutex::new(0),
            turn: Condvar::new(),
        }
    }

    pub fn limits(&self) -> RunLimits {
        self.limits
    }

    /// The run of `scenario` (loaded from `text` under its seed and variant).
    pub fn run(&self, text: &str, scenario: Scenario) -> Result<Arc<LabRun>, ApiError> {
        let key: Key = (text.to_string(), scenario.seed, scenario.variant.clone());
        if let Some(run) = self.cached(&key) {
            return Ok(run);
        }
        let _turn = self.take_turn()?;
        // Another request may have run it while this one waited.
        if let Some(run) = self.cached(&key) {
            return Ok(run);
        }
        let run = Arc::new(self.run_now(scenario)?);
        let mut cache = self.cache.lock().expect("the cache lock");
        if cache.len() == CACHED {
            cache.pop_front();
        }
        cache.push_back((key, run.clone()));
        Ok(run)
    }

    fn cached(&self, key: &Key) -> Option<Arc<LabRun>> {
        let mut cache = self.cache.lock().expect("the cache lock");
        let i = cache.iter().position(|(k, _)| k == key)?;
        let entry = cache.remove(i).expect("found");
        let run = entry.1.clone();
        cache.push_back(entry);
        Some(run)
    }

    /// One of [`MAX_CONCURRENT_RUNS`] turns, waited for up to the wall-time bound.
    fn take_turn(&self) -> Result<Turn<'_>, ApiError> {
        let wait = Duration::from_millis(self.limits.wall_ms);
        let running = self.running.lock().expect("the turn lock");
        let (mut running, timeout) = self
            .turn
            .wait_timeout_while(running, wait, |n| *n >= MAX_CONCURRENT_RUNS)
            .expect("the turn lock");
        if timeout.timed_out() && *running >= MAX_CONCURRENT_RUNS {
            return Err(ApiError {
                status: 503,
                field: None,
                message: format!(
                    "the lab is busy: {MAX_CONCURRENT_RUNS} runs are going and none ended within {} ms; try again",
                    self.limits.wall_ms
                ),
            });
        }
        *running += 1;
        Ok(Turn(self))
    }

    fn run_now(&self, scenario: Scenario) -> Result<LabRun, ApiError> {
        let limits = self.limits;
        let deadline = Instant::now() + Duration::from_millis(limits.wall_ms);
        let mut stopped = None;
        let out = catch_unwind(AssertUnwindSafe(|| {
            let options = RunOptions {
                record_history: true,
                ..RunOptions::default()
            };
            run_while(&scenario, options, &mut |events| {
                if events > limits.max_events {
                    stopped = Some(Stopped::Events);
                } else if Instant::now() >= deadline {
                    stopped = Some(Stopped::WallTime);
                }
                stopped.is_none()
            })
        }));
        let variant = &scenario.variant;
        let out = match out {
            Ok(Some(out)) => out,
            Ok(None) => {
                let message = match stopped {
                    Some(Stopped::Events) => format!(
                        "variant {variant}: the run went past {} events, the lab's bound on one run's work: \
                         shorten duration_ms, or use fewer members, partitions or records (cgsim run has no such bound)",
                        limits.max_events
                    ),
                    _ => format!(
                        "variant {variant}: the run took more than {} ms of wall time, the lab's bound on one run \
                         (cgsim lab --run-timeout-ms): shorten duration_ms, or use fewer members or records",
                        limits.wall_ms
                    ),
                };
                return Err(ApiError {
                    status: 413,
                    field: None,
                    message,
                });
            }
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                return Err(ApiError {
                    status: 500,
                    field: None,
                    message: format!(
                        "variant {variant}, seed {}: the simulator failed (a bug: please report it with this page's address): {what}",
                        scenario.seed
                    ),
                });
            }
        };
        let history = out.history.expect("asked for");
        let group = out.group_history.expect("asked for");
        let view = View::new(&history, out.report.duration_ms.saturating_mul(1000));
        Ok(LabRun {
            report: out.report,
            history,
            view,
            group,
            scenario,
        })
    }
}

/// A turn to run, given back when dropped.
struct Turn<'a>(&'a Runner);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut running = self.0.running.lock().expect("the turn lock");
        *running -= 1;
        self.0.turn.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, LoadOptions};

    fn scale_out() -> (String, Scenario) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/scale-out.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let options = LoadOptions {
            variant: Some("eager".into()),
            ..LoadOptions::default()
        };
        (text, load(std::path::Path::new(path), &options).unwrap())
    }

    #[test]
    fn a_run_past_its_events_is_stopped_with_a_message() {
        let runner = Runner::new(RunLimits {
            max_events: 5_000,
            ..RunLimits::default()
        });
        let (text, scenario) = scale_out();
        let e = runner.run(&text, scenario).err().expect("stopped");
        assert_eq!(e.status, 413);
        assert!(
            e.message
                .contains("variant eager: the run went past 5000 events"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_run_is_the_run_whether_cached_or_not() {
        let runner = Runner::new(RunLimits::default());
        let (text, scenario) = scale_out();
        let first = runner.run(&text, scenario.clone()).unwrap();
        let again = runner.run(&text, scenario.clone()).unwrap();
        assert!(
            Arc::ptr_eq(&first, &again),
            "the second comes from the cache"
        );
        let fresh = Runner::new(RunLimits::default())
            .run(&text, scenario)
            .unwrap();
        assert_eq!(fresh.report.digest, first.report.digest);
        assert_eq!(fresh.history.marks, first.history.marks);
        let plain = crate::world::run(&first.scenario, RunOptions::default());
        assert_eq!(plain.report.digest, first.report.digest);
    }
}
