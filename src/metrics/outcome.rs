//! The outcome of a run: the report's schema, the JSON keys of DESIGN.md ("What is measured,
//! and the JSON report"). Built by the metrics (and the checkers' `Invariants`) at the end of a
//! run; `report/` renders it and imports nothing back into the run.

pub use super::kafka::{ConsumerMetrics, KafkaMetrics};
use super::*;
pub use crate::check::{Invariants, Violation, Zombie};
pub use crate::history::ledger::{CoPartitionBreak, Formation};
use crate::scenario::TimelineAction;
use serde::Serialize;
use std::collections::BTreeMap;

/// The version of the JSON report's schema: it changes when a key is renamed or removed or its
/// meaning changes, never when a key is added.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize, Debug, Clone)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    pub scenario: String,
    pub seed: u64,
    pub variant: String,
    /// XXH3-128 over the canonical records of every event processed (never over log wording).
    pub digest: String,
    /// Events the run processed.
    pub events: u64,
    pub duration_ms: u64,
    pub members: Vec<ReportMember>,
    /// The group's first join, until it was first Stable; `null` if it never was.
    pub formation: Option<Formation>,
    pub rebalances: Rebalances,
    pub revocations: Revocations,
    pub lost: Lost,
    pub moved: Moved,
    pub pauses: Pauses,
    pub join: JoinMetrics,
    pub recovery: Recovery,
    pub lag: Lag,
    pub records: Records,
    pub invariants: Invariants,
    /// Co-partitioned topics whose partition counts stopped matching (added partitions): the
    /// indexes that no longer exist in every topic of the group.
    pub co_partitioning: Vec<CoPartitionBreak>,
    /// Who owns what when the run ends: member -> partitions (`topic-p`), members owning
    /// nothing left out.
    pub final_assignment: BTreeMap<String, Vec<String>>,
    /// Members that failed (e.g. INCONSISTENT_GROUP_PROTOCOL).
    pub errors: Vec<MemberError>,
    /// The group's conversions between the classic and the consumer protocol (the online
    /// migration); absent when it never converted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub migrations: Vec<super::Migration>,
    /// Settings the scenario sets that the run did not apply (classic-only client settings
    /// under the consumer protocol); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// Every broker event (crashes, restarts, fencing, leaderships moved), when the scenario
    /// has broker faults.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub brokers: Vec<crate::cluster::availability::BrokerEvent>,
    /// The coordinator's moves (failed, moved, loaded), when it moved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coordinator: Vec<super::CoordinatorEntry>,
    /// Kafka's consumer metrics (`consumer-coordinator-metrics`, `records-lag-max`) for the
    /// whole run, for the group and per member (`metrics/kafka.rs`).
    pub kafka_metrics: KafkaMetrics,
    /// The group at the run's end as `kafka-consumer-groups --describe` reads it (rendered by
    /// `cgsim run --describe`; not a JSON key).
    #[serde(skip)]
    pub group: GroupDescription,
}

/// The group when the run ends, as the coordinator would describe it (DescribeGroups) with the
/// committed and log end offsets `kafka-consumer-groups --describe` adds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupDescription {
    pub group_id: String,
    /// Kafka's group state name: `Stable`, `PreparingRebalance`, `CompletingRebalance`,
    /// `Empty`, or `Dead` (the group never had a member); a consumer group's `Assigning` or
    /// `Reconciling` in place of the classic rebalancing states.
    pub state: String,
    pub at_ms: u64,
    /// In the coordinator's member-map order (a classic group's Java `HashMap`, a consumer
    /// group's `TimelineHashMap`, over member ids).
    pub members: Vec<DescribedMember>,
    /// Every existing partition: the group's committed offset (if any) and the log end offset.
    pub partitions: Vec<PartitionOffsets>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DescribedMember {
    /// The scenario's name for it (cgsim's stand-in for the client's host).
    pub name: String,
    pub consumer_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    /// (topic, partition) as the coordinator has it: a classic group's is empty unless the
    /// group is Stable; a consumer group's is the member's current assignment.
    pub assignment: Vec<(String, u32)>,
    /// KIP-848 (a consumer group's members only).
    pub epochs: Option<MemberEpochs>,
}

/// What ConsumerGroupDescribe adds for a consumer group's member (KIP-1099's columns).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberEpochs {
    pub member_epoch: i32,
    /// The group's target assignment epoch.
    pub target_epoch: i32,
    pub target_assignment: Vec<(String, u32)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionOffsets {
    pub topic: String,
    pub partition: u32,
    pub committed: Option<u64>,
    pub log_end_offset: u64,
}

/// A fatal error a member hit (KafkaConsumer.poll threw it and the application stopped).
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct MemberError {
    pub at_ms: u64,
    pub member: String,
    /// Kafka's error code name (INCONSISTENT_GROUP_PROTOCOL, ...): `cause` in words.
    pub error: String,
    /// What stopped it, as a value: what readers decide on.
    #[serde(skip)]
    pub cause: crate::facts::FatalError,
}

impl std::fmt::Display for MemberError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ms: {} failed: {}",
            self.at_ms, self.member, self.error
        )
    }
}

impl Report {
    pub fn has_violations(&self) -> bool {
        !self.invariants.violations.is_empty()
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct ReportMember {
    pub name: String,
    /// The Kafka member id it had last.
    pub member_id: String,
    pub assignors: Vec<String>,
    /// The client's rebalance protocol (EAGER or COOPERATIVE).
    pub protocol: String,
    /// Restarts that configured it anew (an upgrade by restart), in time order; absent when
    /// none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restarted_with: Vec<RestartedWith>,
    /// `client.rack`, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_rack: Option<String>,
    /// Records it fetched from a replica in another rack (present when the brokers have racks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_rack_fetched: Option<u64>,
    /// Time the member's consumer had no coordinator (after a failed request, until found
    /// again), when broker or network faults happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinator_unknown_ms: Option<u64>,
    /// Time its polls blocked looking for a coordinator before fetching anyway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_blocked_on_coordinator_ms: Option<u64>,
}

/// A restart with new settings: when, the `set` entries, and what the member runs after it.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct RestartedWith {
    pub at_ms: u64,
    pub set: Vec<String>,
    pub assignors: Vec<String>,
    pub protocol: String,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Rebalances {
    pub count: u64,
    pub list: Vec<RebalanceEntry>,
}

#[derive(Serialize, Debug, Clone)]
pub struct RebalanceEntry {
    pub generation: i32,
    pub trigger: String,
    /// The member whose join, leave, expiry... started it.
    pub member: Option<String>,
    pub start_ms: u64,
    pub end_ms: u64,
    /// PreparingRebalance to Stable = join_ms + sync_ms.
    pub duration_ms: u64,
    /// From the cause (a crash, a close, a start, a stall) to PreparingRebalance.
    pub detect_ms: u64,
    /// The join phase and the sync phase (classic protocol); null under the consumer protocol,
    /// which has neither (members reconcile one heartbeat at a time).
    pub join_ms: Option<u64>,
    pub sync_ms: Option<u64>,
    /// Cooperative: from this rebalance's end until the follow-up it caused was Stable (0 when
    /// there was none). The follow-up is also listed as its own generation.
    pub follow_up_ms: u64,
    /// The assignor the group chose (the coordinator's `protocol_name`): during an upgrade
    /// it changes once every member lists the new one.
    pub assignor: String,
    /// Its window: from its start until the next rebalance starts (or the run ends).
    pub window: Window,
}

/// What happened in a rebalance's window.
#[derive(Serialize, Debug, Clone, Default)]
pub struct Window {
    /// Total lag (every partition's log end offset minus its processed position) at the
    /// rebalance's start, and its peak in the window.
    pub lag_before: u64,
    pub lag_peak: u64,
    /// From the rebalance's end until total lag was back within one batch
    /// (`max_poll_records`) of `lag_before`; `null` if it never was.
    pub catch_up_ms: Option<u64>,
    pub join_misses: JoinMisses,
    /// State restores begun (changelog replays and standby takeovers), records replayed, and
    /// the summed restore time.
    pub restores: u64,
    pub standby_takeovers: u64,
    pub restored_records: u64,
    pub restore_ms: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Revocations {
    pub total: u64,
    pub by_staying_members: u64,
    pub per_member: BTreeMap<String, u64>,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Lost {
    pub total: u64,
    pub by_crash: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Moved {
    pub total: u64,
    pub minimum: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Pauses {
    #[serde(serialize_with = "per_member")]
    pub stop_the_world_ms: Summary,
    pub unavailable_ms: Unavailable,
    /// Time each partition had no holder by the members' own callbacks (Kafka's end-to-end
    /// "partition unavailability": a stalled member still holds its partitions).
    #[serde(serialize_with = "per_partition")]
    pub unowned_ms: Summary,
}

/// `pauses.unavailable_ms`: the per-partition summary and its parts by cause, which sum to
/// its total (DESIGN.md "Added interfaces").
#[derive(Debug, Clone, Default)]
pub struct Unavailable {
    pub summary: Summary,
    pub by_cause: super::ByCause,
    /// The longest single outage of any partition (`max` is the largest per-partition sum);
    /// `null` when no partition was unavailable.
    pub longest: Option<Outage>,
}

/// One interval in which a partition was not processed (`pauses.unavailable_ms.longest`).
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    pub partition: String,
    pub start_ms: u64,
    pub ms: u64,
}

impl std::ops::Deref for Unavailable {
    type Target = Summary;
    fn deref(&self) -> &Summary {
        &self.summary
    }
}

impl Serialize for Unavailable {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let s = &self.summary;
        let mut map = ser.serialize_map(Some(8))?;
        map.serialize_entry("per_partition", &s.per)?;
        map.serialize_entry("total", &s.total)?;
        map.serialize_entry("p50", &s.p50)?;
        map.serialize_entry("p99", &s.p99)?;
        map.serialize_entry("max", &s.max)?;
        map.serialize_entry("longest", &self.longest)?;
        map.serialize_entry("open_at_end", &s.open_at_end)?;
        map.serialize_entry("by_cause", &self.by_cause)?;
        map.end()
    }
}

fn per_member<S: serde::Serializer>(s: &Summary, ser: S) -> Result<S::Ok, S::Error> {
    summary_with(s, "per_member", "paused_at_end", ser)
}

fn per_partition<S: serde::Serializer>(s: &Summary, ser: S) -> Result<S::Ok, S::Error> {
    summary_with(s, "per_partition", "open_at_end", ser)
}

fn summary_with<S: serde::Serializer>(
    s: &Summary,
    per: &'static str,
    open: &'static str,
    ser: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = ser.serialize_map(Some(6))?;
    map.serialize_entry(per, &s.per)?;
    map.serialize_entry("total", &s.total)?;
    map.serialize_entry("p50", &s.p50)?;
    map.serialize_entry("p99", &s.p99)?;
    map.serialize_entry("max", &s.max)?;
    map.serialize_entry(open, &s.open_at_end)?;
    map.end()
}

#[derive(Serialize, Debug, Clone, Copy, Default)]
pub struct JoinMisses {
    pub not_co_located: u64,
    pub no_price_yet: u64,
    pub out_of_order: u64,
    pub restoring: u64,
    pub state_empty: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Percentiles {
    pub p50: u64,
    pub p99: u64,
}

/// The partition-local join (zeros when the scenario has none).
#[derive(Serialize, Debug, Clone, Default)]
pub struct JoinMetrics {
    pub notifications: u64,
    pub local_hits: u64,
    pub misses: JoinMisses,
    pub latency_ms: Percentiles,
}

/// Consumer lag: log end offset minus the processed position, sampled every `lag_sample_ms`.
#[derive(Serialize, Debug, Clone, Default)]
pub struct Lag {
    /// Each partition's highest lag (partitions that never lagged left out).
    pub peak: BTreeMap<String, u64>,
    /// Per rebalance after formation, in order: time to catch up (`null`: never).
    pub catch_up_ms: Vec<Option<u64>>,
    /// `[at_ms, total lag]` samples.
    pub series: Vec<(u64, u64)>,
}

/// State recovery for the join, over the whole run.
#[derive(Serialize, Debug, Clone, Default)]
pub struct Recovery {
    pub restores: u64,
    pub standby_takeovers: u64,
    pub restored_records: u64,
    pub restore_ms: u64,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Records {
    pub produced: u64,
    pub written: u64,
    pub dropped: u64,
    pub processed: u64,
    pub processed_twice: u64,
    pub skipped_by_offset_reset: u64,
    pub unconsumed_at_end: u64,
    pub never_processed: u64,
    /// Records fetched from a replica in another rack than the fetching member's (present when
    /// the brokers have racks; a member without `client_rack` is never counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_rack_fetched: Option<u64>,
}

/// What the run itself says at its end, beside the figures: when it ended, its digest and
/// event count, and the checkers' verdicts.
pub struct RunEnd<'a> {
    pub end: SimTime,
    pub digest: &'a str,
    pub events: u64,
    pub invariants: Invariants,
}

impl Metrics {
    /// The report: the figures at the run's end, with the logs (lag, records), the scenario
    /// and the group's history, ended at `run.end` ([`Recorder::end`]): its ledger's tallies
    /// and `--describe`'s coordinator side.
    pub fn finish(
        mut self,
        run: RunEnd,
        logs: &Logs,
        scenario: &Scenario,
        history: &Recorder,
    ) -> Report {
        let RunEnd {
            end,
            digest,
            events,
            invariants,
        } = run;
        self.close_window();
        self.finish_lag_peaks(logs);
        let kafka_metrics = self.kafka_metrics(end);
        let description = self.group_description(end, scenario, logs, history);
        let catch_up_ms: Vec<Option<u64>> = self
            .rebalances
            .iter()
            .map(|e| e.window.catch_up_ms)
            .collect();
        let group = history.ledger();
        let t = group.tallies();
        let partition = |p: &usize| self.partition_names[*p].clone();
        let member = |m: &usize| self.member_names[*m].clone();
        let by_partition = |us: &[u64]| -> BTreeMap<String, u64> {
            self.partition_names
                .iter()
                .zip(us)
                .map(|(n, us)| (n.clone(), us / 1000))
                .collect()
        };
        let stw: BTreeMap<String, u64> = t
            .stopped_members
            .iter()
            .map(|m| (member(m), t.stop_the_world_us[*m] / 1000))
            .collect();
        let counts = logs.produced_by(end);
        let unconsumed: u64 = (0..logs.partitions())
            .map(|p| {
                logs.end_offset(p, end)
                    .saturating_sub(self.accounted_upto[p])
            })
            .sum();
        let distinct = self.processed - self.processed_twice;
        let never = counts
            .written
            .saturating_sub(distinct + self.skipped + unconsumed);
        let mut final_assignment: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (p, owner) in group.owners().iter().enumerate() {
            if let Some(m) = owner {
                final_assignment
                    .entry(self.member_names[*m].clone())
                    .or_default()
                    .push(self.partition_names[p].clone());
            }
        }
        let seen = group.faults_seen();
        let members = scenario
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| ReportMember {
                name: m.name.clone(),
                member_id: group.member_id(i).unwrap_or_default().to_string(),
                assignors: m.assignors.clone(),
                protocol: protocol_name(m).to_string(),
                restarted_with: scenario
                    .timeline
                    .iter()
                    .filter_map(|e| match &e.action {
                        TimelineAction::Restart {
                            member,
                            settings: Some(new),
                        } if *member == i => Some(RestartedWith {
                            at_ms: e.at_ms,
                            set: new.set.clone(),
                            assignors: new.spec.assignors.clone(),
                            protocol: protocol_name(&new.spec).to_string(),
                        }),
                        _ => None,
                    })
                    .collect(),
                client_rack: m.client_rack.clone(),
                cross_rack_fetched: self.cross_rack_fetched.as_ref().map(|v| v[i]),
                coordinator_unknown_ms: seen.then(|| group.coordinator_unknown_us(i) / 1000),
                poll_blocked_on_coordinator_ms: seen.then(|| group.poll_blocked_ms(i)),
            })
            .collect();
        Report {
            schema_version: SCHEMA_VERSION,
            scenario: scenario.name.clone(),
            seed: scenario.seed,
            variant: scenario.variant.clone(),
            digest: digest.to_string(),
            events,
            duration_ms: scenario.duration_ms,
            members,
            formation: group.formation().cloned(),
            rebalances: Rebalances {
                count: self.rebalances.len() as u64,
                list: self.rebalances,
            },
            revocations: Revocations {
                total: t.revocations_total,
                by_staying_members: t.revocations_by_staying,
                per_member: self
                    .member_names
                    .iter()
                    .zip(&t.revocations_per_member)
                    .filter(|(_, &n)| n > 0)
                    .map(|(name, &n)| (name.clone(), n))
                    .collect(),
            },
            lost: Lost {
                total: t.lost_total,
                by_crash: t.lost_by_crash,
            },
            moved: Moved {
                total: t.moved_total,
                minimum: t.moved_minimum,
            },
            pauses: Pauses {
                stop_the_world_ms: Summary::of(stw, t.paused_at_end.iter().map(member).collect()),
                unavailable_ms: Unavailable {
                    summary: Summary::of(
                        by_partition(&t.unavailable_us),
                        t.unavailable_at_end.iter().map(partition).collect(),
                    ),
                    by_cause: group.unavailable_by_cause(),
                    longest: t.longest_unavailable.map(|(p, since, us)| Outage {
                        partition: self.partition_names[p].clone(),
                        start_ms: since.as_millis(),
                        ms: us / 1000,
                    }),
                },
                unowned_ms: Summary::of(
                    by_partition(&t.unowned_us),
                    t.unowned_at_end.iter().map(partition).collect(),
                ),
            },
            join: {
                let mut l = self.join_latencies_ms;
                l.sort_unstable();
                JoinMetrics {
                    latency_ms: Percentiles {
                        p50: nearest_rank(&l, 50),
                        p99: nearest_rank(&l, 99),
                    },
                    ..self.join
                }
            },
            recovery: self.recovery,
            lag: Lag {
                peak: self
                    .partition_names
                    .iter()
                    .zip(&self.lag_peak)
                    .filter(|(_, &l)| l > 0)
                    .map(|(n, &l)| (n.clone(), l))
                    .collect(),
                catch_up_ms,
                series: self.lag_series,
            },
            records: Records {
                produced: counts.produced,
                written: counts.written,
                dropped: counts.dropped,
                processed: self.processed,
                processed_twice: self.processed_twice,
                skipped_by_offset_reset: self.skipped,
                unconsumed_at_end: unconsumed,
                never_processed: never,
                cross_rack_fetched: self.cross_rack_fetched.as_ref().map(|v| v.iter().sum()),
            },
            invariants,
            co_partitioning: t.co_partitioning.clone(),
            final_assignment,
            errors: self.errors,
            migrations: self.migrations,
            notices: scenario.notices.clone(),
            brokers: Vec::new(),
            coordinator: group.coordinator_moves().to_vec(),
            kafka_metrics,
            group: description,
        }
    }
}

/// What the report calls a member's protocol: its rebalance protocol under the classic group
/// protocol (eager, cooperative), or `consumer` (KIP-848).
fn protocol_name(m: &crate::scenario::MemberSpec) -> &'static str {
    match m.protocol {
        crate::scenario::Protocol::Consumer => "consumer",
        crate::scenario::Protocol::Classic => m.rebalance_protocol.name(),
    }
}
