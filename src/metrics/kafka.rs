//! Kafka's own consumer metrics for the run (`kafka_metrics` in the JSON report): what each
//! member's `KafkaConsumer` would report under `consumer-coordinator-metrics` and
//! `consumer-fetch-manager-metrics`, computed as Kafka's classic consumer defines them, from the
//! member's own facts, but over the whole run instead of Kafka's sample windows
//! (`metrics.sample.window.ms` x `metrics.num.samples`, 30 s x 2 by default, which would be
//! mostly empty at a run's end).
//!
//! The definitions (Kafka's `clients` module, `consumer/internals/`):
//! - `rebalance-latency-{avg,max,total}`, `rebalance-total` (`AbstractCoordinator`'s
//!   `successfulRebalanceSensor`): one sample per successful rebalance of this member, from
//!   `lastRebalanceStartMs` (set in `initiateJoinGroup` when the member sends a JoinGroup and no
//!   attempt is pending, so after `onJoinPrepare`'s revocation, and kept across failed
//!   attempts) to the handling of its SyncGroup answer (`SyncGroupResponseHandler`, before
//!   `onJoinComplete`'s callbacks). A new member's MEMBER_ID_REQUIRED round trip is inside it.
//! - `failed-rebalance-total` (`failedRebalanceSensor`): every JoinGroup or SyncGroup answer
//!   with an error fails the join future, MEMBER_ID_REQUIRED included (so a new member counts
//!   one), REBALANCE_IN_PROGRESS on SyncGroup, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, ...
//! - `join-time-{avg,max}`, `join-total` (`joinSensor`): the round trip of each JoinGroup
//!   answered with NONE, from its send to the member reading the answer
//!   (`ClientResponse.requestLatencyMs`: the consumer reads it at its next poll).
//! - `sync-time-{avg,max}`, `sync-total` (`syncSensor`): the same for each SyncGroup answered
//!   with NONE; from the JoinGroup answer on the heartbeat thread polls the network too, so a
//!   member busy in a batch reads it on the thread's next pass (every `retry.backoff.ms`).
//! - `last-rebalance-seconds-ago`: whole seconds (truncated) from the member's last successful
//!   rebalance to the run's end; -1 if it never completed one.
//! - `partition-{revoked,assigned,lost}-latency-{avg,max}` (`ConsumerRebalanceListenerInvoker`
//!   via `RebalanceCallbackMetricsManager`): the time each listener callback took, one sample
//!   per invocation (`onPartitionsAssigned` runs after every successful rebalance, even with no
//!   new partitions; cgsim's `onPartitionsRevoked` on close and `onPartitionsLost` take no time).
//! - `records-lag-max` (`FetchMetricsManager`'s `records-lag` sensor, recorded by
//!   `FetchCollector` for each partition a poll drains): the fetch's high watermark minus the
//!   position after the records returned; null if the member never had a fetch position.
//!
//! Under the consumer protocol (KIP-848) the `AsyncKafkaConsumer` registers a different set
//! (`ConsumerRebalanceMetricsManager`, same group and names): `rebalance-latency-*` and
//! `rebalance-total` sample each stretch from the member's move into RECONCILING to its move
//! out of it to ACKNOWLEDGING or STABLE (`AbstractMembershipManager.transitionTo`, on the
//! background thread as the heartbeat answer or the reconciliation lands);
//! `failed-rebalance-total` counts heartbeat answers with an error while such a stretch is open
//! (`onHeartbeatFailure` -> `maybeRecordRebalanceFailed`); there is no JoinGroup or SyncGroup,
//! so `join-time-*` and `sync-time-*` have no samples (`null`). The listener latencies and
//! `records-lag-max` are the same sensors.
//!
//! Kafka's values are doubles, NaN for a statistic with no samples: here averages are JSON
//! numbers, maxima and totals integers (milliseconds: differences of millisecond timestamps, as
//! Kafka's `time.milliseconds()` reads them), and NaN is `null`. A member's figures cover all its
//! processes (a restarted consumer's own metrics would start again from zero). The group's are
//! the same statistics over every member's samples pooled, as a dashboard aggregates them:
//! averages weighted by samples (sum of totals over sum of counts), maxima the largest, totals
//! summed, `last-rebalance-seconds-ago` the most recent member's.

use super::*;
use crate::facts::Callback;
use crate::messages::ErrorCode;
use serde::Serialize;

/// One sensor's samples over the run: `Avg`, `Max`, `CumulativeSum`, `CumulativeCount`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Samples {
    count: u64,
    total: u64,
    max: u64,
}

impl Samples {
    fn record(&mut self, value: u64) {
        self.count += 1;
        self.total += value;
        self.max = self.max.max(value);
    }

    fn merge(&mut self, other: &Samples) {
        self.count += other.count;
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// `Avg`: NaN (`None`) with no samples.
    fn avg(&self) -> Option<f64> {
        (self.count > 0).then(|| self.total as f64 / self.count as f64)
    }

    /// `Max`: NaN (`None`) with no samples.
    fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }
}

/// One member's sensors, and the timestamps its consumer keeps between facts.
#[derive(Clone, Debug, Default)]
pub(super) struct Sensors {
    rebalance: Samples,
    failed_rebalances: u64,
    join: Samples,
    sync: Samples,
    revoked: Samples,
    assigned: Samples,
    lost: Samples,
    records_lag_max: Option<u64>,
    last_rebalance_end: Option<SimTime>,
    // The current process's state (a new process starts with none).
    rebalance_start: Option<SimTime>,
    join_sent: Option<SimTime>,
    sync_sent: Option<SimTime>,
    /// When the heartbeat thread reads the SyncGroup answer, if before the next poll.
    sync_read: Option<SimTime>,
    /// KIP-848: `lastRebalanceStartMs` and `lastRebalanceEndMs` (-1 in Kafka: `None`).
    reconcile_start_ms: Option<u64>,
    reconcile_end_ms: Option<u64>,
}

impl Sensors {
    /// A process starts, stops or dies: the consumer that kept these timestamps is gone.
    fn reset_process(&mut self) {
        self.rebalance_start = None;
        self.join_sent = None;
        self.sync_sent = None;
        self.sync_read = None;
        self.reconcile_start_ms = None;
        self.reconcile_end_ms = None;
    }

    /// KIP-848's `rebalanceStarted()`: a start later than the last end.
    fn reconciling(&self) -> bool {
        self.reconcile_start_ms > self.reconcile_end_ms
    }

    fn reconciling_ended(&mut self, now: SimTime) {
        let start = self.reconcile_start_ms.unwrap_or(ms(now));
        self.rebalance.record(ms(now) - start);
        self.reconcile_end_ms = Some(ms(now));
        self.last_rebalance_end = Some(now);
    }

    fn join_sent(&mut self, now: SimTime) {
        self.join_sent = Some(now);
        // `initiateJoinGroup`: a failed attempt keeps the start of the rebalance.
        self.rebalance_start.get_or_insert(now);
    }

    fn join_answered(&mut self, now: SimTime, error: ErrorCode) {
        let sent = self.join_sent.take();
        if error != ErrorCode::None {
            self.failed_rebalances += 1;
            return;
        }
        if let Some(sent) = sent {
            self.join.record(ms(now) - ms(sent));
        }
        // A successful JoinGroup answer sends the SyncGroup at once.
        self.sync_sent = Some(now);
        self.sync_read = None;
    }

    fn sync_answered(&mut self, now: SimTime, error: ErrorCode) {
        let sent = self.sync_sent.take();
        // The handler ran when the network client was first polled after the answer came:
        // on the heartbeat thread's pass, or now at the application thread's poll.
        let now = self.sync_read.take().map_or(now, |read| read.min(now));
        if error != ErrorCode::None {
            self.failed_rebalances += 1;
            return;
        }
        if let Some(sent) = sent {
            self.sync.record(ms(now) - ms(sent));
        }
        if let Some(start) = self.rebalance_start.take() {
            self.rebalance.record(ms(now) - ms(start));
        }
        self.last_rebalance_end = Some(now);
    }

    fn listener(&mut self, callback: Callback, ms: u64) {
        match callback {
            Callback::Revoked => self.revoked.record(ms),
            Callback::Assigned => self.assigned.record(ms),
            Callback::Lost => self.lost.record(ms),
        }
    }

    fn lag(&mut self, lag: u64) {
        self.records_lag_max = Some(self.records_lag_max.map_or(lag, |l| l.max(lag)));
    }
}

impl Metrics {
    /// The Kafka sensors' share of a fact (`observe` hands over every fact; each sensor takes
    /// the ones it concerns).
    pub(super) fn observe_sensors(&mut self, now: SimTime, fact: &Fact) {
        match fact {
            Fact::ProcessStarted { member }
            | Fact::ProcessStopped { member }
            | Fact::Crashed { member, .. } => self.sensors[*member].reset_process(),
            Fact::JoinGroupSent { member } => self.sensors[*member].join_sent(now),
            Fact::JoinGroupAnswered { member, error } => {
                self.sensors[*member].join_answered(now, *error)
            }
            Fact::SyncGroupRead { member, at } => self.sensors[*member].sync_read = Some(*at),
            Fact::SyncGroupAnswered { member, error, .. } => {
                self.sensors[*member].sync_answered(now, *error)
            }
            Fact::ListenerTime {
                member,
                callback,
                ms,
            } => self.sensors[*member].listener(*callback, *ms),
            Fact::FetchLag { member, lag, .. } => self.sensors[*member].lag(*lag),
            Fact::ReconcilingStarted { member } => {
                self.sensors[*member].reconcile_start_ms = Some(ms(now))
            }
            Fact::ReconcilingEnded { member } => self.sensors[*member].reconciling_ended(now),
            // `maybeRecordRebalanceFailed`: only while a rebalance is under way.
            Fact::HeartbeatFailed { member, .. } => {
                let s = &mut self.sensors[*member];
                if s.reconciling() {
                    s.failed_rebalances += 1;
                }
            }
            // From here the member's polls fetch, and Kafka records a lag for each partition a
            // poll drains (0 when the poll took all the fetch saw).
            Fact::ProcessingStarted { member, partitions } if !partitions.is_empty() => {
                self.sensors[*member].lag(0)
            }
            _ => {}
        }
    }

    pub(super) fn kafka_metrics(&self, end: SimTime) -> KafkaMetrics {
        let per_member: BTreeMap<String, ConsumerMetrics> = self
            .member_names
            .iter()
            .zip(&self.sensors)
            .map(|(name, s)| (name.clone(), ConsumerMetrics::of(s, end)))
            .collect();
        let mut pooled = Sensors::default();
        for s in &self.sensors {
            pooled.rebalance.merge(&s.rebalance);
            pooled.failed_rebalances += s.failed_rebalances;
            pooled.join.merge(&s.join);
            pooled.sync.merge(&s.sync);
            pooled.revoked.merge(&s.revoked);
            pooled.assigned.merge(&s.assigned);
            pooled.lost.merge(&s.lost);
            if let Some(l) = s.records_lag_max {
                pooled.lag(l);
            }
            pooled.last_rebalance_end = pooled.last_rebalance_end.max(s.last_rebalance_end);
        }
        KafkaMetrics {
            group: ConsumerMetrics::of(&pooled, end),
            per_member,
        }
    }
}

/// `kafka_metrics`: Kafka's consumer metric names, for the group and per member.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct KafkaMetrics {
    /// Every member's samples pooled (averages weighted by samples, maxima the largest, totals
    /// summed, `last-rebalance-seconds-ago` the most recent member's).
    pub group: ConsumerMetrics,
    /// By scenario member name, over all its processes.
    pub per_member: BTreeMap<String, ConsumerMetrics>,
}

/// One consumer's metrics, under Kafka's names (`null`: Kafka's NaN, no samples).
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct ConsumerMetrics {
    #[serde(rename = "rebalance-latency-avg")]
    pub rebalance_latency_avg: Option<f64>,
    #[serde(rename = "rebalance-latency-max")]
    pub rebalance_latency_max: Option<u64>,
    #[serde(rename = "rebalance-latency-total")]
    pub rebalance_latency_total: u64,
    #[serde(rename = "rebalance-total")]
    pub rebalance_total: u64,
    #[serde(rename = "failed-rebalance-total")]
    pub failed_rebalance_total: u64,
    #[serde(rename = "last-rebalance-seconds-ago")]
    pub last_rebalance_seconds_ago: i64,
    #[serde(rename = "join-time-avg")]
    pub join_time_avg: Option<f64>,
    #[serde(rename = "join-time-max")]
    pub join_time_max: Option<u64>,
    #[serde(rename = "join-total")]
    pub join_total: u64,
    #[serde(rename = "sync-time-avg")]
    pub sync_time_avg: Option<f64>,
    #[serde(rename = "sync-time-max")]
    pub sync_time_max: Option<u64>,
    #[serde(rename = "sync-total")]
    pub sync_total: u64,
    #[serde(rename = "partition-revoked-latency-avg")]
    pub partition_revoked_latency_avg: Option<f64>,
    #[serde(rename = "partition-revoked-latency-max")]
    pub partition_revoked_latency_max: Option<u64>,
    #[serde(rename = "partition-assigned-latency-avg")]
    pub partition_assigned_latency_avg: Option<f64>,
    #[serde(rename = "partition-assigned-latency-max")]
    pub partition_assigned_latency_max: Option<u64>,
    #[serde(rename = "partition-lost-latency-avg")]
    pub partition_lost_latency_avg: Option<f64>,
    #[serde(rename = "partition-lost-latency-max")]
    pub partition_lost_latency_max: Option<u64>,
    #[serde(rename = "records-lag-max")]
    pub records_lag_max: Option<u64>,
}

impl ConsumerMetrics {
    fn of(s: &Sensors, end: SimTime) -> ConsumerMetrics {
        ConsumerMetrics {
            rebalance_latency_avg: s.rebalance.avg(),
            rebalance_latency_max: s.rebalance.max(),
            rebalance_latency_total: s.rebalance.total,
            rebalance_total: s.rebalance.count,
            failed_rebalance_total: s.failed_rebalances,
            // `TimeUnit.SECONDS.convert(now - lastRebalanceEndMs, MILLISECONDS)` truncates.
            last_rebalance_seconds_ago: s
                .last_rebalance_end
                .map_or(-1, |t| ((ms(end) - ms(t)) / 1000) as i64),
            join_time_avg: s.join.avg(),
            join_time_max: s.join.max(),
            join_total: s.join.count,
            sync_time_avg: s.sync.avg(),
            sync_time_max: s.sync.max(),
            sync_total: s.sync.count,
            partition_revoked_latency_avg: s.revoked.avg(),
            partition_revoked_latency_max: s.revoked.max(),
            partition_assigned_latency_avg: s.assigned.avg(),
            partition_assigned_latency_max: s.assigned.max(),
            partition_lost_latency_avg: s.lost.avg(),
            partition_lost_latency_max: s.lost.max(),
            records_lag_max: s.records_lag_max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_micros(ms * 1000)
    }

    #[test]
    fn a_new_members_first_join_counts_one_failed_attempt_inside_its_rebalance() {
        let mut s = Sensors::default();
        s.join_sent(t(100));
        // MEMBER_ID_REQUIRED fails the first attempt; the rebalance's clock keeps running.
        s.join_answered(t(103), ErrorCode::MemberIdRequired);
        s.join_sent(t(103));
        s.join_answered(t(3110), ErrorCode::None);
        s.sync_answered(t(3114), ErrorCode::None);
        let m = ConsumerMetrics::of(&s, t(10_999));
        assert_eq!(m.failed_rebalance_total, 1);
        assert_eq!(m.rebalance_total, 1);
        assert_eq!(m.rebalance_latency_max, Some(3014));
        assert_eq!(m.rebalance_latency_total, 3014);
        assert_eq!(m.join_time_max, Some(3007));
        assert_eq!(m.join_total, 1);
        assert_eq!(m.sync_time_avg, Some(4.0));
        // 7885 ms ago: 7 whole seconds.
        assert_eq!(m.last_rebalance_seconds_ago, 7);
    }

    #[test]
    fn no_samples_read_as_kafkas_nan_and_minus_one() {
        let m = ConsumerMetrics::of(&Sensors::default(), t(5000));
        assert_eq!(m.rebalance_latency_avg, None);
        assert_eq!(m.rebalance_latency_max, None);
        assert_eq!(m.rebalance_total, 0);
        assert_eq!(m.last_rebalance_seconds_ago, -1);
        assert_eq!(m.records_lag_max, None);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["rebalance-latency-avg"], serde_json::Value::Null);
        assert_eq!(json["last-rebalance-seconds-ago"], -1);
    }

    #[test]
    fn a_failed_sync_keeps_the_start_and_a_crash_forgets_it() {
        let mut s = Sensors::default();
        s.join_sent(t(0));
        s.join_answered(t(10), ErrorCode::None);
        s.sync_answered(t(20), ErrorCode::RebalanceInProgress);
        s.join_sent(t(30));
        s.join_answered(t(50), ErrorCode::None);
        s.sync_answered(t(55), ErrorCode::None);
        assert_eq!(s.rebalance.max(), Some(55));
        assert_eq!(s.failed_rebalances, 1);
        assert_eq!(s.join.count, 2);
        assert_eq!(s.sync.count, 1);
        // A process dies mid-rebalance: its successor's clock starts at its own JoinGroup.
        s.join_sent(t(100));
        s.reset_process();
        s.join_sent(t(200));
        s.join_answered(t(201), ErrorCode::None);
        s.sync_answered(t(202), ErrorCode::None);
        assert_eq!(s.rebalance.count, 2);
        assert_eq!(s.rebalance.total, 57);
    }

    #[test]
    fn the_heartbeat_threads_pass_reads_a_busy_members_sync_answer() {
        let mut s = Sensors::default();
        s.join_sent(t(0));
        s.join_answered(t(10), ErrorCode::None);
        // Its answer comes at 16, in a batch; the heartbeat thread's pass at 110 reads it, the
        // batch ends at 150.
        s.sync_read = Some(t(110));
        s.sync_answered(t(150), ErrorCode::None);
        assert_eq!(s.sync.max(), Some(100));
        assert_eq!(s.rebalance.max(), Some(110));
        assert_eq!(s.last_rebalance_end, Some(t(110)));
        // A poll that comes first reads it then.
        s.join_sent(t(200));
        s.join_answered(t(210), ErrorCode::None);
        s.sync_read = Some(t(310));
        s.sync_answered(t(230), ErrorCode::None);
        assert_eq!(s.sync.total, 100 + 20);
    }

    #[test]
    fn samples_pool_weighted_by_count() {
        let mut a = Samples::default();
        a.record(10);
        let mut b = Samples::default();
        b.record(20);
        b.record(30);
        a.merge(&b);
        assert_eq!(a.avg(), Some(20.0));
        assert_eq!(a.max(), Some(30));
    }
}
