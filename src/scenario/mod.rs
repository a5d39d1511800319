//! Scenario files: TOML with snake_case keys and Kafka's defaults, parsed into a raw form
//! (`file.rs`, `deny_unknown_fields`), overridden (`--set`, `--seed`, `--variant`), then
//! validated into the typed [`Scenario`] the simulator runs (`validate.rs`). Bad input is an
//! [`ScenarioError`] naming the file, the line and what is wrong.

mod diagnose;
mod emit;
pub mod expect;
mod file;
pub mod input;
pub mod limits;
mod load;
mod members;
pub mod mutant;
pub mod new;
mod settle;
pub mod timeline;
mod validate;
mod value;

/// The variants a scenario without `snapshot_variants` is snapshot under, and `cgsim compare`
/// runs by default: the three built-ins of a plain consumer scenario.
pub const DEFAULT_SNAPSHOT_VARIANTS: [&str; 3] = ["eager", "cooperative", "consumer"];

/// The seed of a scenario that gives none.
pub const DEFAULT_SEED: u64 = 1;

pub use emit::emit_scenario;
pub use file::{default_text, MigrationPolicy, Protocol};
pub use load::{load, load_str, unset_keys, LoadOptions, ScenarioError};
pub use mutant::Mutant;
pub use validate::check_variant_names;
pub use value::canonical_value;

use crate::assignor::RebalanceProtocol;

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub variant: String,
    pub duration_ms: u64,
    pub cluster: ClusterSpec,
    pub topics: Vec<TopicSpec>,
    pub group: GroupSpec,
    pub members: Vec<MemberSpec>,
    pub producers: Vec<ProducerSpec>,
    pub arrival: ArrivalSpec,
    pub app: Option<JoinApp>,
    pub lag_sample_ms: u64,
    pub timeline: Vec<TimelineEvent>,
    /// The same timeline in the file's words, entry for event (a rolling bounce as its leaves
    /// and restarts, a restart's `set` as it applies): what `--emit-scenario` writes back.
    pub plan: Vec<timeline::Planned>,
    /// Groups of co-partitioned topics (indexes into `topics`).
    pub co_partitioned: Vec<Vec<usize>>,
    /// Variants the snapshot tests run.
    pub snapshot_variants: Vec<String>,
    /// `[[expect]]` entries, each with its line in the file.
    pub expects: Vec<expect::Expectation>,
    /// Settings the file sets that do not apply to the run (classic-only settings under the
    /// consumer protocol), each in words.
    pub notices: Vec<String>,
    /// Test-only: a deliberately broken behaviour (`mutant = "NAME"`, [`Mutant`]).
    pub mutant: Option<Mutant>,
}

#[derive(Clone, Debug)]
pub struct ClusterSpec {
    pub brokers: u32,
    /// One-way request latency, uniform in `[min, max]` microseconds.
    pub latency_min_us: u64,
    pub latency_max_us: u64,
    /// `offsets.topic.num.partitions`: where the group's coordinator lives.
    pub offsets_topic_partitions: u32,
    /// Each broker's `broker.rack`, by broker id; empty when the brokers have none.
    pub broker_racks: Vec<String>,
    /// How long a follower's log end trails the leader's (µs).
    pub replication_delay_us: u64,
    /// The controller's `broker.session.timeout.ms`.
    pub broker_session_timeout_ms: u64,
    /// From a broker's fencing until its partitions' new leaders serve.
    pub leader_election_ms: u64,
    /// A new coordinator's load of the group.
    pub coordinator_load_ms: u64,
    /// `leader.imbalance.check.interval.seconds`, in ms.
    pub leader_imbalance_check_interval_ms: u64,
}

#[derive(Clone, Debug)]
pub struct TopicSpec {
    pub name: String,
    /// Partitions at the start.
    pub partitions: u32,
    /// `(at_ms, count)`: when the topic grows, in time order.
    pub resizes: Vec<(u64, u32)>,
    pub replication_factor: u32,
}

impl TopicSpec {
    /// The most partitions the topic ever has: the size of its partition index space.
    pub fn max_partitions(&self) -> u32 {
        self.resizes
            .iter()
            .map(|&(_, n)| n)
            .fold(self.partitions, u32::max)
    }

    /// Partitions at `at_ms`.
    pub fn partitions_at(&self, at_ms: u64) -> u32 {
        self.resizes
            .iter()
            .rev()
            .find(|&&(t, _)| t <= at_ms)
            .map_or(self.partitions, |&(_, n)| n)
    }
}

/// Group-wide settings (Kafka client and broker configs, Kafka's defaults).
#[derive(Clone, Debug)]
pub struct GroupSpec {
    pub group_id: String,
    pub protocol: Protocol,
    pub session_timeout_ms: u64,
    pub heartbeat_interval_ms: u64,
    pub max_poll_interval_ms: u64,
    pub initial_rebalance_delay_ms: u64,
    pub enable_auto_commit: bool,
    pub auto_commit_interval_ms: u64,
    pub auto_offset_reset: OffsetReset,
    pub max_poll_records: u64,
    pub record_processing_us: u64,
    pub fetch_max_wait_ms: u64,
    pub retry_backoff_ms: u64,
    /// `retry.backoff.max.ms`.
    pub retry_backoff_max_ms: u64,
    /// `request.timeout.ms`.
    pub request_timeout_ms: u64,
    /// The application's `poll(Duration)` timeout.
    pub poll_timeout_ms: u64,
    pub commit_after_batch: CommitAfterBatch,
    pub commit_on_revoke: bool,
    pub on_partitions_revoked_ms: u64,
    pub on_partitions_assigned_ms: u64,
    pub metadata_max_age_ms: u64,
    /// KIP-848: the client's `group.remote.assignor` (`None`: the broker chooses).
    pub remote_assignor: Option<String>,
    pub consumer_heartbeat_interval_ms: u64,
    pub consumer_session_timeout_ms: u64,
    pub consumer_assignment_interval_ms: u64,
    /// The broker's `group.consumer.migration.policy`.
    pub migration_policy: MigrationPolicy,
    /// KIP-392: the brokers pick a replica in a member's rack to serve its fetches.
    pub fetch_from_follower: bool,
}

/// Manual commits after each processed batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitAfterBatch {
    None,
    Sync,
    Async,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetReset {
    Earliest,
    Latest,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSpec {
    pub name: String,
    pub client_id: String,
    pub group_instance_id: Option<String>,
    /// `partition.assignment.strategy`, in preference order.
    pub assignors: Vec<String>,
    /// The client's rebalance protocol: the highest one every listed assignor supports.
    pub rebalance_protocol: RebalanceProtocol,
    pub topics: Vec<String>,
    /// When the member's process starts; `None` until a timeline `join` starts it.
    pub start_ms: Option<u64>,
    /// Its consumer settings: the group's, with the member entry's own over them.
    pub settings: ClientSettings,
    /// `group.protocol`: classic or consumer (KIP-848).
    pub protocol: Protocol,
    /// KIP-848: its `group.remote.assignor`.
    pub remote_assignor: Option<String>,
    /// `client.rack`.
    pub client_rack: Option<String>,
}

/// A consumer's own settings (members are not in lockstep: each may process at its own speed
/// and run its own timeouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSettings {
    pub record_processing_us: u64,
    pub max_poll_records: u64,
    pub session_timeout_ms: u64,
    pub heartbeat_interval_ms: u64,
    /// Also the rebalance timeout its JoinGroup carries.
    pub max_poll_interval_ms: u64,
    pub on_partitions_revoked_ms: u64,
    pub on_partitions_assigned_ms: u64,
}

#[derive(Clone, Debug)]
pub struct ProducerSpec {
    pub topic: usize,
    pub start_ms: u64,
    /// Exclusive.
    pub end_ms: u64,
    pub kind: ProducerKind,
    /// A Kafka Streams sink's KIP-837 partitioner, when the producer is one.
    pub stream_partitioner: Option<StreamPartitioner>,
    /// Keys the stream partitioner answers for (`None`: every key).
    pub stream_partitioner_keys: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProducerKind {
    /// Null keys at a constant rate: spread evenly, counted in closed form.
    NullKeys { records_per_sec: u64 },
    /// Keyed records at a constant rate.
    Keyed {
        records_per_sec: u64,
        keys: Vec<String>,
        distribution: KeyDistribution,
    },
    /// Each key `per_key` times, keys in order round after round, one every `interval_ms`.
    Script {
        keys: Vec<String>,
        per_key: u32,
        interval_ms: u64,
    },
}

impl ProducerKind {
    pub fn is_keyed(&self) -> bool {
        !matches!(self, ProducerKind::NullKeys { .. })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDistribution {
    Cycle,
    Uniform,
    Skewed,
}

/// What a KIP-837 `StreamPartitioner#partitions()` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamPartitioner {
    /// No set: the default partitioner decides.
    Default,
    /// An empty set: the record is dropped (Kafka Streams' dropped-records sensor).
    Drop,
    /// Every partition: one logical record, one append per partition.
    Broadcast,
}

/// Extra fetch delays (out-of-order arrival across partitions).
#[derive(Clone, Debug, Default)]
pub struct ArrivalSpec {
    pub partition_lag_min_ms: u64,
    pub partition_lag_max_ms: u64,
    pub broker_lag_ms: Vec<u64>,
}

/// The partition-local join of seed 000.
#[derive(Clone, Debug)]
pub struct JoinApp {
    pub prices: usize,
    pub notifications: usize,
    pub wait_for_prices_ms: u64,
    pub recovery: Recovery,
    pub restore_records_per_sec: u64,
    pub pause_during_restore: bool,
    pub keep_state_on_revoke: bool,
}

/// How an assigned price partition's state is rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// The map starts empty; only new prices fill it.
    None,
    /// Replay the partition's compacted changelog at `restore_records_per_sec`.
    Changelog,
    /// A warm replica (num.standby.replicas = 1) on the member that follows the active owner in
    /// scenario order among the members in the group; a takeover by that member is free,
    /// anyone else replays the changelog.
    Standby,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineEvent {
    pub at_ms: u64,
    pub action: TimelineAction,
}

/// What happens at a point of the timeline (a rolling bounce is expanded into leaves and
/// restarts at load).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimelineAction {
    Join {
        member: usize,
    },
    Leave {
        member: usize,
    },
    Crash {
        member: usize,
    },
    /// A new process; with `settings`, one configured anew (an upgrade by restart).
    Restart {
        member: usize,
        settings: Option<Box<NewSettings>>,
    },
    Stall {
        member: usize,
        duration_ms: u64,
    },
    Subscribe {
        member: usize,
        topics: Vec<String>,
    },
    AddPartitions {
        topic: usize,
        partitions: u32,
    },
    /// A broker's process dies (`reset`) or its host vanishes (`hang`).
    BrokerCrash {
        broker: BrokerRef,
        connections: Connections,
    },
    /// A crashed broker starts again.
    BrokerRestart {
        broker: u32,
    },
    /// `members` cannot reach `brokers` (nor they them) for `duration_ms`.
    NetworkPartition {
        members: Vec<usize>,
        brokers: BrokerSet,
        duration_ms: u64,
    },
    /// Every message takes `latency_ms` longer one way, for `duration_ms`.
    LatencySpike {
        latency_ms: u64,
        duration_ms: u64,
    },
}

/// A broker as a fault names it: by id, or the one hosting the group's coordinator when the
/// fault happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerRef {
    Id(u32),
    Coordinator,
}

/// The brokers a network partition cuts members off from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BrokerSet {
    Ids(Vec<u32>),
    Coordinator,
}

/// What a crashed broker's connections do: reset at once (the process died, the host's kernel
/// answers) or hang until each request times out (the host is gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connections {
    Reset,
    Hang,
}

impl Connections {
    pub fn name(self) -> &'static str {
        match self {
            Connections::Reset => "reset",
            Connections::Hang => "hang",
        }
    }
}

impl TimelineAction {
    pub fn member(&self) -> Option<usize> {
        match *self {
            TimelineAction::Join { member }
            | TimelineAction::Leave { member }
            | TimelineAction::Crash { member }
            | TimelineAction::Restart { member, .. }
            | TimelineAction::Stall { member, .. }
            | TimelineAction::Subscribe { member, .. } => Some(member),
            TimelineAction::AddPartitions { .. }
            | TimelineAction::BrokerCrash { .. }
            | TimelineAction::BrokerRestart { .. }
            | TimelineAction::NetworkPartition { .. }
            | TimelineAction::LatencySpike { .. } => None,
        }
    }

    /// How long it lasts (a stall ends when its poll loop resumes, a network fault when it
    /// heals).
    pub fn duration_ms(&self) -> u64 {
        match *self {
            TimelineAction::Stall { duration_ms, .. }
            | TimelineAction::NetworkPartition { duration_ms, .. }
            | TimelineAction::LatencySpike { duration_ms, .. } => duration_ms,
            _ => 0,
        }
    }
}

/// A restarted member's new configuration: the `set` entries as written, and the member it
/// makes (its settings before, with the entries over them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSettings {
    pub set: Vec<String>,
    pub spec: MemberSpec,
}

/// When each member starts itself: a later `start_ms` in its entry, with no timeline `join`
/// for it (a join starts the others). `None`: it starts at 0 or by a join.
pub fn self_starts(timeline: &[TimelineEvent], members: &[MemberSpec]) -> Vec<Option<u64>> {
    let mut joined = vec![false; members.len()];
    for e in timeline {
        if let TimelineAction::Join { member } = e.action {
            joined[member] = true;
        }
    }
    members
        .iter()
        .zip(joined)
        .map(|(m, joined)| m.start_ms.filter(|&t| t > 0 && !joined))
        .collect()
}

impl Scenario {
    pub fn topic_index(&self, name: &str) -> Option<usize> {
        self.topics.iter().position(|t| t.name == name)
    }

    /// Partition counts of every topic, as the cluster's metadata has them at `at_ms`.
    pub fn partition_counts_at(&self, at_ms: u64) -> Vec<u32> {
        self.topics.iter().map(|t| t.partitions_at(at_ms)).collect()
    }

    /// Every configuration a member runs with: each entry's, and each restart's new one.
    pub fn member_specs_ever(&self) -> impl Iterator<Item = &MemberSpec> {
        let restarts = self.timeline.iter().filter_map(|e| match &e.action {
            TimelineAction::Restart {
                settings: Some(new),
                ..
            } => Some(&new.spec),
            _ => None,
        });
        self.members.iter().chain(restarts)
    }

    /// When the last timeline event has ended (a stall ends when its poll loop resumes).
    pub fn last_event_end_ms(&self) -> u64 {
        // A broker crash ends for the group when the controller has fenced the broker, new
        // leaders serve and a new coordinator has loaded the group.
        let fail_over = self.cluster.broker_session_timeout_ms
            + self.cluster.leader_election_ms
            + self.cluster.coordinator_load_ms;
        // With hung connections the clients only hear when their requests time out: a
        // heartbeat sent just after the crash after request.timeout.ms, a JoinGroup after the
        // rebalance timeout and 5 s more (AbstractCoordinator's JOIN_GROUP_TIMEOUT_LAPSE).
        let largest = |f: fn(&ClientSettings) -> u64| {
            self.member_specs_ever()
                .map(|m| f(&m.settings))
                .max()
                .unwrap_or(0)
        };
        let hung = fail_over
            .max(self.group.request_timeout_ms + largest(|s| s.heartbeat_interval_ms))
            .max(largest(|s| s.max_poll_interval_ms) + 5_000);
        self.timeline
            .iter()
            .map(|e| {
                let end = match e.action {
                    TimelineAction::BrokerCrash {
                        connections: Connections::Hang,
                        ..
                    } => hung,
                    TimelineAction::BrokerCrash { .. } => fail_over,
                    // New partitions reach the group when the leader's metadata does: its next
                    // refresh, up to metadata.max.age.ms later (ConsumerCoordinator
                    // .rejoinNeededOrPending compares the leader's assignment snapshot with
                    // the metadata it has), and only then does the rebalance begin.
                    TimelineAction::AddPartitions { .. } => self.group.metadata_max_age_ms,
                    _ => e.action.duration_ms(),
                };
                e.at_ms + end
            })
            .chain(self.members.iter().filter_map(|m| m.start_ms))
            .max()
            .unwrap_or(0)
    }
}
