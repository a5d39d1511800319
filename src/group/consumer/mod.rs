//! The KIP-848 consumer group coordinator (broker side), as Kafka 4.3.1's
//! `GroupMetadataManager.consumerGroupHeartbeat` runs a consumer group
//! (../shared/reference/COORDINATOR.md 5.3, ALGORITHMS.md 7):
//!
//! - every ConsumerGroupHeartbeat creates or updates its member; a join, a leave, a fence or a
//!   subscription (or subscribed metadata) change bumps the **group epoch**;
//! - the **target assignment** is recomputed by the server assignor (`uniform` or `range`, the
//!   most requested `server_assignor`) only inside a heartbeat, when the group epoch is ahead of
//!   the assignment epoch, at most once per `group.consumer.assignment.interval.ms`;
//! - each member is **reconciled** towards its target on its own heartbeats (`reconcile.rs`):
//!   revoke first, then receive what nobody holds any more; there is no group-wide barrier;
//! - timers: `session-timeout:<id>` (every heartbeat) fences a silent member,
//!   `rebalance-timeout:<id>` (a revocation requested) fences a member that does not revoke.
//!
//! Heartbeats are answered at once (nothing is parked): [`ConsumerGroup::heartbeat`] returns the
//! response and writes records, timers and facts as [`GroupEffect`]s, so a test or `cgsim
//! conform`'s replay drive it alone; behind the dispatcher, `host.rs` turns them into the
//! coordinator's effects. Classic-protocol members reach it through `bridge.rs`; a member that
//! leaves or is fenced goes through `leave.rs`. Members live in a Java `HashMap` on the broker,
//! whose iteration order is what the assignor sees (`crate::java`).

mod bridge;
mod host;
mod leave;
mod reconcile;
mod target;

pub use bridge::{ClassicJoin, ClassicJoinAnswer};
pub use host::ConsumerTopic;
pub(super) use host::{ConsumerHost, ConsumerSetup, Downgrade};

use crate::assignor::{Topic, TopicPartition};
use crate::java::{Capacity, JavaHashMap};
use crate::messages::{ErrorCode, JoinProtocol, LEAVE_EPOCH, STATIC_LEAVE_EPOCH};
use crate::scenario::MigrationPolicy;
use crate::sim::time::Duration;
use crate::sim::{Out, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// Partitions as the coordinator keys them: topic index (name order) and partition.
pub type Partitions = BTreeSet<TopicPartition>;

/// Partitions, each with the member epoch it was assigned at (KIP-1251's assignment epochs).
pub type AssignmentEpochs = BTreeMap<TopicPartition, i32>;

/// The broker's consumer-group settings (Kafka 4.3 defaults in [`Default`]).
#[derive(Clone, Debug)]
pub struct ConsumerGroupConfig {
    /// `group.consumer.heartbeat.interval.ms`.
    pub heartbeat_interval_ms: u64,
    /// `group.consumer.session.timeout.ms`.
    pub session_timeout_ms: u64,
    /// `group.consumer.assignment.interval.ms` (0: every epoch bump is assigned at once).
    pub assignment_interval_ms: u64,
    /// `group.consumer.assignors`: the first is used when no member asks for one.
    pub assignors: Vec<String>,
    /// Test-only: a deliberately broken behaviour (`cgsim fuzz --mutant`).
    pub mutant: Option<crate::scenario::Mutant>,
    /// `group.consumer.migration.policy`: whether the group goes back to classic when its
    /// last consumer-protocol member leaves.
    pub migration_policy: MigrationPolicy,
}

impl Default for ConsumerGroupConfig {
    fn default() -> Self {
        ConsumerGroupConfig {
            heartbeat_interval_ms: 5_000,
            session_timeout_ms: 45_000,
            assignment_interval_ms: 1_000,
            assignors: vec!["uniform".into(), "range".into()],
            mutant: None,
            migration_policy: MigrationPolicy::Bidirectional,
        }
    }
}

/// A ConsumerGroupHeartbeat request (v1), with Kafka's nulls: a field not sent is `None` (the
/// rebalance timeout -1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerHeartbeat {
    pub member_id: String,
    pub member_epoch: i32,
    pub instance_id: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub subscribed_topic_names: Option<Vec<String>>,
    pub server_assignor: Option<String>,
    pub owned: Option<Partitions>,
}

/// Its answer; `assignment` `None` is null (the client keeps what it has).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerHeartbeatResponse {
    pub error: ErrorCode,
    pub error_message: Option<String>,
    pub member_id: Option<String>,
    pub member_epoch: i32,
    pub heartbeat_interval_ms: i32,
    pub assignment: Option<Partitions>,
}

impl ConsumerHeartbeatResponse {
    fn error(error: ErrorCode, message: String) -> Self {
        ConsumerHeartbeatResponse {
            error,
            error_message: Some(message),
            member_id: None,
            member_epoch: 0,
            heartbeat_interval_ms: 0,
            assignment: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberState {
    Stable,
    UnrevokedPartitions,
    UnreleasedPartitions,
}

impl MemberState {
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Stable => "STABLE",
            MemberState::UnrevokedPartitions => "UNREVOKED_PARTITIONS",
            MemberState::UnreleasedPartitions => "UNRELEASED_PARTITIONS",
        }
    }
}

/// A member as the coordinator keeps it (`ConsumerGroupMember`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerMember {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: MemberState,
    /// Its current assignment, each partition with the epoch it was assigned at.
    pub assigned: AssignmentEpochs,
    /// What it must revoke, each partition with the epoch it was assigned at: still held, and
    /// its progress still committed at that epoch (KIP-1251).
    pub pending_revocation: AssignmentEpochs,
    pub subscribed_topic_names: Vec<String>,
    pub server_assignor: Option<String>,
    pub rebalance_timeout_ms: i32,
    /// A member that speaks the classic protocol through the coordinator's bridge.
    pub classic: Option<ClassicMember>,
}

/// What a consumer group keeps of a classic-protocol member (Kafka's `ClassicMemberMetadata`):
/// its session timeout and the protocols of its last JoinGroup, in its preference order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicMember {
    pub session_timeout_ms: u64,
    pub protocols: Vec<JoinProtocol>,
}

impl ConsumerMember {
    fn new(member_id: String) -> Self {
        ConsumerMember {
            member_id,
            instance_id: None,
            member_epoch: 0,
            previous_member_epoch: 0,
            state: MemberState::Stable,
            assigned: BTreeMap::new(),
            pending_revocation: AssignmentEpochs::new(),
            subscribed_topic_names: Vec::new(),
            server_assignor: None,
            rebalance_timeout_ms: -1,
            classic: None,
        }
    }

    /// A classic-protocol member brought over from a classic group or joining through the
    /// bridge.
    pub fn new_classic(member_id: String, classic: ClassicMember) -> Self {
        ConsumerMember {
            classic: Some(classic),
            ..ConsumerMember::new(member_id)
        }
    }

    /// Its session timeout: a classic member's own, else the group's.
    fn session_timeout_ms(&self, config: &ConsumerGroupConfig) -> u64 {
        self.classic
            .as_ref()
            .map_or(config.session_timeout_ms, |c| c.session_timeout_ms)
    }

    /// `updateMemberEpoch`: the old epoch becomes the previous one.
    fn set_epoch(&mut self, epoch: i32) {
        self.previous_member_epoch = self.member_epoch;
        self.member_epoch = epoch;
    }

    pub fn assigned_partitions(&self) -> Partitions {
        self.assigned.keys().copied().collect()
    }

    /// `isReconciledTo`.
    fn is_reconciled_to(&self, epoch: i32) -> bool {
        self.state == MemberState::Stable && self.member_epoch == epoch
    }

    /// What it still holds: assigned or pending revocation.
    fn holds(&self, tp: &TopicPartition) -> bool {
        self.assignment_epoch(tp).is_some()
    }

    /// The epoch a partition it holds (assigned or pending revocation) was assigned at.
    pub fn assignment_epoch(&self, tp: &TopicPartition) -> Option<i32> {
        self.assigned
            .get(tp)
            .or_else(|| self.pending_revocation.get(tp))
            .copied()
    }

    /// Whether an OffsetCommit at `epoch` may write `partitions` (`ConsumerGroup
    /// .validateOffsetCommit`, KIP-1251): at its own epoch, anything; at a newer one, nothing;
    /// at an older one (the epoch bump has not reached it yet), only partitions it still holds,
    /// assigned or pending revocation, and held since `epoch` or before.
    pub fn may_commit_at(&self, epoch: i32, partitions: &Partitions) -> bool {
        if epoch == self.member_epoch {
            return true;
        }
        epoch < self.member_epoch
            && partitions
                .iter()
                .all(|tp| self.assignment_epoch(tp).is_some_and(|at| at <= epoch))
    }
}

/// `ConsumerGroup.ConsumerGroupState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsumerGroupState {
    Empty,
    Assigning,
    Reconciling,
    Stable,
}

impl ConsumerGroupState {
    pub fn name(self) -> &'static str {
        match self {
            ConsumerGroupState::Empty => "Empty",
            ConsumerGroupState::Assigning => "Assigning",
            ConsumerGroupState::Reconciling => "Reconciling",
            ConsumerGroupState::Stable => "Stable",
        }
    }
}

/// A consumer group's timers, by Kafka's keys.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConsumerGroupTimer {
    /// `session-timeout:<member id>`.
    Session { member_id: String },
    /// `rebalance-timeout:<member id>`, for the epoch the revocation was requested at.
    Rebalance { member_id: String },
    /// A classic member told to rejoin has not sent its JoinGroup within its rebalance timeout.
    ClassicJoin { member_id: String },
    /// A classic member that joined has not sent its SyncGroup within its rebalance timeout.
    ClassicSync { member_id: String },
}

impl ConsumerGroupTimer {
    pub fn name(&self) -> String {
        match self {
            ConsumerGroupTimer::Session { member_id } => format!("session-timeout:{member_id}"),
            ConsumerGroupTimer::Rebalance { member_id } => format!("rebalance-timeout:{member_id}"),
            ConsumerGroupTimer::ClassicJoin { member_id } => format!("join-timeout:{member_id}"),
            ConsumerGroupTimer::ClassicSync { member_id } => format!("sync-timeout:{member_id}"),
        }
    }
}

/// The records a consumer group writes to `__consumer_offsets`, by Kafka's record names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsumerGroupRecord {
    MemberMetadata { member_id: String, tombstone: bool },
    GroupMetadata { epoch: i32 },
    TargetAssignmentMember { member_id: String, tombstone: bool },
    TargetAssignmentMetadata { epoch: i32 },
    CurrentMemberAssignment { member_id: String, tombstone: bool },
}

impl ConsumerGroupRecord {
    /// Kafka's name, with `(tombstone)` for a deletion.
    pub fn name(&self) -> String {
        let (name, tombstone) = match self {
            ConsumerGroupRecord::MemberMetadata { tombstone, .. } => {
                ("CONSUMER_GROUP_MEMBER_METADATA", *tombstone)
            }
            ConsumerGroupRecord::GroupMetadata { .. } => ("CONSUMER_GROUP_METADATA", false),
            ConsumerGroupRecord::TargetAssignmentMember { tombstone, .. } => {
                ("CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER", *tombstone)
            }
            ConsumerGroupRecord::TargetAssignmentMetadata { .. } => {
                ("CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA", false)
            }
            ConsumerGroupRecord::CurrentMemberAssignment { tombstone, .. } => {
                ("CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT", *tombstone)
            }
        };
        if tombstone {
            format!("{name}(tombstone)")
        } else {
            name.to_string()
        }
    }
}

/// What the coordinator wants done besides answering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupEffect {
    SetTimer {
        timer: ConsumerGroupTimer,
        at: SimTime,
    },
    CancelTimer(ConsumerGroupTimer),
    Record(ConsumerGroupRecord),
    /// The group epoch was bumped (a rebalance begins under this protocol), why, and by whom
    /// (`None`: a metadata change).
    EpochBumped {
        epoch: i32,
        cause: EpochCause,
        member_id: Option<String>,
    },
    /// A member left the group (a leave or a fence).
    Removed {
        member_id: String,
    },
    /// A member was fenced (session or rebalance timeout).
    Fenced {
        member_id: String,
    },
    /// The last consumer-protocol member left and every member left speaks the classic
    /// protocol: the group becomes a classic group (`consumerGroupFenceMember` converts it
    /// instead of bumping the epoch). The members left are the group's now.
    ConvertToClassic {
        leaving: String,
    },
    /// A classic JoinGroup took over the static entry of the last consumer-protocol member:
    /// the group becomes a classic group, Stable at the group epoch with the joining member in
    /// the replaced one's place and its assignment, and no rebalance begins unless the target
    /// assignment is `stale`, behind the group epoch
    /// (`validateOnlineDowngradeWithReplacedMemberId`, `convertToClassicGroup`).
    ConvertToClassicReplacing {
        joining: String,
        stale: bool,
    },
}

/// Why the group epoch was bumped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpochCause {
    MemberJoined,
    MemberLeft,
    MemberFenced,
    SubscriptionChanged,
    MetadataChanged,
}

/// One consumer group.
pub struct ConsumerGroup {
    config: ConsumerGroupConfig,
    /// The cluster's topics, sorted by name (topic indexes are positions here).
    topics: Vec<Topic>,
    group_epoch: i32,
    assignment_epoch: i32,
    /// When the current target was computed (`None`: never).
    assignment_time: Option<SimTime>,
    members: JavaHashMap<String, ConsumerMember>,
    /// Each member's target assignment.
    target: BTreeMap<String, Partitions>,
    /// The partition counts of the subscribed topics the group epoch was last computed
    /// against (Kafka 4.3 keeps their hash); a change is noticed on the next heartbeat.
    metadata_seen: BTreeMap<String, i32>,
    /// Metadata images since the start, and the one the group last looked at (a heartbeat
    /// recomputes the subscribed counts only when either moved or a subscription changed).
    metadata_version: u64,
    metadata_version_seen: u64,
    /// Classic members whose join timer is armed (Kafka schedules it only if absent).
    classic_join_armed: BTreeSet<String>,
    /// The member epoch each armed rebalance timer was armed at: it fences only a member still
    /// at that epoch (`scheduleConsumerGroupRebalanceTimeout` keeps it in the timer's task).
    rebalance_armed_at: BTreeMap<String, i32>,
}

/// One handler call: the time and where effects go.
struct Cx<'o> {
    now: SimTime,
    out: &'o mut Out<GroupEffect>,
}

impl Cx<'_> {
    fn record(&mut self, record: ConsumerGroupRecord) {
        self.out.push(GroupEffect::Record(record));
    }
}

impl ConsumerGroup {
    /// A new consumer group starts at group epoch 1 (`ModernGroup`), so its first join writes 2.
    pub fn new(config: ConsumerGroupConfig, topics: Vec<Topic>) -> Self {
        ConsumerGroup {
            config,
            topics,
            group_epoch: 1,
            assignment_epoch: 1,
            assignment_time: None,
            members: JavaHashMap::new(Capacity::Default),
            target: BTreeMap::new(),
            metadata_seen: BTreeMap::new(),
            metadata_version: 0,
            metadata_version_seen: 0,
            classic_join_armed: BTreeSet::new(),
            rebalance_armed_at: BTreeMap::new(),
        }
    }

    /// A classic group converted (`ConsumerGroup.fromClassicGroup`): the group and target
    /// epochs are its generation, and each member is Stable at it with its last assignment as
    /// both its current and its target assignment.
    pub fn from_classic(
        config: ConsumerGroupConfig,
        topics: Vec<Topic>,
        generation: i32,
        members: Vec<ConsumerMember>,
    ) -> Self {
        let mut group = ConsumerGroup::new(config, topics);
        group.group_epoch = generation;
        group.assignment_epoch = generation;
        for m in members {
            group
                .target
                .insert(m.member_id.clone(), m.assigned_partitions());
            group.members.insert(m.member_id.clone(), m);
        }
        // `fromClassicGroup` sets no subscription metadata and leaves the refresh deadline at
        // 0: the first heartbeat or JoinGroup after the conversion finds the metadata expired
        // and changed, bumps the group epoch and computes a target assignment with the
        // group's assignor (also when that request is a static member's new process taking
        // over its entry, which bumps nothing itself).
        group.metadata_version = 1;
        group
    }

    /// Whether any member speaks the consumer protocol.
    pub fn has_consumer_protocol_member(&self) -> bool {
        self.members.values().any(|m| m.classic.is_none())
    }

    // ---- Reading its state ----

    /// A coordinator loaded the group (`onLoaded`): every member's session timer, counted from
    /// `now`.
    pub fn session_timers_from(&self, now: SimTime) -> Vec<(ConsumerGroupTimer, SimTime)> {
        self.members
            .iter()
            .map(|(_, m)| {
                let at = now + Duration::from_millis(m.session_timeout_ms(&self.config));
                let timer = ConsumerGroupTimer::Session {
                    member_id: m.member_id.clone(),
                };
                (timer, at)
            })
            .collect()
    }

    pub fn group_epoch(&self) -> i32 {
        self.group_epoch
    }

    pub fn assignment_epoch(&self) -> i32 {
        self.assignment_epoch
    }

    pub fn assignment_time(&self) -> Option<SimTime> {
        self.assignment_time
    }

    pub fn topics(&self) -> &[Topic] {
        &self.topics
    }

    /// Members in the broker's map order (Java's iteration order, not the order they joined in).
    pub fn members(&self) -> impl Iterator<Item = &ConsumerMember> {
        self.members.iter().map(|(_, m)| m)
    }

    pub fn member(&self, member_id: &str) -> Option<&ConsumerMember> {
        self.members.get(member_id)
    }

    pub fn target_of(&self, member_id: &str) -> Partitions {
        self.target.get(member_id).cloned().unwrap_or_default()
    }

    pub fn state(&self) -> ConsumerGroupState {
        if self.members.is_empty() {
            ConsumerGroupState::Empty
        } else if self.group_epoch > self.assignment_epoch {
            ConsumerGroupState::Assigning
        } else if self
            .members
            .values()
            .all(|m| m.is_reconciled_to(self.assignment_epoch))
        {
            ConsumerGroupState::Stable
        } else {
            ConsumerGroupState::Reconciling
        }
    }

    /// The server assignor the group uses: the most requested, else the first configured.
    pub fn preferred_assignor(&self) -> Option<String> {
        target::preferred_assignor(self.members.values())
    }

    /// Whether every member's subscription is the same.
    pub fn is_homogeneous(&self) -> bool {
        let mut subs = self.members.values().map(|m| {
            let mut s = m.subscribed_topic_names.clone();
            s.sort();
            s
        });
        match subs.next() {
            None => true,
            Some(first) => subs.all(|s| s == first),
        }
    }

    /// A new metadata image: a topic's partition count changed (or it was created). Groups only
    /// notice on their next heartbeat.
    pub fn set_partitions(&mut self, topic: &str, partitions: i32) {
        if let Some(t) = self.topics.iter_mut().find(|t| t.name == topic) {
            t.partitions = partitions;
            self.metadata_version += 1;
        }
    }

    // ---- The heartbeat ----

    /// One ConsumerGroupHeartbeat at `now`.
    pub fn heartbeat(
        &mut self,
        now: SimTime,
        request: &ConsumerHeartbeat,
        out: &mut Out<GroupEffect>,
    ) -> ConsumerHeartbeatResponse {
        let mut cx = Cx { now, out };
        match request.member_epoch {
            LEAVE_EPOCH | STATIC_LEAVE_EPOCH => return self.leave(&mut cx, request),
            _ => {}
        }
        let member = match self.member_for(&mut cx, request) {
            Ok(m) => m,
            Err(response) => return response,
        };
        let is_new = !self.members.contains_key(&member.member_id);
        let mut updated = member.clone();
        // A consumer-protocol heartbeat makes the member a consumer-protocol one: a static
        // member's new process that took over a classic one's entry speaks it from now on
        // (`setClassicMemberMetadata(null)`).
        updated.classic = None;
        if let Some(id) = &request.instance_id {
            updated.instance_id = Some(id.clone());
        }
        if request.rebalance_timeout_ms != -1 {
            updated.rebalance_timeout_ms = request.rebalance_timeout_ms;
        }
        if let Some(a) = &request.server_assignor {
            updated.server_assignor = Some(a.clone());
        }
        if let Some(topics) = &request.subscribed_topic_names {
            // A dropped topic's partitions leave the current assignment in the reconciliation
            // (`reconcile.rs`), in this same heartbeat.
            updated.subscribed_topic_names = topics.clone();
        }
        let reconciled = self.update_and_reconcile(
            &mut cx,
            &member,
            updated,
            is_new,
            request.owned.as_ref(),
            true,
        );
        self.schedule_session(&mut cx, &reconciled.member_id);
        // The assignment goes back on a full request or when it changed.
        let full = request.member_epoch == 0
            || (request.rebalance_timeout_ms != -1
                && request.subscribed_topic_names.is_some()
                && request.owned.is_some());
        let changed = member.assigned_partitions() != reconciled.assigned_partitions();
        ConsumerHeartbeatResponse {
            error: ErrorCode::None,
            error_message: None,
            member_id: Some(reconciled.member_id.clone()),
            member_epoch: reconciled.member_epoch,
            heartbeat_interval_ms: self.config.heartbeat_interval_ms as i32,
            assignment: (full || changed).then(|| reconciled.assigned_partitions()),
        }
    }

    /// Steps 1 to 3 of a heartbeat, or of a classic member's JoinGroup: the member's metadata
    /// (a group epoch bump for a new or changed subscription), the target assignment if it is
    /// behind, and the member reconciled towards its target given what it `owned`. With
    /// `rebalance_timer`, a revocation requested arms the member's rebalance timer.
    fn update_and_reconcile(
        &mut self,
        cx: &mut Cx,
        member: &ConsumerMember,
        updated: ConsumerMember,
        is_new: bool,
        owned: Option<&Partitions>,
        rebalance_timer: bool,
    ) -> ConsumerMember {
        // 1. The member's metadata, and a group epoch bump for a new or changed subscription.
        let metadata_changed = is_new
            || updated.instance_id != member.instance_id
            || updated.rebalance_timeout_ms != member.rebalance_timeout_ms
            || updated.server_assignor != member.server_assignor
            || updated.subscribed_topic_names != member.subscribed_topic_names
            || updated.classic != member.classic;
        if metadata_changed {
            cx.record(ConsumerGroupRecord::MemberMetadata {
                member_id: updated.member_id.clone(),
                tombstone: false,
            });
        }
        let subscription_changed =
            is_new || updated.subscribed_topic_names != member.subscribed_topic_names;
        self.members
            .insert(updated.member_id.clone(), updated.clone());
        // The subscribed topics' counts, recomputed only when a subscription or the metadata
        // moved (every heartbeat would cost a pass over the members).
        let mut metadata_moved = false;
        if subscription_changed || self.metadata_version != self.metadata_version_seen {
            self.metadata_version_seen = self.metadata_version;
            let seen = self.subscribed_metadata();
            metadata_moved = seen != self.metadata_seen;
            self.metadata_seen = seen;
        }
        if subscription_changed || metadata_moved {
            let cause = if is_new {
                EpochCause::MemberJoined
            } else if subscription_changed {
                EpochCause::SubscriptionChanged
            } else {
                EpochCause::MetadataChanged
            };
            let by = (cause != EpochCause::MetadataChanged).then_some(updated.member_id.as_str());
            self.bump_epoch(cx, cause, by);
        }
        // 2. The target assignment, if it is behind and may be recomputed now.
        if self.group_epoch > self.assignment_epoch && self.may_assign(cx.now) {
            self.compute_target(cx, member, &updated);
        }
        // 3. Reconcile the member towards its target, or with its new subscription
        // (`maybeReconcile`: a member reconciled to the target is left alone unless its
        // subscription changed).
        let target = self.target_of(&updated.member_id);
        let reconciled = if !subscription_changed && updated.is_reconciled_to(self.assignment_epoch)
        {
            updated.clone()
        } else {
            let id = updated.member_id.clone();
            let members = &self.members;
            // Kafka's `currentPartitionEpoch != -1`: another member still holds it (a static
            // member away at epoch -2 included).
            // MUTANT(early-assign): nothing counts as held elsewhere, so a partition moves
            // before its owner released it.
            let early = self.config.mutant == Some(crate::scenario::Mutant::EarlyAssign);
            let held_elsewhere = |tp: TopicPartition| {
                !early && members.values().any(|m| m.member_id != id && m.holds(&tp))
            };
            let subscribed = self.subscribed_topics(&updated);
            let towards = reconcile::Towards {
                target_epoch: self.assignment_epoch,
                target: &target,
                owned,
                held_elsewhere: &held_elsewhere,
                subscribed: &|t| subscribed.get(t as usize).copied().unwrap_or(false),
                subscription_changed,
            };
            reconcile::reconcile(&updated, &towards)
        };
        if !same_assignment(&reconciled, member) {
            cx.record(ConsumerGroupRecord::CurrentMemberAssignment {
                member_id: reconciled.member_id.clone(),
                tombstone: false,
            });
            let timer = ConsumerGroupTimer::Rebalance {
                member_id: reconciled.member_id.clone(),
            };
            if !rebalance_timer {
                // A classic member's JoinGroup: its join and sync timers watch it instead.
            } else if reconciled.state == MemberState::UnrevokedPartitions {
                let at =
                    cx.now + Duration::from_millis(reconciled.rebalance_timeout_ms.max(0) as u64);
                self.rebalance_armed_at
                    .insert(reconciled.member_id.clone(), reconciled.member_epoch);
                cx.out.push(GroupEffect::SetTimer { timer, at });
            } else {
                self.rebalance_armed_at.remove(&reconciled.member_id);
                cx.out.push(GroupEffect::CancelTimer(timer));
            }
        }
        self.members
            .insert(reconciled.member_id.clone(), reconciled.clone());
        reconciled
    }

    /// The member a heartbeat is for: found, created (epoch 0) or a static member's new process
    /// taking over its instance; or the error Kafka answers.
    fn member_for(
        &mut self,
        cx: &mut Cx,
        request: &ConsumerHeartbeat,
    ) -> Result<ConsumerMember, ConsumerHeartbeatResponse> {
        let id = &request.member_id;
        if let Some(instance) = &request.instance_id {
            if let Some(old) = self.static_member(instance).cloned() {
                // Past its first heartbeat a member whose instance id another member holds
                // was replaced: fenced (`throwIfInstanceIdIsFenced`). The holder itself goes on
                // to the epoch checks below.
                if request.member_epoch != 0 && &old.member_id != id {
                    return Err(ConsumerHeartbeatResponse::error(
                        ErrorCode::FencedInstanceId,
                        format!(
                            "Static member {id} with instance id {instance} was fenced by member {}.",
                            old.member_id
                        ),
                    ));
                }
                // A static member's epoch 0 always goes through
                // `getOrMaybeSubscribeStaticConsumerGroupMember`: it takes over only an instance
                // its holder released with a leave (epoch -2), whatever the holder's member id,
                // its own included (a static member fenced by its epoch cannot rejoin until its
                // session ends), unless the holder speaks the classic protocol
                // (`throwIfInstanceIdIsUnreleased` is checked only between two consumer-protocol
                // members).
                if request.member_epoch == 0 {
                    if old.classic.is_none() && old.member_epoch != STATIC_LEAVE_EPOCH {
                        return Err(ConsumerHeartbeatResponse::error(
                            ErrorCode::UnreleasedInstanceId,
                            format!(
                                "Static member {id} with instance id {instance} cannot join the group because the instance id is owned by {} member.",
                                old.member_id
                            ),
                        ));
                    }
                    return Ok(self.replace_static(cx, old, id));
                }
            }
        }
        match self.members.get(id) {
            None if request.member_epoch == 0 => Ok(ConsumerMember::new(id.clone())),
            None => Err(ConsumerHeartbeatResponse::error(
                ErrorCode::UnknownMemberId,
                format!("Member {id} is not a member of group."),
            )),
            Some(m) if request.member_epoch == 0 => Ok(m.clone()),
            Some(m) => {
                let epoch = request.member_epoch;
                // `isSubset`: a heartbeat that reports nothing (`owned` null) proves nothing,
                // so the previous epoch is accepted only with an `owned` inside the assignment.
                let subset = request
                    .owned
                    .as_ref()
                    .is_some_and(|owned| owned.iter().all(|tp| m.assigned.contains_key(tp)));
                let fenced = epoch > m.member_epoch
                    || (epoch < m.member_epoch && (epoch != m.previous_member_epoch || !subset));
                if fenced {
                    let side = if epoch > m.member_epoch {
                        "greater"
                    } else {
                        "smaller"
                    };
                    return Err(ConsumerHeartbeatResponse::error(
                        ErrorCode::FencedMemberEpoch,
                        format!(
                            "The consumer group member has a {side} member epoch ({epoch}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
                            m.member_epoch
                        ),
                    ));
                }
                Ok(m.clone())
            }
        }
    }

    /// KIP-345 under KIP-848: a static member's new process takes over the old member's
    /// assignment at epoch 0, without a group epoch bump. Its member id is usually a new one;
    /// a member that left with epoch -2 and rejoins with its own id is replaced by itself
    /// the same way (`replaceMember`).
    fn replace_static(&mut self, cx: &mut Cx, old: ConsumerMember, new_id: &str) -> ConsumerMember {
        let target = self.target.remove(&old.member_id).unwrap_or_default();
        self.remove_member(cx, &old.member_id);
        let mut member = old.clone();
        member.member_id = new_id.to_string();
        member.previous_member_epoch = 0;
        member.member_epoch = 0;
        cx.record(ConsumerGroupRecord::MemberMetadata {
            member_id: new_id.to_string(),
            tombstone: false,
        });
        cx.record(ConsumerGroupRecord::TargetAssignmentMember {
            member_id: new_id.to_string(),
            tombstone: false,
        });
        cx.record(ConsumerGroupRecord::CurrentMemberAssignment {
            member_id: new_id.to_string(),
            tombstone: false,
        });
        self.target.insert(new_id.to_string(), target);
        // The new process is a member already: no join bump.
        self.members.insert(new_id.to_string(), member.clone());
        member
    }

    /// `staticMember`: the member holding the instance id, if any.
    pub(super) fn static_member(&self, instance: &str) -> Option<&ConsumerMember> {
        self.members
            .values()
            .find(|m| m.instance_id.as_deref() == Some(instance))
    }

    /// `allMembersUseClassicProtocolExcept`: `member_id` speaks the consumer protocol and
    /// every other member the classic one.
    pub(super) fn all_classic_except(&self, member_id: &str) -> bool {
        let consumer = self
            .members
            .get(member_id)
            .is_some_and(|m| m.classic.is_none());
        consumer
            && self
                .members
                .values()
                .all(|m| m.member_id == member_id || m.classic.is_some())
    }

    fn bump_epoch(&mut self, cx: &mut Cx, cause: EpochCause, member_id: Option<&str>) {
        self.group_epoch += 1;
        cx.record(ConsumerGroupRecord::GroupMetadata {
            epoch: self.group_epoch,
        });
        cx.out.push(GroupEffect::EpochBumped {
            epoch: self.group_epoch,
            cause,
            member_id: member_id.map(str::to_string),
        });
    }

    /// Whether `member` subscribes to each topic, by topic index, of those that exist (Kafka's
    /// `TopicIds` of its subscription): each name looked up once, not once for each partition.
    fn subscribed_topics(&self, member: &ConsumerMember) -> Vec<bool> {
        let wanted: BTreeSet<&str> = member
            .subscribed_topic_names
            .iter()
            .map(String::as_str)
            .collect();
        self.topics
            .iter()
            .map(|t| t.partitions > 0 && wanted.contains(t.name.as_str()))
            .collect()
    }

    /// Partition counts of every topic a member subscribes to (0: not created yet).
    fn subscribed_metadata(&self) -> BTreeMap<String, i32> {
        // Each name once, looked up by name: 100 members subscribed to 1,000 topics cloned
        // 100,000 names at each join.
        let by_name = target::topics_by_name(&self.topics);
        let mut names: BTreeSet<&str> = BTreeSet::new();
        let mut last: Option<&[String]> = None;
        for m in self.members.values() {
            // Members mostly subscribe alike: a list equal to the one before adds nothing.
            let list = m.subscribed_topic_names.as_slice();
            if last != Some(list) {
                names.extend(list.iter().map(String::as_str));
                last = Some(list);
            }
        }
        names
            .into_iter()
            .map(|name| {
                let partitions = by_name.get(name).map_or(0, |&i| self.topics[i].partitions);
                (name.to_string(), partitions)
            })
            .collect()
    }

    /// `canComputeNextTargetAssignment`: never computed, an interval of 0, or the interval has
    /// passed since the last computation.
    fn may_assign(&self, now: SimTime) -> bool {
        match self.assignment_time {
            None => true,
            Some(_) if self.config.assignment_interval_ms == 0 => true,
            Some(at) => now >= at + Duration::from_millis(self.config.assignment_interval_ms),
        }
    }

    /// Recomputes the target at the group epoch, in the heartbeat that turned `before` into
    /// `after` (`maybeUpdateTargetAssignment`, GMM:3858), and writes what changed.
    fn compute_target(&mut self, cx: &mut Cx, before: &ConsumerMember, after: &ConsumerMember) {
        let name = target::preferred_for_target(&self.members, before, after)
            .unwrap_or_else(|| self.config.assignors[0].clone());
        let target = target::compute(&self.topics, &self.members, &self.target, &name);
        for (id, parts) in &target {
            let before = self.target.get(id);
            if before.map_or(!parts.is_empty(), |b| b != parts) {
                cx.record(ConsumerGroupRecord::TargetAssignmentMember {
                    member_id: id.clone(),
                    tombstone: false,
                });
            }
        }
        cx.record(ConsumerGroupRecord::TargetAssignmentMetadata {
            epoch: self.group_epoch,
        });
        self.target = target;
        self.assignment_epoch = self.group_epoch;
        self.assignment_time = Some(cx.now);
    }

    fn schedule_session(&mut self, cx: &mut Cx, member_id: &str) {
        let timeout = self
            .members
            .get(member_id)
            .map_or(self.config.session_timeout_ms, |m| {
                m.session_timeout_ms(&self.config)
            });
        let at = cx.now + Duration::from_millis(timeout);
        cx.out.push(GroupEffect::SetTimer {
            timer: ConsumerGroupTimer::Session {
                member_id: member_id.to_string(),
            },
            at,
        });
    }
}

/// Whether two versions of a member have the same assignment state (what the
/// CURRENT_MEMBER_ASSIGNMENT record holds).
fn same_assignment(a: &ConsumerMember, b: &ConsumerMember) -> bool {
    a.member_epoch == b.member_epoch
        && a.previous_member_epoch == b.previous_member_epoch
        && a.state == b.state
        && a.assigned == b.assigned
        && a.pending_revocation == b.pending_revocation
}

#[cfg(test)]
mod tests;
