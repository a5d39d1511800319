//! The classic group (broker side), as Kafka 4.3.1's `ClassicGroup` and the classic handlers
//! of its `GroupMetadataManager` run it (../shared/reference/COORDINATOR.md 5.1-5.2). Its
//! states and which may follow which are in `state.rs` ([`ClassicGroupState`]).
//!
//! Members live in a Java `HashMap` on the broker: its iteration order is the JoinGroup
//! response's member order and picks a new leader, so it is emulated (`crate::java`).
//!
//! A pure state machine: the dispatcher (`group/dispatcher.rs`) hands it one request or one
//! timer at a time with a [`Cx`], and it writes [`CoordinatorEffect`]s: responses, records,
//! timers by key ([`CoordTimer`]: `join`, `sync`, `heartbeat:<member id>`), facts.
//!
//! One file per request family: `join.rs` (JoinGroup, the join phase and its completion),
//! `sync.rs` (SyncGroup, assignment propagation, the sync timer), `session.rs` (Heartbeat and
//! session expiry), `leave.rs` (LeaveGroup: a member that goes), `offsets.rs` (OffsetCommit),
//! `record.rs` (the GROUP_METADATA record it writes), `load.rs` (a new coordinator loading it,
//! the old one unloading it); `members.rs` holds the member map and each protocol's count
//! over the members' lists.
//!
//! It imports nothing of the world, the metrics or the report.

mod convert;
mod join;
mod leave;
mod load;
mod members;
mod offsets;
mod record;
mod session;
mod state;
mod sync;

pub use state::ClassicGroupState;

pub(super) use convert::{ClassicAgain, HandedOver, TakenBack};
pub(super) use join::Join;
pub(super) use sync::Sync;

use super::effects::{CoordTimer, CoordinatorConfig, Cx};
use crate::facts::Fact;
use crate::java::{Capacity, JavaHashMap, JavaHashSet};
use crate::messages::records::{GroupMetadataRecord, GroupRecord, MemberMetadataRecord};
use crate::messages::{
    ClientRef, ErrorCode, JoinGroupResponse, JoinProtocol, JoinReason, Subscription,
    SyncGroupResponse, Trigger,
};
use crate::sim::SimTime;
use std::collections::BTreeMap;

/// `CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS`: a newly added member's first session timer.
const NEW_MEMBER_JOIN_TIMEOUT_MS: u64 = 300_000;

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

/// A member as [`ClassicGroup::members`] shows it.
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

/// The join timer's operation: Kafka schedules a different closure for the initial delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JoinTimer {
    /// `tryCompleteInitialRebalanceElseSchedule(delay, remaining)`.
    Initial { delay_ms: u64, remaining_ms: u64 },
    /// `completeClassicGroupJoin`.
    Complete,
}

/// A classic group: its state, generation, selected protocol, leader and members, and the
/// timers of its join and sync phases.
pub struct ClassicGroup {
    config: CoordinatorConfig,
    /// The group exists (its first JoinGroup created it and wrote a record).
    exists: bool,
    state: ClassicGroupState,
    previous_state: ClassicGroupState,
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
}

impl ClassicGroup {
    /// No group yet: the first JoinGroup creates it.
    pub(super) fn new(config: CoordinatorConfig) -> Self {
        ClassicGroup {
            config,
            exists: false,
            state: ClassicGroupState::Empty,
            previous_state: ClassicGroupState::Empty,
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
        }
    }

    // ---- Reading the state (tests, the settle check, conformance replays) ----

    pub fn state(&self) -> ClassicGroupState {
        self.state
    }

    /// Whether the group exists (Kafka's trace shows `null` for a group never created).
    pub fn exists(&self) -> bool {
        self.exists
    }

    pub fn generation(&self) -> i32 {
        self.generation
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
    /// expiry, even while its check is armed earlier).
    pub(super) fn timers(&self) -> Vec<(String, SimTime)> {
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
        timers
    }

    // ---- Timers ----

    /// One of its timers fires at `cx.now` (the world has forgotten it: it is no longer armed).
    pub(super) fn on_timer(&mut self, cx: &mut Cx, timer: CoordTimer) {
        if self.state == ClassicGroupState::Dead {
            // Unloaded or deleted since it was armed: nothing is left to time (Kafka logs it).
            return;
        }
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
            // Not this group's: a consumer group's timer (the dispatcher routes those).
            CoordTimer::Consumer(_) => {}
        }
    }

    // ---- Membership helpers shared by the request families ----

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

    /// `transitionTo`: only from a state the table allows (a refused transition is a bug in
    /// the model, as Kafka throws `IllegalStateException`).
    fn transition(&mut self, state: ClassicGroupState) {
        assert!(
            self.state.may_become(state),
            "a classic group cannot go from {} to {}",
            self.state.name(),
            state.name()
        );
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
            cx.known_clients.insert(member_id.to_string(), m.client);
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
        if self.state == ClassicGroupState::Empty {
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
mod tests {
    use super::*;

    /// Every transition is checked against the table (`ClassicGroup.assertValidTransition`): a
    /// group cannot skip the join phase.
    #[test]
    #[should_panic(expected = "a classic group cannot go from Empty to CompletingRebalance")]
    fn a_transition_the_table_forbids_is_a_bug() {
        let mut group = ClassicGroup::new(CoordinatorConfig::with_initial_delay(3000));
        group.transition(ClassicGroupState::CompletingRebalance);
    }

    /// A group unloaded at a coordinator fail-over is Dead, from any state, and a new one is
    /// loaded in its place; one that never existed loads Empty.
    #[test]
    fn an_unloaded_group_is_dead_until_the_next_load() {
        let mut group = ClassicGroup::new(CoordinatorConfig::with_initial_delay(3000));
        group.unload();
        assert_eq!(group.state(), ClassicGroupState::Dead);
        let mut ids =
            crate::group::effects::MemberIds::new(crate::sim::rng::Stream::derive(1, "member-ids"));
        let mut known = BTreeMap::new();
        let mut out = crate::sim::Out::new(false);
        let cx = &mut Cx {
            now: SimTime::ZERO,
            out: &mut out,
            records: 0,
            ids: &mut ids,
            known_clients: &mut known,
        };
        group.load(cx, None);
        assert_eq!(group.state(), ClassicGroupState::Empty);
        assert!(!group.exists());
    }
}
