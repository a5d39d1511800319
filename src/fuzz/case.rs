//! A generated scenario as a value: what the generator draws and the shrinker makes smaller,
//! named by member and topic names (not indexes), so removing a member or a topic is removing
//! its entries. [`Case::to_toml`] writes it as a scenario file, which is what every fuzz run
//! loads (through the same validation as `cgsim run`), so the file written with `--out` replays
//! the run byte for byte.

use crate::scenario::timeline::to_tables;
pub use crate::scenario::timeline::{Action, Entry};
use crate::scenario::{Connections, Mutant, Protocol};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub name: String,
    pub seed: u64,
    pub mutant: Option<Mutant>,
    pub group: GroupCase,
    pub topics: Vec<TopicCase>,
    pub members: Vec<MemberCase>,
    /// In time order: the timeline's own entries (`scenario::timeline`), written by its one
    /// writer.
    pub timeline: Vec<Entry>,
    /// Simulated time after the settle window closes, so the liveness check runs.
    pub tail_ms: u64,
}

/// `[group]` and `[cluster]` settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupCase {
    pub protocol: Protocol,
    pub remote_assignor: Option<String>,
    /// The group's default `partition.assignment.strategy` (classic).
    pub assignors: Vec<String>,
    pub session_timeout_ms: u64,
    pub heartbeat_interval_ms: u64,
    pub max_poll_interval_ms: u64,
    pub initial_rebalance_delay_ms: u64,
    pub max_poll_records: u64,
    pub record_processing_us: u64,
    pub enable_auto_commit: bool,
    pub auto_commit_interval_ms: u64,
    /// `none`, `sync` or `async`.
    pub commit_after_batch: &'static str,
    pub commit_on_revoke: bool,
    pub auto_offset_reset: &'static str,
    pub on_partitions_revoked_ms: u64,
    pub on_partitions_assigned_ms: u64,
    pub metadata_max_age_ms: u64,
    pub consumer_heartbeat_interval_ms: u64,
    pub consumer_session_timeout_ms: u64,
    pub consumer_assignment_interval_ms: u64,
    pub latency_min_ms: u64,
    pub latency_max_ms: u64,
    pub brokers: u32,
    pub lag_sample_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicCase {
    pub name: String,
    pub partitions: u32,
    /// A null-key producer's rate (0: no producer).
    pub records_per_sec: u64,
    /// Replicas per partition (above 1 only when broker faults are on).
    pub replication_factor: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberCase {
    pub name: String,
    pub group_instance_id: Option<String>,
    /// Its own list, when not the group's.
    pub assignors: Option<Vec<String>>,
    /// Its subscription (`None`: every topic).
    pub topics: Option<Vec<String>>,
    /// Started by a timeline `join` rather than at 0.
    pub joins_later: bool,
    pub record_processing_us: Option<u64>,
}

/// A broker crash ends for the group once the controller fenced the broker, the new leaders
/// serve and a new coordinator loaded the group (the cluster's default timings).
const FAIL_OVER_MS: u64 = 9_000 + 100 + 500;

impl Case {
    /// When the last fault has ended (as `Scenario::last_event_end_ms` counts it: new
    /// partitions end at the leader's next metadata refresh).
    pub fn last_event_end_ms(&self) -> u64 {
        let g = &self.group;
        // As `Scenario::last_event_end_ms`: hung connections are heard of at their timeouts
        // (request.timeout.ms' default 30 s).
        // (With a margin: the scenario counts the largest heartbeat interval of any member's
        // settings, which the client may round differently.)
        // A consumer-protocol member heartbeats at the group's interval (scenario/members.rs).
        let heartbeat = g
            .heartbeat_interval_ms
            .max(g.consumer_heartbeat_interval_ms);
        let hung = FAIL_OVER_MS
            .max(30_000 + heartbeat)
            .max(g.max_poll_interval_ms + 5_000)
            + 2_000;
        self.timeline
            .iter()
            .map(|e| match e.action {
                Action::BrokerCrash {
                    connections: Connections::Hang,
                    ..
                } => e.at_ms + hung,
                Action::BrokerCrash { .. } => e.at_ms + FAIL_OVER_MS,
                Action::AddPartitions { .. } => e.at_ms + self.group.metadata_max_age_ms,
                _ => e.at_ms + e.action.duration_ms(),
            })
            .max()
            .unwrap_or(0)
    }

    /// The run's length: the settle window (last fault's end + rebalance timeout, three when a
    /// static member crashes or closes, + session timeout + two heartbeat intervals, then a
    /// quiet session timeout; `world::settle_window`) and the tail.
    pub fn duration_ms(&self) -> u64 {
        let g = &self.group;
        let silent_static = self.timeline.iter().any(|e| match &e.action {
            Action::Crash { member } | Action::Leave { member } => self
                .members
                .iter()
                .any(|m| m.name == *member && m.group_instance_id.is_some()),
            _ => false,
        });
        let waits = if silent_static { 3 } else { 1 };
        // A consumer-protocol member's session is the group's (scenario/members.rs).
        let session = g.session_timeout_ms.max(g.consumer_session_timeout_ms);
        // Two heartbeat intervals more, the members' largest (`Scenario::settle_bound`).
        let heartbeats = 2 * g
            .heartbeat_interval_ms
            .max(g.consumer_heartbeat_interval_ms);
        self.last_event_end_ms()
            + waits * g.max_poll_interval_ms
            + 2 * session
            + heartbeats
            + self.tail_ms
    }

    /// Whether a restart of the plan switches a member's group protocol (`--migration`).
    pub fn switches_protocol(&self) -> bool {
        self.timeline.iter().any(|e| {
            matches!(&e.action, Action::Restart { set, .. }
                if set.iter().any(|s| s.starts_with("protocol=")))
        })
    }

    /// The scenario file.
    pub fn to_toml(&self) -> String {
        let g = &self.group;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Generated by cgsim fuzz (seed {}): `cgsim run` on this file replays the run.",
            self.seed
        );
        let _ = writeln!(s, "name = {:?}", self.name);
        let _ = writeln!(s, "seed = {}", self.seed);
        let _ = writeln!(s, "duration_ms = {}", self.duration_ms());
        let _ = writeln!(s, "lag_sample_ms = {}", g.lag_sample_ms);
        if let Some(m) = self.mutant {
            let _ = writeln!(s, "# Test-only: a deliberately broken behaviour.");
            let _ = writeln!(s, "mutant = {:?}", m.name());
        }
        let _ = writeln!(s, "\n[cluster]\nbrokers = {}", g.brokers);
        let _ = writeln!(
            s,
            "request_latency_ms = {{ min = {}, max = {} }}",
            g.latency_min_ms, g.latency_max_ms
        );
        s.push_str("\n[group]\n");
        match g.protocol {
            Protocol::Classic => {
                let _ = writeln!(s, "assignors = {}", list(&g.assignors));
            }
            Protocol::Consumer => {
                s.push_str("protocol = \"consumer\"\n");
                if let Some(a) = &g.remote_assignor {
                    let _ = writeln!(s, "remote_assignor = {a:?}");
                }
            }
        }
        // The broker's consumer-group settings, always: for a consumer group, one a member's
        // restart onto the consumer protocol converts, and a classic case run with `--variant
        // consumer`, whose members then take the group's consumer session. The case's length
        // (`duration_ms`) allows for these settings; left out, the default 45 s session would
        // outlast the run and its settle window.
        {
            let _ = writeln!(
                s,
                "consumer_heartbeat_interval_ms = {}\nconsumer_session_timeout_ms = {}\nconsumer_assignment_interval_ms = {}",
                g.consumer_heartbeat_interval_ms,
                g.consumer_session_timeout_ms,
                g.consumer_assignment_interval_ms
            );
        }
        let _ = writeln!(
            s,
            "session_timeout_ms = {}\nheartbeat_interval_ms = {}\nmax_poll_interval_ms = {}",
            g.session_timeout_ms, g.heartbeat_interval_ms, g.max_poll_interval_ms
        );
        let _ = writeln!(
            s,
            "initial_rebalance_delay_ms = {}\nmax_poll_records = {}\nrecord_processing_us = {}",
            g.initial_rebalance_delay_ms, g.max_poll_records, g.record_processing_us
        );
        let _ = writeln!(
            s,
            "enable_auto_commit = {}\nauto_commit_interval_ms = {}\ncommit_after_batch = {:?}\ncommit_on_revoke = {}\nauto_offset_reset = {:?}",
            g.enable_auto_commit,
            g.auto_commit_interval_ms,
            g.commit_after_batch,
            g.commit_on_revoke,
            g.auto_offset_reset
        );
        let _ = writeln!(
            s,
            "on_partitions_revoked_ms = {}\non_partitions_assigned_ms = {}\nmetadata_max_age_ms = {}",
            g.on_partitions_revoked_ms, g.on_partitions_assigned_ms, g.metadata_max_age_ms
        );
        for t in &self.topics {
            let _ = writeln!(
                s,
                "\n[[topics]]\nname = {:?}\npartitions = {}",
                t.name, t.partitions
            );
            if t.replication_factor > 1 {
                let _ = writeln!(s, "replication_factor = {}", t.replication_factor);
            }
        }
        for m in &self.members {
            let _ = writeln!(s, "\n[[members]]\nname = {:?}", m.name);
            if let Some(id) = &m.group_instance_id {
                let _ = writeln!(s, "group_instance_id = {id:?}");
            }
            if let Some(a) = &m.assignors {
                let _ = writeln!(s, "assignors = {}", list(a));
            }
            if let Some(t) = &m.topics {
                let _ = writeln!(s, "topics = {}", list(t));
            }
            if let Some(us) = m.record_processing_us {
                let _ = writeln!(s, "record_processing_us = {us}");
            }
        }
        for t in self.topics.iter().filter(|t| t.records_per_sec > 0) {
            let _ = writeln!(
                s,
                "\n[[producers]]\ntopic = {:?}\nrecords_per_sec = {}",
                t.name, t.records_per_sec
            );
        }
        if !self.timeline.is_empty() {
            let mut doc = toml_edit::DocumentMut::new();
            doc.insert(
                "timeline",
                toml_edit::Item::ArrayOfTables(to_tables(&self.timeline)),
            );
            let _ = write!(s, "\n{doc}");
        }
        s
    }
}

/// A TOML array of basic strings.
fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    format!("[{}]", quoted.join(", "))
}
