//! The `cgsim` command line: parses arguments and dispatches; the work lives in the library.

mod cli;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cgsim",
    version,
    about = "Deterministic simulator of an Apache Kafka consumer group"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run assignors on JSON lines (a file, or stdin): Kafka's exact assignment for each line.
    Assign {
        /// JSON-lines input; stdin when absent.
        file: Option<PathBuf>,
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
}

fn main() -> ExitCode {
    let args = Args::parse();
    match args.command {
        Command::Assign { file } => cli::assign::run(file.as_deref()),
        Command::Partition {
            partitions,
            redis,
            keys,
        } => cli::partition::run(partitions, redis, &keys),
    }
}
