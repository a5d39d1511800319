//! The world: the driver of a run. It builds every part once from the scenario (the partition
//! space, the cluster, the network, the logs, the coordinator and the members), pops events in
//! (time, sequence) order, hands each to its owner, and applies what the owner returns: messages
//! go through the network ([`net`]), keyed timers are set and cancelled here, facts go to the
//! observers (metrics). It is the only module that knows every part; the models know none of it.

mod connections;
pub mod digest;
mod faults;
mod lag_samples;
pub mod net;

use crate::app::standby::StandbyPlacement;
use crate::check::{Checks, Names, SettleWindow};
use crate::client::{ClientEffect, ClientEnv, ClientTimer, Consumer};
use crate::cluster::availability::GapCause;
use crate::cluster::{Cluster, PartitionLookup, PartitionSpace};
use crate::facts::Fact;
use crate::group::consumer::{ConsumerGroupConfig, ConsumerTopic};
use crate::group::effects::{CoordTimer, CoordinatorConfig, CoordinatorEffect};
use crate::group::Coordinator;
use crate::history::RunMarks;
use crate::history::{GroupHistory, Recorder as HistoryRecorder};
use crate::messages::{ClientRef, FindCoordinatorResponse, Request, Response};
use crate::metrics::outcome::RunEnd;
use crate::metrics::Metrics;
use crate::report::Report;
use crate::scenario::{MemberSpec, OffsetReset, Protocol, Scenario, TimelineAction};
use crate::sim::queue::TimerId;
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::{Digest, EventQueue, Out, RngStreams, SimTime, Trace};
use crate::workload::producer::Logs;
use connections::{ByConnection, Carried};
use lag_samples::ObserverClock;
use net::{Connection, Direction, Network};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

#[derive(Debug)]
pub enum Event {
    /// Timeline entry `i` happens.
    Timeline(usize),
    /// Member `m`, whose entry sets a later `start_ms`, starts its process.
    MemberStart(usize),
    /// A request arrives at broker `broker` (the coordinator, as the client believes).
    AtCoordinator {
        from: ClientRef,
        request: Box<Request>,
        broker: u32,
    },
    /// A client's connection to a broker closes (the broker died, or a request on it timed
    /// out): every request in flight on it fails. `opened` is the connection it was meant
    /// for: one closed since, and opened anew, is not closed by it.
    ConnectionClosed {
        client: ClientRef,
        broker: u32,
        opened: u32,
    },
    /// The group's coordinator moves: `Availability::coordinator_moves()[i]`.
    CoordinatorMoved(usize),
    /// The new coordinator has loaded the group from `__consumer_offsets`.
    CoordinatorLoaded,
    /// A fetch gap begins (`open`) or ends, for every member (`member: None`) or one.
    FetchGap {
        partition: usize,
        member: Option<usize>,
        cause: GapCause,
        open: bool,
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
    /// The end of the quiet window after the settle bound: still Stable, no rebalance since.
    SettleWindowEnd,
    /// Test-only fault injection: make member `member` claim `partition` without an assignment.
    #[doc(hidden)]
    ForceOwnership {
        member: usize,
        partition: usize,
    },
}

/// Options that do not change what is simulated, only what is kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Keep the trace lines (for `--trace`).
    pub keep_trace: bool,
    /// Keep the [`RunMarks`] of owner changes, processing and phases (for timelines), and the
    /// group's [`GroupHistory`] (for the lab's state at an instant).
    pub record_history: bool,
    /// Keep every fact the models recorded, in order (for `cgsim explain`).
    pub keep_facts: bool,
    /// Test-only: never trim the keyed logs (to show that trimming changes nothing).
    #[doc(hidden)]
    pub keep_every_record: bool,
    /// Hash no events: the report's `digest` is empty. For callers that never read it
    /// (`compare`'s figures), where hashing every event is about 4% of a run.
    pub skip_digest: bool,
}

/// The outcome of a run: its report, and the trace when asked for.
pub struct RunOutput {
    pub report: Report,
    pub history: Option<RunMarks>,
    /// The group's history (`crate::history`), when asked for with `record_history`.
    pub group_history: Option<GroupHistory>,
    pub trace: Vec<String>,
    pub events: u64,
    /// Every fact with its time, in the order recorded (empty unless `keep_facts`).
    pub facts: Vec<(SimTime, Fact)>,
    /// Keyed appends the logs held in memory at the end (what trimming left).
    pub keyed_appends_held: usize,
}

/// Runs a scenario to its end.
pub fn run(scenario: &Scenario, options: RunOptions) -> RunOutput {
    run_with_faults(scenario, options, &[])
}

/// Runs like [`run`], but asks `keep_going` every [`CHECK_EVERY`] events (with the number of
/// events processed so far) whether to go on, and gives up (`None`) when it says no: how
/// `cgsim lab` bounds a run's wall time and work. The run reads no clock itself; whatever
/// `keep_going` reads can only stop it, never change it, so a run that completes is the same
/// run, digest for digest.
pub fn run_while(
    scenario: &Scenario,
    options: RunOptions,
    keep_going: &mut dyn FnMut(u64) -> bool,
) -> Option<RunOutput> {
    let mut world = World::new(scenario, options);
    world.schedule_start(&[]);
    world.run_checked(keep_going)
}

/// How many events [`run_while`] processes between two questions.
pub const CHECK_EVERY: u64 = 1024;

/// Runs with injected faults: `(at_ms, member, partition)` makes a member claim a partition it
/// was never assigned, to prove the invariant checker catches double ownership.
#[doc(hidden)]
pub fn run_with_faults(
    scenario: &Scenario,
    options: RunOptions,
    faults: &[(u64, usize, usize)],
) -> RunOutput {
    let mut world = World::new(scenario, options);
    world.schedule_start(faults);
    world.run_to_end()
}

/// Keyed timers: the pending event of each key, so that setting a key replaces its timer and
/// cancelling needs no id in the model.
struct Timers {
    coordinator: BTreeMap<CoordTimer, TimerId>,
    members: Vec<[Option<TimerId>; ClientTimer::KEYS]>,
}

struct World<'s> {
    scenario: &'s Scenario,
    queue: EventQueue<Event>,
    partitions: PartitionSpace,
    cluster: Cluster,
    net: Network,
    logs: Logs,
    trace: Trace,
    /// `None` when the run was asked to skip it ([`RunOptions::skip_digest`]).
    digest: Option<Digest>,
    /// Everything fed the models' facts.
    observers: Observers,
    /// Fetch round trips.
    fetch: Stream,
    /// The jitter of the clients' retry backoffs.
    backoff: Stream,
    /// The jitter of the clients' connection setup timeouts (drawn only for a setup nobody
    /// answers).
    connection_setup: Stream,
    /// Extra delay before each partition's records reach a consumer (out-of-order arrival,
    /// and the join's wait for the other side).
    arrival_lag_us: Vec<u64>,
    coordinator: Coordinator,
    members: Vec<Consumer>,
    /// Each member's process incarnation (a restart is a new one; late messages to an old one
    /// are dropped).
    incarnations: Vec<u32>,
    timers: Timers,
    coordinator_out: Out<CoordinatorEffect>,
    member_out: Out<ClientEffect>,
    /// When lag is sampled and the logs trimmed (outside the queue).
    observer_clock: ObserverClock,
    /// Broker or network faults are scripted: requests are routed through them.
    faults: bool,
    /// The broker whose coordinator holds the group now (`None`: its broker died, or the
    /// group's `__consumer_offsets` partition has no leader).
    coordinator_home: Option<u32>,
    /// Until then the coordinator is loading the group.
    coordinator_loading_until: SimTime,
    /// What each connection (client process, broker) carries: requests in flight, answers on
    /// their way back, and how often it has been closed.
    carried: ByConnection<Carried>,
    /// Connections whose broker died with its connections hanging while a request was on
    /// them: nothing more is answered on them (a broker answers a connection's requests in
    /// order, and the one in front never is), even once the broker is back, until the
    /// client's request timeout closes them.
    hung: BTreeSet<(ClientRef, u32)>,
    /// Every connection a client has opened to a broker, when `faults`.
    connections: BTreeSet<(ClientRef, u32)>,
    /// Connections whose broker crashed while nothing was in flight on them. A request on one
    /// while the broker is down goes as on any connection to it (reset at once, or hung);
    /// once it is back, the first request fails at once with a disconnect (the old socket is
    /// reset: Kafka's `Selector` reads it), and only the next one reconnects. A request never
    /// reaches a broker's new process on a connection opened to its old one.
    dead: BTreeSet<(ClientRef, u32)>,
    /// Keyed records are generated this far ahead of simulated time.
    keyed_horizon: Duration,
    /// Offsets answered by OffsetFetch responses still on their way: a consumer may seek
    /// there, so the logs keep them (`(client, partition, offset)`).
    offsets_in_flight: Vec<(ClientRef, usize, u64)>,
    keep_every_record: bool,
}

/// Keyed records are generated in steps of this much simulated time. A fetch position whose
/// next record is past what was generated holds a lower bound, read again at each wake that
/// reaches it: with 1 s steps, the 10,000 partitions of `hour-1000x10k` (a record every 5 s
/// each) were read again 14.6 M times in the hour, with 4 s steps 2.5 M (4.6% fewer
/// instructions over its first 200 s). Longer steps gain little more and keep more records
/// ahead of the readers.
const KEYED_STEP_MS: u64 = 4_000;

impl<'s> World<'s> {
    fn new(scenario: &'s Scenario, options: RunOptions) -> Self {
        let streams = RngStreams::new(scenario.seed);
        let partitions = PartitionSpace::new(scenario);
        let logs = Logs::new(scenario, &partitions, &streams);
        let cluster = Cluster::new(scenario, streams.stream("placement"));
        let arrival_lag_us = arrival_lags(
            scenario,
            &partitions,
            &cluster,
            &mut streams.stream("arrival"),
        );
        let metrics = Metrics::new(scenario, partitions.names().to_vec());
        let mut coordinator = Coordinator::new(
            CoordinatorConfig {
                mutant: scenario.mutant,
                ..CoordinatorConfig::with_initial_delay(scenario.group.initial_rebalance_delay_ms)
            },
            streams.stream("member-ids"),
        );
        let topics = consumer_topics(scenario, &partitions, streams.stream("topic-ids"));
        coordinator = if scenario.group.protocol == Protocol::Consumer {
            coordinator.with_consumer_group(consumer_group_config(scenario), &topics)
        } else {
            // A classic group until a consumer-protocol member's heartbeat converts it.
            coordinator.with_consumer_support(consumer_group_config(scenario), topics)
        };
        let n = scenario.members.len();
        let partitions_len = partitions.len();
        let history = HistoryRecorder::new(
            scenario,
            partitions.names(),
            cluster.coordinator_broker,
            options.record_history,
        );
        let check = Checks::new(
            Names {
                members: scenario.members.iter().map(|m| m.name.clone()).collect(),
                partitions: partitions.names().to_vec(),
            },
            settle_window(scenario),
        );
        let logging = options.keep_trace;
        let cluster_quiet = cluster.availability.is_quiet();
        let coordinator_home = cluster.coordinator_broker;
        World {
            scenario,
            queue: EventQueue::new(),
            net: Network::new(scenario, streams.stream("latency")),
            cluster,
            partitions,
            logs,
            trace: Trace::new(logging),
            digest: (!options.skip_digest).then(Digest::new),
            observers: Observers {
                facts: options.keep_facts.then(Vec::new),
                history,
                standby: StandbyPlacement::new(n, partitions_len),
                check,
                metrics,
            },
            fetch: streams.stream("fetch"),
            backoff: streams.stream("retry-backoff"),
            connection_setup: streams.stream("connection-setup"),
            arrival_lag_us,
            coordinator,
            members: scenario
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| Consumer::new(i, m.clone()))
                .collect(),
            incarnations: vec![0; n],
            timers: Timers {
                coordinator: BTreeMap::new(),
                members: vec![[None; ClientTimer::KEYS]; n],
            },
            coordinator_out: Out::new(logging),
            member_out: Out::new(logging),
            observer_clock: ObserverClock::new(0),
            faults: !cluster_quiet,
            coordinator_home: Some(coordinator_home),
            coordinator_loading_until: SimTime::ZERO,
            carried: ByConnection::new(),
            hung: BTreeSet::new(),
            connections: BTreeSet::new(),
            dead: BTreeSet::new(),
            // A consumer reads a partition's next append time to choose its wake, up to the
            // fetch's max wait ahead (`client::fetch`): past this, "not before" is as good.
            keyed_horizon: Duration::from_millis(scenario.group.fetch_max_wait_ms + KEYED_STEP_MS),
            offsets_in_flight: Vec::new(),
            keep_every_record: options.keep_every_record,
        }
    }

    fn now(&self) -> SimTime {
        self.queue.now()
    }

    fn log(&mut self, line: impl FnOnce() -> String) {
        if self.trace.keeps() {
            let now = self.now();
            self.trace.record(now, &line());
        }
    }

    /// Members starting at 0 start; the timeline, the faults, the settle check and the first
    /// lag sample are scheduled.
    fn schedule_start(&mut self, faults: &[(u64, usize, usize)]) {
        let scenario = self.scenario;
        let (coordinator, offsets) = (
            self.cluster.coordinator_broker,
            self.cluster.offsets_partition,
        );
        self.log(|| {
            format!(
                "run scenario={} seed={} variant={} coordinator=broker-{coordinator} (__consumer_offsets-{offsets})",
                scenario.name, scenario.seed, scenario.variant,
            )
        });
        // The group as it starts, for the settle property (no member has started).
        self.apply_coordinator();
        let self_starts = crate::scenario::self_starts(&scenario.timeline, &scenario.members);
        for (i, m) in scenario.members.iter().enumerate() {
            if m.start_ms == Some(0) {
                self.start_member(i, None);
            } else if let Some(t) = self_starts[i] {
                self.queue
                    .schedule(SimTime::from_millis(t), Event::MemberStart(i));
            }
        }
        for (i, entry) in scenario.timeline.iter().enumerate() {
            self.queue
                .schedule(SimTime::from_millis(entry.at_ms), Event::Timeline(i));
        }
        self.schedule_cluster_faults();
        for &(at, member, partition) in faults {
            self.queue.schedule(
                SimTime::from_millis(at),
                Event::ForceOwnership { member, partition },
            );
        }
        let settle = settle_window(scenario);
        let end = SimTime::from_millis(scenario.duration_ms);
        if settle.bound <= end {
            self.queue.schedule(settle.bound, Event::SettleCheck);
        }
        if settle.until <= end {
            self.queue.schedule(settle.until, Event::SettleWindowEnd);
        }
        self.observer_clock = ObserverClock::new(self.queue.next_seq());
    }

    fn run_to_end(self) -> RunOutput {
        self.run_checked(&mut |_| true)
            .expect("a run asked nothing stops only at its end")
    }

    /// The event loop; `None` when `keep_going` said stop (asked every [`CHECK_EVERY`] events).
    fn run_checked(mut self, keep_going: &mut dyn FnMut(u64) -> bool) -> Option<RunOutput> {
        let end = SimTime::from_millis(self.scenario.duration_ms);
        while let Some((t, seq)) = self.queue.peek() {
            if t > end {
                break;
            }
            if t + self.keyed_horizon >= self.logs.generated_before() {
                let step = Duration::from_millis(KEYED_STEP_MS);
                self.logs.generate_through(t + self.keyed_horizon + step);
            }
            while let Some(at) = self.observer_clock.sample_due(t, Some(seq)) {
                self.sample_lag(at);
            }
            if let Some(safe) = self.observer_clock.trim_due(t) {
                if !self.keep_every_record {
                    self.trim_logs(safe);
                }
            }
            let (at, seq, event) = self.queue.pop_with_seq().expect("peeked");
            if let Some(d) = &mut self.digest {
                digest::record(d, at, seq, &event);
            }
            self.dispatch(event);
            self.refine_lag_sampling();
            let popped = self.queue.popped();
            if popped.is_multiple_of(CHECK_EVERY) && !keep_going(popped) {
                return None;
            }
        }
        // The run ends at `end`: close open intervals there.
        self.logs.generate_through(end);
        while let Some(at) = self.observer_clock.sample_due(end, None) {
            self.sample_lag(at);
        }
        let events = self.queue.popped();
        let digest = self.digest.as_ref().map(Digest::hex).unwrap_or_default();
        let history = self.observers.history.take_marks();
        self.observers.history.end(end);
        let invariants = self.observers.check.finish();
        let mut report = self.observers.metrics.finish(
            RunEnd {
                end,
                digest: &digest,
                events,
                invariants,
            },
            &self.logs,
            self.scenario,
            &self.observers.history,
        );
        report.brokers = self.cluster.availability.events().to_vec();
        Some(RunOutput {
            report,
            history,
            group_history: self.observers.history.finish(),
            trace: self.trace.lines().to_vec(),
            events,
            facts: self.observers.facts.take().unwrap_or_default(),
            keyed_appends_held: self.logs.keyed_appends_held(),
        })
    }

    /// The one match: each event to its owner.
    pub(super) fn dispatch(&mut self, event: Event) {
        let now = self.now();
        match event {
            Event::Timeline(i) => self.timeline(i),
            Event::MemberStart(m) => self.start_member(m, None),
            Event::AtCoordinator {
                from,
                request,
                broker,
            } if self.faults => self.at_broker(from, *request, broker),
            Event::ConnectionClosed {
                client,
                broker,
                opened,
            } => self.connection_closed(client, broker, opened),
            Event::CoordinatorMoved(i) => self.coordinator_moved(i),
            Event::CoordinatorLoaded => {
                let record = self.cluster.offsets.group_record();
                self.coordinator
                    .load(now, record, &mut self.coordinator_out);
                self.observers.observe(now, &Fact::CoordinatorLoaded);
                self.loaded_owners_keep(now);
                self.apply_coordinator();
            }
            Event::FetchGap {
                partition,
                member,
                cause,
                open,
            } => {
                let fact = Fact::FetchGap {
                    partition,
                    member,
                    cause,
                    open,
                };
                self.observers.observe(now, &fact);
            }
            Event::AtCoordinator { from, request, .. }
                if matches!(*request, Request::FindCoordinator(_)) =>
            {
                // The bootstrap broker answers from the cluster's metadata: the leader of the
                // group's `__consumer_offsets` partition.
                let response = Response::FindCoordinator(FindCoordinatorResponse {
                    broker: self.cluster.coordinator_broker,
                });
                self.respond(from, BOOTSTRAP_BROKER, response);
            }
            Event::AtCoordinator {
                from,
                request,
                broker,
            } => self.at_coordinator(from, *request, broker),
            Event::CoordinatorTimer(timer) => {
                // A keyed timer that fires is the live one of its key.
                self.timers.coordinator.remove(&timer);
                self.coordinator
                    .on_timer(now, timer, &mut self.coordinator_out);
                self.apply_coordinator();
            }
            Event::AtClient { to, response } => {
                if let Response::OffsetFetch(fetched) = &*response {
                    // Sorted for the lookups: an answer for a whole topic's partitions,
                    // searched once for each of them, was quadratic.
                    let mut answered: Vec<(usize, u64)> = fetched
                        .committed
                        .iter()
                        .filter_map(|&(p, o)| Some((p, o?)))
                        .collect();
                    answered.sort_unstable();
                    self.offsets_in_flight.retain(|&(client, p, offset)| {
                        client != to || answered.binary_search(&(p, offset)).is_err()
                    });
                }
                self.with_member(to.member, |m, env| m.on_response(env, to, *response))
            }
            Event::ClientTimer { to, timer } => {
                if let Some(k) = timer.key() {
                    self.timers.members[to.member][k] = None;
                }
                self.with_member(to.member, |m, env| m.on_timer(env, to, timer))
            }
            Event::SettleCheck => self.observers.check.settle_bound(now),
            Event::SettleWindowEnd => self.observers.check.settle_window_closed(now),
            Event::ForceOwnership { member, partition } => {
                // To every observer, the claim is an assignment nobody made.
                let claim = Fact::Assigned {
                    member,
                    partitions: vec![partition],
                };
                self.observers.observe(now, &claim);
            }
        }
    }

    fn timeline(&mut self, i: usize) {
        let scenario = self.scenario;
        match &scenario.timeline[i].action {
            TimelineAction::Join { member } => self.start_member(*member, None),
            TimelineAction::Restart { member, settings } => {
                self.start_member(*member, settings.as_deref().map(|s| &s.spec))
            }
            TimelineAction::Leave { member } => self.with_member(*member, |m, env| m.close(env)),
            TimelineAction::Crash { member } => self.with_member(*member, |m, env| m.crash(env)),
            TimelineAction::Stall {
                member,
                duration_ms,
            } => {
                let duration = Duration::from_millis(*duration_ms);
                self.with_member(*member, |m, env| m.stall(env, duration))
            }
            TimelineAction::Subscribe { member, topics } => {
                let topics = topics.clone();
                self.with_member(*member, |m, env| m.subscribe(env, topics))
            }
            TimelineAction::BrokerCrash { .. } => self.broker_crashed(),
            TimelineAction::BrokerRestart { broker } => {
                self.log(|| format!("broker-{broker} restarts"));
            }
            TimelineAction::NetworkPartition {
                members,
                duration_ms,
                ..
            } => {
                let names: Vec<&str> = members
                    .iter()
                    .map(|&m| scenario.members[m].name.as_str())
                    .collect();
                self.log(|| {
                    format!(
                        "network partition: {} cut off for {duration_ms} ms",
                        names.join(" ")
                    )
                });
                // For the pictures: members cut off from the coordinator's broker.
                let now = self.now();
                if let Some(home) = self.coordinator_home {
                    for &m in members {
                        if let Some(until) = self.cluster.availability.cut_until(m, home, now) {
                            let fact = Fact::CutOffFromCoordinator { member: m, until };
                            self.observers.observe(now, &fact);
                        }
                    }
                }
            }
            TimelineAction::LatencySpike {
                latency_ms,
                duration_ms,
            } => self.log(|| format!("latency spike: +{latency_ms} ms for {duration_ms} ms")),
            TimelineAction::AddPartitions { topic, partitions } => {
                let name = &scenario.topics[*topic].name;
                self.log(|| format!("topic {name} grows to {partitions} partitions"));
                let now = self.now();
                let counts = scenario.partition_counts_at(now.as_millis());
                self.coordinator.set_partitions(name, *partitions);
                self.apply_coordinator();
                let fact = Fact::PartitionsAdded {
                    topic: *topic,
                    counts,
                };
                self.observers.observe(now, &fact);
            }
        }
    }

    /// Forgets the keyed appends nobody can read any more: those at or before `safe` (the
    /// last lag sample, which counted past them) and below every partition's lowest readable offset: its committed offset
    /// (or 0 with none, when a reset goes to the earliest), every consumer's position, every
    /// offset an OffsetFetch answer on its way carries. A reset to the latest offset reads
    /// the log end, never below it.
    fn trim_logs(&mut self, safe: SimTime) {
        let earliest = self.scenario.group.auto_offset_reset == OffsetReset::Earliest;
        let offsets = &self.cluster.offsets;
        let mut low_water: Vec<u64> = (0..self.partitions.len())
            .map(|p| match offsets.committed(p) {
                Some(offset) => offset,
                None if earliest => 0,
                None => u64::MAX,
            })
            .collect();
        for member in &self.members {
            for (p, position) in member.fetch_positions() {
                low_water[p] = low_water[p].min(position);
            }
        }
        for &(_, p, offset) in &self.offsets_in_flight {
            low_water[p] = low_water[p].min(offset);
        }
        self.logs.trim(safe, |p| low_water[p]);
    }

    /// A new process for member `m`, configured anew when `spec` is given (else as before).
    fn start_member(&mut self, m: usize, spec: Option<&MemberSpec>) {
        self.incarnations[m] += 1;
        let incarnation = self.incarnations[m];
        self.with_member(m, |member, env| member.start(env, incarnation, spec));
    }

    /// The loaded group has every member its last record names, with its stored assignment:
    /// one the old coordinator removed from its memory only (a session that expired while its
    /// process could not answer, no record written since: GroupMetadataManager.replay,
    /// onLoaded) is a member again. Its process was never told; its next heartbeat, same
    /// member id and generation, is answered NONE, and it goes on with what it holds: what it
    /// holds of its stored assignment is its own again (`Kept`, as after a `MissedRejoin`).
    fn loaded_owners_keep(&mut self, now: SimTime) {
        let generation = self.coordinator.generation();
        for state in self.coordinator.members() {
            let Some(assignment) = &state.assignment else {
                continue;
            };
            // The running process this member id and generation are (member ids are unique).
            let found = self.members.iter().enumerate().find_map(|(m, member)| {
                let (id, g, owned) = member.classic_membership()?;
                (id == state.member_id && g == generation).then_some((m, owned))
            });
            let Some((member, owned)) = found else {
                continue;
            };
            let assigned = PartitionLookup::of(assignment);
            let partitions: Vec<usize> = owned
                .iter()
                .copied()
                .filter(|p| assigned.contains(p))
                .collect();
            if !partitions.is_empty() {
                let fact = Fact::Kept { member, partitions };
                self.observers.observe(now, &fact);
            }
        }
    }

    /// Samples consumer lag at `at` and plans the next sample.
    fn sample_lag(&mut self, at: SimTime) {
        let group = self.observers.history.ledger();
        self.observers.metrics.sample_lag(at, &self.logs, group);
        let factor = self.observers.metrics.lag_sampling_factor(at, group);
        let every = Duration::from_millis((self.scenario.lag_sample_ms / factor).max(1));
        // Fine whenever the factor asks for it, even when `lag_sample_ms = 1` cannot get
        // finer: otherwise `refine_lag_sampling` brings this sample to the same instant forever.
        let fine = factor > 1;
        self.observer_clock
            .sampled(at, every, fine, self.queue.next_seq());
    }

    /// A rebalance began since the last lag sample: sample now, then finely.
    fn refine_lag_sampling(&mut self) {
        let now = self.now();
        if !self.observer_clock.is_fine()
            && self
                .observers
                .metrics
                .lag_sampling_factor(now, self.observers.history.ledger())
                > 1
        {
            self.observer_clock.refine(now, self.queue.next_seq());
        }
    }

    // ---- Applying effects ----

    /// The coordinator's effects of its last input, its state's report among them.
    fn apply_coordinator(&mut self) {
        let now = self.now();
        self.coordinator.report_state(&mut self.coordinator_out);
        // The buffers are taken for the loop (effects may call back into the world) and given
        // back with their capacity.
        let (mut effects, mut logs) = self.coordinator_out.take();
        for effect in effects.drain(..) {
            if let CoordinatorEffect::Respond { to, response } = &effect {
                if let Response::OffsetFetch(fetched) = &**response {
                    let answered = fetched
                        .committed
                        .iter()
                        .filter_map(|&(p, o)| Some((*to, p, o?)));
                    self.offsets_in_flight.extend(answered);
                }
            }
            match effect {
                // The consumer does not wait for its LeaveGroup answer (it is closing, or its
                // heartbeat thread left after a poll timeout): the answer is not carried.
                CoordinatorEffect::Respond { to, response } => {
                    let broker = self
                        .coordinator_home
                        .unwrap_or(self.cluster.coordinator_broker);
                    self.respond(to, broker, *response);
                }
                CoordinatorEffect::SetTimer { timer, at } => {
                    let id = self
                        .queue
                        .schedule(at, Event::CoordinatorTimer(timer.clone()));
                    if let Some(old) = self.timers.coordinator.insert(timer, id) {
                        self.queue.cancel(old);
                    }
                }
                CoordinatorEffect::CancelTimer(timer) => {
                    if let Some(old) = self.timers.coordinator.remove(&timer) {
                        self.queue.cancel(old);
                    }
                }
                CoordinatorEffect::CommitOffset { partition, offset } => {
                    self.cluster.offsets.commit(partition, offset)
                }
                CoordinatorEffect::Record(record) => self.cluster.offsets.write_group(*record),
                CoordinatorEffect::Fact(ref fact) => self.observers.observe(now, fact),
            }
        }
        for line in logs.drain(..) {
            self.trace.record(now, &line);
        }
        self.coordinator_out.give_back(effects, logs);
    }

    /// Runs one member handler with its view of the world, then applies its effects.
    fn with_member(&mut self, m: usize, handler: impl FnOnce(&mut Consumer, &mut ClientEnv)) {
        let mut env = ClientEnv {
            now: self.queue.now(),
            scenario: self.scenario,
            partitions: &self.partitions,
            logs: &self.logs,
            arrival_lag_us: &self.arrival_lag_us,
            fetch: &mut self.fetch,
            backoff: &mut self.backoff,
            standby: &self.observers.standby,
            replicas: &self.cluster.replicas,
            availability: &self.cluster.availability,
            out: &mut self.member_out,
        };
        let member = &mut self.members[m];
        handler(member, &mut env);
        member.report_rebalance_step(&mut env);
        self.apply_member(m);
    }

    fn apply_member(&mut self, m: usize) {
        let now = self.now();
        let me = ClientRef {
            member: m,
            incarnation: self.incarnations[m],
        };
        // The buffers are taken for the loop (effects may call back into the world) and given
        // back with their capacity.
        let (mut effects, mut logs) = self.member_out.take();
        for effect in effects.drain(..) {
            match effect {
                ClientEffect::Send(request) if self.faults => self.send(me, *request),
                ClientEffect::Send(request) => self.send_direct(me, *request),
                ClientEffect::SetTimer { timer, at } => {
                    let key = timer.key().expect("a keyed client timer");
                    let id = self
                        .queue
                        .schedule(at, Event::ClientTimer { to: me, timer });
                    if let Some(old) = self.timers.members[m][key].replace(id) {
                        self.queue.cancel(old);
                    }
                }
                ClientEffect::CancelTimer(timer) => {
                    let key = timer.key().expect("a keyed client timer");
                    if let Some(old) = self.timers.members[m][key].take() {
                        self.queue.cancel(old);
                    }
                }
                ClientEffect::After { timer, at } => {
                    self.queue
                        .schedule(at, Event::ClientTimer { to: me, timer });
                }
                ClientEffect::Disconnect(broker) => self.disconnect(me, broker),
                ClientEffect::Fact(ref fact) => self.observers.observe(now, fact),
            }
        }
        for line in logs.drain(..) {
            self.trace.record(now, &line);
        }
        self.member_out.give_back(effects, logs);
    }
}

/// Everything the facts go to: state recovery's record, the checkers, the metrics.
struct Observers {
    /// The facts themselves, when kept (`RunOptions::keep_facts`).
    facts: Option<Vec<(SimTime, Fact)>>,
    /// The group's history: now, and over time when recorded (`RunOptions::record_history`).
    history: HistoryRecorder,
    /// State recovery's record of previous owners and members (standby placement).
    standby: StandbyPlacement,
    /// The named properties, each with its own record of the truth.
    check: Checks,
    metrics: Metrics,
}

impl Observers {
    /// Every fact to every observer, in the order the models recorded them.
    fn observe(&mut self, now: SimTime, fact: &Fact) {
        if let Some(facts) = &mut self.facts {
            facts.push((now, fact.clone()));
        }
        self.history.observe(now, fact);
        self.standby.observe(fact);
        self.check.observe(now, fact);
        self.metrics.observe(now, fact, &self.history);
    }
}

/// Each partition's extra fetch delay: its own (seeded) plus its leader broker's. With a join that
/// waits for the other side (max.task.idle.ms), a notification partition is held back until its
/// co-partitioned price partition has caught up, for at most the wait.
fn arrival_lags(
    scenario: &Scenario,
    partitions: &PartitionSpace,
    cluster: &Cluster,
    stream: &mut Stream,
) -> Vec<u64> {
    let a = &scenario.arrival;
    let mut lags: Vec<u64> = (0..partitions.len())
        .map(|p| {
            let own = stream.between(a.partition_lag_min_ms, a.partition_lag_max_ms);
            let broker = a
                .broker_lag_ms
                .get(cluster.leaders[p] as usize)
                .copied()
                .unwrap_or(0);
            (own + broker) * 1000
        })
        .collect();
    if let Some(app) = scenario.app.as_ref().filter(|a| a.wait_for_prices_ms > 0) {
        let wait = app.wait_for_prices_ms * 1000;
        let prices = scenario.topics[app.prices].max_partitions();
        for i in 0..scenario.topics[app.notifications].max_partitions() {
            if i < prices {
                let n = partitions.global(app.notifications, i);
                let p = partitions.global(app.prices, i);
                lags[n] = lags[n].max(lags[p].min(lags[n] + wait));
            }
        }
    }
    lags
}

/// The broker's consumer-group settings from the scenario's `[group]`.
fn consumer_group_config(scenario: &Scenario) -> ConsumerGroupConfig {
    let g = &scenario.group;
    ConsumerGroupConfig {
        heartbeat_interval_ms: g.consumer_heartbeat_interval_ms,
        session_timeout_ms: g.consumer_session_timeout_ms,
        assignment_interval_ms: g.consumer_assignment_interval_ms,
        mutant: scenario.mutant,
        migration_policy: g.migration_policy,
        ..ConsumerGroupConfig::default()
    }
}

/// The topics as the consumer group sees them: each with a topic id (drawn once per run, as a
/// cluster creates them), its partitions at the start and where its partitions begin.
fn consumer_topics(
    scenario: &Scenario,
    partitions: &PartitionSpace,
    mut ids: Stream,
) -> Vec<ConsumerTopic> {
    scenario
        .topics
        .iter()
        .enumerate()
        .map(|(t, topic)| {
            let bytes: [u8; 16] = std::array::from_fn(|_| ids.between(0, 255) as u8);
            ConsumerTopic {
                name: topic.name.clone(),
                id: crate::java::Uuid::from_bytes(bytes),
                partitions: topic.partitions,
                first: partitions.first(t),
            }
        })
        .collect()
}

/// The broker a client asks first (its `bootstrap.servers`): FindCoordinator goes there.
const BOOTSTRAP_BROKER: u32 = 0;

/// When the settle property looks: from the last fault's end, by the settle bound, through a
/// quiet window of one session timeout after it.
pub fn settle_window(scenario: &Scenario) -> SettleWindow {
    let (bound, bound_terms) = scenario.settle_bound();
    SettleWindow {
        from: SimTime::from_millis(scenario.last_event_end_ms()),
        bound: SimTime::from_millis(bound),
        until: SimTime::from_millis(scenario.settle_window_end_ms()),
        bound_terms,
        coordinator_load: Duration::from_millis(scenario.cluster.coordinator_load_ms),
    }
}
