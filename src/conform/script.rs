//! The script format of `../shared/reference/coordinator/README.md` section 2: one JSON object
//! per line, each a group's timed requests. Every key is checked (`deny_unknown_fields`): a
//! misspelled step field is an error with its line, never a silent default.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub id: String,
    #[serde(default)]
    pub description: String,
    pub group_id: String,
    pub seed: u64,
    /// Raw broker config keys; everything else is Kafka 4.3.1's default.
    #[serde(default)]
    pub broker_config: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub topics: Vec<ScriptTopic>,
    /// Per-alias defaults for classic join/sync/heartbeat fields.
    #[serde(default)]
    pub clients: BTreeMap<String, ClientDefaults>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTopic {
    pub name: String,
    /// Kafka's base64 topic id (the server assignors use it; the classic replay does not).
    #[serde(default)]
    pub id: Option<String>,
    /// 0: the topic does not exist yet (`set_partitions` creates it).
    pub partitions: u32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientDefaults {
    pub protocols: Option<Vec<ProtocolSpec>>,
    pub session_timeout_ms: Option<u64>,
    pub rebalance_timeout_ms: Option<u64>,
    pub group_instance_id: Option<String>,
    pub protocol_type: Option<String>,
    pub version: Option<i16>,
}

/// One JoinGroup protocol: its name and the Subscription it carries.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolSpec {
    pub name: String,
    #[serde(default)]
    pub topics: Vec<String>,
    /// `{topic: [p]}`, or `"current"` (the alias's last assignment); default `{}`.
    #[serde(default)]
    pub owned: Option<Owned>,
    /// A generation, or `"current"` (the default: the alias's, -1 before any).
    #[serde(default)]
    pub generation: Option<Generation>,
    #[serde(default)]
    pub user_data_b64: Option<String>,
}

/// Partitions by topic name, as the traces print them.
pub type TopicPartitions = BTreeMap<String, Vec<u32>>;

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Owned {
    Current(CurrentWord),
    Map(TopicPartitions),
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(untagged)]
pub enum Generation {
    Current(CurrentWord),
    Value(i32),
}

/// The literal `"current"`.
#[derive(Clone, Copy, Debug, Deserialize)]
pub enum CurrentWord {
    #[serde(rename = "current")]
    Current,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Assignments {
    Auto(AutoWord),
    Map(BTreeMap<String, TopicPartitions>),
}

/// The literal `"auto"`.
#[derive(Clone, Copy, Debug, Deserialize)]
pub enum AutoWord {
    #[serde(rename = "auto")]
    Auto,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    Advance(Advance),
    Join(JoinStep),
    Sync(SyncStep),
    Heartbeat(HeartbeatStep),
    Leave(LeaveStep),
    SetPartitions(SetPartitions),
    /// KIP-848's ConsumerGroupHeartbeat (replayed by `replay_consumer.rs`).
    ConsumerHeartbeat(ConsumerHeartbeatStep),
}

impl Step {
    pub fn at(&self) -> Option<u64> {
        match self {
            Step::Advance(s) => Some(s.at),
            Step::Join(s) => Some(s.at),
            Step::Sync(s) => Some(s.at),
            Step::Heartbeat(s) => Some(s.at),
            Step::Leave(s) => Some(s.at),
            Step::SetPartitions(s) => Some(s.at),
            Step::ConsumerHeartbeat(s) => Some(s.at),
        }
    }
}

/// A KIP-848 ConsumerGroupHeartbeat, built as `ConsumerHeartbeatRequestManager` builds it
/// (README section 2): full while joining, else only the fields that changed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumerHeartbeatStep {
    pub at: u64,
    pub member: String,
    /// Epoch 0 with every field.
    #[serde(default)]
    pub join: bool,
    pub subscribe: Option<Vec<String>>,
    pub rebalance_timeout_ms: Option<i32>,
    pub server_assignor: Option<String>,
    pub instance_id: Option<String>,
    /// A client-chosen member id (default: one generated the first time).
    pub member_id: Option<String>,
    /// Epoch -1, or -2 for a static member unless `dynamic_leave`.
    #[serde(default)]
    pub leave: bool,
    #[serde(default)]
    pub dynamic_leave: bool,
    pub member_epoch: Option<i32>,
    /// false: the client still owns its old set (it is revoking).
    pub apply_assignment: Option<bool>,
    pub owned: Option<TopicPartitions>,
    #[serde(default)]
    pub send_owned: bool,
    #[serde(default)]
    pub omit_owned: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Advance {
    pub at: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinStep {
    pub at: u64,
    pub member: String,
    pub member_id: Option<String>,
    #[serde(default)]
    pub restart: bool,
    pub group_instance_id: Option<String>,
    pub session_timeout_ms: Option<u64>,
    pub rebalance_timeout_ms: Option<u64>,
    pub protocol_type: Option<String>,
    pub version: Option<i16>,
    pub protocols: Option<Vec<ProtocolSpec>>,
    #[serde(default)]
    pub no_update: bool,
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncStep {
    pub at: u64,
    pub member: String,
    pub member_id: Option<String>,
    pub generation: Option<Generation>,
    pub group_instance_id: Option<String>,
    pub protocol_name: Option<String>,
    pub protocol_type: Option<String>,
    pub assignments: Option<Assignments>,
    #[serde(default)]
    pub no_update: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatStep {
    pub at: u64,
    pub member: String,
    pub member_id: Option<String>,
    pub generation: Option<Generation>,
    pub group_instance_id: Option<String>,
    #[serde(default)]
    pub no_update: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaveStep {
    pub at: u64,
    pub members: Vec<LeavingSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeavingSpec {
    pub member: String,
    pub member_id: Option<String>,
    /// The alias's instance id by default; `null` sends none.
    #[serde(default, deserialize_with = "some_or_null")]
    pub group_instance_id: Option<Option<String>>,
    pub reason: Option<String>,
}

/// A present key (even `null`) is `Some`; an absent one (serde's default) is `None`.
fn some_or_null<'de, D>(d: D) -> Result<Option<Option<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<String>::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetPartitions {
    pub at: u64,
    pub topic: String,
    pub partitions: u32,
}

impl Script {
    /// Whether the script drives the KIP-848 protocol (ConsumerGroupHeartbeat).
    pub fn is_consumer_protocol(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::ConsumerHeartbeat(_)))
    }

    /// Whether it mixes classic requests with ConsumerGroupHeartbeats (a migrating group).
    pub fn is_mixed_protocol(&self) -> bool {
        self.is_consumer_protocol()
            && self.steps.iter().any(|s| {
                matches!(
                    s,
                    Step::Join(_) | Step::Sync(_) | Step::Heartbeat(_) | Step::Leave(_)
                )
            })
    }

    /// Steps in order of time, equal times in file order; an error names the first out of order.
    pub fn check(&self) -> Result<(), String> {
        let mut last = 0;
        for (i, step) in self.steps.iter().enumerate() {
            let at = step
                .at()
                .ok_or_else(|| format!("step {i}: \"at\" is missing or not a number"))?;
            if at < last {
                return Err(format!(
                    "step {i}: at {at} is before the previous step's {last} (steps are sorted by \"at\")"
                ));
            }
            last = at;
        }
        // The settings the classic replay reads must be numbers; others (the consumer
        // protocol's, for one) are Kafka's and accepted, with no effect on it.
        for (name, value) in &self.broker_config {
            let read = matches!(
                name.as_str(),
                "group.initial.rebalance.delay.ms" | "group.classic.max.size"
            );
            if read && value.as_u64().is_none() {
                return Err(format!(
                    "broker_config {name}: expected a non-negative integer, found {value}"
                ));
            }
        }
        Ok(())
    }
}

/// Parses one line of a scripts file.
pub fn parse_line(line: &str) -> Result<Script, String> {
    let script: Script = serde_json::from_str(line).map_err(|e| e.to_string())?;
    script.check().map_err(|e| format!("{}: {e}", script.id))?;
    Ok(script)
}
