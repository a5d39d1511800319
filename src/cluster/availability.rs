//! What the brokers and the network do over a run, worked out before it starts: broker faults
//! are scripted, and what follows from them is the controller's business, not the group's
//! (KRaft: a broker that stops heartbeating is fenced after `broker.session.timeout.ms`, its
//! leaderships move to the next live replica in the replica list, a partition with no live
//! replica stays offline until one returns, unclean election being off; every
//! `leader.imbalance.check.interval.seconds` leaderships go back to their preferred replica).
//! So it is a pure function of the scenario: the leaders of every partition (and of the group's
//! `__consumer_offsets` partition, whose leader is the coordinator) over time, the gaps in which
//! a member cannot fetch a partition, the network's cuts and latency spikes.
//!
//! A client's view trails the controller's: after its fetch fails (at once when the leader's
//! connections reset, after `request.timeout.ms` when they hang) it refreshes its metadata
//! (`retry.backoff.ms` and a round trip) and fetches from the leader it finds, so a fetch gap
//! runs from the leader's crash until the later of the new leader and the failed request, plus
//! that refresh. A leadership moved off a live broker (the preferred-leader check) costs one
//! NOT_LEADER_OR_FOLLOWER and the refresh.

use super::Replicas;
use crate::scenario::{BrokerRef, BrokerSet, Connections, Scenario, TimelineAction};
use crate::sim::time::Duration;
use crate::sim::SimTime;
use serde::Serialize;
use std::collections::BTreeMap;

/// Why a member could not fetch a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GapCause {
    /// Its leader died, or moved, and the member had not found the new one yet.
    LeaderElection,
    /// The member was cut off from the partition's leader.
    Network,
}

/// A time in which fetching a partition returns nothing: `[from, until)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    pub from: SimTime,
    pub until: SimTime,
    pub cause: GapCause,
}

/// A broker event as the report lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BrokerEvent {
    pub at_ms: u64,
    /// `None` for a scripted fault that found no broker to act on (see `detail`).
    pub broker: Option<u32>,
    /// `crash`, `restart`, `fenced`, `leaders_moved`, `leaders_back`, `skipped`.
    pub event: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<&'static str>,
    /// Partitions whose leadership the event moved (`leaders_moved`, `leaders_back`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<usize>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// The group's coordinator changing broker: the leadership of its `__consumer_offsets`
/// partition moved (`to` is `None` while that partition is offline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoordinatorMove {
    pub at: SimTime,
    pub from: Option<u32>,
    pub to: Option<u32>,
}

/// Members cut off from brokers for a while (both directions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub members: Vec<usize>,
    pub brokers: Vec<u32>,
    pub from: SimTime,
    pub until: SimTime,
}

#[derive(Clone, Copy, Debug)]
struct Down {
    from: SimTime,
    until: SimTime,
    connections: Connections,
}

#[derive(Default)]
pub struct Availability {
    /// Each broker's process down times, in order.
    down: Vec<Vec<Down>>,
    /// Leader changes of each partition after the start (the last index is the group's
    /// `__consumer_offsets` partition), in time order.
    changes: Vec<Vec<(SimTime, Option<u32>)>>,
    initial: Vec<u32>,
    /// Fetch gaps every member sees, per partition, in order and disjoint.
    gaps: Vec<Vec<Gap>>,
    /// Fetch gaps one member sees (its network partitions), per (member, partition).
    member_gaps: BTreeMap<(usize, usize), Vec<Gap>>,
    cuts: Vec<Cut>,
    spikes: Vec<(SimTime, SimTime, u64)>,
    moves: Vec<CoordinatorMove>,
    events: Vec<BrokerEvent>,
    /// No broker or network fault at all: every query has its quick answer.
    quiet: bool,
}

/// What the controller does next, in time order (ties in the order pushed).
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Timeline entry `i` (a crash or a restart).
    Scripted(usize),
    /// The broker's session expires: fenced, unless it came back since (its incarnation).
    Fence {
        broker: u32,
        incarnation: u32,
    },
    /// New leaders serve for partitions whose leader was `broker`, or (back = true) offline
    /// partitions `broker` can lead again.
    Elect {
        broker: u32,
        back: bool,
    },
    /// A broker restarted before its old session expired registers, now that it has.
    Register {
        broker: u32,
    },
    PreferredCheck,
}

impl Availability {
    /// The plan of a run with `replicas` placed and the coordinator first on `coordinator`
    /// (the leader of the group's `__consumer_offsets` partition, whose other replicas follow
    /// it in broker order, `offsets.topic.replication.factor` 3 as far as there are brokers).
    pub fn plan(scenario: &Scenario, replicas: &Replicas, coordinator: u32) -> Availability {
        let faults = scenario.timeline.iter().any(|e| {
            matches!(
                e.action,
                TimelineAction::BrokerCrash { .. }
                    | TimelineAction::BrokerRestart { .. }
                    | TimelineAction::NetworkPartition { .. }
                    | TimelineAction::LatencySpike { .. }
            )
        });
        if !faults {
            return Availability {
                quiet: true,
                ..Availability::default()
            };
        }
        let brokers = scenario.cluster.brokers;
        let n = replicas.leaders().len();
        let mut lists: Vec<Vec<u32>> = (0..n).map(|p| replicas.of(p).to_vec()).collect();
        let offsets_rf = brokers.min(3);
        lists.push(
            (0..offsets_rf)
                .map(|i| (coordinator + i) % brokers)
                .collect(),
        );
        let mut controller = Controller::new(scenario, lists);
        controller.run(scenario);
        let Controller {
            down,
            mut changes,
            initial,
            mut events,
            ..
        } = controller;
        // A preferred-leader move lands an election later than its check: keep time order.
        for c in &mut changes {
            c.sort_by_key(|&(t, _)| t);
        }
        events.sort_by_key(|e| e.at_ms);
        let mut plan = Availability {
            down,
            changes,
            initial,
            events,
            ..Availability::default()
        };
        plan.gaps = (0..n).map(|p| plan.leader_gaps(scenario, p)).collect();
        plan.moves = plan.moves_of(n);
        plan.network(scenario, n);
        plan
    }

    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// Broker events in time order, for the report.
    pub fn events(&self) -> &[BrokerEvent] {
        &self.events
    }

    /// Every coordinator move, in time order.
    pub fn coordinator_moves(&self) -> &[CoordinatorMove] {
        &self.moves
    }

    /// Every network partition (brokers resolved), in time order.
    pub fn cuts(&self) -> &[Cut] {
        &self.cuts
    }

    /// `broker`'s down time that `at` falls in, if any.
    fn down_at(&self, broker: u32, at: SimTime) -> Option<&Down> {
        if self.quiet {
            return None;
        }
        self.down
            .get(broker as usize)?
            .iter()
            .find(|d| d.from <= at && at < d.until)
    }

    /// Whether `broker`'s process runs at `at`; if not, how its connections behave.
    pub fn broker_down(&self, broker: u32, at: SimTime) -> Option<Connections> {
        self.down_at(broker, at).map(|d| d.connections)
    }

    /// When `broker`, down at `at` with its connections hanging, runs again (`None`: it is up,
    /// or down with its connections reset).
    pub fn hangs_until(&self, broker: u32, at: SimTime) -> Option<SimTime> {
        self.down_at(broker, at)
            .filter(|d| d.connections == Connections::Hang)
            .map(|d| d.until)
    }

    /// Whether `member` is cut off from `broker` at `at`; if so, until when.
    pub fn cut_until(&self, member: usize, broker: u32, at: SimTime) -> Option<SimTime> {
        if self.quiet {
            return None;
        }
        self.cuts
            .iter()
            .filter(|c| c.from <= at && at < c.until)
            .filter(|c| c.members.contains(&member) && c.brokers.contains(&broker))
            .map(|c| c.until)
            .max()
    }

    /// One-way latency added at `at` by the latency spikes then on (µs).
    pub fn extra_latency_us(&self, at: SimTime) -> u64 {
        if self.quiet {
            return 0;
        }
        self.spikes
            .iter()
            .filter(|&&(from, until, _)| from <= at && at < until)
            .map(|&(_, _, us)| us)
            .sum()
    }

    /// The latency spikes, `(from, until, extra one-way µs)`.
    pub fn spikes(&self) -> &[(SimTime, SimTime, u64)] {
        &self.spikes
    }

    /// When `member` can fetch `partition` again, if it cannot at `now`. Inlined for the
    /// common case, a cluster without faults, which every poll asks about every partition.
    #[inline]
    pub fn fetch_blocked_until(
        &self,
        member: usize,
        partition: usize,
        now: SimTime,
    ) -> Option<SimTime> {
        if self.quiet {
            return None;
        }
        self.fetch_gap_until(member, partition, now)
    }

    fn fetch_gap_until(&self, member: usize, partition: usize, now: SimTime) -> Option<SimTime> {
        let inside = |gaps: &[Gap]| {
            let i = gaps.partition_point(|g| g.from <= now);
            i.checked_sub(1)
                .map(|i| gaps[i])
                .filter(|g| now < g.until)
                .map(|g| g.until)
        };
        let all = self.gaps.get(partition).and_then(|g| inside(g));
        let own = self
            .member_gaps
            .get(&(member, partition))
            .and_then(|g| inside(g));
        all.max(own)
    }

    /// Every fetch gap: (partition, the member it is for or `None` for every member, gap).
    pub fn all_gaps(&self) -> impl Iterator<Item = (usize, Option<usize>, Gap)> + '_ {
        let shared = self
            .gaps
            .iter()
            .enumerate()
            .flat_map(|(p, gaps)| gaps.iter().map(move |g| (p, None, *g)));
        let own = self
            .member_gaps
            .iter()
            .flat_map(|(&(m, p), gaps)| gaps.iter().map(move |g| (p, Some(m), *g)));
        shared.chain(own)
    }

    /// The leader of partition `p` (the last index: the group's `__consumer_offsets`
    /// partition) at `at`, as the controller has it (`None`: offline).
    pub fn leader_at(&self, p: usize, at: SimTime) -> Option<u32> {
        if self.quiet {
            return None;
        }
        let changes = &self.changes[p];
        let i = changes.partition_point(|&(t, _)| t <= at);
        match i {
            0 => Some(self.initial[p]),
            i => changes[i - 1].1,
        }
    }

    /// Partition `p`'s gaps: from each time its leader stops serving (its broker dies, or the
    /// partition has none) until a serving leader is elected and the member has found it.
    fn leader_gaps(&self, scenario: &Scenario, p: usize) -> Vec<Gap> {
        let g = &scenario.group;
        let relearn =
            Duration::from_micros(g.retry_backoff_ms * 1000 + 2 * scenario.cluster.latency_max_us);
        let timeout = Duration::from_millis(g.request_timeout_ms);
        // Times at which whether the leader serves may change.
        let mut times: Vec<SimTime> = self.changes[p].iter().map(|&(t, _)| t).collect();
        for d in self.down.iter().flatten() {
            times.extend([d.from, d.until]);
        }
        times.sort();
        times.dedup();
        let serving = |at: SimTime| {
            self.leader_at(p, at)
                .is_some_and(|l| self.broker_down(l, at).is_none())
        };
        let mut gaps: Vec<Gap> = Vec::new();
        let mut open: Option<(SimTime, Option<Connections>)> = None;
        for &t in &times {
            match (open, serving(t)) {
                (None, false) => {
                    let how = self.leader_at(p, t).and_then(|l| self.broker_down(l, t));
                    open = Some((t, how));
                }
                (Some((from, how)), true) => {
                    let failed = match how {
                        Some(Connections::Hang) => from + timeout,
                        _ => from,
                    };
                    gaps.push(Gap {
                        from,
                        until: t.max(failed) + relearn,
                        cause: GapCause::LeaderElection,
                    });
                    open = None;
                }
                _ => {}
            }
        }
        if let Some((from, _)) = open {
            gaps.push(Gap {
                from,
                until: SimTime::MAX,
                cause: GapCause::LeaderElection,
            });
        }
        // A leadership moved off a live broker: one NOT_LEADER_OR_FOLLOWER, then the refresh.
        let mut before = Some(self.initial[p]);
        for &(t, leader) in &self.changes[p] {
            if let (Some(old), Some(new)) = (before, leader) {
                if old != new && self.broker_down(old, t).is_none() && serving(t) {
                    gaps.push(Gap {
                        from: t,
                        until: t + relearn,
                        cause: GapCause::LeaderElection,
                    });
                }
            }
            before = leader;
        }
        merge(gaps)
    }

    fn moves_of(&self, offsets: usize) -> Vec<CoordinatorMove> {
        let mut from = Some(self.initial[offsets]);
        let mut moves = Vec::new();
        // Every change is a new leader epoch, the same broker's again after its restart too.
        for &(at, to) in &self.changes[offsets] {
            moves.push(CoordinatorMove { at, from, to });
            from = to;
        }
        moves
    }

    /// The network partitions (brokers resolved when each begins) and the gaps they make, and
    /// the latency spikes.
    fn network(&mut self, scenario: &Scenario, partitions: usize) {
        for e in &scenario.timeline {
            let from = SimTime::from_millis(e.at_ms);
            match &e.action {
                TimelineAction::NetworkPartition {
                    members,
                    brokers,
                    duration_ms,
                } => {
                    let until = from + Duration::from_millis(*duration_ms);
                    let brokers = match brokers {
                        BrokerSet::Ids(ids) => ids.clone(),
                        BrokerSet::Coordinator => {
                            self.leader_at(partitions, from).into_iter().collect()
                        }
                    };
                    self.cuts.push(Cut {
                        members: members.clone(),
                        brokers,
                        from,
                        until,
                    });
                }
                TimelineAction::LatencySpike {
                    latency_ms,
                    duration_ms,
                } => self.spikes.push((
                    from,
                    from + Duration::from_millis(*duration_ms),
                    latency_ms * 1000,
                )),
                _ => {}
            }
        }
        for c in &self.cuts {
            for p in 0..partitions {
                for (from, until) in self.led_by(p, &c.brokers, c.from, c.until) {
                    for &m in &c.members {
                        self.member_gaps.entry((m, p)).or_default().push(Gap {
                            from,
                            until,
                            cause: GapCause::Network,
                        });
                    }
                }
            }
        }
        for gaps in self.member_gaps.values_mut() {
            *gaps = merge(std::mem::take(gaps));
        }
    }

    /// The parts of `[from, until)` in which partition `p`'s leader is one of `brokers`.
    fn led_by(
        &self,
        p: usize,
        brokers: &[u32],
        from: SimTime,
        until: SimTime,
    ) -> Vec<(SimTime, SimTime)> {
        let mut points = vec![from];
        points.extend(
            self.changes[p]
                .iter()
                .map(|&(t, _)| t)
                .filter(|&t| from < t && t < until),
        );
        points.push(until);
        points
            .windows(2)
            .filter(|w| {
                self.leader_at(p, w[0])
                    .is_some_and(|l| brokers.contains(&l))
            })
            .map(|w| (w[0], w[1]))
            .collect()
    }
}

/// Sorted, overlapping gaps joined (the earlier one's cause kept).
fn merge(mut gaps: Vec<Gap>) -> Vec<Gap> {
    gaps.sort_by_key(|g| (g.from, g.until));
    let mut out: Vec<Gap> = Vec::new();
    for g in gaps {
        match out.last_mut() {
            Some(last) if g.from <= last.until => last.until = last.until.max(g.until),
            _ => out.push(g),
        }
    }
    out
}

/// The controller, replayed over the scripted broker faults.
struct Controller {
    session: Duration,
    election: Duration,
    check_every: Duration,
    end: SimTime,
    lists: Vec<Vec<u32>>,
    initial: Vec<u32>,
    leader: Vec<Option<u32>>,
    changes: Vec<Vec<(SimTime, Option<u32>)>>,
    up: Vec<bool>,
    fenced: Vec<bool>,
    incarnation: Vec<u32>,
    /// Restarted before its old session expired: it registers when the controller fences it.
    pending_restart: Vec<bool>,
    down: Vec<Vec<Down>>,
    events: Vec<BrokerEvent>,
    steps: BTreeMap<(SimTime, u64), Step>,
    seq: u64,
}

impl Controller {
    fn new(scenario: &Scenario, lists: Vec<Vec<u32>>) -> Self {
        let c = &scenario.cluster;
        let brokers = c.brokers as usize;
        let initial: Vec<u32> = lists.iter().map(|l| l[0]).collect();
        Controller {
            session: Duration::from_millis(c.broker_session_timeout_ms),
            election: Duration::from_millis(c.leader_election_ms),
            check_every: Duration::from_millis(c.leader_imbalance_check_interval_ms.max(1)),
            end: SimTime::from_millis(scenario.duration_ms),
            leader: initial.iter().map(|&l| Some(l)).collect(),
            changes: vec![Vec::new(); lists.len()],
            initial,
            lists,
            up: vec![true; brokers],
            fenced: vec![false; brokers],
            incarnation: vec![0; brokers],
            pending_restart: vec![false; brokers],
            down: vec![Vec::new(); brokers],
            events: Vec::new(),
            steps: BTreeMap::new(),
            seq: 0,
        }
    }

    fn push(&mut self, at: SimTime, step: Step) {
        if at <= self.end {
            self.steps.insert((at, self.seq), step);
            self.seq += 1;
        }
    }

    fn event(&mut self, at: SimTime, broker: Option<u32>, event: &'static str) -> &mut BrokerEvent {
        self.events.push(BrokerEvent {
            at_ms: at.as_millis(),
            broker,
            event,
            connections: None,
            partitions: None,
            detail: String::new(),
        });
        self.events.last_mut().expect("just pushed")
    }

    fn run(&mut self, scenario: &Scenario) {
        for (i, e) in scenario.timeline.iter().enumerate() {
            if matches!(
                e.action,
                TimelineAction::BrokerCrash { .. } | TimelineAction::BrokerRestart { .. }
            ) {
                self.push(SimTime::from_millis(e.at_ms), Step::Scripted(i));
            }
        }
        let mut check = SimTime::ZERO + self.check_every;
        while check <= self.end {
            self.push(check, Step::PreferredCheck);
            check = check + self.check_every;
        }
        while let Some(((at, _), step)) = self.steps.pop_first() {
            match step {
                Step::Scripted(i) => match scenario.timeline[i].action {
                    TimelineAction::BrokerCrash {
                        broker,
                        connections,
                    } => self.crash(at, broker, connections),
                    TimelineAction::BrokerRestart { broker } => self.restart(at, broker),
                    _ => {}
                },
                Step::Fence {
                    broker,
                    incarnation,
                } => {
                    if self.incarnation[broker as usize] == incarnation && !self.up[broker as usize]
                    {
                        self.fence(at, broker);
                        if std::mem::take(&mut self.pending_restart[broker as usize]) {
                            // After the fence's election (pushed first, so first at a tie):
                            // a new incarnation's registration moves the old one's
                            // leaderships away (`registerBroker` →
                            // `handleBrokerUncleanShutdown`), so it leads again only what no
                            // other replica could take.
                            self.push(at + self.election, Step::Register { broker });
                        }
                    }
                }
                Step::Elect { broker, back } => self.elect(at, broker, back),
                Step::Register { broker } => self.rejoin(at, broker),
                Step::PreferredCheck => self.preferred_check(at),
            }
        }
    }

    fn crash(&mut self, at: SimTime, broker: BrokerRef, connections: Connections) {
        let offsets = self.lists.len() - 1;
        let b = match broker {
            BrokerRef::Id(b) => Some(b),
            BrokerRef::Coordinator => self.leader[offsets],
        };
        let Some(b) = b.filter(|&b| self.up[b as usize]) else {
            let e = self.event(at, b, "skipped");
            e.detail = match (broker, b) {
                (BrokerRef::Coordinator, None) => {
                    "broker_crash of \"coordinator\": the group has no coordinator then".into()
                }
                _ => "broker_crash: the broker is already down".into(),
            };
            return;
        };
        self.up[b as usize] = false;
        self.incarnation[b as usize] += 1;
        self.down[b as usize].push(Down {
            from: at,
            until: SimTime::MAX,
            connections,
        });
        let e = self.event(at, Some(b), "crash");
        e.connections = Some(connections.name());
        if broker == BrokerRef::Coordinator {
            e.detail = "the coordinator's broker".into();
        }
        let incarnation = self.incarnation[b as usize];
        self.push(
            at + self.session,
            Step::Fence {
                broker: b,
                incarnation,
            },
        );
    }

    fn restart(&mut self, at: SimTime, b: u32) {
        if self.up[b as usize] {
            let e = self.event(at, Some(b), "skipped");
            e.detail = "broker_restart: the broker is running".into();
            return;
        }
        self.event(at, Some(b), "restart");
        if !self.fenced[b as usize] {
            // Back before its old session expired: the controller refuses the new registration
            // (DuplicateBrokerRegistrationException) until it fences the old one, so the broker
            // serves again from then.
            self.pending_restart[b as usize] = true;
            return;
        }
        self.rejoin(at, b);
    }

    /// A restarted broker registered: it serves again and leads the offline partitions it
    /// holds a replica of (the controller's `handleBrokerUnfenced`).
    fn rejoin(&mut self, at: SimTime, b: u32) {
        if let Some(d) = self.down[b as usize].last_mut() {
            d.until = at;
        }
        self.up[b as usize] = true;
        self.fenced[b as usize] = false;
        // What it still leads (nothing else could take it) it leads anew: a new leader epoch,
        // and for the group's `__consumer_offsets` partition a coordinator that loads the group.
        let led: Vec<usize> = (0..self.lists.len())
            .filter(|&p| self.leader[p] == Some(b))
            .collect();
        for p in led {
            self.changes[p].push((at + self.election, Some(b)));
        }
        self.push(
            at + self.election,
            Step::Elect {
                broker: b,
                back: true,
            },
        );
    }

    fn fence(&mut self, at: SimTime, b: u32) {
        self.fenced[b as usize] = true;
        self.event(at, Some(b), "fenced");
        self.push(
            at + self.election,
            Step::Elect {
                broker: b,
                back: false,
            },
        );
    }

    fn serves(&self, b: u32) -> bool {
        self.up[b as usize] && !self.fenced[b as usize]
    }

    fn set_leader(&mut self, at: SimTime, p: usize, leader: Option<u32>) {
        if self.leader[p] != leader {
            self.leader[p] = leader;
            self.changes[p].push((at, leader));
        }
    }

    fn elect(&mut self, at: SimTime, b: u32, back: bool) {
        let mut moved = 0;
        for p in 0..self.lists.len() {
            let next = if back {
                // Offline partitions `b` holds a replica of: it leads them again.
                if self.leader[p].is_some() || !self.lists[p].contains(&b) || !self.serves(b) {
                    continue;
                }
                Some(b)
            } else {
                if self.leader[p] != Some(b) || self.serves(b) {
                    continue;
                }
                // The next in-sync replica in the replica list's order; none: offline.
                self.lists[p].iter().copied().find(|&r| self.serves(r))
            };
            self.set_leader(at, p, next);
            moved += 1;
        }
        if moved > 0 {
            let e = self.event(
                at,
                Some(b),
                if back {
                    "leaders_back"
                } else {
                    "leaders_moved"
                },
            );
            e.partitions = Some(moved);
        }
    }

    fn preferred_check(&mut self, at: SimTime) {
        let mut moved: BTreeMap<u32, usize> = BTreeMap::new();
        for p in 0..self.lists.len() {
            let preferred = self.lists[p][0];
            if self.leader[p] != Some(preferred) && self.serves(preferred) {
                self.set_leader(at + self.election, p, Some(preferred));
                *moved.entry(preferred).or_default() += 1;
            }
        }
        for (b, n) in moved {
            let e = self.event(at + self.election, Some(b), "leaders_back");
            e.partitions = Some(n);
            e.detail = "preferred leader election".into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_str, LoadOptions};
    use crate::sim::rng::Stream;

    fn plan_of(extra: &str, rf: u32) -> (Scenario, Replicas, Availability) {
        let toml = format!(
            "name = \"a\"\nduration_ms = 900000\n\n[cluster]\nbrokers = 3\n\n\
             [[topics]]\nname = \"t\"\npartitions = 6\nreplication_factor = {rf}\n\n\
             [[members]]\nname = \"c\"\n\n{extra}"
        );
        let scenario = load_str("a", &toml, &LoadOptions::default()).expect("valid");
        let replicas = Replicas::place(&scenario, &mut Stream::derive(1, "placement"));
        let plan = Availability::plan(&scenario, &replicas, 0);
        (scenario, replicas, plan)
    }

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    #[test]
    fn no_faults_is_quiet() {
        let (_, _, plan) = plan_of("", 1);
        assert!(plan.is_quiet());
        assert_eq!(plan.fetch_blocked_until(0, 0, ms(5)), None);
    }

    #[test]
    fn a_leader_crash_moves_leaderships_after_the_broker_session_timeout() {
        let crash = "[[timeline]]\nat_ms = 10000\naction = \"broker_crash\"\nbroker = 1\n";
        let (_, replicas, plan) = plan_of(crash, 2);
        let led: Vec<usize> = (0..6).filter(|&p| replicas.leader(p) == 1).collect();
        assert!(!led.is_empty());
        for p in 0..6 {
            let gap = plan.fetch_blocked_until(0, p, ms(12_000));
            if led.contains(&p) {
                // Fenced at 19 s, new leader at 19.1 s, found after retry.backoff.ms and a
                // round trip (at most 5 ms each way).
                assert_eq!(gap, Some(ms(19_100 + 100 + 10)), "partition {p}");
                assert_eq!(plan.leader_at(p, ms(19_100)), Some(replicas.of(p)[1]));
                assert_eq!(plan.leader_at(p, ms(19_099)), Some(1));
            } else {
                assert_eq!(gap, None, "partition {p} is led elsewhere");
            }
        }
        let kinds: Vec<&str> = plan.events().iter().map(|e| e.event).collect();
        assert_eq!(kinds, ["crash", "fenced", "leaders_moved"]);
    }

    #[test]
    fn hung_connections_wait_for_the_request_timeout() {
        let crash = "[[timeline]]\nat_ms = 10000\naction = \"broker_crash\"\nbroker = 1\nconnections = \"hang\"\n";
        let (_, replicas, plan) = plan_of(crash, 2);
        let p = (0..6)
            .find(|&p| replicas.leader(p) == 1)
            .expect("a partition on 1");
        assert_eq!(
            plan.fetch_blocked_until(0, p, ms(12_000)),
            Some(ms(40_000 + 110))
        );
    }

    #[test]
    fn without_another_replica_a_partition_is_offline_until_its_broker_returns() {
        let faults = "[[timeline]]\nat_ms = 10000\naction = \"broker_crash\"\nbroker = 1\n\n\
                      [[timeline]]\nat_ms = 60000\naction = \"broker_restart\"\nbroker = 1\n";
        let (_, replicas, plan) = plan_of(faults, 1);
        let p = (0..6)
            .find(|&p| replicas.leader(p) == 1)
            .expect("a partition on 1");
        assert_eq!(plan.leader_at(p, ms(30_000)), None);
        assert_eq!(plan.leader_at(p, ms(60_100)), Some(1));
        assert_eq!(plan.fetch_blocked_until(0, p, ms(30_000)), Some(ms(60_210)));
    }

    /// The coordinator moves from broker 0 to 1 when 0 is fenced (crashed at 10 s), and the
    /// preferred-leader check at 300 s hands it back.
    fn away_from_0_until_the_preferred_leader_check() -> [CoordinatorMove; 2] {
        [
            CoordinatorMove {
                at: ms(19_100),
                from: Some(0),
                to: Some(1),
            },
            CoordinatorMove {
                at: ms(300_100),
                from: Some(1),
                to: Some(0),
            },
        ]
    }

    #[test]
    fn the_coordinator_moves_with_its_offsets_partition_and_comes_back() {
        let faults =
            "[[timeline]]\nat_ms = 10000\naction = \"broker_crash\"\nbroker = \"coordinator\"\n\n\
                      [[timeline]]\nat_ms = 60000\naction = \"broker_restart\"\nbroker = 0\n";
        let (_, _, plan) = plan_of(faults, 1);
        let moves = plan.coordinator_moves();
        assert_eq!(moves, away_from_0_until_the_preferred_leader_check());
    }

    #[test]
    fn a_broker_back_before_it_is_fenced_registers_after_its_leaderships_moved() {
        // Back at 15 s, fenced at 19 s (its old registration), then registered: the
        // registration of a new incarnation moves the old one's leaderships away first
        // (`registerBroker` -> `handleBrokerUncleanShutdown`), so a partition with one replica
        // is offline until the broker is unfenced (19.2 s, a new leader epoch), and the group's
        // coordinator (`__consumer_offsets` has three replicas) moves to another broker and
        // stays there until the preferred-leader check at 300 s.
        let faults = "[[timeline]]\nat_ms = 10000\naction = \"broker_crash\"\nbroker = 0\n\n\
                      [[timeline]]\nat_ms = 15000\naction = \"broker_restart\"\nbroker = 0\n";
        let (_, replicas, plan) = plan_of(faults, 1);
        let p = (0..6)
            .find(|&p| replicas.leader(p) == 0)
            .expect("a partition on 0");
        assert_eq!(plan.leader_at(p, ms(17_000)), Some(0));
        assert_eq!(plan.leader_at(p, ms(19_150)), None);
        assert_eq!(plan.leader_at(p, ms(19_200)), Some(0));
        assert_eq!(
            plan.fetch_blocked_until(0, p, ms(12_000)),
            Some(ms(19_200 + 110))
        );
        assert_eq!(
            plan.coordinator_moves(),
            away_from_0_until_the_preferred_leader_check()
        );
    }

    #[test]
    fn a_network_partition_blocks_only_its_members_on_the_cut_brokers() {
        let cut = "[[members]]\nname = \"d\"\n\n[[timeline]]\nat_ms = 10000\naction = \"network_partition\"\nmembers = [\"c\"]\nbrokers = [2]\nduration_ms = 5000\n";
        let (_, replicas, plan) = plan_of(cut, 1);
        for p in 0..6 {
            let expected = (replicas.leader(p) == 2).then_some(ms(15_000));
            assert_eq!(plan.fetch_blocked_until(0, p, ms(11_000)), expected);
            assert_eq!(plan.fetch_blocked_until(1, p, ms(11_000)), None);
        }
        assert_eq!(plan.cut_until(0, 2, ms(14_999)), Some(ms(15_000)));
        assert_eq!(plan.cut_until(0, 2, ms(15_000)), None);
    }
}
