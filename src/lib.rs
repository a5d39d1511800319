//! cgsim: a deterministic discrete-event simulator of an Apache Kafka consumer group.
//!
//! Data flows one way: scenario -> world (the driver) -> state machines (coordinator, members)
//! -> facts -> metrics -> report. The state machines return effects that the world applies;
//! the assignors and the partitioner are pure functions usable on their own (`cgsim assign`,
//! `cgsim partition`).

pub mod app;
pub mod assignor;
pub mod check;
pub mod client;
pub mod cluster;
pub mod conform;
pub mod explain;
pub mod facts;
pub mod fuzz;
pub mod group;
pub mod history;
pub mod java;
pub mod lab;
pub mod messages;
pub mod metrics;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod workload;
pub mod world;

/// mimalloc, for the CLI, the benchmarks and the tests alike. It asks the kernel for
/// transparent huge pages for the memory it takes (`madvise`; 38 of the large run's 62 MiB five
/// seconds in, none with `MIMALLOC_ALLOW_THP=0`), where glibc's malloc does only when started
/// with `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`. A large
/// group's state spreads over tens of MiB touched at random (1,001 members, 10,000 partitions):
/// with 4 KiB pages most of those touches also miss the TLB. Measured in pairs run side by side
/// on the two cores: `hour-1000x10k` faster in nine of nine, by 9% at the median (glibc's own
/// huge pages, through the tunable, gave 10%; mimalloc without them, `MIMALLOC_ALLOW_THP=0`,
/// 2%), `hour-100x1k` and `compare` as fast, peak memory up by the 2 MiB pages (README
/// "Benchmarks"). The allocator never reaches the output: every report and digest is the same.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
