//! `cgsim sweep` and `cgsim merge`: a scenario run over a grid of settings x variants x seeds,
//! one JSON line per run after a header line, a summary per point and variant, and a
//! recommendation for an objective. Shards of one sweep, run anywhere, merge into exactly what
//! one machine would have printed.
//!
//! The pieces, data flowing one way: `grid` (the points), `shard` (which runs are this
//! process's), the [`Plan`] (everything the header says, and the runs it implies), `lines` (the
//! header and record lines, written and read back), `runner` (runs in parallel, handed on in
//! order), `resume` and `merge` (records read back from files), `summary` and `objective`
//! (text, from records alone: so an unsharded run and a merge print the same bytes), joined by
//! `text`.

pub mod grid;
pub mod lines;
pub mod merge;
pub mod objective;
pub mod resume;
pub mod runner;
pub mod shard;
pub mod summary;
pub mod text;

use crate::report::compare::{Figure, RunFigures, FIGURES, MORE_FIGURES};
use crate::report::Report;
use crate::scenario::{
    check_variant_names, load_str, unset_keys, LoadOptions, Scenario, ScenarioError,
};
use crate::world::{run, RunOptions};
use grid::{parse_grid, GridKey, Point};
use sha2::{Digest, Sha256};
use shard::Shard;

/// The version of the JSON lines' schema: it changes when a key is renamed or removed or its
/// meaning changes; `--resume` and `merge` refuse lines of another.
pub const SCHEMA_VERSION: u32 = 1;

/// The most runs one sweep holds (before sharding): a typo like `--seeds 1..10000000` over a
/// big grid is refused, not started.
pub const MAX_RUNS: u64 = 1_000_000;

/// Every figure a sweep records for each run: compare's rows, then [`MORE_FIGURES`].
pub fn figures() -> impl Iterator<Item = &'static Figure> {
    FIGURES.iter().chain(MORE_FIGURES)
}

/// The figure with this key (`pauses.stop_the_world_ms.p99`), by its index in [`figures`].
pub fn figure_index(key: &str) -> Option<usize> {
    figures().position(|f| f.key == key)
}

/// One run of a sweep: indexes into the plan's points and variants, and the seed. The order
/// (point, variant, seed) is the unsharded order of the record lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Job {
    pub point: usize,
    pub variant: usize,
    pub seed: u64,
}

/// What a sweep keeps of one run: the figures compare shows (and [`MORE_FIGURES`]), not the
/// lag series.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub job: Job,
    /// The run's digest: `cgsim run --seed S --variant V --set ...` gives the same.
    pub digest: String,
    /// In [`figures`] order; `None` where undefined (a hit rate without notifications).
    pub values: Vec<Option<u64>>,
    /// The kinds of the run's invariant violations, sorted, each once.
    pub violations: Vec<String>,
}

impl Record {
    pub fn of(job: Job, report: &Report) -> Record {
        // Compare's own figures, computed by compare's code, then the sweep's extra ones.
        let RunFigures {
            mut values,
            violation_kinds,
            ..
        } = RunFigures::of(report);
        values.extend(MORE_FIGURES.iter().map(|f| (f.of)(report)));
        Record {
            job,
            digest: report.digest.clone(),
            values,
            violations: violation_kinds,
        }
    }

    /// How many invariant violations the run found.
    pub fn violation_count(&self) -> u64 {
        let i = figure_index("invariants.violations").expect("a compare figure");
        self.values[i].unwrap_or(0)
    }
}

/// A sweep as its header describes it: the scenario (by name and the SHA-256 of its bytes),
/// the command line's `--set`s, the grid and its points, the variants, the seeds and the shard.
/// Two processes with equal plans (but for the shard) run parts of one sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub scenario: String,
    pub scenario_sha256: String,
    pub sets: Vec<String>,
    pub grid: Vec<GridKey>,
    pub points: Vec<Point>,
    /// Why Kafka's defaults are not a point (the scenario does not load without the grid's
    /// keys), when they are not.
    pub defaults_not_run: Option<String>,
    pub variants: Vec<String>,
    pub first_seed: u64,
    pub last_seed: u64,
    pub shard: Shard,
}

impl Plan {
    /// A plan for the unit tests: scenario `s`, one grid key, seeds 1 to `last_seed`.
    #[cfg(test)]
    pub(crate) fn for_tests(grid: &str, variants: &[&str], last_seed: u64, shard: Shard) -> Plan {
        let grid = vec![grid::parse_grid(grid).unwrap()];
        Plan {
            scenario: "s".into(),
            scenario_sha256: "00".into(),
            sets: vec![],
            points: grid::points(&grid),
            grid,
            defaults_not_run: None,
            variants: variants.iter().map(|v| v.to_string()).collect(),
            first_seed: 1,
            last_seed,
            shard,
        }
    }

    pub fn seeds(&self) -> impl Iterator<Item = u64> {
        self.first_seed..=self.last_seed
    }

    pub fn seed_count(&self) -> u64 {
        self.last_seed - self.first_seed + 1
    }

    /// `p1`, `p2`, ...: how the summary names a point.
    pub fn label(&self, point: usize) -> String {
        format!("p{}", point + 1)
    }

    /// Every run of the sweep (all shards), in the unsharded order.
    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs = Vec::new();
        for point in 0..self.points.len() {
            for variant in 0..self.variants.len() {
                for seed in self.seeds() {
                    jobs.push(Job {
                        point,
                        variant,
                        seed,
                    });
                }
            }
        }
        jobs
    }

    /// The run's shard key: its point's settings, its variant and its seed.
    pub fn run_key(&self, job: Job) -> String {
        shard::run_key(
            &self.points[job.point].text(),
            &self.variants[job.variant],
            job.seed,
        )
    }

    pub fn owns(&self, job: Job) -> bool {
        self.shard.owns(&self.run_key(job))
    }

    /// This shard's runs, in the unsharded order.
    pub fn own_jobs(&self) -> Vec<Job> {
        self.jobs().into_iter().filter(|&j| self.owns(j)).collect()
    }

    /// The same plan, unsharded (what `merge` reports as).
    pub fn unsharded(&self) -> Plan {
        Plan {
            shard: Shard::ALL,
            ..self.clone()
        }
    }
}

/// What the command line gives a sweep.
pub struct SweepArgs<'a> {
    /// Names the scenario in errors.
    pub file: &'a str,
    /// The scenario file's bytes.
    pub text: &'a str,
    pub sets: &'a [String],
    /// `--grid KEY=V1,V2,...`, as given.
    pub grid: &'a [String],
    /// Empty: the scenario's `snapshot_variants`.
    pub variants: &'a [String],
    pub first_seed: u64,
    pub last_seed: u64,
    pub shard: Shard,
}

/// A sweep ready to run: its plan, and the scenario text each run loads.
pub struct Sweep {
    pub plan: Plan,
    file: String,
    text: String,
    /// The file with every grid key left out: Kafka's defaults point runs it.
    defaults_text: String,
}

impl Sweep {
    /// Reads the grid and checks every (point, variant) loads before any run starts, so bad
    /// input is one clear error, never a failure half-way through; Kafka's defaults point
    /// that does not load is dropped, with the reason kept in the plan.
    pub fn new(args: &SweepArgs) -> Result<Sweep, String> {
        if args.grid.is_empty() {
            return Err("--grid: at least one KEY=V1,V2,... is needed".into());
        }
        let mut grid: Vec<GridKey> = Vec::with_capacity(args.grid.len());
        for arg in args.grid {
            let g = parse_grid(arg).map_err(|m| format!("--grid {arg:?}: {m}"))?;
            if grid.iter().any(|o| o.key == g.key) {
                return Err(format!("--grid {arg:?}: {} is already on the grid", g.key));
            }
            if let Some(set) = args
                .sets
                .iter()
                .find(|s| s.split_once('=').map_or(s.as_str(), |(k, _)| k).trim() == g.key)
            {
                return Err(format!(
                    "--grid {arg:?} and --set {set:?} both set {}: drop one",
                    g.key
                ));
            }
            grid.push(g);
        }
        let mut points = grid::points(&grid);
        // The scenario as the command line leaves it names the sweep and its default variants.
        // Where it needs the grid's keys set to load at all (the file's session timeout is
        // below a --set heartbeat until the grid raises it), the first grid point's values
        // stand in.
        let base_options = |extra: &[String], variant: Option<&String>| LoadOptions {
            sets: args.sets.iter().chain(extra).cloned().collect(),
            variant: variant.cloned(),
            seed: None,
        };
        let first = points[0].sets();
        let (base, extra) = match load_str(args.file, args.text, &base_options(&[], None)) {
            Ok(b) => (b, Vec::new()),
            Err(e) => match load_str(args.file, args.text, &base_options(&first, None)) {
                Ok(b) => (b, first),
                Err(_) => return Err(e.to_string()),
            },
        };
        let variants = if args.variants.is_empty() {
            base.snapshot_variants.clone()
        } else {
            args.variants.to_vec()
        };
        check_variant_names(&variants, "run").map_err(|m| format!("--variants: {m}"))?;
        // Each variant must load as the file is (an unknown one is named as `cgsim run` names
        // it), before any grid point is tried under it.
        for variant in &variants {
            let options = base_options(&extra, Some(variant));
            match load_str(args.file, args.text, &options) {
                // With the first point's values standing in, the point's own check below
                // names what is wrong.
                Err(e) if extra.is_empty() => return Err(e.to_string()),
                _ => {}
            }
        }
        let runs = points.len() as u128
            * variants.len() as u128
            * (u128::from(args.last_seed - args.first_seed) + 1);
        if runs > u128::from(MAX_RUNS) {
            return Err(format!(
                "{runs} runs ({} points x {} variants x {} seeds) is more than {MAX_RUNS}",
                points.len(),
                variants.len(),
                u128::from(args.last_seed - args.first_seed) + 1
            ));
        }
        let keys: Vec<&str> = grid.iter().map(|g| g.key.as_str()).collect();
        let defaults_text =
            unset_keys(args.text, &keys).map_err(|m| format!("{}: {m}", args.file))?;
        let mut sweep = Sweep {
            plan: Plan {
                scenario: base.name.clone(),
                scenario_sha256: sha256_hex(args.text.as_bytes()),
                sets: args.sets.to_vec(),
                grid,
                points: Vec::new(),
                defaults_not_run: None,
                variants,
                first_seed: args.first_seed,
                last_seed: args.last_seed,
                shard: args.shard,
            },
            file: args.file.to_string(),
            text: args.text.to_string(),
            defaults_text,
        };
        // Every point under every variant loads, or the sweep does not start.
        let mut kept = Vec::with_capacity(points.len());
        for (i, point) in points.drain(..).enumerate() {
            let label = format!("p{}", i + 1);
            let mut failed = None;
            for variant in &sweep.plan.variants {
                if let Err(e) = sweep.load_point(&point, variant, args.first_seed) {
                    failed = Some(if point.unset {
                        format!("under variant {variant}, {}", e.message)
                    } else {
                        explain_point_error(&e, &point, &label, variant)
                    });
                    break;
                }
            }
            match failed {
                None => kept.push(point),
                // Kafka's defaults are added, not asked for: a scenario that needs one of the
                // grid's keys set (a heartbeat the default session timeout is below, say) runs
                // without them, and the summary says why.
                Some(why) if point.unset => sweep.plan.defaults_not_run = Some(why),
                Some(why) => return Err(why),
            }
        }
        sweep.plan.points = kept;
        Ok(sweep)
    }

    fn load_point(
        &self,
        point: &Point,
        variant: &str,
        seed: u64,
    ) -> Result<Scenario, ScenarioError> {
        let mut sets = self.plan.sets.clone();
        sets.extend(point.sets());
        let text = if point.unset {
            &self.defaults_text
        } else {
            &self.text
        };
        load_str(
            &self.file,
            text,
            &LoadOptions {
                seed: Some(seed),
                variant: Some(variant.to_string()),
                sets,
            },
        )
    }

    /// The scenario one run runs.
    pub fn load(&self, job: Job) -> Result<Scenario, ScenarioError> {
        self.load_point(
            &self.plan.points[job.point],
            &self.plan.variants[job.variant],
            job.seed,
        )
    }

    /// Runs one job and keeps its figures.
    pub fn run(&self, job: Job) -> Result<Record, String> {
        let scenario = self.load(job).map_err(|e| e.to_string())?;
        let out = run(&scenario, RunOptions::default());
        Ok(Record::of(job, &out.report))
    }
}

/// A load error of a grid point, named by the point and its `--grid` value rather than by the
/// `--set` it became.
fn explain_point_error(e: &ScenarioError, point: &Point, label: &str, variant: &str) -> String {
    let mut message = e.message.clone();
    for set in point.sets() {
        let prefix = format!("--set {set:?}");
        if let Some(rest) = message.strip_prefix(&prefix) {
            message = format!("{set}{rest}");
            break;
        }
    }
    let what = format!("grid point {label} ({})", point.text());
    let at = e.line.map(|l| format!(": line {l}")).unwrap_or_default();
    format!("{}{at}: {what}, variant {variant}: {message}", e.file)
}

/// The scenario's identity in the header: SHA-256 of the file's bytes, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_hash_is_sha256_of_its_bytes() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
