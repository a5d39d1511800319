//! The scenario file as written: every key optional except the essentials, Kafka's defaults
//! everywhere else, unknown keys refused.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub duration_ms: Spanned<u64>,
    #[serde(default)]
    pub cluster: ClusterFile,
    pub topics: Vec<Spanned<TopicFile>>,
    #[serde(default)]
    pub group: GroupFile,
    pub members: Vec<Spanned<MemberFile>>,
    #[serde(default)]
    pub producers: Vec<Spanned<ProducerFile>>,
    #[serde(default)]
    pub arrival: ArrivalFile,
    /// How often consumer lag is sampled for the report.
    #[serde(default = "default_lag_sample")]
    pub lag_sample_ms: u64,
    pub app: Option<Spanned<AppFile>>,
    #[serde(default)]
    pub timeline: Vec<Spanned<TimelineFile>>,
    #[serde(default)]
    pub variants: BTreeMap<String, Spanned<VariantFile>>,
    /// Variants the snapshot tests run (default: `DEFAULT_SNAPSHOT_VARIANTS`, eager, cooperative
    /// and consumer; `default` runs the file as written).
    pub snapshot_variants: Option<Spanned<Vec<String>>>,
    /// Groups of topics that must be co-partitioned (same partition count, same keys): refused
    /// at load when their counts differ; the report names indexes that stop matching later.
    #[serde(default = "no_co_partitioned")]
    pub co_partitioned: Spanned<Vec<Vec<String>>>,
    /// What the scenario's report must show (`cgsim run` and `cgsim check` check them).
    #[serde(default)]
    pub expect: Vec<Spanned<ExpectFile>>,
    /// Test-only: a deliberately broken behaviour for `cgsim fuzz --mutant` (`mutant.rs`).
    pub mutant: Option<Spanned<String>>,
}

/// `[[expect]]`: a dotted path into the JSON report and one comparison, for every variant or
/// the one named.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ExpectFile {
    pub key: String,
    pub eq: Option<toml::Value>,
    pub le: Option<toml::Value>,
    pub ge: Option<toml::Value>,
    pub variant: Option<String>,
}

fn default_lag_sample() -> u64 {
    1_000
}

fn no_co_partitioned() -> Spanned<Vec<Vec<String>>> {
    Spanned::new(0..0, Vec::new())
}

fn default_seed() -> u64 {
    super::DEFAULT_SEED
}

#[derive(Deserialize, Serialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    #[serde(default = "default_brokers")]
    pub brokers: Spanned<u32>,
    #[serde(default = "default_latency")]
    pub request_latency_ms: Spanned<LatencyFile>,
    /// `offsets.topic.num.partitions` (Kafka default 50).
    #[serde(default = "default_offsets_partitions")]
    pub offsets_topic_partitions: u32,
    /// Each broker's `broker.rack`, by broker id (all or none, as Kafka's rack-aware replica
    /// placement needs).
    pub broker_racks: Option<Spanned<Vec<String>>>,
    /// How long a follower's log end trails the leader's: records appear on a follower (and can
    /// be fetched from it, KIP-392) this much later.
    #[serde(default = "default_replication_delay")]
    pub replication_delay_ms: u64,
    /// The controller's `broker.session.timeout.ms`: a broker that stops heartbeating is fenced
    /// (and its leaderships move) this long after its last heartbeat.
    #[serde(default = "default_broker_session_timeout")]
    pub broker_session_timeout_ms: u64,
    /// From a broker's fencing until the new leaders of its partitions serve (the controller's
    /// election and the metadata reaching the brokers).
    #[serde(default = "default_leader_election")]
    pub leader_election_ms: u64,
    /// How long a broker that becomes the group's coordinator takes to load the group from
    /// `__consumer_offsets` (requests meanwhile get COORDINATOR_LOAD_IN_PROGRESS).
    #[serde(default = "default_coordinator_load")]
    pub coordinator_load_ms: u64,
    /// `leader.imbalance.check.interval.seconds` (in ms): how often the controller moves
    /// leaderships back to their preferred replicas (`auto.leader.rebalance.enable`).
    #[serde(default = "default_leader_imbalance_check")]
    pub leader_imbalance_check_interval_ms: u64,
}

impl Default for ClusterFile {
    fn default() -> Self {
        ClusterFile {
            brokers: default_brokers(),
            request_latency_ms: default_latency(),
            offsets_topic_partitions: default_offsets_partitions(),
            broker_racks: None,
            replication_delay_ms: default_replication_delay(),
            broker_session_timeout_ms: default_broker_session_timeout(),
            leader_election_ms: default_leader_election(),
            coordinator_load_ms: default_coordinator_load(),
            leader_imbalance_check_interval_ms: default_leader_imbalance_check(),
        }
    }
}

fn default_brokers() -> Spanned<u32> {
    Spanned::new(0..0, 3)
}

fn default_offsets_partitions() -> u32 {
    50
}

fn default_replication_delay() -> u64 {
    5
}

fn default_broker_session_timeout() -> u64 {
    9_000
}

fn default_leader_election() -> u64 {
    100
}

fn default_coordinator_load() -> u64 {
    500
}

fn default_leader_imbalance_check() -> u64 {
    300_000
}

/// One-way latency of a request or response, uniform in `[min, max]` milliseconds (drawn in
/// microseconds).
#[derive(Deserialize, Serialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct LatencyFile {
    pub min: u64,
    pub max: u64,
}

fn default_latency() -> Spanned<LatencyFile> {
    Spanned::new(0..0, LatencyFile { min: 1, max: 5 })
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct TopicFile {
    pub name: String,
    pub partitions: u32,
    /// Replicas per partition (Kafka's `default.replication.factor` is 1).
    #[serde(default = "default_replication_factor")]
    pub replication_factor: u32,
}

fn default_replication_factor() -> u32 {
    1
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// The classic group protocol (JoinGroup/SyncGroup), Kafka's default `group.protocol`.
    Classic,
    /// KIP-848's consumer protocol.
    Consumer,
}

/// The broker's `group.consumer.migration.policy`: whether a live group may be converted
/// between the classic and the consumer protocol (Kafka's default `bidirectional`).
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MigrationPolicy {
    /// Classic to consumer when a consumer-protocol member joins, and back when the last one
    /// leaves.
    #[default]
    Bidirectional,
    /// Classic to consumer only.
    Upgrade,
    /// Consumer to classic only.
    Downgrade,
    /// Neither.
    Disabled,
}

impl MigrationPolicy {
    /// `ConsumerGroupMigrationPolicy.isUpgradeEnabled`.
    pub fn upgrade_enabled(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Bidirectional | MigrationPolicy::Upgrade
        )
    }

    /// `ConsumerGroupMigrationPolicy.isDowngradeEnabled`.
    pub fn downgrade_enabled(self) -> bool {
        matches!(
            self,
            MigrationPolicy::Bidirectional | MigrationPolicy::Downgrade
        )
    }
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OffsetResetFile {
    Earliest,
    Latest,
}

/// Group-wide consumer and broker settings, named after Kafka's configs, Kafka's defaults.
#[derive(Deserialize, Serialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct GroupFile {
    #[serde(default = "default_group_id")]
    pub group_id: String,
    #[serde(default = "default_protocol")]
    pub protocol: Spanned<Protocol>,
    /// `partition.assignment.strategy`, Kafka's default `[range, cooperative-sticky]`.
    #[serde(default = "default_assignors")]
    pub assignors: Spanned<Vec<String>>,
    #[serde(default = "default_session_timeout")]
    pub session_timeout_ms: Spanned<u64>,
    #[serde(default = "default_heartbeat_interval")]
    pub heartbeat_interval_ms: Spanned<u64>,
    #[serde(default = "default_max_poll_interval")]
    pub max_poll_interval_ms: Spanned<u64>,
    /// Broker: `group.initial.rebalance.delay.ms`.
    #[serde(default = "default_initial_delay")]
    pub initial_rebalance_delay_ms: u64,
    #[serde(default = "default_true")]
    pub enable_auto_commit: bool,
    #[serde(default = "default_auto_commit_interval")]
    pub auto_commit_interval_ms: u64,
    #[serde(default = "default_offset_reset")]
    pub auto_offset_reset: OffsetResetFile,
    #[serde(default = "default_max_poll_records")]
    pub max_poll_records: Spanned<u64>,
    /// Application time to process one record (microseconds).
    #[serde(default)]
    pub record_processing_us: u64,
    #[serde(default = "default_fetch_max_wait")]
    pub fetch_max_wait_ms: u64,
    #[serde(default = "default_retry_backoff")]
    pub retry_backoff_ms: u64,
    /// `retry.backoff.max.ms`: the cap of the exponential backoff (KIP-580) between failed
    /// attempts.
    #[serde(default = "default_retry_backoff_max")]
    pub retry_backoff_max_ms: u64,
    /// `request.timeout.ms`: a request with no answer by then fails (the connection is closed).
    #[serde(default = "default_request_timeout")]
    pub request_timeout_ms: u64,
    /// The application's `poll(Duration)` timeout: how long a poll may block looking for a
    /// coordinator it cannot find before it fetches anyway.
    #[serde(default = "default_poll_timeout")]
    pub poll_timeout_ms: u64,
    /// Commit after every batch besides (or instead of) auto-commit: `none`, `sync`
    /// (`commitSync`, the poll loop waits) or `async` (`commitAsync`).
    #[serde(default = "default_commit_after_batch")]
    pub commit_after_batch: CommitAfterBatchFile,
    /// The rebalance listener commits before a cooperative revocation (Kafka Streams does; a
    /// plain KafkaConsumer does not).
    #[serde(default)]
    pub commit_on_revoke: bool,
    /// Time spent in `onPartitionsRevoked` (the poll loop is blocked meanwhile).
    #[serde(default)]
    pub on_partitions_revoked_ms: u64,
    /// Time spent in `onPartitionsAssigned`.
    #[serde(default)]
    pub on_partitions_assigned_ms: u64,
    /// `metadata.max.age.ms`: how often a member refreshes metadata (and so notices new
    /// partitions).
    #[serde(default = "default_metadata_max_age")]
    pub metadata_max_age_ms: u64,
    /// KIP-848 (protocol = "consumer"): the client's `group.remote.assignor` (`uniform` or
    /// `range`; unset lets the broker choose: uniform).
    pub remote_assignor: Option<Spanned<String>>,
    /// The broker's `group.consumer.heartbeat.interval.ms`.
    #[serde(default = "default_consumer_heartbeat")]
    pub consumer_heartbeat_interval_ms: u64,
    /// The broker's `group.consumer.session.timeout.ms`.
    #[serde(default = "default_consumer_session")]
    pub consumer_session_timeout_ms: u64,
    /// The broker's `group.consumer.assignment.interval.ms` (0: at every epoch bump).
    #[serde(default = "default_consumer_assignment_interval")]
    pub consumer_assignment_interval_ms: u64,
    /// The broker's `group.consumer.migration.policy`.
    #[serde(default)]
    pub migration_policy: MigrationPolicy,
    /// The brokers' `replica.selector.class` is `RackAwareReplicaSelector` (KIP-392): a member
    /// with a `client_rack` fetches from a replica in its rack.
    #[serde(default)]
    pub fetch_from_follower: bool,
}

fn default_consumer_heartbeat() -> u64 {
    5_000
}
fn default_consumer_session() -> u64 {
    45_000
}
fn default_consumer_assignment_interval() -> u64 {
    1_000
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CommitAfterBatchFile {
    None,
    Sync,
    Async,
}

fn default_commit_after_batch() -> CommitAfterBatchFile {
    CommitAfterBatchFile::None
}

fn default_metadata_max_age() -> u64 {
    300_000
}

impl Default for GroupFile {
    fn default() -> Self {
        toml::from_str("").expect("every group key has a default")
    }
}

/// What a `[group]` or `[cluster]` key is when the file leaves it out (Kafka's default, for a
/// Kafka setting), as canonical TOML text; `None` for a key elsewhere, or one that is unset by
/// default (`group.remote_assignor`: the broker chooses). Read off the serde defaults
/// themselves, so it cannot drift from what a run uses.
pub fn default_text(key: &str) -> Option<String> {
    let mut path = key.split('.');
    let mut value = match path.next()? {
        "group" => serde_json::to_value(GroupFile::default()).ok()?,
        "cluster" => serde_json::to_value(ClusterFile::default()).ok()?,
        _ => return None,
    };
    for segment in path {
        value = value.get_mut(segment)?.take();
    }
    super::value::toml_text_of_json(&value)
}

fn default_group_id() -> String {
    "cgsim-group".into()
}
fn default_protocol() -> Spanned<Protocol> {
    Spanned::new(0..0, Protocol::Classic)
}
fn default_assignors() -> Spanned<Vec<String>> {
    Spanned::new(0..0, vec!["range".into(), "cooperative-sticky".into()])
}
fn default_session_timeout() -> Spanned<u64> {
    Spanned::new(0..0, 45_000)
}
fn default_heartbeat_interval() -> Spanned<u64> {
    Spanned::new(0..0, 3_000)
}
fn default_max_poll_interval() -> Spanned<u64> {
    Spanned::new(0..0, 300_000)
}
fn default_initial_delay() -> u64 {
    3_000
}
fn default_true() -> bool {
    true
}
fn default_auto_commit_interval() -> u64 {
    5_000
}
fn default_offset_reset() -> OffsetResetFile {
    OffsetResetFile::Latest
}
fn default_max_poll_records() -> Spanned<u64> {
    Spanned::new(0..0, 500)
}
fn default_fetch_max_wait() -> u64 {
    500
}
fn default_retry_backoff() -> u64 {
    100
}
fn default_retry_backoff_max() -> u64 {
    1_000
}
fn default_request_timeout() -> u64 {
    30_000
}
fn default_poll_timeout() -> u64 {
    100
}

/// A member, or with `count` a family of members named `name1..nameN`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct MemberFile {
    pub name: String,
    pub count: Option<u32>,
    pub client_id: Option<String>,
    pub group_instance_id: Option<String>,
    /// Overrides the group's `assignors` for this member.
    pub assignors: Option<Vec<String>>,
    /// Subscribed topics; every topic when absent.
    pub topics: Option<Vec<String>>,
    /// When its process starts (default 0); a member that starts later needs no timeline `join`.
    pub start_ms: Option<u64>,
    // This member's own consumer settings, each overriding the group's.
    pub record_processing_us: Option<u64>,
    pub max_poll_records: Option<u64>,
    pub session_timeout_ms: Option<u64>,
    pub heartbeat_interval_ms: Option<u64>,
    pub max_poll_interval_ms: Option<u64>,
    pub on_partitions_revoked_ms: Option<u64>,
    pub on_partitions_assigned_ms: Option<u64>,
    /// `group.protocol` of this member (default: the group's).
    pub protocol: Option<Protocol>,
    /// `group.remote.assignor`: the server-side assignor a consumer-protocol member asks for.
    pub remote_assignor: Option<String>,
    /// `client.rack`: the rack (availability zone) the member runs in.
    pub client_rack: Option<String>,
}

impl MemberFile {
    /// The keys a restart's `set` may change: the consumer's configuration, not who it is.
    pub const RESTART_KEYS: &'static [&'static str] = &[
        "assignors",
        "topics",
        "record_processing_us",
        "max_poll_records",
        "session_timeout_ms",
        "heartbeat_interval_ms",
        "max_poll_interval_ms",
        "on_partitions_revoked_ms",
        "on_partitions_assigned_ms",
        "protocol",
        "remote_assignor",
        "client_rack",
    ];

    /// This entry with `over`'s keys in place of its own (a restart with new settings).
    pub fn overlaid(&self, over: MemberFile) -> MemberFile {
        MemberFile {
            name: self.name.clone(),
            count: self.count,
            client_id: self.client_id.clone(),
            group_instance_id: self.group_instance_id.clone(),
            start_ms: self.start_ms,
            assignors: over.assignors.or_else(|| self.assignors.clone()),
            topics: over.topics.or_else(|| self.topics.clone()),
            record_processing_us: over.record_processing_us.or(self.record_processing_us),
            max_poll_records: over.max_poll_records.or(self.max_poll_records),
            session_timeout_ms: over.session_timeout_ms.or(self.session_timeout_ms),
            heartbeat_interval_ms: over.heartbeat_interval_ms.or(self.heartbeat_interval_ms),
            max_poll_interval_ms: over.max_poll_interval_ms.or(self.max_poll_interval_ms),
            on_partitions_revoked_ms: over
                .on_partitions_revoked_ms
                .or(self.on_partitions_revoked_ms),
            on_partitions_assigned_ms: over
                .on_partitions_assigned_ms
                .or(self.on_partitions_assigned_ms),
            protocol: over.protocol.or(self.protocol),
            remote_assignor: over
                .remote_assignor
                .or_else(|| self.remote_assignor.clone()),
            client_rack: over.client_rack.or_else(|| self.client_rack.clone()),
        }
    }
}

/// A producer: a stream (`records_per_sec`, null keys or keyed) or a scripted sequence
/// (`per_key` records for each of `keys`, one every `interval_ms`).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ProducerFile {
    pub topic: String,
    pub records_per_sec: Option<u64>,
    pub start_ms: Option<u64>,
    pub end_ms: Option<u64>,
    /// Named keys (the seed's tickers, say).
    pub keys: Option<Vec<String>>,
    /// Or this many generated keys, `key-0`, `key-1`, ...
    pub key_count: Option<u32>,
    /// How a keyed stream picks its next key: `cycle` (in order), `uniform` or `skewed`
    /// (Zipf, s = 1: key i drawn with weight 1/(i+1)).
    pub key_distribution: Option<KeyDistributionFile>,
    /// Scripted: each key this many times...
    pub per_key: Option<u32>,
    /// ...one record every `interval_ms`, keys in order, round after round.
    pub interval_ms: Option<u64>,
    /// A Kafka Streams sink's KIP-837 `StreamPartitioner`: `default` (no set: the default
    /// partitioner), `drop` (empty set: the record is dropped) or `broadcast` (every partition).
    pub stream_partitioner: Option<StreamPartitionerFile>,
    /// Only these keys get the stream partitioner's answer; the rest the default partitioner.
    pub stream_partitioner_keys: Option<Vec<String>>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KeyDistributionFile {
    Cycle,
    Uniform,
    Skewed,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StreamPartitionerFile {
    Default,
    Drop,
    Broadcast,
}

/// How records reach consumers: extra fetch delay per partition and per leader broker.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ArrivalFile {
    /// Each partition's own extra delay, drawn once per partition, uniform in [min, max].
    pub partition_lag_ms: Option<Spanned<LatencyFile>>,
    /// Extra delay of every partition led by broker i.
    #[serde(default)]
    pub broker_lag_ms: Vec<u64>,
}

/// The application the members run.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct AppFile {
    /// `local_join`: a local latest-value map fed by `prices`, looked up by `notifications`.
    pub kind: AppKindFile,
    pub prices: String,
    pub notifications: String,
    /// Wait up to this long for the other side before processing a notification (like Kafka
    /// Streams' max.task.idle.ms); 0 does not wait.
    #[serde(default)]
    pub wait_for_prices_ms: u64,
    /// How a member rebuilds a price partition's state when it is assigned: `none` (only new
    /// prices fill it), `changelog` (replay the partition's compacted state) or `standby` (a
    /// warm replica on another member; changelog for everyone else).
    #[serde(default = "default_recovery")]
    pub recovery: RecoveryFile,
    /// Changelog replay speed, records per second.
    #[serde(default = "default_restore_rate")]
    pub restore_records_per_sec: u64,
    /// true: the whole task (both co-partitioned partitions) waits for its restore (Kafka
    /// Streams); false: notifications flow and miss while it runs (a plain consumer).
    #[serde(default)]
    pub pause_during_restore: bool,
    /// A member keeps the state of a partition revoked from it, so it needs no restore if the
    /// partition comes back (Kafka Streams' local stores); an in-memory map does not.
    #[serde(default)]
    pub keep_state_on_revoke: bool,
}

fn default_recovery() -> RecoveryFile {
    RecoveryFile::None
}

fn default_restore_rate() -> u64 {
    1_000
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryFile {
    None,
    Changelog,
    Standby,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AppKindFile {
    LocalJoin,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ActionKey {
    /// The member's process starts and joins the group.
    Join,
    /// Clean close: revoke, then LeaveGroup (a static member sends none).
    Leave,
    /// The process dies: nothing more is sent.
    Crash,
    /// A new process for a member that left or crashed.
    Restart,
    /// Processing stalls for `duration_ms` (a long batch, a GC pause, a slow call).
    Stall,
    /// The member subscribes to `topics` instead.
    Subscribe,
    /// The topic grows to `partitions` partitions (members notice on their next metadata
    /// refresh).
    AddPartitions,
    /// Every member (in file order) closes and starts again `duration_ms` later, one after
    /// another every `interval_ms`.
    RollingBounce,
    BrokerCrash,
    BrokerRestart,
    NetworkPartition,
    LatencySpike,
}

impl ActionKey {
    pub fn name(self) -> &'static str {
        match self {
            ActionKey::Join => "join",
            ActionKey::Leave => "leave",
            ActionKey::Crash => "crash",
            ActionKey::Restart => "restart",
            ActionKey::Stall => "stall",
            ActionKey::Subscribe => "subscribe",
            ActionKey::AddPartitions => "add_partitions",
            ActionKey::RollingBounce => "rolling_bounce",
            ActionKey::BrokerCrash => "broker_crash",
            ActionKey::BrokerRestart => "broker_restart",
            ActionKey::NetworkPartition => "network_partition",
            ActionKey::LatencySpike => "latency_spike",
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct TimelineFile {
    pub at_ms: u64,
    pub action: ActionKey,
    pub member: Option<String>,
    pub duration_ms: Option<u64>,
    pub topics: Option<Vec<String>>,
    pub topic: Option<String>,
    pub partitions: Option<u32>,
    pub interval_ms: Option<u64>,
    /// A restart's (or a rolling bounce's) new settings for the member: `KEY=VALUE` over its
    /// entry's keys (`MemberFile::RESTART_KEYS`), as `--set` takes them.
    pub set: Option<Vec<String>>,
    /// `broker_crash` / `broker_restart`: a broker id, or `"coordinator"` (the broker hosting
    /// the group's coordinator at that moment).
    pub broker: Option<BrokerFile>,
    /// `broker_crash`: `reset` (the process died: its connections are reset at once) or `hang`
    /// (the host vanished: requests to it wait for `request.timeout.ms`).
    pub connections: Option<ConnectionsFile>,
    /// `network_partition`: the members cut off.
    pub members: Option<Vec<String>>,
    /// `network_partition`: the brokers they are cut off from (ids, or `"coordinator"`).
    pub brokers: Option<BrokersFile>,
    /// `latency_spike`: one-way latency added to every message.
    pub latency_ms: Option<u64>,
}

/// A broker as a timeline entry names it.
#[derive(Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(untagged)]
pub enum BrokerFile {
    Id(u32),
    Name(String),
}

/// The brokers of a network partition.
#[derive(Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(untagged)]
pub enum BrokersFile {
    Ids(Vec<u32>),
    Name(String),
}

#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionsFile {
    Reset,
    Hang,
}

/// A named variant: replaces the group's assignor list (and clears members' own lists) and may
/// set the protocol.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct VariantFile {
    pub assignors: Option<Vec<String>>,
    pub protocol: Option<Protocol>,
    /// `KEY=VALUE` overrides, as `--set` takes them (applied before the command line's).
    pub set: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::default_text;

    #[test]
    fn defaults_are_kafkas_read_off_the_serde_defaults() {
        let d = |k: &str| default_text(k);
        assert_eq!(d("group.session_timeout_ms").as_deref(), Some("45000"));
        assert_eq!(d("group.heartbeat_interval_ms").as_deref(), Some("3000"));
        assert_eq!(d("group.max_poll_interval_ms").as_deref(), Some("300000"));
        assert_eq!(
            d("group.assignors").as_deref(),
            Some(r#"["range", "cooperative-sticky"]"#)
        );
        assert_eq!(d("group.protocol").as_deref(), Some(r#""classic""#));
        assert_eq!(d("group.auto_offset_reset").as_deref(), Some(r#""latest""#));
        assert_eq!(d("group.enable_auto_commit").as_deref(), Some("true"));
        assert_eq!(d("cluster.request_latency_ms.min").as_deref(), Some("1"));
        assert_eq!(
            d("cluster.request_latency_ms").as_deref(),
            Some("{ max = 5, min = 1 }")
        );
        // Unset by default (the broker chooses), elsewhere, or not a key at all.
        assert_eq!(d("group.remote_assignor"), None);
        assert_eq!(d("members.0.session_timeout_ms"), None);
        assert_eq!(d("group.no_such_key"), None);
    }
}
