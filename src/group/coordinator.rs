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

use super::messages::{
    ClientRef, ErrorCode, JoinReason, JoinedMember, LeaveReason, Request, Response, Subscription,
};
use crate::engine::{Env, Event};
use crate::java::{Capacity, JavaHashMap};
use crate::metrics::Trigger;
use crate::scenario::Scenario;
use crate::sim::queue::TimerId;
use crate::sim::time::Duration;
use crate::sim::SimTime;
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

#[derive(Debug)]
pub enum CoordTimer {
    /// The join phase's timer (initial delay or rebalance timeout).
    Join { epoch: u64 },
    /// Members that have not sent SyncGroup by now are removed.
    Sync { generation: i32 },
    /// A member's (or pending member's) session timer; re-arming cancels the previous one.
    Session { member_id: String },
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
    /// The pending session check, and when the session really expires: a heartbeat only moves
    /// the deadline, and a check that fires early re-arms itself at it (no cancel per heartbeat).
    session_timer: Option<TimerId>,
    session_deadline: SimTime,
}

pub struct Coordinator {
    state: GroupState,
    generation: i32,
    members: JavaHashMap<String, GroupMember>,
    /// Dynamic members told MEMBER_ID_REQUIRED that have not joined yet.
    pending: BTreeMap<String, (ClientRef, TimerId)>,
    static_members: BTreeMap<String, String>,
    leader: Option<String>,
    protocol: Option<String>,
    join_timer: Option<TimerId>,
    join_epoch: u64,
    /// The running join phase is the initial one of an Empty group.
    initial_join: bool,
    initial_delay_ms: u64,
    initial_remaining_ms: u64,
    member_added_since_timer: bool,
    sync_timer: Option<TimerId>,
    /// Committed offset of each partition (global index), as `__consumer_offsets` holds them.
    committed: Vec<Option<u64>>,
}

impl Coordinator {
    pub fn new(scenario: &Scenario) -> Self {
        Coordinator {
            state: GroupState::Empty,
            generation: 0,
            members: JavaHashMap::new(Capacity::Default),
            pending: BTreeMap::new(),
            static_members: BTreeMap::new(),
            leader: None,
            protocol: None,
            join_timer: None,
            join_epoch: 0,
            initial_join: false,
            initial_delay_ms: scenario.group.initial_rebalance_delay_ms,
            initial_remaining_ms: 0,
            member_added_since_timer: false,
            sync_timer: None,
            committed: vec![
                None;
                scenario
                    .topics
                    .iter()
                    .map(|t| t.max_partitions() as usize)
                    .sum()
            ],
        }
    }

    pub fn is_stable(&self) -> bool {
        self.state == GroupState::Stable
    }

    pub fn state_name(&self) -> &'static str {
        self.state.name()
    }

    pub fn handle(&mut self, env: &mut Env, from: ClientRef, request: Request) {
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
                self.join_group(env, member_id, join)
            }
            Request::SyncGroup {
                member_id,
                generation,
                assignments,
            } => self.sync_group(env, from, member_id, generation, assignments),
            Request::Heartbeat {
                member_id,
                generation,
            } => {
                let error = self.heartbeat(env, &member_id, generation);
                env.to_client(from, Response::Heartbeat { error });
            }
            Request::LeaveGroup { member_id, reason } => {
                if self.members.contains_key(&member_id) {
                    env.log(format!("coordinator LeaveGroup {member_id} ({reason:?})"));
                    let trigger = match reason {
                        LeaveReason::Close => Trigger::MemberLeft,
                        LeaveReason::PollTimeout => Trigger::PollTimeout,
                    };
                    self.remove_member(env, &member_id, trigger);
                }
            }
            Request::OffsetCommit {
                member_id,
                generation,
                offsets,
            } => {
                let error = self.offset_commit(env, from, &member_id, generation, &offsets);
                env.to_client(from, Response::OffsetCommit { error });
            }
            Request::OffsetFetch { partitions } => {
                let committed = partitions.iter().map(|&p| (p, self.committed[p])).collect();
                env.to_client(from, Response::OffsetFetch { committed });
            }
        }
    }

    pub fn on_timer(&mut self, env: &mut Env, timer: CoordTimer) {
        match timer {
            CoordTimer::Join { epoch } if epoch == self.join_epoch => {
                self.join_timer = None;
                self.on_join_timer(env)
            }
            CoordTimer::Sync { generation } if generation == self.generation => {
                self.sync_timer = None;
                self.on_sync_timer(env)
            }
            CoordTimer::Session { member_id } => self.on_session_timer(env, &member_id),
            _ => {}
        }
    }

    // ---- JoinGroup ----

    fn join_group(&mut self, env: &mut Env, member_id: String, join: Join) {
        if !self.supports_protocols(&join.protocols) {
            env.log(format!(
                "coordinator JoinGroup from {}: INCONSISTENT_GROUP_PROTOCOL",
                join.client_id
            ));
            env.to_client(
                join.client,
                join_error(ErrorCode::InconsistentGroupProtocol, &member_id),
            );
            return;
        }
        if member_id.is_empty() {
            match join.group_instance_id.clone() {
                Some(instance) => {
                    let uuid = crate::sim::rng::random_uuid_string(&mut env.ids);
                    let new_id = format!("{instance}-{uuid}");
                    match self.static_members.get(&instance).cloned() {
                        Some(old_id) => self.replace_static_member(env, &old_id, new_id, join),
                        // Static members never get MEMBER_ID_REQUIRED.
                        None => self.add_member(env, new_id, join),
                    }
                }
                None => {
                    let uuid = crate::sim::rng::random_uuid_string(&mut env.ids);
                    let new_id = format!("{}-{uuid}", join.client_id);
                    let timer = self.arm_session(env, &new_id, join.session_timeout_ms);
                    self.pending.insert(new_id.clone(), (join.client, timer));
                    env.log(format!(
                        "coordinator JoinGroup: MEMBER_ID_REQUIRED, pending {new_id}"
                    ));
                    env.to_client(
                        join.client,
                        join_error(ErrorCode::MemberIdRequired, &new_id),
                    );
                }
            }
            return;
        }
        if let Some((_, timer)) = self.pending.remove(&member_id) {
            env.queue.cancel(timer);
            self.add_member(env, member_id, join);
            return;
        }
        if !self.members.contains_key(&member_id) || self.state == GroupState::Empty {
            env.to_client(
                join.client,
                join_error(ErrorCode::UnknownMemberId, &member_id),
            );
            return;
        }
        self.rejoin(env, member_id, join);
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

    fn add_member(&mut self, env: &mut Env, member_id: String, join: Join) {
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
                session_timer: None,
                session_deadline: env.now(),
            },
        );
        self.restart_session(env, &member_id, NEW_MEMBER_JOIN_TIMEOUT_MS);
        if self.leader.is_none() {
            self.leader = Some(member_id.clone());
        }
        env.metrics.member_added(client.member, &member_id);
        env.log(format!(
            "coordinator JoinGroup: added {member_id} ({})",
            self.state.name()
        ));
        match self.state {
            GroupState::Empty => {
                self.prepare_rebalance(env, Trigger::MemberJoined, Some(client.member))
            }
            GroupState::PreparingRebalance => {
                self.member_added_since_timer = true;
                self.maybe_complete_join(env)
            }
            GroupState::CompletingRebalance | GroupState::Stable => {
                self.prepare_rebalance(env, Trigger::MemberJoined, Some(client.member))
            }
        }
    }

    fn rejoin(&mut self, env: &mut Env, member_id: String, join: Join) {
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
                env.log(format!("coordinator JoinGroup: {member_id} rejoined"));
                self.maybe_complete_join(env);
            }
            GroupState::CompletingRebalance | GroupState::Stable if unchanged && !is_leader => {
                // Byte-identical metadata: the current generation back, no rebalance.
                let response = self.join_response(&member_id, false);
                env.to_client(join.client, response);
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
                self.prepare_rebalance(env, trigger, Some(who));
            }
            GroupState::Empty => unreachable!("an Empty group has no members"),
        }
    }

    /// KIP-345: a static member's new process takes over its instance's member entry.
    fn replace_static_member(&mut self, env: &mut Env, old_id: &str, new_id: String, join: Join) {
        let Some(mut member) = self.members.remove(old_id) else {
            self.add_member(env, new_id, join);
            return;
        };
        if let Some(t) = member.session_timer.take() {
            env.queue.cancel(t);
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
        env.metrics.member_replaced(client.member, &new_id);
        env.log(format!(
            "coordinator static member {old_id} replaced by {new_id}"
        ));
        let session_ms = member.session_timeout_ms;
        self.members.insert(new_id.clone(), member);
        self.restart_session(env, &new_id, session_ms);
        match self.state {
            GroupState::Stable if protocol_unchanged => {
                // No rebalance: the current generation, and the stored assignment at SyncGroup.
                let m = self.members.get_mut(&new_id).expect("inserted");
                m.synced = false;
                let response = self.join_response(&new_id, true);
                env.to_client(client, response);
            }
            GroupState::PreparingRebalance => {
                self.members.get_mut(&new_id).expect("inserted").joined = true;
                self.maybe_complete_join(env);
            }
            _ => {
                self.members.get_mut(&new_id).expect("inserted").joined = true;
                self.prepare_rebalance(env, Trigger::MemberRestarted, Some(client.member));
            }
        }
    }

    fn prepare_rebalance(&mut self, env: &mut Env, trigger: Trigger, member: Option<usize>) {
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
                env.to_client(
                    c,
                    Response::SyncGroup {
                        error: ErrorCode::RebalanceInProgress,
                        assignment: vec![],
                    },
                );
            }
        }
        if let Some(t) = self.sync_timer.take() {
            env.queue.cancel(t);
        }
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
        self.arm_join_timer(env, delay_ms);
        let generation = self.generation + 1;
        env.metrics
            .rebalance_started(env.queue.now(), generation, trigger, member);
        env.log({
            format!(
                "coordinator {} -> PreparingRebalance (trigger {}, join timer {} ms)",
                previous.name(),
                trigger.name(),
                delay_ms
            )
        });
    }

    fn arm_join_timer(&mut self, env: &mut Env, delay_ms: u64) {
        if let Some(t) = self.join_timer.take() {
            env.queue.cancel(t);
        }
        self.join_epoch += 1;
        let at = env.now() + Duration::from_millis(delay_ms);
        self.join_timer = Some(env.queue.schedule(
            at,
            Event::CoordinatorTimer(CoordTimer::Join {
                epoch: self.join_epoch,
            }),
        ));
    }

    /// The group's rebalance timeout: the largest of its members'.
    fn rebalance_timeout_ms(&self) -> u64 {
        self.members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    fn maybe_complete_join(&mut self, env: &mut Env) {
        // An initial rebalance never completes early (GMM maybeCompleteJoinPhase).
        if self.state != GroupState::PreparingRebalance || self.initial_join {
            return;
        }
        if self.pending.is_empty() && self.members.values().all(|m| m.joined) {
            self.complete_join(env);
        }
    }

    fn on_join_timer(&mut self, env: &mut Env) {
        if self.state != GroupState::PreparingRebalance {
            return;
        }
        if self.initial_join && self.member_added_since_timer && self.initial_remaining_ms != 0 {
            let delay = self.initial_delay_ms.min(self.initial_remaining_ms);
            self.initial_remaining_ms = self
                .initial_remaining_ms
                .saturating_sub(self.initial_delay_ms);
            self.member_added_since_timer = false;
            env.log(format!("coordinator initial delay extended by {delay} ms"));
            self.arm_join_timer(env, delay);
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
                env.log(format!(
                    "coordinator removing {id}: did not rejoin within the rebalance timeout"
                ));
                self.drop_member(env, &id);
            }
        }
        self.complete_join(env);
    }

    fn complete_join(&mut self, env: &mut Env) {
        if let Some(t) = self.join_timer.take() {
            env.queue.cancel(t);
        }
        self.initial_join = false;
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.protocol = None;
            env.log(format!(
                "coordinator join phase complete: no members, Empty (generation {})",
                self.generation
            ));
            env.metrics.group_empty(env.queue.now());
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
            env.to_client(client, response);
            self.restart_session(env, id, session_ms);
        }
        let sync_at = env.now() + Duration::from_millis(self.rebalance_timeout_ms());
        self.sync_timer = Some(env.queue.schedule(
            sync_at,
            Event::CoordinatorTimer(CoordTimer::Sync {
                generation: self.generation,
            }),
        ));
        let leader = self.leader.clone().unwrap_or_default();
        env.metrics.join_completed(env.queue.now(), self.generation);
        env.log({
            format!(
                "coordinator join complete: generation {} protocol {} leader {} members {}",
                self.generation,
                self.protocol.as_deref().unwrap_or("-"),
                leader,
                joined.len()
            )
        });
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
        env: &mut Env,
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
            env.to_client(
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
                    env.metrics.group_stable(env.queue.now(), self.generation);
                    env.log(format!(
                        "coordinator leader's SyncGroup: Stable (generation {})",
                        self.generation
                    ));
                    for id in &ids {
                        let m = self.members.get_mut(id).expect("member");
                        if m.sync_parked {
                            m.sync_parked = false;
                            let response = Response::SyncGroup {
                                error: ErrorCode::None,
                                assignment: m.assignment.clone(),
                            };
                            let client = m.client;
                            env.to_client(client, response);
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
                env.to_client(from, response);
            }
            _ => {}
        }
        self.reset_session(env, &member_id);
        if self.members.values().all(|m| m.synced) {
            if let Some(t) = self.sync_timer.take() {
                env.queue.cancel(t);
            }
        }
    }

    fn on_sync_timer(&mut self, env: &mut Env) {
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
            env.log(format!(
                "coordinator removing {id}: no SyncGroup within the rebalance timeout"
            ));
            self.remove_member(env, &id, Trigger::MemberExpired);
        }
    }

    // ---- Heartbeat, sessions, leaving ----

    fn heartbeat(&mut self, env: &mut Env, member_id: &str, generation: i32) -> ErrorCode {
        if self.state == GroupState::Empty || !self.members.contains_key(member_id) {
            return ErrorCode::UnknownMemberId;
        }
        if generation != self.generation {
            return ErrorCode::IllegalGeneration;
        }
        self.reset_session(env, member_id);
        if self.state == GroupState::PreparingRebalance {
            ErrorCode::RebalanceInProgress
        } else {
            ErrorCode::None
        }
    }

    fn arm_session(&mut self, env: &mut Env, member_id: &str, ms: u64) -> TimerId {
        let at = env.now() + Duration::from_millis(ms);
        env.queue.schedule(
            at,
            Event::CoordinatorTimer(CoordTimer::Session {
                member_id: member_id.to_string(),
            }),
        )
    }

    /// A fresh session timer of `ms` for the member (cancelling the pending one).
    fn restart_session(&mut self, env: &mut Env, member_id: &str, ms: u64) {
        let timer = self.arm_session(env, member_id, ms);
        let deadline = env.now() + Duration::from_millis(ms);
        let m = self.members.get_mut(member_id).expect("member");
        m.session_deadline = deadline;
        if let Some(old) = m.session_timer.replace(timer) {
            env.queue.cancel(old);
        }
    }

    /// A heartbeat or SyncGroup keeps the member alive for another session timeout.
    fn reset_session(&mut self, env: &mut Env, member_id: &str) {
        let now = env.now();
        let Some(m) = self.members.get_mut(member_id) else {
            return;
        };
        let ms = m.session_timeout_ms;
        if m.session_timer.is_some() {
            m.session_deadline = now + Duration::from_millis(ms);
        } else {
            self.restart_session(env, member_id, ms);
        }
    }

    fn on_session_timer(&mut self, env: &mut Env, member_id: &str) {
        if self.pending.remove(member_id).is_some() {
            env.log(format!("coordinator pending member {member_id} expired"));
            self.maybe_complete_join(env);
            return;
        }
        let Some(m) = self.members.get_mut(member_id) else {
            return;
        };
        if m.session_timer.is_none() {
            return;
        }
        m.session_timer = None;
        let now = env.now();
        if now < m.session_deadline {
            // A heartbeat moved the deadline since this check was armed.
            let at = m.session_deadline;
            let timer = env.queue.schedule(
                at,
                Event::CoordinatorTimer(CoordTimer::Session {
                    member_id: member_id.to_string(),
                }),
            );
            self.members
                .get_mut(member_id)
                .expect("member")
                .session_timer = Some(timer);
            return;
        }
        // A member with a JoinGroup or SyncGroup parked is alive: nothing, and no re-arm.
        if !m.is_new && (m.joined || m.sync_parked) {
            return;
        }
        env.log(format!("coordinator session of {member_id} expired"));
        self.remove_member(env, member_id, Trigger::MemberExpired);
    }

    /// Removes a member without starting a rebalance (the caller is in one).
    fn drop_member(&mut self, env: &mut Env, member_id: &str) {
        let key = member_id.to_string();
        let Some(m) = self.members.remove(&key) else {
            return;
        };
        if let Some(t) = m.session_timer {
            env.queue.cancel(t);
        }
        if let Some(instance) = &m.group_instance_id {
            if self.static_members.get(instance) == Some(&key) {
                self.static_members.remove(instance);
            }
        }
        if self.leader.as_deref() == Some(member_id) {
            self.leader = self.members.keys().next().cloned();
        }
        let now = env.queue.now();
        env.metrics.member_removed(now, m.client.member, member_id);
    }

    fn remove_member(&mut self, env: &mut Env, member_id: &str, trigger: Trigger) {
        let Some(client) = self.members.get(member_id).map(|m| m.client.member) else {
            return;
        };
        self.drop_member(env, member_id);
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                if self.members.is_empty() {
                    if let Some(t) = self.sync_timer.take() {
                        env.queue.cancel(t);
                    }
                    self.state = GroupState::Empty;
                    self.generation += 1;
                    env.metrics.group_empty(env.queue.now());
                    env.log("coordinator last member gone: Empty".to_string());
                } else {
                    self.prepare_rebalance(env, trigger, Some(client));
                }
            }
            GroupState::PreparingRebalance => {
                if self.members.is_empty() {
                    self.complete_join(env);
                } else {
                    self.maybe_complete_join(env);
                }
            }
            GroupState::Empty => {}
        }
    }

    // ---- Offsets ----

    fn offset_commit(
        &mut self,
        env: &mut Env,
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
        let now = env.queue.now();
        for &(p, offset) in offsets {
            if let Some(old) = self.committed[p] {
                if offset < old {
                    env.metrics
                        .offset_regression(now, p, old, offset, from.member);
                }
            }
            self.committed[p] = Some(offset);
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
