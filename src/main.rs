//! The `cgsim` command line: parses arguments and dispatches; the work lives in the library.

mod cli;

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cgsim",
    version,
    about = "Deterministic simulator of an Apache Kafka consumer group"
)]
struct Args {
    /// The largest input file (a scenario, `cgsim assign`'s input) read, in bytes: 16 MiB for
    /// a scenario and 64 MiB for `assign` unless set (for a big sweep's scenario, say).
    #[arg(long, global = true, value_name = "BYTES")]
    max_input_bytes: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario and print its report.
    Run {
        #[command(flatten)]
        input: ScenarioInput,
        #[arg(long, value_enum, default_value = "text")]
        format: cli::run::Format,
        /// Write the trace (one line per step, simulated time first) to FILE, or with `-` (or
        /// no value) to stdout before the report.
        #[arg(long, value_name = "FILE|-", num_args = 0..=1, default_missing_value = "-")]
        trace: Option<String>,
        /// Testing the checker: AT_MS:MEMBER:PARTITION makes MEMBER claim PARTITION (`topic-p`)
        /// at AT_MS without an assignment.
        #[arg(long, hide = true, value_name = "AT_MS:MEMBER:PARTITION")]
        inject_double_ownership: Vec<String>,
        /// Write an SVG timeline of the run: a lane per member, rebalances shaded, unavailable
        /// partitions and lag below.
        #[arg(long, value_name = "OUT.svg")]
        timeline: Option<PathBuf>,
        /// Show only this window of simulated time in the timeline and the Chrome trace.
        #[arg(long, value_name = "START_MS..END_MS")]
        timeline_window: Option<String>,
        /// Write the run in the Trace Event Format (open it in ui.perfetto.dev or
        /// chrome://tracing).
        #[arg(long, value_name = "OUT.json")]
        chrome_trace: Option<PathBuf>,
        /// Write the scenario as run (after --set, --seed and --variant) to FILE: `cgsim run
        /// FILE` replays it with the same digest.
        #[arg(long, value_name = "FILE")]
        emit_scenario: Option<PathBuf>,
        /// After the report, the group at the run's end as Kafka's `kafka-consumer-groups
        /// --describe --members --verbose` and `--describe --offsets` print it (text only).
        #[arg(long)]
        describe: bool,
    },
    /// Run a scenario and explain each rebalance as a chain of causes: who started it, how
    /// everyone learned of it, who the group waited for and how long; where a rebalance was
    /// expected and none came, and why (a static member back within its session, a short
    /// stall or cut); rebalance loops named as loops, and why a run never settled.
    Explain {
        #[command(flatten)]
        input: ScenarioInput,
        #[arg(long, value_enum, default_value = "text")]
        format: cli::run::Format,
    },
    /// Check every scenario's `[[expect]]` entries (in DIR, or one file) over its variants: one
    /// line per expectation and variant, exit 1 if any failed, 2 if a file did not load (every
    /// file's error is printed and the others still run).
    Check {
        /// A directory of scenario files (TOML), or one file.
        dir: PathBuf,
        /// KEY=VALUE: a dotted path into every scenario and a TOML value, as `cgsim run --set`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Run every (variant, seed) pair of a scenario and print one table: figures by variant,
    /// each the median over seeds with its spread and its ratio to the first variant.
    Compare {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Seeds to run, A..B inclusive (or one seed); default: the scenario's own seed.
        #[arg(long, value_name = "A..B", allow_hyphen_values = true, value_parser = cli::compare::parse_seeds)]
        seeds: Option<cli::compare::SeedRange>,
        /// Variants, comma-separated; the first is the baseline of the ratios. Default: the
        /// scenario's snapshot_variants (eager, cooperative, consumer unless it lists its own).
        #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
        variants: Vec<String>,
        /// Worker threads (default: one per core). The output is the same for any number.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// KEY=VALUE: a dotted path into the scenario and a TOML value (a bare word is a string).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: cli::run::Format,
    },
    /// Run a scenario over a grid of settings x variants x seeds: one JSON line per run after
    /// a header line, then a summary per point and variant (and with --objective the
    /// recommended settings). Shards of one sweep run anywhere and `cgsim merge` joins them.
    Sweep {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// KEY=V1,V2,...: a dotted path into the scenario (as --set) and its values (TOML,
        /// split on commas outside brackets and quotes). Repeat for more keys: the sweep runs
        /// every combination, and Kafka's defaults as a point of their own.
        #[arg(long = "grid", value_name = "KEY=V1,V2,...", required = true)]
        grid: Vec<String>,
        /// Seeds to run, A..B inclusive (or one seed).
        #[arg(long, value_name = "A..B", allow_hyphen_values = true, value_parser = cli::compare::parse_seeds)]
        seeds: cli::compare::SeedRange,
        /// Variants, comma-separated. Default: the scenario's snapshot_variants.
        #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
        variants: Vec<String>,
        /// Run one share of the sweep: I/N (1-based), or env/N to read the index from
        /// JOB_COMPLETION_INDEX (Kubernetes), SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN
        /// (Slurm) or TEST_SHARD_INDEX (Bazel).
        #[arg(long, value_name = "I/N|env/N", value_parser = cgsim::sweep::shard::parse_shard)]
        shard: Option<cgsim::sweep::shard::ShardSpec>,
        /// Skip the runs already in --out (an interrupted sweep, run again) and append the rest.
        #[arg(long)]
        resume: bool,
        /// Rank the points by the median of FIGURE (minimised; max:FIGURE maximises) and
        /// recommend the best.
        #[arg(long, value_name = "[max:]FIGURE", value_parser = cgsim::sweep::objective::parse_objective)]
        objective: Option<cgsim::sweep::objective::Objective>,
        /// Write the JSON lines to FILE (the summary then goes to stdout); default: stdout
        /// (the summary to stderr).
        #[arg(long, value_name = "FILE.jsonl")]
        out: Option<PathBuf>,
        /// Worker threads (default: one per core). The output is the same for any number.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// KEY=VALUE: applied to every run, as in `cgsim run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Fuzz: one generated scenario per seed (a small group from scratch, or around SCENARIO),
    /// with a swarm of fault kinds switched on; every safety and liveness property checked.
    /// One line per failure with the command that replays it; the coverage paths reached; last
    /// line `fuzz: F failures in N runs (R runs/s)`. Exit 1 when any run failed.
    Fuzz {
        /// A scenario to fuzz around (its topics, group settings and members); default: small
        /// groups drawn from scratch.
        scenario: Option<PathBuf>,
        /// Seeds to run, A..B inclusive (or one seed).
        #[arg(long, value_name = "A..B", allow_hyphen_values = true, value_parser = cli::compare::parse_seeds, required_unless_present_any = ["list_mutants", "time"])]
        seeds: Option<cli::compare::SeedRange>,
        /// Start no seed after SECS seconds (the running ones finish); the last line names the
        /// seeds covered. Without --seeds: seeds 1, 2, ... Ctrl-C stops the same way (exit 130
        /// unless a run failed).
        #[arg(long = "time", value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
        time: Option<u64>,
        /// A built-in variant (eager, cooperative, consumer) applied to every generated
        /// scenario, and carried into each replay command and --out file.
        #[arg(long)]
        variant: Option<String>,
        /// KEY=VALUE applied to every generated scenario, as `cgsim run --set`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Test-only: turn on a deliberately broken behaviour (see --list-mutants).
        #[arg(long, value_name = "NAME")]
        mutant: Option<String>,
        /// Worker threads (default: one per core). The output is the same for any number.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// Shrink the first failure of each property to the smallest scenario that still
        /// fails it, and write it to --out (default fuzz-out).
        #[arg(long)]
        shrink: bool,
        /// Write each failing scenario to DIR as fuzz-SEED.toml (`cgsim run` replays it).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// List the mutants, one per line, name first.
        #[arg(long)]
        list_mutants: bool,
        /// Also draw broker and network faults (broker crashes and restarts, a coordinator
        /// fail-over, network partitions, latency spikes) from each seed's own swarm.
        #[arg(long)]
        cluster_faults: bool,
        /// Also restart some members onto the other group protocol after the fault phase
        /// (KIP-848's online migration, sometimes rolled back), from each seed's own stream.
        #[arg(long)]
        migration: bool,
        /// Write every run's digest to FILE, one `SEED DIGEST` line per seed in seed order:
        /// two builds that give the same file behave the same on these generated scenarios (a
        /// reshaping's check, beside the snapshots).
        #[arg(long, value_name = "FILE")]
        digests: Option<PathBuf>,
    },
    /// Join the JSON lines of a sweep's shards and print the summary the unsharded sweep
    /// prints; refuses files of different sweeps and a sweep with runs missing.
    Merge {
        /// The shards' --out files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the merged JSON lines, in the unsharded order.
        #[arg(long, value_name = "FILE.jsonl")]
        out: Option<PathBuf>,
        /// As `cgsim sweep --objective`.
        #[arg(long, value_name = "[max:]FIGURE", value_parser = cgsim::sweep::objective::parse_objective)]
        objective: Option<cgsim::sweep::objective::Objective>,
    },
    /// Run assignors on JSON lines (a file, or stdin): Kafka's exact assignment for each line.
    /// With --table: every assignor side by side on groups of several sizes.
    Assign {
        /// JSON-lines input; stdin when absent.
        #[arg(conflicts_with = "table")]
        file: Option<PathBuf>,
        /// Print the assignment table: partitions per member for every assignor side by side.
        #[arg(long)]
        table: bool,
        /// Table topics, NAME=PARTITIONS,... (every member subscribes to all).
        #[arg(long, requires = "table", value_name = "NAME=N,...")]
        topics: Option<String>,
        /// Table group sizes, e.g. 2,3,4,10.
        #[arg(long, requires = "table", value_name = "N,...")]
        members: Option<String>,
        /// How each group formed: all (default), one-by-one, or A+B; per size as
        /// 2=one-by-one,4=3+1.
        #[arg(long, requires = "table", value_name = "SPEC")]
        joins: Option<String>,
        /// Member ids in JoinGroup order: ID,ID,... (each group takes the first N) or N=ID,...
        /// for one group size; repeatable. Default c1..cN.
        #[arg(long = "member-ids", requires = "table", value_name = "IDS")]
        member_ids: Vec<String>,
        /// Topic ids for uniform, TOPIC=BASE64UUID,...; default: first 16 bytes of SHA-256 of
        /// the topic name.
        #[arg(long = "topic-ids", requires = "table", value_name = "TOPIC=ID,...")]
        topic_ids: Option<String>,
        /// A built-in table (seed-001: the seed's published table and join histories; seed-000: its
        /// two co-partitioned topics and 4 pods).
        #[arg(long, requires = "table", conflicts_with_all = ["topics", "members", "joins", "member_ids", "topic_ids"])]
        preset: Option<String>,
        /// List each member's partitions too, not just how many.
        #[arg(long, requires = "table")]
        detail: bool,
        /// The streams view: a Kafka Streams application's subtopologies, ID=TASKS[:stateful],...
        /// (e.g. 0=12:stateful,1=6); tasks per instance and stream thread under the streams
        /// group (kip1071), high_availability and legacy_sticky.
        #[arg(long, requires_all = ["table", "instances"], value_name = "ID=N[:stateful],...",
              conflicts_with_all = ["topics", "members", "joins", "member_ids", "topic_ids", "preset", "detail"])]
        subtopologies: Option<String>,
        /// Streams view: the Kafka Streams instances forming the group.
        #[arg(long, requires = "subtopologies", value_name = "N")]
        instances: Option<usize>,
        /// Streams view: stream threads per instance (num.stream.threads).
        #[arg(
            long,
            requires = "subtopologies",
            value_name = "N",
            default_value_t = 1
        )]
        threads: usize,
        /// Streams view: num.standby.replicas.
        #[arg(
            long,
            requires = "subtopologies",
            value_name = "N",
            default_value_t = 0
        )]
        standbys: u32,
    },
    /// Serve the lab on 127.0.0.1: a page showing every assignor side by side (who reads which
    /// partition), a page showing rebalances side by side over time with a scrubber and faults
    /// added from the page, and their JSON API.
    Lab {
        /// The port to listen on; 0 picks a free one (the first line printed names it).
        #[arg(long, default_value_t = 7878)]
        port: u16,
        /// The folder of scenarios the rebalance view offers (read by name only).
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
        /// The wall time one run of the rebalance view may take, in ms (a run past it is
        /// stopped and answered with a message).
        #[arg(long, default_value_t = cgsim::lab::limits::DEFAULT_RUN_WALL_MS, value_parser = clap::value_parser!(u64).range(1..=600_000))]
        run_timeout_ms: u64,
    },
    /// Check the model against Kafka's own code: `conform coordinator` replays scripted
    /// requests through the coordinator and compares its answers with Kafka's.
    Conform {
        #[command(subcommand)]
        what: ConformTarget,
    },
    /// Print the partition Kafka's default partitioner picks for each key.
    Partition {
        /// Number of partitions of the topic.
        #[arg(long)]
        partitions: u32,
        /// Also print the Redis Cluster hash slot of each key (CRC16 of its hash tag).
        #[arg(long)]
        redis: bool,
        /// Record keys (their UTF-8 bytes are hashed).
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Print a commented scenario for a group of your own: its members, topics and deploy, run
    /// long enough for the settle check (`cgsim new ... > my-group.toml && cgsim run
    /// my-group.toml`).
    New {
        /// How many members (consumers) the group has: c1, c2, ...
        #[arg(long)]
        members: u32,
        /// Static members (`group.instance.id`, KIP-345).
        #[arg(long = "static")]
        static_members: bool,
        /// The topics, NAME=PARTITIONS,... (every member subscribes to all).
        #[arg(long)]
        topics: String,
        /// `group.protocol`.
        #[arg(long, value_enum, default_value = "classic")]
        protocol: NewProtocol,
        /// The classic `partition.assignment.strategy` (comma-separated, in preference order),
        /// or the consumer protocol's `group.remote.assignor` (uniform or range); Kafka's
        /// default unless given.
        #[arg(long, value_name = "LIST")]
        assignors: Option<String>,
        /// What happens: nothing, a rolling restart of every member, the last member's crash,
        /// or one member more.
        #[arg(long, value_enum, default_value = "none")]
        deploy: cgsim::scenario::new::Deploy,
        /// When the deploy starts (ms).
        #[arg(long, default_value_t = 60_000)]
        at_ms: u64,
    },
    /// Print the completion script for SHELL to stdout, e.g. `cgsim completions bash >
    /// ~/.local/share/bash-completion/completions/cgsim`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to stdout: `cgsim man > cgsim.1 && man ./cgsim.1`.
    Man,
}

/// `cgsim new --protocol`: Kafka's `group.protocol` values.
#[derive(Clone, Copy, clap::ValueEnum)]
enum NewProtocol {
    Classic,
    Consumer,
}

/// A scenario file and what the command line changes in it (`run`, `explain`).
#[derive(clap::Args)]
struct ScenarioInput {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Overrides the scenario's seed (its `seed`, 1 when it gives none): 0 to 2^64 - 1.
    #[arg(long, allow_hyphen_values = true, value_parser = cli::compare::parse_seed)]
    seed: Option<u64>,
    /// A built-in variant (eager, cooperative, consumer) or one the scenario defines; without
    /// it, the scenario as written (the variant `default`).
    #[arg(long)]
    variant: Option<String>,
    /// KEY=VALUE: a dotted path into the scenario and a TOML value (a bare word is a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

impl ScenarioInput {
    fn load_options(&self) -> cgsim::scenario::LoadOptions {
        cgsim::scenario::LoadOptions {
            seed: self.seed,
            variant: self.variant.clone(),
            sets: self.sets.clone(),
        }
    }
}

#[derive(Subcommand)]
enum ConformTarget {
    /// Replay coordinator scripts (../shared/reference/coordinator/README.md) request by request
    /// and print one trace per script in Kafka's trace format, or with --diff compare them.
    Coordinator {
        /// The scripts (JSON lines).
        scripts: PathBuf,
        /// Kafka's traces to compare with: prints per script `requests matched / total` and
        /// the first difference; exit 1 if any counted request differs.
        #[arg(long, value_name = "TRACES.jsonl")]
        diff: Option<PathBuf>,
        /// Hand out the member ids Kafka issued in these traces (HashMap order over the real
        /// ids decides leader hand-over); otherwise ids are seeded by each script's seed.
        #[arg(long, value_name = "TRACES.jsonl")]
        member_ids_from: Option<PathBuf>,
        /// text (the default with --diff) or json (the traces; the default without --diff).
        #[arg(long, value_enum)]
        format: Option<cli::conform::Format>,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(n) = args.max_input_bytes {
        cgsim::scenario::input::set_max_input_bytes(n);
    }
    // Diagnostics for people, on stderr, with RUST_LOG; nothing asserted depends on them.
    init_logging();
    match args.command {
        Command::Run {
            input,
            format,
            trace,
            inject_double_ownership,
            timeline,
            timeline_window,
            chrome_trace,
            emit_scenario,
            describe,
        } => cli::run::run(
            &input.scenario,
            &input.load_options(),
            cli::run::Output { format, describe },
            trace.as_deref(),
            &inject_double_ownership,
            &cli::run::Pictures {
                timeline,
                window: timeline_window,
                chrome_trace,
            },
            emit_scenario.as_deref(),
        ),
        Command::Explain { input, format } => {
            cli::explain::run_explain(&input.scenario, &input.load_options(), format)
        }
        Command::Check { dir, sets } => cli::check::run_check(&dir, &sets),
        Command::Compare {
            scenario,
            seeds,
            variants,
            threads,
            sets,
            format,
        } => cli::compare::run_compare(
            &scenario,
            cli::compare::Options {
                seeds,
                variants,
                threads: threads.map(usize::from),
                format,
                sets,
            },
        ),
        Command::Sweep {
            scenario,
            grid,
            seeds,
            variants,
            shard,
            resume,
            objective,
            out,
            threads,
            sets,
        } => cli::sweep::run_sweep(
            &scenario,
            cli::sweep::Options {
                grid,
                seeds,
                variants,
                shard,
                resume,
                objective,
                out,
                threads: threads.map(usize::from),
                sets,
            },
        ),
        Command::Fuzz {
            scenario,
            seeds,
            mutant,
            threads,
            shrink,
            out,
            list_mutants,
            cluster_faults,
            migration,
            digests,
            time,
            variant,
            sets,
        } => cli::fuzz::run_fuzz(cli::fuzz::Options {
            scenario,
            seeds,
            mutant,
            threads: threads.map(usize::from),
            shrink,
            out,
            list_mutants,
            cluster_faults,
            migration,
            digests,
            time_secs: time,
            variant,
            sets,
        }),
        Command::Merge {
            files,
            out,
            objective,
        } => cli::merge::run_merge(&files, out.as_deref(), objective),
        Command::Assign {
            file,
            table,
            topics,
            members,
            joins,
            member_ids,
            topic_ids,
            preset,
            detail,
            subtopologies,
            instances,
            threads,
            standbys,
        } => {
            if let (Some(subtopologies), Some(instances)) = (subtopologies, instances) {
                cli::assign::run_streams_table(&subtopologies, instances, threads, standbys)
            } else if table {
                cli::assign::run_table(&cli::assign::TableArgs {
                    topics,
                    members,
                    joins,
                    member_ids,
                    topic_ids,
                    preset,
                    detail,
                })
            } else {
                cli::assign::run(file.as_deref())
            }
        }
        Command::Lab {
            port,
            scenarios,
            run_timeout_ms,
        } => cli::lab::run(
            port,
            cgsim::lab::Config {
                scenarios,
                run_limits: cgsim::lab::limits::RunLimits {
                    wall_ms: run_timeout_ms,
                    ..Default::default()
                },
            },
        ),
        Command::Partition {
            partitions,
            redis,
            keys,
        } => cli::partition::run(partitions, redis, &keys),
        Command::New {
            members,
            static_members,
            topics,
            protocol,
            assignors,
            deploy,
            at_ms,
        } => cli::new::run(
            cgsim::scenario::new::NewGroup {
                members,
                static_members,
                topics: Vec::new(),
                protocol: match protocol {
                    NewProtocol::Classic => cgsim::scenario::Protocol::Classic,
                    NewProtocol::Consumer => cgsim::scenario::Protocol::Consumer,
                },
                assignors: None,
                deploy,
                at_ms,
            },
            &topics,
            assignors.as_deref(),
        ),
        Command::Completions { shell } => {
            cli::shell::print(&cli::shell::completions(Args::command(), shell))
        }
        Command::Man => cli::shell::print(&cli::shell::man(Args::command())),
        Command::Conform {
            what:
                ConformTarget::Coordinator {
                    scripts,
                    diff,
                    member_ids_from,
                    format,
                },
        } => cli::conform::coordinator(
            &scripts,
            diff.as_deref(),
            member_ids_from.as_deref(),
            format,
        ),
    }
}

/// `RUST_LOG` as a list of `target=level` directives or a bare level (`info`,
/// `cgsim=debug,warn`); unset or unreadable, errors only (EnvFilter's default).
fn init_logging() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => spec.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("RUST_LOG={spec:?}: {e}; logging errors only");
            Targets::new().with_default(LevelFilter::ERROR)
        }),
        _ => Targets::new().with_default(LevelFilter::ERROR),
    };
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
        )
        .with(filter)
        .init();
}

#[cfg(test)]
mod tests {
    use super::Args;
    use clap::CommandFactory;

    fn help(subcommand: &str) -> String {
        let mut cmd = Args::command();
        cmd.find_subcommand_mut(subcommand)
            .expect("the subcommand")
            .render_long_help()
            .to_string()
    }

    /// The help texts tell the defaults the code uses.
    #[test]
    fn help_texts_tell_the_codes_defaults() {
        let variants = cgsim::scenario::DEFAULT_SNAPSHOT_VARIANTS.join(", ");
        assert!(help("compare").contains(&format!("snapshot_variants ({variants} unless")));
        let seed = cgsim::scenario::DEFAULT_SEED;
        for command in ["run", "explain"] {
            assert!(help(command).contains(&format!("its `seed`, {seed} when it gives none")));
        }
    }
}
