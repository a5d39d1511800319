//! The classic group coordinator (broker side), as Kafka 4.3.1's `GroupMetadataManager` runs a
//! classic group (../shared/reference/COORDINATOR.md 5.1-5.2):
//!
//! ```text
//!  Empty --join--> PreparingRebalance --all joined / timer--> CompletingRebalance
//!    ^                  ^        ^                                   |
//!    |                  |        +-------- join, leave, expiry ------+-- leader's SyncGroup --> Stable
//!    +-- last member leaves                                                                      |
//!                       +------------------ join, leave, expiry, metadata change ----------------+
//! ```
//!
//! Members live in a Java `HashMap` on the broker: its iteration order is the JoinGroup
//! response's member order and picks a new leader, so it is emulated (`crate::java`).
//!
//! A pure state machine, as Kafka's own `GroupMetadataManager` is (its handlers return a
//! `CoordinatorResult` of responses and records, and its timers are keyed by name):
//! - [`Coordinator::handle`] takes one request at `now` and [`Coordinator::on_timer`] one timer
//!   firing; both write [`CoordinatorEffect`]s into an [`Out`]: responses to send, timers to set
//!   or cancel by key ([`CoordTimer`]: `join`, `sync`, `heartbeat:<member id>`), facts. The
//!   caller (the world, or a test, or a replay of Kafka's traces) delivers the responses and
//!   fires each timer when its deadline comes; setting a key replaces its pending timer.
//! - [`Coordinator::state`], [`generation`](Coordinator::generation),
//!   [`leader`](Coordinator::leader), [`members`](Coordinator::members) and
//!   [`timers`](Coordinator::timers) read its state and its timers by name and deadline.
//!
//! It imports nothing of the world, the metrics or the report.

use super::messages::{
    ClientRef, ErrorCode, JoinReason, JoinedMember, LeaveReason, Request, Response, Subscription,
    Trigger,
};
use crate::cluster::OffsetsStore;
use crate::facts::Fact;
use crate::java::{Capacity, JavaHashMap};
use crate::log;
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::{Out, SimTime};
use std::collections::BTreeMap;

/// `CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS`: a newly added member's first session timer.
const NEW_MEMBER_JOIN_TIMEOUT_MS: u64 = 300_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

impl GroupState {
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
        }
    }
}

/// The coordinator's timers, by key (Kafka's timer keys): setting one replaces the pending
/// timer of the same key, so a stale timer never fires.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CoordTimer {
    /// `join`: the join phase's timer (initial delay or rebalance timeout).
    Join,
    /// `sync`: members that have not sent SyncGroup by now are removed.
    Sync,
    /// `heartbeat:<member id>`: a member's (or pending member's) session timer.
    Heartbeat { member_id: String },
}

impl CoordTimer {
    /// The key as Kafka's coordinator names it (`join`, `sync`, `heartbeat:<member id>`).
    pub fn name(&self) -> String {
        match self {
            CoordTimer::Join => "join".into(),
            CoordTimer::Sync => "sync".into(),
            CoordTimer::Heartbeat { member_id } => format!("heartbeat:{member_id}"),
        }
    }

    fn heartbeat(member_id: &str) -> Self {
        CoordTimer::Heartbeat {
            member_id: member_id.to_string(),
        }
    }
}

/// What the coordinator wants done; the world carries it out.
#[derive(Clone, Debug)]
pub enum CoordinatorEffect {
    /// Answer a client (over the network).
    /// Boxed: effects are moved around, and most are small.
    Respond {
        to: ClientRef,
        response: Box<Response>,
    },
    /// Arm the timer `timer` at `at`, replacing a pending one of the same key.
    SetTimer { timer: CoordTimer, at: SimTime },
    /// Cancel the pending timer of that key, if any.
    CancelTimer(CoordTimer),
    /// Write an OffsetCommit record to `__consumer_offsets` (the cluster's offsets store).
    CommitOffset { partition: usize, offset: u64 },
    /// Something happened that observers want to know.
    Fact(Fact),
}

/// The settings the coordinator needs: the broker's and the group's.
#[derive(Clone, Copy, Debug)]
pub struct CoordinatorConfig {
    /// `group.initial.rebalance.delay.ms`.
    pub initial_rebalance_delay_ms: u64,
}

/// One handler call: the time, and where effects go.
struct Cx<'o> {
    now: SimTime,
    out: &'o mut Out<CoordinatorEffect>,
}

impl Cx<'_> {
    fn respond(&mut self, to: ClientRef, response: Response) {
        self.out.push(CoordinatorEffect::Respond {
            to,
            response: Box::new(response),
        });
    }

    fn set_timer(&mut self, timer: CoordTimer, after_ms: u64) -> SimTime {
        let at = self.now + Duration::from_millis(after_ms);
        self.set_timer_at(timer, at);
        at
    }

    fn set_timer_at(&mut self, timer: CoordTimer, at: SimTime) {
        self.out.push(CoordinatorEffect::SetTimer { timer, at });
    }

    fn cancel_timer(&mut self, timer: CoordTimer) {
        self.out.push(CoordinatorEffect::CancelTimer(timer));
    }

    fn fact(&mut self, fact: Fact) {
        self.out.push(CoordinatorEffect::Fact(fact));
    }

    fn logging(&self) -> bool {
        self.out.logging()
    }

    fn log_line(&mut self, line: String) {
        self.out.log_line(line);
    }
}

struct GroupMember {
    client: ClientRef,
    group_instance_id: Option<String>,
    protocols: Vec<String>,
    subscription: Subscription,
    rebalance_timeout_ms: u64,
    session_timeout_ms: u64,
    /// A JoinGroup is parked for the running join phase.
    joined: bool,
    /// A SyncGroup is parked waiting for the leader's.
    sync_parked: bool,
    /// Sent SyncGroup in this generation.
    synced: bool,
    /// Added in the running join phase (its session timer is the new-member timeout).
    is_new: bool,
    assignment: Vec<usize>,
    /// A session check is armed (`heartbeat:<id>`), and when the session really expires: a
    /// heartbeat only moves the deadline, and a check that fires early re-arms itself at it
    /// (no timer reset per heartbeat).
    session_armed: bool,
    session_deadline: SimTime,
}

/// A member as [`Coordinator::members`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberState {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub protocols: Vec<String>,
    pub awaiting_join: bool,
    pub awaiting_sync: bool,
    pub is_new: bool,
    pub assignment: Vec<usize>,
}

pub struct Coordinator {
    state: GroupState,
    generation: i32,
    members: JavaHashMap<String, GroupMember>,
    /// Dynamic members told MEMBER_ID_REQUIRED that have not joined yet, with their session
    /// deadline.
    pending: BTreeMap<String, (ClientRef, SimTime)>,
    static_members: BTreeMap<String, String>,
    leader: Option<String>,
    protocol: Option<String>,
    join_deadline: Option<SimTime>,
    /// The running join phase is the initial one of an Empty group.
    initial_join: bool,
    initial_delay_ms: u64,
    initial_remaining_ms: u64,
    member_added_since_timer: bool,
    sync_deadline: Option<SimTime>,
    /// Member-id UUIDs (the coordinator's `UUID.randomUUID()`).
    ids: Stream,
}

impl Coordinator {
    pub fn new(config: CoordinatorConfig, ids: Stream) -> Self {
        Coordinator {
            state: GroupState::Empty,
            generation: 0,
            members: JavaHashMap::new(Capacity::Default),
            pending: BTreeMap::new(),
            static_members: BTreeMap::new(),
            leader: None,
            protocol: None,
            join_deadline: None,
            initial_join: false,
            initial_delay_ms: config.initial_rebalance_delay_ms,
            initial_remaining_ms: 0,
            member_added_since_timer: false,
            sync_deadline: None,
            ids,
        }
    }

    // ---- Reading the state (tests, the settle check, conformance replays) ----

    pub fn state(&self) -> GroupState {
        self.state
    }

    pub fn is_stable(&self) -> bool {
        self.state == GroupState::Stable
    }

    pub fn state_name(&self) -> &'static str {
        self.state.name()
    }

    pub fn generation(&self) -> i32 {
        self.generation
    }

    pub fn leader(&self) -> Option<&str> {
        self.leader.as_deref()
    }

    /// The selected protocol (assignor) of the current generation.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// The members in the broker's member-map order (Java `HashMap` order).
    pub fn members(&self) -> Vec<MemberState> {
        self.members
            .iter()
            .map(|(id, m)| MemberState {
                member_id: id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                protocols: m.protocols.clone(),
                awaiting_join: m.joined,
                awaiting_sync: m.sync_parked,
                is_new: m.is_new,
                assignment: m.assignment.clone(),
            })
            .collect()
    }

    /// Dynamic members told MEMBER_ID_REQUIRED that have not joined yet, by id.
    pub fn pending_members(&self) -> Vec<String> {
        self.pending.keys().cloned().collect()
    }

    /// Every armed timer by Kafka's name, with the deadline it stands for (a session's real
    /// expiry, even while its check is armed earlier), ordered by deadline, then name.
    pub fn timers(&self) -> Vec<(String, SimTime)> {
        let mut timers: Vec<(String, SimTime)> = Vec::new();
        timers.extend(self.join_deadline.map(|at| (CoordTimer::Join.name(), at)));
        timers.extend(self.sync_deadline.map(|at| (CoordTimer::Sync.name(), at)));
        for (id, m) in self.members.iter() {
            if m.session_armed {
                timers.push((CoordTimer::heartbeat(id).name(), m.session_deadline));
            }
        }
        for (id, &(_, at)) in &self.pending {
            timers.push((CoordTimer::heartbeat(id).name(), at));
        }
        timers.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        timers
    }

    // ---- Inputs ----

    /// A request from `from` arrives at `now`; `offsets` is `__consumer_offsets` as the cluster
    /// holds it (read for OffsetFetch; commits are written back as effects).
    pub fn handle(
        &mut self,
        now: SimTime,
        from: ClientRef,
        request: Request,
        offsets: &OffsetsStore,
        out: &mut Out<CoordinatorEffect>,
    ) {
        self.handle_request(&mut Cx { now, out }, from, request, offsets)
    }

    /// The timer `timer` fires at `now` (the world has forgotten it: it is no longer armed).
    pub fn on_timer(&mut self, now: SimTime, timer: CoordTimer, out: &mut Out<CoordinatorEffect>) {
        self.fire(&mut Cx { now, out }, timer)
    }

    fn handle_request(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        request: Request,
        offsets: &OffsetsStore,
    ) {
        match request {
            Request::JoinGroup {
                member_id,
                group_instance_id,
                client_id,
                protocols,
                subscription,
                rebalance_timeout_ms,
                session_timeout_ms,
                reason,
            } => {
                let join = Join {
                    reason,
                    client: from,
                    group_instance_id,
                    client_id,
                    protocols,
                    subscription,
                    rebalance_timeout_ms,
                    session_timeout_ms,
                };
                self.join_group(cx, member_id, join)
            }
            Request::SyncGroup {
                member_id,
                generation,
                assignments,
            } => self.sync_group(cx, from, member_id, generation, assignments),
            Request::Heartbeat {
                member_id,
                generation,
            } => {
                let error = self.heartbeat(cx, &member_id, generation);
                cx.respond(from, Response::Heartbeat { error });
            }
            Request::LeaveGroup { member_id, reason } => {
                if self.members.contains_key(&member_id) {
                    log!(cx, "coordinator LeaveGroup {member_id} ({reason:?})");
                    let trigger = match reason {
                        LeaveReason::Close => Trigger::MemberLeft,
                        LeaveReason::PollTimeout => Trigger::PollTimeout,
                    };
                    self.remove_member(cx, &member_id, trigger);
                }
            }
            Request::OffsetCommit {
                member_id,
                generation,
                offsets,
            } => {
                let error = self.offset_commit(cx, from, &member_id, generation, &offsets);
                cx.respond(from, Response::OffsetCommit { error });
            }
            Request::OffsetFetch { partitions } => {
                let committed = partitions
                    .iter()
                    .map(|&p| (p, offsets.committed(p)))
                    .collect();
                cx.respond(from, Response::OffsetFetch { committed });
            }
        }
    }

    fn fire(&mut self, cx: &mut Cx, timer: CoordTimer) {
        match timer {
            CoordTimer::Join => {
                self.join_deadline = None;
                self.on_join_timer(cx)
            }
            CoordTimer::Sync => {
                self.sync_deadline = None;
                self.on_sync_timer(cx)
            }
            CoordTimer::Heartbeat { member_id } => self.on_session_timer(cx, &member_id),
        }
    }

    // ---- JoinGroup ----

    fn join_group(&mut self, cx: &mut Cx, member_id: String, join: Join) {
        if !self.supports_protocols(&join.protocols) {
            log!(
                cx,
                "coordinator JoinGroup from {}: INCONSISTENT_GROUP_PROTOCOL",
                join.client_id
            );
            cx.respond(
                join.client,
                join_error(ErrorCode::InconsistentGroupProtocol, &member_id),
            );
            return;
        }
        if member_id.is_empty() {
            match join.group_instance_id.clone() {
                Some(instance) => {
                    let uuid = crate::sim::rng::random_uuid_string(&mut self.ids);
                    let new_id = format!("{instance}-{uuid}");
                    match self.static_members.get(&instance).cloned() {
                        Some(old_id) => self.replace_static_member(cx, &old_id, new_id, join),
                        // Static members never get MEMBER_ID_REQUIRED.
                        None => self.add_member(cx, new_id, join),
                    }
                }
                None => {
                    let uuid = crate::sim::rng::random_uuid_string(&mut self.ids);
                    let new_id = format!("{}-{uuid}", join.client_id);
                    let deadline =
                        cx.set_timer(CoordTimer::heartbeat(&new_id), join.session_timeout_ms);
                    self.pending.insert(new_id.clone(), (join.client, deadline));
                    log!(
                        cx,
                        "coordinator JoinGroup: MEMBER_ID_REQUIRED, pending {new_id}"
                    );
                    cx.respond(
                        join.client,
                        join_error(ErrorCode::MemberIdRequired, &new_id),
                    );
                }
            }
            return;
        }
        if self.pending.remove(&member_id).is_some() {
            cx.cancel_timer(CoordTimer::heartbeat(&member_id));
            self.add_member(cx, member_id, join);
            return;
        }
        if !self.members.contains_key(&member_id) || self.state == GroupState::Empty {
            cx.respond(
                join.client,
                join_error(ErrorCode::UnknownMemberId, &member_id),
            );
            return;
        }
        self.rejoin(cx, member_id, join);
    }

    /// A member with a group-protocol list in common with every current member may join
    /// (Kafka: INCONSISTENT_GROUP_PROTOCOL otherwise).
    fn supports_protocols(&self, protocols: &[String]) -> bool {
        if self.members.is_empty() {
            return !protocols.is_empty();
        }
        protocols
            .iter()
            .any(|p| self.members.values().all(|m| m.protocols.contains(p)))
    }

    fn add_member(&mut self, cx: &mut Cx, member_id: String, join: Join) {
        if let Some(instance) = &join.group_instance_id {
            self.static_members
                .insert(instance.clone(), member_id.clone());
        }
        let client = join.client;
        self.members.insert(
            member_id.clone(),
            GroupMember {
                client,
                group_instance_id: join.group_instance_id,
                protocols: join.protocols,
                subscription: join.subscription,
                rebalance_timeout_ms: join.rebalance_timeout_ms,
                session_timeout_ms: join.session_timeout_ms,
                joined: true,
                sync_parked: false,
                synced: false,
                is_new: true,
                assignment: Vec::new(),
                session_armed: false,
                session_deadline: cx.now,
            },
        );
        self.restart_session(cx, &member_id, NEW_MEMBER_JOIN_TIMEOUT_MS);
        if self.leader.is_none() {
            self.leader = Some(member_id.clone());
        }
        cx.fact(Fact::MemberAdded {
            member: client.member,
            member_id: member_id.clone(),
        });
        log!(
            cx,
            "coordinator JoinGroup: added {member_id} ({})",
            self.state.name()
        );
        match self.state {
            GroupState::Empty => {
                self.prepare_rebalance(cx, Trigger::MemberJoined, Some(client.member))
            }
            GroupState::PreparingRebalance => {
                self.member_added_since_timer = true;
                self.maybe_complete_join(cx)
            }
            GroupState::CompletingRebalance | GroupState::Stable => {
                self.prepare_rebalance(cx, Trigger::MemberJoined, Some(client.member))
            }
        }
    }

    fn rejoin(&mut self, cx: &mut Cx, member_id: String, join: Join) {
        let is_leader = self.leader.as_deref() == Some(member_id.as_str());
        let member = self.members.get_mut(&member_id).expect("known member");
        let unchanged =
            member.protocols == join.protocols && member.subscription == join.subscription;
        member.protocols = join.protocols;
        member.subscription = join.subscription;
        member.rebalance_timeout_ms = join.rebalance_timeout_ms;
        member.client = join.client;
        match self.state {
            GroupState::PreparingRebalance => {
                member.joined = true;
                log!(cx, "coordinator JoinGroup: {member_id} rejoined");
                self.maybe_complete_join(cx);
            }
            GroupState::CompletingRebalance | GroupState::Stable if unchanged && !is_leader => {
                // Byte-identical metadata: the current generation back, no rebalance.
                let response = self.join_response(&member_id, false);
                cx.respond(join.client, response);
            }
            GroupState::CompletingRebalance | GroupState::Stable => {
                member.joined = true;
                let trigger = match join.reason {
                    JoinReason::Metadata => Trigger::MetadataChanged,
                    JoinReason::Subscription => Trigger::SubscriptionChanged,
                    JoinReason::FollowUp => Trigger::FollowUp,
                    JoinReason::New | JoinReason::Rebalance => Trigger::MemberJoined,
                };
                let who = member.client.member;
                self.prepare_rebalance(cx, trigger, Some(who));
            }
            GroupState::Empty => unreachable!("an Empty group has no members"),
        }
    }

    /// KIP-345: a static member's new process takes over its instance's member entry.
    fn replace_static_member(&mut self, cx: &mut Cx, old_id: &str, new_id: String, join: Join) {
        let Some(mut member) = self.members.remove(old_id) else {
            self.add_member(cx, new_id, join);
            return;
        };
        if std::mem::take(&mut member.session_armed) {
            cx.cancel_timer(CoordTimer::heartbeat(old_id));
        }
        let protocol_unchanged = self
            .protocol
            .as_ref()
            .is_none_or(|p| join.protocols.contains(p));
        member.client = join.client;
        member.protocols = join.protocols;
        member.subscription = join.subscription;
        member.rebalance_timeout_ms = join.rebalance_timeout_ms;
        member.session_timeout_ms = join.session_timeout_ms;
        let instance = member.group_instance_id.clone().expect("static member");
        self.static_members.insert(instance, new_id.clone());
        if self.leader.as_deref() == Some(old_id) {
            self.leader = Some(new_id.clone());
        }
        let client = join.client;
        cx.fact(Fact::MemberReplaced {
            member: client.member,
            member_id: new_id.clone(),
        });
        log!(
            cx,
            "coordinator static member {old_id} replaced by {new_id}"
        );
        let session_ms = member.session_timeout_ms;
        self.members.insert(new_id.clone(), member);
        self.restart_session(cx, &new_id, session_ms);
        match self.state {
            GroupState::Stable if protocol_unchanged => {
                // No rebalance: the current generation, and the stored assignment at SyncGroup.
                let m = self.members.get_mut(&new_id).expect("inserted");
                m.synced = false;
                // KIP-814: only a replaced leader is told to skip the assignment.
                let skip_assignment = self.leader.as_deref() == Some(new_id.as_str());
                let response = self.join_response(&new_id, skip_assignment);
                cx.respond(client, response);
            }
            GroupState::PreparingRebalance => {
                self.members.get_mut(&new_id).expect("inserted").joined = true;
                self.maybe_complete_join(cx);
            }
            _ => {
                self.members.get_mut(&new_id).expect("inserted").joined = true;
                self.prepare_rebalance(cx, Trigger::MemberRestarted, Some(client.member));
            }
        }
    }

    fn prepare_rebalance(&mut self, cx: &mut Cx, trigger: Trigger, member: Option<usize>) {
        if self.state == GroupState::PreparingRebalance {
            return;
        }
        if self.state == GroupState::CompletingRebalance {
            // Parked SyncGroups are answered REBALANCE_IN_PROGRESS.
            let parked: Vec<ClientRef> = self
                .members
                .iter()
                .filter(|(_, m)| m.sync_parked)
                .map(|(_, m)| m.client)
                .collect();
            for c in parked {
                cx.respond(
                    c,
                    Response::SyncGroup {
                        error: ErrorCode::RebalanceInProgress,
                        assignment: vec![],
                    },
                );
            }
        }
        self.cancel_sync_timer(cx);
        self.initial_join = self.state == GroupState::Empty;
        for m in self.members.values_mut() {
            m.sync_parked = false;
            if Some(m.client.member) != member {
                m.joined = false;
            }
        }
        let previous = self.state;
        self.state = GroupState::PreparingRebalance;
        let timeout = self.rebalance_timeout_ms();
        let delay_ms = if self.initial_join {
            // GMM: the first added member arms `delay`; `remaining` is what the rebalance
            // timeout leaves after it.
            self.initial_remaining_ms = timeout.saturating_sub(self.initial_delay_ms);
            self.member_added_since_timer = false;
            self.initial_delay_ms
        } else {
            timeout
        };
        self.arm_join_timer(cx, delay_ms);
        let generation = self.generation + 1;
        cx.fact(Fact::RebalanceStarted {
            generation,
            trigger,
            member,
        });
        log!(
            cx,
            "coordinator {} -> PreparingRebalance (trigger {}, join timer {} ms)",
            previous.name(),
            trigger.name(),
            delay_ms
        );
    }

    /// (Re)arms `join`, replacing the pending join timer.
    fn arm_join_timer(&mut self, cx: &mut Cx, delay_ms: u64) {
        self.join_deadline = Some(cx.set_timer(CoordTimer::Join, delay_ms));
    }

    fn cancel_sync_timer(&mut self, cx: &mut Cx) {
        if self.sync_deadline.take().is_some() {
            cx.cancel_timer(CoordTimer::Sync);
        }
    }

    /// The group's rebalance timeout: the largest of its members'.
    fn rebalance_timeout_ms(&self) -> u64 {
        self.members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    fn maybe_complete_join(&mut self, cx: &mut Cx) {
        // An initial rebalance never completes early (GMM maybeCompleteJoinPhase).
        if self.state != GroupState::PreparingRebalance || self.initial_join {
            return;
        }
        if self.pending.is_empty() && self.members.values().all(|m| m.joined) {
            self.complete_join(cx);
        }
    }

    fn on_join_timer(&mut self, cx: &mut Cx) {
        if self.state != GroupState::PreparingRebalance {
            return;
        }
        if self.initial_join && self.member_added_since_timer && self.initial_remaining_ms != 0 {
            let delay = self.initial_delay_ms.min(self.initial_remaining_ms);
            self.initial_remaining_ms = self
                .initial_remaining_ms
                .saturating_sub(self.initial_delay_ms);
            self.member_added_since_timer = false;
            log!(cx, "coordinator initial delay extended by {delay} ms");
            self.arm_join_timer(cx, delay);
            return;
        }
        if !self.initial_join {
            // The rebalance timeout passed: dynamic members that did not rejoin are removed.
            let late: Vec<String> = self
                .members
                .iter()
                .filter(|(_, m)| !m.joined && m.group_instance_id.is_none())
                .map(|(id, _)| id.clone())
                .collect();
            for id in late {
                log!(
                    cx,
                    "coordinator removing {id}: did not rejoin within the rebalance timeout"
                );
                self.drop_member(cx, &id);
            }
        }
        self.complete_join(cx);
    }

    fn complete_join(&mut self, cx: &mut Cx) {
        if self.join_deadline.take().is_some() {
            cx.cancel_timer(CoordTimer::Join);
        }
        self.initial_join = false;
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.protocol = None;
            log!(
                cx,
                "coordinator join phase complete: no members, Empty (generation {})",
                self.generation
            );
            cx.fact(Fact::GroupEmpty);
            return;
        }
        self.protocol = self.select_protocol();
        // A leader that did not rejoin hands over to the first member, in map order, that did.
        let leader_joined = self
            .leader
            .as_ref()
            .and_then(|l| self.members.get(l))
            .is_some_and(|m| m.joined);
        if !leader_joined {
            self.leader = self
                .members
                .iter()
                .find(|(_, m)| m.joined)
                .map(|(id, _)| id.clone());
        }
        self.state = GroupState::CompletingRebalance;
        let joined: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| m.joined)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &joined {
            let response = self.join_response(id, false);
            let session_ms = {
                let m = self.members.get_mut(id).expect("member");
                m.joined = false;
                m.synced = false;
                m.is_new = false;
                m.session_timeout_ms
            };
            let client = self.members.get(id).expect("member").client;
            cx.respond(client, response);
            self.restart_session(cx, id, session_ms);
        }
        self.sync_deadline = Some(cx.set_timer(CoordTimer::Sync, self.rebalance_timeout_ms()));
        let leader = self.leader.clone().unwrap_or_default();
        cx.fact(Fact::JoinCompleted {
            generation: self.generation,
        });
        log!(
            cx,
            "coordinator join complete: generation {} protocol {} leader {} members {}",
            self.generation,
            self.protocol.as_deref().unwrap_or("-"),
            leader,
            joined.len()
        );
    }

    fn join_response(&self, member_id: &str, skip_assignment: bool) -> Response {
        let leader = self.leader.clone().unwrap_or_default();
        let members = if leader == member_id {
            self.members
                .iter()
                .map(|(id, m)| JoinedMember {
                    member_id: id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    subscription: m.subscription.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };
        Response::JoinGroup {
            error: ErrorCode::None,
            member_id: member_id.to_string(),
            generation: self.generation,
            protocol: self.protocol.clone(),
            leader,
            members,
            skip_assignment,
        }
    }

    /// Candidates are the assignors every member lists; each member votes for its first
    /// candidate; most votes win, ties to the first in HashMap order (`ClassicGroup.selectProtocol`).
    fn select_protocol(&self) -> Option<String> {
        let all: Vec<&GroupMember> = self.members.iter().map(|(_, m)| m).collect();
        let first = all.first()?;
        let candidates: Vec<&String> = first
            .protocols
            .iter()
            .filter(|p| all.iter().all(|m| m.protocols.contains(p)))
            .collect();
        let mut votes: JavaHashMap<String, u32> = JavaHashMap::new(Capacity::Default);
        for m in &all {
            if let Some(vote) = m.protocols.iter().find(|p| candidates.contains(p)) {
                let n = votes.get(vote).copied().unwrap_or(0);
                votes.insert(vote.clone(), n + 1);
            }
        }
        let mut best: Option<(&String, u32)> = None;
        for (name, &n) in votes.iter() {
            if best.is_none_or(|(_, b)| n > b) {
                best = Some((name, n));
            }
        }
        best.map(|(n, _)| n.clone())
    }

    // ---- SyncGroup ----

    fn sync_group(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        member_id: String,
        generation: i32,
        assignments: Option<Vec<(String, Vec<usize>)>>,
    ) {
        let error = if !self.members.contains_key(&member_id) || self.state == GroupState::Empty {
            Some(ErrorCode::UnknownMemberId)
        } else if generation != self.generation {
            Some(ErrorCode::IllegalGeneration)
        } else if self.state == GroupState::PreparingRebalance {
            Some(ErrorCode::RebalanceInProgress)
        } else {
            None
        };
        if let Some(error) = error {
            cx.respond(
                from,
                Response::SyncGroup {
                    error,
                    assignment: vec![],
                },
            );
            return;
        }
        let is_leader = self.leader.as_deref() == Some(member_id.as_str());
        {
            let m = self.members.get_mut(&member_id).expect("member");
            m.synced = true;
            m.client = from;
        }
        match self.state {
            GroupState::CompletingRebalance => {
                self.members
                    .get_mut(&member_id)
                    .expect("member")
                    .sync_parked = true;
                if is_leader {
                    // The leader's assignment is written; every parked member gets its share.
                    let mut given: BTreeMap<String, Vec<usize>> =
                        assignments.unwrap_or_default().into_iter().collect();
                    let ids: Vec<String> = self.members.keys().cloned().collect();
                    for id in &ids {
                        let m = self.members.get_mut(id).expect("member");
                        m.assignment = given.remove(id).unwrap_or_default();
                    }
                    self.state = GroupState::Stable;
                    cx.fact(Fact::GroupStable {
                        generation: self.generation,
                    });
                    log!(
                        cx,
                        "coordinator leader's SyncGroup: Stable (generation {})",
                        self.generation
                    );
                    for id in &ids {
                        let m = self.members.get_mut(id).expect("member");
                        if m.sync_parked {
                            m.sync_parked = false;
                            let response = Response::SyncGroup {
                                error: ErrorCode::None,
                                assignment: m.assignment.clone(),
                            };
                            let client = m.client;
                            cx.respond(client, response);
                        }
                    }
                }
            }
            GroupState::Stable => {
                let m = self.members.get_mut(&member_id).expect("member");
                let response = Response::SyncGroup {
                    error: ErrorCode::None,
                    assignment: m.assignment.clone(),
                };
                cx.respond(from, response);
            }
            _ => {}
        }
        self.reset_session(cx, &member_id);
        if self.members.values().all(|m| m.synced) {
            self.cancel_sync_timer(cx);
        }
    }

    fn on_sync_timer(&mut self, cx: &mut Cx) {
        if !matches!(
            self.state,
            GroupState::CompletingRebalance | GroupState::Stable
        ) {
            return;
        }
        let late: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| !m.synced)
            .map(|(id, _)| id.clone())
            .collect();
        for id in late {
            log!(
                cx,
                "coordinator removing {id}: no SyncGroup within the rebalance timeout"
            );
            self.remove_member(cx, &id, Trigger::MemberExpired);
        }
    }

    // ---- Heartbeat, sessions, leaving ----

    fn heartbeat(&mut self, cx: &mut Cx, member_id: &str, generation: i32) -> ErrorCode {
        if self.state == GroupState::Empty || !self.members.contains_key(member_id) {
            return ErrorCode::UnknownMemberId;
        }
        if generation != self.generation {
            return ErrorCode::IllegalGeneration;
        }
        self.reset_session(cx, member_id);
        if self.state == GroupState::PreparingRebalance {
            ErrorCode::RebalanceInProgress
        } else {
            ErrorCode::None
        }
    }

    /// A fresh session timer of `ms` for the member (replacing the pending one).
    fn restart_session(&mut self, cx: &mut Cx, member_id: &str, ms: u64) {
        let deadline = cx.set_timer(CoordTimer::heartbeat(member_id), ms);
        let m = self.members.get_mut(member_id).expect("member");
        m.session_deadline = deadline;
        m.session_armed = true;
    }

    /// A heartbeat or SyncGroup keeps the member alive for another session timeout.
    fn reset_session(&mut self, cx: &mut Cx, member_id: &str) {
        let now = cx.now;
        let Some(m) = self.members.get_mut(member_id) else {
            return;
        };
        let ms = m.session_timeout_ms;
        if m.session_armed {
            m.session_deadline = now + Duration::from_millis(ms);
        } else {
            self.restart_session(cx, member_id, ms);
        }
    }

    fn on_session_timer(&mut self, cx: &mut Cx, member_id: &str) {
        if self.pending.remove(member_id).is_some() {
            log!(cx, "coordinator pending member {member_id} expired");
            self.maybe_complete_join(cx);
            return;
        }
        let Some(m) = self.members.get_mut(member_id) else {
            return;
        };
        if !m.session_armed {
            return;
        }
        m.session_armed = false;
        if cx.now < m.session_deadline {
            // A heartbeat moved the deadline since this check was armed.
            m.session_armed = true;
            let at = m.session_deadline;
            cx.set_timer_at(CoordTimer::heartbeat(member_id), at);
            return;
        }
        // A member with a JoinGroup or SyncGroup parked is alive: nothing, and no re-arm.
        if !m.is_new && (m.joined || m.sync_parked) {
            return;
        }
        log!(cx, "coordinator session of {member_id} expired");
        self.remove_member(cx, member_id, Trigger::MemberExpired);
    }

    /// Removes a member without starting a rebalance (the caller is in one).
    fn drop_member(&mut self, cx: &mut Cx, member_id: &str) {
        let key = member_id.to_string();
        let Some(m) = self.members.remove(&key) else {
            return;
        };
        if m.session_armed {
            cx.cancel_timer(CoordTimer::heartbeat(member_id));
        }
        if let Some(instance) = &m.group_instance_id {
            if self.static_members.get(instance) == Some(&key) {
                self.static_members.remove(instance);
            }
        }
        if self.leader.as_deref() == Some(member_id) {
            self.leader = self.members.keys().next().cloned();
        }
        cx.fact(Fact::MemberRemoved {
            member: m.client.member,
            member_id: key,
        });
    }

    fn remove_member(&mut self, cx: &mut Cx, member_id: &str, trigger: Trigger) {
        let Some(client) = self.members.get(member_id).map(|m| m.client.member) else {
            return;
        };
        self.drop_member(cx, member_id);
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                if self.members.is_empty() {
                    self.cancel_sync_timer(cx);
                    self.state = GroupState::Empty;
                    self.generation += 1;
                    cx.fact(Fact::GroupEmpty);
                    log!(cx, "coordinator last member gone: Empty");
                } else {
                    self.prepare_rebalance(cx, trigger, Some(client));
                }
            }
            GroupState::PreparingRebalance => {
                if self.members.is_empty() {
                    self.complete_join(cx);
                } else {
                    self.maybe_complete_join(cx);
                }
            }
            GroupState::Empty => {}
        }
    }

    // ---- Offsets ----

    fn offset_commit(
        &mut self,
        cx: &mut Cx,
        from: ClientRef,
        member_id: &str,
        generation: i32,
        offsets: &[(usize, u64)],
    ) -> ErrorCode {
        if !self.members.contains_key(member_id) {
            return ErrorCode::UnknownMemberId;
        }
        if generation != self.generation {
            return ErrorCode::IllegalGeneration;
        }
        if self.state == GroupState::CompletingRebalance {
            return ErrorCode::RebalanceInProgress;
        }
        for &(partition, offset) in offsets {
            cx.out
                .push(CoordinatorEffect::CommitOffset { partition, offset });
            cx.fact(Fact::OffsetCommitted {
                member: from.member,
                partition,
                offset,
            });
        }
        ErrorCode::None
    }
}

/// A JoinGroup's contents, once it is known which member sent it.
struct Join {
    reason: JoinReason,
    client: ClientRef,
    group_instance_id: Option<String>,
    client_id: String,
    protocols: Vec<String>,
    subscription: Subscription,
    rebalance_timeout_ms: u64,
    session_timeout_ms: u64,
}

fn join_error(error: ErrorCode, member_id: &str) -> Response {
    Response::JoinGroup {
        error,
        member_id: member_id.to_string(),
        generation: -1,
        protocol: None,
        leader: String::new(),
        members: Vec::new(),
        skip_assignment: false,
    }
}

#[cfg(test)]
mod tests;
