//! `cgsim sweep SCENARIO --grid KEY=V1,V2,... [--grid ...] --seeds A..B [--variants ...]
//! [--shard I/N | --shard env/N] [--resume] [--objective [max:]FIGURE] [--out FILE.jsonl]
//! [--threads N] [--set KEY=VALUE]...`: the files, the terminal and the exit code around
//! `cgsim::sweep`. The JSON lines go to `--out` (or stdout) as the runs finish, in the
//! unsharded order; the summary to stdout (stderr when the lines take stdout).

use super::compare::SeedRange;
use cgsim::sweep::objective::Objective;
use cgsim::sweep::resume::resume;
use cgsim::sweep::runner::run_in_order;
use cgsim::sweep::shard::{resolve, ShardSpec};
use cgsim::sweep::text::summary_text;
use cgsim::sweep::{Job, Record, Sweep, SweepArgs};
use std::collections::BTreeSet;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub struct Options {
    pub grid: Vec<String>,
    pub seeds: SeedRange,
    pub variants: Vec<String>,
    pub shard: Option<ShardSpec>,
    pub resume: bool,
    pub objective: Option<Objective>,
    pub out: Option<PathBuf>,
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    pub sets: Vec<String>,
}

/// Why the runs stopped early.
enum Stop {
    Bad(String),
    /// stdout's reader went away (`| head`): stop quietly, as Unix tools do.
    Closed,
}

pub fn run_sweep(path: &Path, options: Options) -> ExitCode {
    match sweep(path, options) {
        Ok(code) => code,
        Err(Stop::Bad(message)) => {
            eprintln!("{message}");
            super::bad_input()
        }
        Err(Stop::Closed) => ExitCode::SUCCESS,
    }
}

fn sweep(path: &Path, options: Options) -> Result<ExitCode, Stop> {
    let file = path.display().to_string();
    let text = cgsim::scenario::input::read_text(path, cgsim::scenario::input::SCENARIO_BYTES)
        .map_err(|e| Stop::Bad(format!("{file}: {e}")))?;
    if options.resume && options.out.is_none() {
        return Err(Stop::Bad(
            "--resume needs --out FILE.jsonl: the runs to skip are the ones already in it".into(),
        ));
    }
    let spec = options
        .shard
        .unwrap_or(ShardSpec::Fixed(cgsim::sweep::shard::Shard::ALL));
    let (shard, from) = resolve(spec, |name| std::env::var(name).ok()).map_err(Stop::Bad)?;
    if from == Some("TEST_SHARD_INDEX") {
        // Bazel's sharding protocol: touching this file says the test runner shards.
        if let Ok(status) = std::env::var("TEST_SHARD_STATUS_FILE") {
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(status);
        }
    }
    let sweep = Sweep::new(&SweepArgs {
        file: &file,
        text: &text,
        sets: &options.sets,
        grid: &options.grid,
        variants: &options.variants,
        first_seed: options.seeds.first,
        last_seed: options.seeds.last,
        shard,
    })
    .map_err(Stop::Bad)?;
    let plan = &sweep.plan;
    tracing::info!(scenario = %plan.scenario, points = plan.points.len(), shard = %plan.shard, from = ?from, "sweep");

    // Where the lines go, and what is already there.
    let mut done: Vec<Record> = Vec::new();
    let mut sink: Box<dyn Write> = match &options.out {
        Some(out) => {
            let shown = out.display();
            let existing = if options.resume {
                match std::fs::read(out) {
                    Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
                        Stop::Bad(format!("{shown}: not UTF-8: not a cgsim sweep output"))
                    })?),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(Stop::Bad(format!("{shown}: cannot read: {e}"))),
                }
            } else {
                None
            };
            let keep = match &existing {
                Some(text) => {
                    let resumed =
                        resume(plan, text).map_err(|m| Stop::Bad(format!("{shown}: {m}")))?;
                    if resumed.dropped_partial {
                        eprintln!("{shown}: dropped a partial last line (a run killed mid-write)");
                    }
                    done = resumed.records;
                    resumed.keep_bytes
                }
                None => 0,
            };
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(keep == 0)
                .open(out)
                .map_err(|e| Stop::Bad(format!("{shown}: cannot write: {e}")))?;
            // Cut back to the whole lines (a partial last line goes), then append.
            f.set_len(keep as u64)
                .and_then(|()| f.seek(std::io::SeekFrom::End(0)).map(|_| ()))
                .map_err(|e| Stop::Bad(format!("{shown}: cannot write: {e}")))?;
            let mut f: Box<dyn Write> = Box::new(f);
            if keep == 0 {
                write_line(&mut f, &plan.header_line(), out)?;
            }
            f
        }
        None => {
            let mut out: Box<dyn Write> = Box::new(std::io::stdout());
            write_line(&mut out, &plan.header_line(), Path::new("-"))?;
            out
        }
    };

    let skip: BTreeSet<Job> = done.iter().map(|r| r.job).collect();
    let todo: Vec<Job> = plan
        .own_jobs()
        .into_iter()
        .filter(|j| !skip.contains(j))
        .collect();
    let threads = options.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let progress = super::progress_bar(todo.len() as u64);
    let out_path = options.out.clone().unwrap_or_else(|| PathBuf::from("-"));
    let mut new = Vec::with_capacity(todo.len());
    let ran = run_in_order(
        &todo,
        threads,
        |&job| sweep.run(job),
        |_, result| {
            let record = result.map_err(Stop::Bad)?;
            write_line(&mut sink, &plan.record_line(&record), &out_path)?;
            progress.inc(1);
            new.push(record);
            Ok(())
        },
    );
    progress.finish_and_clear();
    ran?;
    drop(sink);

    let mut records = done;
    records.extend(new);
    records.sort_by_key(|r| r.job);
    let summary = summary_text(plan, &records, options.objective);
    if options.out.is_some() {
        if !super::write_stdout(&summary) {
            return Ok(ExitCode::SUCCESS);
        }
    } else {
        eprint!("{summary}");
    }
    Ok(if records.iter().any(|r| r.violation_count() > 0) {
        ExitCode::from(super::EXIT_VIOLATIONS)
    } else {
        ExitCode::SUCCESS
    })
}

/// One line and its newline, flushed: a killed run leaves whole lines and at most one partial.
fn write_line(out: &mut Box<dyn Write>, line: &str, path: &Path) -> Result<(), Stop> {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    match out.write_all(&bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Stop::Closed),
        Err(e) => Err(Stop::Bad(format!("{}: cannot write: {e}", path.display()))),
    }
}
