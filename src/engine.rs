//! The event loop: builds the world from a scenario, pops events in (time, sequence) order and
//! hands each to its owner (coordinator, member, timeline). A thin dispatcher: behaviour lives in
//! `group/`, accounting in `metrics/`.

use crate::cluster::Cluster;
use crate::group::coordinator::{CoordTimer, Coordinator};
use crate::group::member::{ClientTimer, Member};
use crate::group::messages::{ClientRef, Request, Response};
use crate::metrics::{History, Metrics};
use crate::report::Report;
use crate::scenario::{Scenario, TimelineAction};
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::{EventQueue, RngStreams, SimTime, Trace};
use crate::workload::producer::Logs;

#[derive(Debug)]
pub enum Event {
    /// Timeline entry `i` happens.
    Timeline(usize),
    /// A request arrives at the coordinator.
    AtCoordinator {
        from: ClientRef,
        request: Box<Request>,
    },
    CoordinatorTimer(CoordTimer),
    /// A response arrives at a member's process.
    AtClient {
        to: ClientRef,
        response: Box<Response>,
    },
    ClientTimer {
        to: ClientRef,
        timer: ClientTimer,
    },
    /// The settle bound: the group must be Stable by now.
    SettleCheck,
    /// Sample consumer lag.
    LagSample,
    /// Test-only fault injection: make member `member` claim `partition` without an assignment.
    #[doc(hidden)]
    ForceOwnership {
        member: usize,
        partition: usize,
    },
}

/// Everything the coordinator and members share: the clock and queue, the network, the logs,
/// the trace and the metrics.
pub struct Env<'s> {
    pub scenario: &'s Scenario,
    pub queue: EventQueue<Event>,
    pub cluster: Cluster,
    pub logs: Logs,
    pub trace: Trace,
    pub metrics: Metrics,
    /// Member-id UUIDs (the coordinator's `UUID.randomUUID()`).
    pub ids: Stream,
    /// Fetch round trips.
    pub fetch: Stream,
    /// `topic-p` for each global partition index (every partition a topic ever has).
    pub partition_names: Vec<String>,
    pub partition_topic: Vec<usize>,
    /// Global index of each topic's partition 0.
    pub first_partition: Vec<usize>,
    /// Extra delay before each partition's records reach a consumer (out-of-order arrival,
    /// and the join's wait for the other side).
    pub arrival_lag_us: Vec<u64>,
}

impl Env<'_> {
    pub fn now(&self) -> SimTime {
        self.queue.now()
    }

    pub fn to_coordinator(&mut self, from: ClientRef, request: Request) {
        let at = self.now() + self.cluster.one_way();
        self.queue.schedule(
            at,
            Event::AtCoordinator {
                from,
                request: Box::new(request),
            },
        );
    }

    pub fn to_client(&mut self, to: ClientRef, response: Response) {
        let at = self.now() + self.cluster.one_way();
        self.queue.schedule(
            at,
            Event::AtClient {
                to,
                response: Box::new(response),
            },
        );
    }

    pub fn log(&mut self, line: String) {
        let now = self.now();
        self.trace.record(now, &line);
    }

    pub fn partition_list(&self, parts: &[usize]) -> String {
        if parts.is_empty() {
            return "[]".into();
        }
        let names: Vec<&str> = parts
            .iter()
            .map(|&p| self.partition_names[p].as_str())
            .collect();
        format!("[{}]", names.join(" "))
    }

    /// The partition's number within its topic.
    pub fn partition_number(&self, p: usize) -> u32 {
        (p - self.first_partition[self.partition_topic[p]]) as u32
    }

    /// Partition counts of every topic as the cluster's metadata has them now.
    pub fn metadata(&self) -> Vec<u32> {
        let now_ms = self.now().as_millis();
        self.scenario
            .topics
            .iter()
            .map(|t| t.partitions_at(now_ms))
            .collect()
    }
}

/// Options that do not change what is simulated, only what is kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Keep the trace lines (for `--trace`).
    pub keep_trace: bool,
    /// Keep a [`History`] of owner changes, processing and phases (for timelines).
    pub record_history: bool,
}

/// The outcome of a run: its report, and the trace when asked for.
pub struct RunOutput {
    pub report: Report,
    pub history: Option<History>,
    pub trace: Vec<String>,
    pub events: u64,
}

/// Runs a scenario to its end.
pub fn run(scenario: &Scenario, options: RunOptions) -> RunOutput {
    run_with_faults(scenario, options, &[])
}

/// Runs with injected faults: `(at_ms, member, partition)` makes a member claim a partition it
/// was never assigned, to prove the invariant checker catches double ownership.
#[doc(hidden)]
pub fn run_with_faults(
    scenario: &Scenario,
    options: RunOptions,
    faults: &[(u64, usize, usize)],
) -> RunOutput {
    let streams = RngStreams::new(scenario.seed);
    let mut partition_names = Vec::new();
    let mut partition_topic = Vec::new();
    for (t, topic) in scenario.topics.iter().enumerate() {
        for p in 0..topic.max_partitions() {
            partition_names.push(format!("{}-{p}", topic.name));
            partition_topic.push(t);
        }
    }
    let logs = Logs::new(scenario, &streams);
    let mut env = Env {
        scenario,
        queue: EventQueue::new(),
        cluster: Cluster::new(
            scenario,
            streams.stream("placement"),
            streams.stream("latency"),
        ),
        metrics: Metrics::new(scenario, partition_names.clone()),
        logs,
        trace: Trace::new(options.keep_trace),
        ids: streams.stream("member-ids"),
        fetch: streams.stream("fetch"),
        partition_names,
        partition_topic,
        first_partition: scenario.first_partitions(),
        arrival_lag_us: Vec::new(),
    };
    if options.record_history {
        env.metrics.record_history();
    }
    env.arrival_lag_us = arrival_lags(scenario, &env, &mut streams.stream("arrival"));
    env.log({
        format!(
            "run scenario={} seed={} variant={} coordinator=broker-{} (__consumer_offsets-{})",
            scenario.name,
            scenario.seed,
            scenario.variant,
            env.cluster.coordinator_broker,
            env.cluster.offsets_partition
        )
    });

    let mut coordinator = Coordinator::new(scenario);
    let mut members: Vec<Member> = scenario
        .members
        .iter()
        .enumerate()
        .map(|(i, _)| Member::new(i))
        .collect();
    for (i, m) in scenario.members.iter().enumerate() {
        if m.start_ms == Some(0) {
            members[i].start(&mut env);
        }
    }
    for (i, _) in scenario.timeline.iter().enumerate() {
        env.queue.schedule(
            SimTime::from_millis(scenario.timeline[i].at_ms),
            Event::Timeline(i),
        );
    }
    for &(at, member, partition) in faults {
        env.queue.schedule(
            SimTime::from_millis(at),
            Event::ForceOwnership { member, partition },
        );
    }
    let settle_at = settle_deadline_ms(scenario);
    if settle_at <= scenario.duration_ms {
        env.queue
            .schedule(SimTime::from_millis(settle_at), Event::SettleCheck);
    }
    let end = SimTime::from_millis(scenario.duration_ms);
    let mut next_lag_sample = env.queue.schedule(SimTime::ZERO, Event::LagSample);
    let mut lag_fine = false;

    while let Some(t) = env.queue.peek_time() {
        if t > end {
            break;
        }
        let (_, event) = env.queue.pop().expect("peeked");
        match event {
            Event::Timeline(i) => match &scenario.timeline[i].action {
                TimelineAction::Join { member } | TimelineAction::Restart { member } => {
                    members[*member].start(&mut env)
                }
                TimelineAction::Leave { member } => members[*member].close(&mut env),
                TimelineAction::Crash { member } => members[*member].crash(&mut env),
                TimelineAction::Stall {
                    member,
                    duration_ms,
                } => members[*member].stall(&mut env, Duration::from_millis(*duration_ms)),
                TimelineAction::Subscribe { member, topics } => {
                    members[*member].subscribe(&mut env, topics.clone())
                }
                TimelineAction::AddPartitions { topic, partitions } => {
                    let name = &scenario.topics[*topic].name;
                    env.log(format!("topic {name} grows to {partitions} partitions"));
                    let now = env.now();
                    let counts = env.metadata();
                    env.metrics.partitions_added(now, scenario, &counts);
                }
            },
            Event::AtCoordinator { from, request } => coordinator.handle(&mut env, from, *request),
            Event::CoordinatorTimer(timer) => coordinator.on_timer(&mut env, timer),
            Event::AtClient { to, response } => {
                members[to.member].on_response(&mut env, to, *response)
            }
            Event::ClientTimer { to, timer } => members[to.member].on_timer(&mut env, to, timer),
            Event::SettleCheck => {
                let stable = coordinator.is_stable() && members.iter().all(|m| !m.is_rebalancing());
                env.metrics
                    .settle_check(env.queue.now(), stable, coordinator.state_name());
            }
            Event::LagSample => {
                let now = env.now();
                env.metrics.sample_lag(now, &env.logs);
                let every = (scenario.lag_sample_ms / env.metrics.lag_sampling_factor(now)).max(1);
                lag_fine = every < scenario.lag_sample_ms;
                let next = now + Duration::from_millis(every);
                next_lag_sample = env.queue.schedule(next, Event::LagSample);
            }
            Event::ForceOwnership { member, partition } => {
                let now = env.now();
                env.metrics.acquire(now, member, &[partition]);
            }
        }
        // A rebalance began since the last sample: sample now, then finely.
        if !lag_fine && env.metrics.lag_sampling_factor(env.now()) > 1 {
            env.queue.cancel(next_lag_sample);
            next_lag_sample = env.queue.schedule(env.now(), Event::LagSample);
            lag_fine = true;
        }
    }
    // The run ends at `end`: close open intervals there.
    let events = env.queue.popped();
    let digest = env.trace.digest();
    let history = env.metrics.take_history();
    let report = env.metrics.finish(end, &digest, &env.logs, scenario);
    RunOutput {
        report,
        history,
        trace: env.trace.lines().to_vec(),
        events,
    }
}

/// Each partition's extra fetch delay: its own (seeded) plus its leader broker's. With a join that
/// waits for the other side (max.task.idle.ms), a notification partition is held back until its
/// co-partitioned price partition has caught up, for at most the wait.
fn arrival_lags(scenario: &Scenario, env: &Env, stream: &mut crate::sim::rng::Stream) -> Vec<u64> {
    let a = &scenario.arrival;
    let mut lags: Vec<u64> = (0..env.partition_names.len())
        .map(|p| {
            let own = stream.between(a.partition_lag_min_ms, a.partition_lag_max_ms);
            let broker = a
                .broker_lag_ms
                .get(env.cluster.leaders[p] as usize)
                .copied()
                .unwrap_or(0);
            (own + broker) * 1000
        })
        .collect();
    if let Some(app) = scenario.app.as_ref().filter(|a| a.wait_for_prices_ms > 0) {
        let wait = app.wait_for_prices_ms * 1000;
        let (n0, p0) = (
            env.first_partition[app.notifications],
            env.first_partition[app.prices],
        );
        let prices = scenario.topics[app.prices].max_partitions() as usize;
        for i in 0..scenario.topics[app.notifications].max_partitions() as usize {
            if i < prices {
                let (n, p) = (n0 + i, p0 + i);
                lags[n] = lags[n].max(lags[p].min(lags[n] + wait));
            }
        }
    }
    lags
}

/// The group must be Stable within rebalance timeout + session timeout after the last timeline
/// event has ended (DESIGN.md "What counts").
pub fn settle_deadline_ms(scenario: &Scenario) -> u64 {
    scenario.last_event_end_ms()
        + scenario.group.max_poll_interval_ms
        + scenario.group.session_timeout_ms
}
