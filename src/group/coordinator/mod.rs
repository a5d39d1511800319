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
//!   firing; both write [`CoordinatorEffect`]s into an [`Out`]: responses to send, records to
//!   write, timers to set or cancel by key ([`CoordTimer`]: `join`, `sync`,
//!   `heartbeat:<member id>`), facts. The caller (the world, a test, or `cgsim conform`'s replay
//!   of Kafka's traces) delivers the responses and fires each timer when its deadline comes;
//!   setting a key replaces its pending timer.
//! - [`Coordinator::state`], [`generation`](Coordinator::generation),
//!   [`leader`](Coordinator::leader), [`members`](Coordinator::members),
//!   [`pending_members`](Coordinator::pending_members),
//!   [`pending_sync_members`](Coordinator::pending_sync_members) and
//!   [`timers`](Coordinator::timers) read its state and its timers by name and deadline.
//!
//! One file per request family: `join.rs` (JoinGroup, the join phase and its completion),
//! `sync.rs` (SyncGroup, assignment propagation, the sync timer), `session.rs` (Heartbeat,
//! session expiry, LeaveGroup, removing members), `offsets.rs` (OffsetCommit, OffsetFetch),
//! `record.rs` (the GROUP_METADATA record it writes); `members.rs` holds the member map and
//! each protocol's count over the members' lists.
//!
//! It imports nothing of the world, the metrics or the report.

mod consumer;
mod join;
mod load;
mod members;
mod migration;
mod offsets;
mod record;
mod session;
mod sync;

pub use crate::group::records::{GroupMetadataRecord, GroupRecord, MemberMetadataRecord};
pub use consumer::ConsumerTopic;

use super::messages::{
    ClientRef, ErrorCode, JoinProtocol, JoinReason, LeavingMember, LeftMember, Request, Response,
    Subscription, Trigger,
};
use crate::cluster::OffsetsStore;
use crate::facts::Fact;
use crate::java::{Capacity, JavaHashMap, JavaHashSet};
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::{Out, SimTime};
use std::collections::{BTreeMap, VecDeque};

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
    /// A KIP-848 consumer group's timer (`session-timeout:<id>`, `rebalance-timeout:<id>`).
    Consumer(crate::group::consumer_group::ConsumerGroupTimer),
}

impl CoordTimer {
    /// The key as Kafka's coordinator names it (`join`, `sync`, `heartbeat:<member id>`).
    pub fn name(&self) -> String {
        match self {
            CoordTimer::Join => "join".into(),
            CoordTimer::Sync => "sync".into(),
            CoordTimer::Heartbeat { member_id } => format!("heartbeat:{member_id}"),
            CoordTimer::Consumer(t) => t.name(),
        }
    }

    /// The timer named `name` (`join`, `sync`, `heartbeat:<member id>`).
    pub fn from_name(name: &str) -> Option<CoordTimer> {
        match name {
            "join" => Some(CoordTimer::Join),
            "sync" => Some(CoordTimer::Sync),
            _ => name.strip_prefix("heartbeat:").map(CoordTimer::heartbeat),
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
    /// Write a group record to `__consumer_offsets` (GROUP_METADATA).
    Record(Box<GroupRecord>),
    /// Something happened that observers want to know.
    Fact(Fact),
}

/// The settings the coordinator needs: the broker's and the group's.
#[derive(Clone, Copy, Debug)]
pub struct CoordinatorConfig {
    /// `group.initial.rebalance.delay.ms`.
    pub initial_rebalance_delay_ms: u64,
    /// `group.classic.max.size`: JoinGroups beyond it get GROUP_MAX_SIZE_REACHED.
    pub max_size: usize,
    /// Test-only: a deliberately broken behaviour (`cgsim fuzz --mutant`).
    pub mutant: Option<crate::scenario::Mutant>,
}

impl CoordinatorConfig {
    /// Kafka's broker defaults (`group.initial.rebalance.delay.ms` 3000, no size limit).
    pub fn with_initial_delay(initial_rebalance_delay_ms: u64) -> Self {
        CoordinatorConfig {
            initial_rebalance_delay_ms,
            max_size: i32::MAX as usize,
            mutant: None,
        }
    }
}

/// One handler call: the time, and where effects go.
struct Cx<'o> {
    now: SimTime,
    out: &'o mut Out<CoordinatorEffect>,
    /// Records written in this call (a new group writes one if nothing else did).
    records: usize,
}

impl Cx<'_> {
    fn respond(&mut self, to: ClientRef, response: Response) {
        self.out.push(CoordinatorEffect::Respond {
            to,
            response: Box::new(response),
        });
    }

    fn at(&self, after_ms: u64) -> SimTime {
        self.now + Duration::from_millis(after_ms)
    }

    fn set_timer(&mut self, timer: CoordTimer, at: SimTime) {
        self.out.push(CoordinatorEffect::SetTimer { timer, at });
    }

    fn cancel_timer(&mut self, timer: CoordTimer) {
        self.out.push(CoordinatorEffect::CancelTimer(timer));
    }

    fn record(&mut self, record: GroupRecord) {
        self.records += 1;
        self.out.push(CoordinatorEffect::Record(Box::new(record)));
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

/// A member's session timer. A heartbeat only moves `deadline`; the armed check fires at
/// `check_at` (never after the deadline) and, if the deadline moved, re-arms itself there, so a
/// heartbeat costs no timer operation in the world.
#[derive(Clone, Copy, Debug)]
struct Session {
    deadline: SimTime,
    check_at: SimTime,
}

struct GroupMember {
    /// The process that sent its latest request (facts name its scenario member).
    client: ClientRef,
    group_instance_id: Option<String>,
    protocols: Vec<JoinProtocol>,
    rebalance_timeout_ms: u64,
    session_timeout_ms: u64,
    /// A JoinGroup is parked (Kafka's `awaitingJoinFuture`): whom to answer.
    awaiting_join: Option<ClientRef>,
    /// A SyncGroup is parked waiting for the leader's (`awaitingSyncFuture`).
    awaiting_sync: Option<ClientRef>,
    /// Added in the running join phase (its session timer is the new-member timeout).
    is_new: bool,
    /// The stored SyncGroup assignment; `None` is empty bytes (never assigned, or reset when a
    /// rebalance interrupted CompletingRebalance).
    assignment: Option<Vec<usize>>,
    /// `None`: no session timer armed.
    session: Option<Session>,
}

impl GroupMember {
    fn protocol_names(&self) -> impl Iterator<Item = &str> {
        self.protocols.iter().map(|p| p.name.as_str())
    }

    fn metadata(&self, protocol: &str) -> Option<&Subscription> {
        self.protocols
            .iter()
            .find(|p| p.name == protocol)
            .map(|p| &p.metadata)
    }

    /// Alive for the session check: not new, and a JoinGroup or SyncGroup is parked
    /// (`hasSatisfiedHeartbeat`).
    fn has_satisfied_heartbeat(&self) -> bool {
        !self.is_new && (self.awaiting_join.is_some() || self.awaiting_sync.is_some())
    }
}

/// A member as [`Coordinator::members`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberState {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub protocols: Vec<String>,
    pub session_timeout_ms: u64,
    pub rebalance_timeout_ms: u64,
    pub awaiting_join: bool,
    pub awaiting_sync: bool,
    pub is_new: bool,
    /// `None`: empty bytes.
    pub assignment: Option<Vec<usize>>,
}

/// Why a consumer group becomes a classic group again (`migration.rs`, from the consumer
/// group's effects in `consumer.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClassicAgain {
    /// Its last consumer-protocol member left or was fenced: a rebalance follows.
    AfterLeave,
    /// A classic static member took over the last consumer-protocol member's entry: the
    /// group is Stable as it is, unless the target assignment is stale (behind the group
    /// epoch): then it rebalances (KAFKA-20273).
    Replacing { stale: bool },
}

/// The join timer's operation: Kafka schedules a different closure for the initial delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JoinTimer {
    /// `tryCompleteInitialRebalanceElseSchedule(delay, remaining)`.
    Initial { delay_ms: u64, remaining_ms: u64 },
    /// `completeClassicGroupJoin`.
    Complete,
}

/// Where member ids' UUIDs come from: the coordinator's seeded `UUID.randomUUID()`, or ids
/// given in advance (a conformance replay uses the ids Kafka issued), in issue order.
struct MemberIds {
    given: VecDeque<String>,
    random: Stream,
}

pub struct Coordinator {
    config: CoordinatorConfig,
    /// A KIP-848 consumer group instead of a classic one (`consumer.rs`).
    consumer: Option<Box<consumer::ConsumerHost>>,
    /// What a consumer group is made of, when one may be created or converted to
    /// (`migration.rs`).
    consumer_setup: Option<migration::ConsumerSetup>,
    /// The group exists (its first JoinGroup created it and wrote a record).
    exists: bool,
    state: GroupState,
    previous_state: GroupState,
    generation: i32,
    protocol_type: Option<String>,
    protocol_name: Option<String>,
    leader: Option<String>,
    members: members::Members,
    /// `group.instance.id` -> member id.
    static_members: BTreeMap<String, String>,
    /// Dynamic members told MEMBER_ID_REQUIRED that have not joined yet, with their session
    /// deadline.
    pending_join: BTreeMap<String, SimTime>,
    /// Members of the current generation that have not sent SyncGroup (a Java `HashSet`: the
    /// sync timer removes them in its order).
    pending_sync: JavaHashSet<String>,
    /// A member was added during an initial rebalance since the join timer last fired.
    new_member_added: bool,
    join_timer: Option<(SimTime, JoinTimer)>,
    /// The sync timer's deadline and the generation it was set for.
    sync_timer: Option<(SimTime, i32)>,
    ids: MemberIds,
    /// Every member id the group has had, with its process: a loaded record may name a member
    /// this coordinator has since removed without writing a record.
    known_clients: BTreeMap<String, ClientRef>,
}

impl Coordinator {
    pub fn new(config: CoordinatorConfig, ids: Stream) -> Self {
        Coordinator {
            config,
            consumer: None,
            consumer_setup: None,
            exists: false,
            state: GroupState::Empty,
            previous_state: GroupState::Empty,
            generation: 0,
            protocol_type: None,
            protocol_name: None,
            leader: None,
            members: members::Members::default(),
            static_members: BTreeMap::new(),
            pending_join: BTreeMap::new(),
            pending_sync: JavaHashSet::new(Capacity::Default),
            new_member_added: false,
            join_timer: None,
            sync_timer: None,
            ids: MemberIds {
                given: VecDeque::new(),
                random: ids,
            },
            known_clients: BTreeMap::new(),
        }
    }

    /// Member ids to hand out, in order, before the seeded ones (a replay of Kafka's trace:
    /// the ids decide `HashMap` order, hence leader hand-over and the members' order).
    pub fn give_member_ids(&mut self, ids: impl IntoIterator<Item = String>) {
        self.ids.given.extend(ids);
    }

    // ---- Reading the state (tests, the settle check, conformance replays) ----

    pub fn state(&self) -> GroupState {
        self.state
    }

    pub fn is_stable(&self) -> bool {
        match self.consumer_state() {
            Some((stable, _, _)) => stable,
            None => self.state == GroupState::Stable,
        }
    }

    pub fn state_name(&self) -> &'static str {
        match self.consumer_state() {
            Some((_, name, _)) => name,
            None => self.state.name(),
        }
    }

    /// Whether the group exists (Kafka's trace shows `null` for a group never created).
    pub fn exists(&self) -> bool {
        self.exists
    }

    /// The generation (a consumer group's group epoch).
    pub fn generation(&self) -> i32 {
        match self.consumer_state() {
            Some((_, _, epoch)) => epoch,
            None => self.generation,
        }
    }

    pub fn leader(&self) -> Option<&str> {
        self.leader.as_deref()
    }

    pub fn protocol_type(&self) -> Option<&str> {
        self.protocol_type.as_deref()
    }

    /// The selected protocol (assignor) of the current generation.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol_name.as_deref()
    }

    /// The members in the broker's member-map order (Java `HashMap` order).
    pub fn members(&self) -> Vec<MemberState> {
        self.members
            .iter()
            .map(|(id, m)| MemberState {
                member_id: id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                protocols: m.protocol_names().map(str::to_string).collect(),
                session_timeout_ms: m.session_timeout_ms,
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                awaiting_join: m.awaiting_join.is_some(),
                awaiting_sync: m.awaiting_sync.is_some(),
                is_new: m.is_new,
                assignment: m.assignment.clone(),
            })
            .collect()
    }

    /// Dynamic members told MEMBER_ID_REQUIRED that have not joined yet, by id.
    pub fn pending_members(&self) -> Vec<String> {
        self.pending_join.keys().cloned().collect()
    }

    /// Members of the current generation that have not sent SyncGroup yet, by id.
    pub fn pending_sync_members(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.pending_sync.iter().cloned().collect();
        ids.sort();
        ids
    }

    /// Every armed timer by Kafka's name, with the deadline it stands for (a session's real
    /// expiry, even while its check is armed earlier), ordered by deadline, then name.
    pub fn timers(&self) -> Vec<(String, SimTime)> {
        let mut timers: Vec<(String, SimTime)> = Vec::new();
        timers.extend(self.join_timer.map(|(at, _)| (CoordTimer::Join.name(), at)));
        timers.extend(self.sync_timer.map(|(at, _)| (CoordTimer::Sync.name(), at)));
        for (id, m) in self.members.iter() {
            if let Some(session) = m.session {
                timers.push((CoordTimer::heartbeat(id).name(), session.deadline));
            }
        }
        for (id, &at) in &self.pending_join {
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
        let cx = &mut Cx {
            now,
            out,
            records: 0,
        };
        match request {
            Request::JoinGroup {
                version,
                member_id,
                group_instance_id,
                client_id,
                protocol_type,
                protocols,
                rebalance_timeout_ms,
                session_timeout_ms,
                reason,
            } => {
                let join = join::Join {
                    version,
                    reason,
                    client: from,
                    group_instance_id,
                    client_id,
                    protocol_type,
                    protocols,
                    rebalance_timeout_ms,
                    session_timeout_ms,
                };
                if self.consumer.is_some() {
                    self.bridge_join(cx, member_id, join)
                } else {
                    self.join_group(cx, member_id, join)
                }
            }
            Request::SyncGroup {
                member_id,
                generation,
                group_instance_id,
                protocol_type,
                protocol_name,
                assignments,
            } => {
                let sync = sync::Sync {
                    client: from,
                    member_id,
                    generation,
                    group_instance_id,
                    protocol_type,
                    protocol_name,
                    assignments,
                };
                if self.consumer.is_some() {
                    self.bridge_sync(cx, sync)
                } else {
                    self.sync_group(cx, sync)
                }
            }
            Request::Heartbeat {
                member_id,
                generation,
                group_instance_id,
            } => {
                let instance = group_instance_id.as_deref();
                let error = if self.consumer.is_some() {
                    self.bridge_heartbeat(cx, &member_id, instance, generation)
                } else {
                    self.heartbeat(cx, &member_id, instance, generation)
                };
                cx.respond(from, Response::Heartbeat { error });
            }
            Request::LeaveGroup { members } => {
                let response = if self.consumer.is_some() {
                    self.bridge_leave(cx, members)
                } else {
                    self.leave_group(cx, members)
                };
                cx.respond(from, response);
            }
            Request::OffsetCommit {
                member_id,
                generation,
                offsets,
            } => {
                let error = if self.consumer.is_some() {
                    self.consumer_offset_commit(cx, from, &member_id, generation, &offsets)
                } else {
                    self.offset_commit(cx, from, &member_id, generation, &offsets)
                };
                cx.respond(from, Response::OffsetCommit { error });
            }
            Request::OffsetFetch { partitions } => {
                let committed: Vec<(usize, Option<u64>)> = partitions
                    .iter()
                    .map(|&p| (p, offsets.committed(p)))
                    .collect();
                for &(partition, offset) in &committed {
                    cx.fact(Fact::CommittedRead { partition, offset });
                }
                cx.respond(from, Response::OffsetFetch { committed });
            }
            // Any broker answers FindCoordinator from the cluster's metadata (the world does);
            // it never reaches the group's state.
            Request::FindCoordinator => {}
            request @ Request::ConsumerGroupHeartbeat { .. } => {
                self.consumer_heartbeat(cx, from, request)
            }
        }
    }

    /// The timer `timer` fires at `now` (the world has forgotten it: it is no longer armed).
    pub fn on_timer(&mut self, now: SimTime, timer: CoordTimer, out: &mut Out<CoordinatorEffect>) {
        let cx = &mut Cx {
            now,
            out,
            records: 0,
        };
        match timer {
            CoordTimer::Join => {
                if let Some((_, operation)) = self.join_timer.take() {
                    self.on_join_timer(cx, operation);
                }
            }
            CoordTimer::Sync => {
                if let Some((_, generation)) = self.sync_timer.take() {
                    self.on_sync_timer(cx, generation);
                }
            }
            CoordTimer::Heartbeat { member_id } => self.on_session_timer(cx, &member_id),
            CoordTimer::Consumer(timer) => self.consumer_timer(cx, timer),
        }
    }

    // ---- Membership helpers shared by the request families ----

    /// A new member id: `<client id or instance id>-<UUID>` (`ClassicGroup.generateMemberId`).
    fn new_member_id(&mut self, prefix: &str) -> String {
        match self.ids.given.pop_front() {
            Some(id) => id,
            None => {
                let uuid = crate::sim::rng::random_uuid_string(&mut self.ids.random);
                format!("{prefix}-{uuid}")
            }
        }
    }

    /// `validateMember`: a static member's instance must map to this id (FENCED_INSTANCE_ID
    /// otherwise), and the id must be a member.
    fn validate_member(&self, member_id: &str, instance: Option<&str>) -> Result<(), ErrorCode> {
        if let Some(instance) = instance {
            match self.static_members.get(instance) {
                None => return Err(ErrorCode::UnknownMemberId),
                Some(existing) if existing != member_id => return Err(ErrorCode::FencedInstanceId),
                Some(_) => {}
            }
        }
        if self.members.contains_key(member_id) {
            Ok(())
        } else {
            Err(ErrorCode::UnknownMemberId)
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

    /// Every member has a JoinGroup parked and no member id is pending (`hasAllMembersJoined`).
    fn has_all_members_joined(&self) -> bool {
        self.pending_join.is_empty() && self.members.values().all(|m| m.awaiting_join.is_some())
    }

    fn transition(&mut self, state: GroupState) {
        self.previous_state = self.state;
        self.state = state;
    }

    /// (Re)arms the member's session timer for `ms` from now
    /// (`rescheduleClassicGroupMemberHeartbeat`).
    fn reschedule_session(&mut self, cx: &mut Cx, member_id: &str, ms: u64) {
        let deadline = cx.at(ms);
        let Some(m) = self.members.get_mut(member_id) else {
            return;
        };
        match &mut m.session {
            // The armed check comes first: it re-arms itself at the new deadline.
            Some(session) if session.check_at <= deadline => session.deadline = deadline,
            session => {
                *session = Some(Session {
                    deadline,
                    check_at: deadline,
                });
                cx.set_timer(CoordTimer::heartbeat(member_id), deadline);
            }
        }
    }

    /// The member's session timer for its own session timeout.
    fn reschedule_session_default(&mut self, cx: &mut Cx, member_id: &str) {
        if let Some(ms) = self.members.get(member_id).map(|m| m.session_timeout_ms) {
            self.reschedule_session(cx, member_id, ms);
        }
    }

    fn cancel_session(&mut self, cx: &mut Cx, member_id: &str) {
        if let Some(m) = self.members.get_mut(member_id) {
            if m.session.take().is_some() {
                cx.cancel_timer(CoordTimer::heartbeat(member_id));
            }
        }
    }

    /// `ClassicGroup.remove`: the member leaves the map; a removed leader hands over to the
    /// first remaining member in map order.
    fn remove_from_group(&mut self, cx: &mut Cx, member_id: &str) {
        if let Some(m) = self.members.remove(member_id) {
            self.known_clients.insert(member_id.to_string(), m.client);
            if let Some(instance) = &m.group_instance_id {
                self.static_members.remove(instance);
            }
            cx.fact(Fact::MemberRemoved {
                member: m.client.member,
                member_id: member_id.to_string(),
            });
        }
        if self.leader.as_deref() == Some(member_id) {
            self.leader = self.members.keys().next().cloned();
        }
        self.pending_join.remove(member_id);
        self.pending_sync.remove(&member_id.to_string());
    }

    /// The group's selected protocol as Kafka picks it: the candidates are the protocols every
    /// member lists; each member votes for its first candidate; most votes win, ties to the
    /// first in `HashMap` order (`ClassicGroup.selectProtocol`).
    fn select_protocol(&self) -> Option<String> {
        self.members.check_counts();
        let mut votes: JavaHashMap<String, u32> = JavaHashMap::new(Capacity::Default);
        for m in self.members.values() {
            if let Some(vote) = m.protocol_names().find(|p| self.supported_by_all(p)) {
                let count = votes.get(vote).copied().unwrap_or(0);
                votes.insert(vote.to_string(), count + 1);
            }
        }
        let mut best: Option<(&String, u32)> = None;
        for (name, &count) in votes.iter() {
            if best.is_none_or(|(_, b)| count > b) {
                best = Some((name, count));
            }
        }
        best.map(|(name, _)| name.clone())
    }

    /// Whether a member of `protocol_type` listing `protocols` may join: anything non-empty in
    /// an Empty group, else the same protocol type and one protocol every member lists
    /// (`ClassicGroup.supportsProtocols`).
    fn supports_protocols(&self, protocol_type: &str, protocols: &[JoinProtocol]) -> bool {
        if self.state == GroupState::Empty {
            return !protocol_type.is_empty() && !protocols.is_empty();
        }
        self.members.check_counts();
        self.protocol_type.as_deref() == Some(protocol_type)
            && protocols.iter().any(|p| self.supported_by_all(&p.name))
    }

    /// A protocol every member lists: Kafka's count of it over the members' lists equals the
    /// member count (`ClassicGroup.supportedProtocols`, kept as members come, go and rejoin).
    fn supported_by_all(&self, name: &str) -> bool {
        self.members.listed(name) == self.members.len()
    }

    /// The GROUP_METADATA record of the group as it stands, with the stored assignments.
    fn write_group_metadata(&mut self, cx: &mut Cx) {
        let record = self.group_metadata_record();
        cx.record(GroupRecord::GroupMetadata(record));
    }
}

#[cfg(test)]
mod tests;
