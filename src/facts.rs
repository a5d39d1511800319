//! Facts: what the state machines say happened, in Kafka's words. A model records a fact as one
//! of its effects; the world hands every fact to the observers (metrics today, the checkers
//! next), which keep their own record of the truth. Nothing here feeds back into a model.
//!
//! Members are scenario member indexes, partitions global partition indexes
//! (`cluster::PartitionSpace`).

use crate::cluster::PartitionLookup;
use crate::messages::{ErrorCode, RequestKind, Trigger};
use crate::sim::SimTime;
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    // ---- The coordinator (broker side) ----
    /// A member was added to the group under `member_id`, by a JoinGroup (or KIP-848
    /// heartbeat) from the member's process `incarnation`.
    MemberAdded {
        member: usize,
        incarnation: u32,
        member_id: String,
    },
    /// KIP-345: a static member's new process took over its instance's entry.
    MemberReplaced { member: usize, member_id: String },
    /// The coordinator removed the member (left, expired, or did not rejoin or sync in time).
    MemberRemoved { member: usize, member_id: String },
    /// The join phase completed at `generation` without this static member: it did not rejoin
    /// within the rebalance timeout, and Kafka keeps a static member in the group (only dynamic
    /// ones are removed, `completeClassicGroupJoin`), but its generation is over: its partitions
    /// go to the new generation's assignment and its commits are fenced (`ILLEGAL_GENERATION`,
    /// `ClassicGroup.validateOffsetCommit`).
    MissedRejoin {
        member: usize,
        member_id: String,
        generation: i32,
    },
    /// The group went to PreparingRebalance for `generation` (the one the rebalance makes).
    RebalanceStarted {
        generation: i32,
        trigger: Trigger,
        member: Option<usize>,
    },
    /// The join phase completed: CompletingRebalance with `generation`, the group's
    /// `protocol_name` (the assignor every member supports that most of them prefer).
    JoinCompleted { generation: i32, assignor: String },
    /// The leader's SyncGroup made the group Stable.
    GroupStable { generation: i32 },
    /// The group has no members left.
    GroupEmpty,
    /// KIP-848: a member's heartbeat reported what it owns (as the coordinator received it).
    OwnedReported {
        member: usize,
        partitions: Vec<usize>,
    },
    /// KIP-848: the coordinator's answer gave the member this whole assignment.
    AssignmentSent {
        member: usize,
        partitions: Vec<usize>,
    },
    /// KIP-848: the consumer group wrote a record (and replayed it into its state, as Kafka's
    /// coordinator does), with what a describe reads from it.
    ConsumerGroupRecorded(ConsumerRecord),
    /// The coordinator stored a committed offset.
    /// An OffsetFetch read a partition's committed offset from `__consumer_offsets`.
    CommittedRead {
        partition: usize,
        offset: Option<u64>,
    },
    OffsetCommitted {
        member: usize,
        partition: usize,
        offset: u64,
    },

    // ---- A consumer (client side) ----
    /// A new process starts (first start or restart).
    ProcessStarted { member: usize },
    /// The member sends a JoinGroup without a member id: it joins as a new member.
    Joining { member: usize },
    /// `close()` was called.
    CloseRequested { member: usize },
    /// The process finished closing.
    ProcessStopped { member: usize },
    /// The process died owning `owned`.
    Crashed { member: usize, owned: Vec<usize> },
    /// The poll loop is stuck inside a batch until `until`.
    Stalled { member: usize, until: SimTime },
    /// The stalled batch finished.
    StallEnded { member: usize },
    /// The member learned it must rejoin the group (classic protocol), and how: what `cgsim
    /// explain` tells a rebalance's story with. Recorded once per rejoin, when first needed.
    RejoinNeeded { member: usize, cause: RejoinCause },
    /// The heartbeat thread found `max.poll.interval.ms` passed since the poll at `last_poll`:
    /// the member leaves the group (LeaveGroup, or KIP-848's epoch -1 heartbeat).
    PollTimeout { member: usize, last_poll: SimTime },
    /// The member's process is `running` (started, and neither stopped, crashed nor stuck in
    /// its assignor), and `step` is where it is in a rebalance (`None`: done, or not running),
    /// in words: reported by the client whenever either changes. What the settle property
    /// reads of each member.
    RebalanceStep {
        member: usize,
        running: bool,
        step: Option<&'static str>,
    },
    /// The group's `state` by Kafka's name for its type, its `generation` (a consumer group's
    /// group epoch), whether it is `at_rest` (a classic group Stable, a consumer group Stable
    /// or Empty) and whether it is `empty`: reported by the coordinator whenever any changes
    /// (and once at the start). What the settle property reads of the group.
    GroupState {
        state: &'static str,
        generation: i32,
        at_rest: bool,
        empty: bool,
    },
    /// A fatal error: `KafkaConsumer.poll` throws and the application exits.
    FatalError { member: usize, error: FatalError },
    /// The member sends a JoinGroup (every one, with or without a member id): where Kafka's
    /// `initiateJoinGroup` starts a rebalance's clock and `join-time` a round trip.
    JoinGroupSent { member: usize },
    /// KIP-848: the consumer's `MemberState` changed to `state` (`JOINING`, `RECONCILING`,
    /// `ACKNOWLEDGING`, `STABLE`, `FENCED`, `STALE`, `LEAVING`), as
    /// `AbstractMembershipManager.transitionTo` logs it; for `cgsim lab`'s state at an instant.
    MemberStateChanged { member: usize, state: &'static str },
    /// KIP-848: the member's state became RECONCILING (the consumer's rebalance clock starts:
    /// `AbstractMembershipManager.transitionTo` -> `recordRebalanceStarted`).
    ReconcilingStarted { member: usize },
    /// KIP-848: RECONCILING -> ACKNOWLEDGING or STABLE (`recordRebalanceEnded`).
    ReconcilingEnded { member: usize },
    /// KIP-848: the background thread queued a rebalance callback for the application thread's
    /// next poll (`enqueueConsumerRebalanceListenerCallback`): the reconciliation's revocation,
    /// or its assignment once the revocation completed.
    CallbackQueued { member: usize, callback: Callback },
    /// KIP-848: a ConsumerGroupHeartbeat answer gave the member another member epoch than the
    /// one it had (`onHeartbeatSuccess` -> `updateMemberEpoch`).
    MemberEpochChanged { member: usize, epoch: i32 },
    /// KIP-848: a ConsumerGroupHeartbeat answer carried an error (`onHeartbeatFailure`, which
    /// counts a failed rebalance if one had started).
    HeartbeatFailed { member: usize, error: ErrorCode },
    /// The member handles a JoinGroup answer (the consumer reads it at its next poll): `error`
    /// NONE is a successful join, which sends the SyncGroup at once; any other fails the
    /// attempt (`failed-rebalance`).
    JoinGroupAnswered { member: usize, error: ErrorCode },
    /// A JoinGroup answer made the member the leader (classic protocol): it runs the assignor
    /// on `partition_counts` (its metadata, per scenario topic) or, a returning static leader
    /// told to skip the assignment (KIP-814), keeps the group's assignment and from here on
    /// watches for changes from `partition_counts` on.
    LeaderElected {
        member: usize,
        skip_assignment: bool,
        partition_counts: Vec<u32>,
    },
    /// A busy member's SyncGroup answer arrived: its heartbeat thread's pass at `at` reads it
    /// (Kafka runs the answer's handler there) unless the application thread polls first.
    SyncGroupRead { member: usize, at: SimTime },
    /// The member handles a SyncGroup answer for `generation` (-1, Kafka's NO_GENERATION, if
    /// it has none): with NONE it is the end of a successful rebalance (`rebalance-latency`) and
    /// `assignment` what the coordinator gave it.
    SyncGroupAnswered {
        member: usize,
        generation: i32,
        error: ErrorCode,
        assignment: Vec<usize>,
    },
    /// The member did not take generation `generation`'s assignment: it names `partitions`,
    /// of topics it no longer subscribes to (`checkAssignmentMatchedSubscription`), and it
    /// rejoins.
    AssignmentRefused {
        member: usize,
        generation: i32,
        partitions: Vec<usize>,
    },
    /// The member's `request`, sent `waited_ms` ago, got no answer within its timeout
    /// (`request.timeout.ms`, a JoinGroup's the rebalance timeout and 5 s more; a connection's
    /// setup timeout while it is not set up): the client closed the connection, and the request
    /// failed with a disconnect (`NetworkClient.handleTimedOutRequests`).
    RequestTimedOut {
        member: usize,
        request: RequestKind,
        waited_ms: u64,
    },
    /// A rebalance-listener callback ran for `ms` of the member's time (Kafka's
    /// `partition-revoked-latency`, `partition-assigned-latency`, `partition-lost-latency`).
    ListenerTime {
        member: usize,
        callback: Callback,
        ms: u64,
    },
    /// A poll returned fewer records of a partition than its fetch saw: the fetch's high
    /// watermark minus the position after the batch (`records-lag`, only when above 0).
    FetchLag {
        member: usize,
        partition: usize,
        lag: u64,
    },
    /// A poll took `records` of a partition from a replica in another rack than the member's
    /// (cross-zone traffic).
    CrossRackFetched {
        member: usize,
        partition: usize,
        records: u64,
    },
    /// The client lost track of its coordinator (a failed request, NOT_COORDINATOR) and looks
    /// for it again.
    CoordinatorUnknown {
        member: usize,
        error: crate::messages::ErrorCode,
    },
    /// The client found its coordinator again.
    CoordinatorFound { member: usize, broker: u32 },
    /// A poll blocked looking for the coordinator (`ensureCoordinatorReady` up to the poll's
    /// timeout) for this long before it fetched anyway.
    PollBlockedOnCoordinator { member: usize, ms: u64 },
    // ---- The cluster ----
    /// The broker holding the group's coordinator crashed: the coordinator's memory is gone.
    CoordinatorFailed { broker: u32 },
    /// The leadership of the group's `__consumer_offsets` partition moved (`to: None`: it has
    /// no leader); the new coordinator loads the group.
    CoordinatorMoved { from: Option<u32>, to: Option<u32> },
    /// The new coordinator has loaded the group.
    CoordinatorLoaded,
    /// A network partition cut the member's process off from the coordinator's broker until
    /// `until`; the coordinator goes on counting it as a member that owns its partitions until
    /// its session expires (recorded by the world, which applies the timeline's cuts).
    CutOffFromCoordinator { member: usize, until: SimTime },
    /// A topic grew (`kafka-topics --alter --partitions`): `topic`'s new count, and every
    /// scenario topic's partition count from this instant on, in scenario order.
    PartitionsAdded { topic: usize, counts: Vec<u32> },
    /// The online migration converted the group (KIP-848): to a consumer group when a
    /// consumer-protocol member joined a classic group (`to_consumer`), or back to classic when
    /// the last one left or a static member's classic process took over its entry
    /// (`replaced`); `by` is that member, `epoch` the generation carried over, `members` those
    /// brought over and `assignments` (in the same order) the partitions the new group records
    /// each of them as owning.
    GroupConverted {
        to_consumer: bool,
        by: Option<usize>,
        replaced: bool,
        epoch: i32,
        members: Vec<usize>,
        assignments: Vec<Vec<usize>>,
    },
    /// A partition cannot be fetched (`open`) or can again, by every member (`member: None`)
    /// or by one.
    FetchGap {
        partition: usize,
        member: Option<usize>,
        cause: crate::cluster::availability::GapCause,
        open: bool,
    },
    /// `onPartitionsAssigned` (SyncGroup's assignment minus what the member owned).
    Assigned {
        member: usize,
        partitions: Vec<usize>,
    },
    /// A SyncGroup's assignment kept these partitions the member already held: no callback
    /// (`onPartitionsAssigned` lists only what was added). Observers that ended its ownership
    /// while the client went on holding them (a static member a join phase completed without,
    /// `MissedRejoin`, handed back what it never gave up) see it own them again from here.
    /// The world records it too when a new coordinator loads the group: for each running
    /// member the loaded group holds under its process's member id and generation, what it
    /// still holds of its stored assignment (a member the old coordinator removed from its
    /// memory only, with no record written since, is a member again).
    Kept {
        member: usize,
        partitions: Vec<usize>,
    },
    /// `onPartitionsRevoked` during a rebalance.
    Revoked {
        member: usize,
        partitions: Vec<usize>,
    },
    /// `onPartitionsRevoked` from `close()`.
    RevokedOnClose {
        member: usize,
        partitions: Vec<usize>,
    },
    /// `onPartitionsLost`.
    Lost {
        member: usize,
        partitions: Vec<usize>,
    },
    /// Fetch positions are known: processing of these partitions can start.
    ProcessingStarted {
        member: usize,
        partitions: Vec<usize>,
    },
    /// A partition's fetch position was set (committed offset or `auto.offset.reset`).
    PositionSet { partition: usize, position: u64 },
    /// Records `[from, to)` of a partition were processed.
    Processed {
        member: usize,
        partition: usize,
        from: u64,
        to: u64,
    },
    /// The local join looked a notification up (`Err`: missed, for one reason).
    Notification {
        outcome: Result<(), Miss>,
        latency_us: u64,
    },
    /// State recovery of a price partition began: `records` replayed over `duration_us`.
    RestoreStarted {
        member: usize,
        partition: usize,
        standby: bool,
        records: u64,
        duration_us: u64,
    },
}

/// Why Kafka stopped a member's application for good ([`Fact::FatalError`]); its
/// [`name`](FatalError::name) is what the report's `errors[]` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FatalError {
    /// The coordinator answered an error the consumer does not survive
    /// (INCONSISTENT_GROUP_PROTOCOL, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, ...).
    Coordinator(crate::messages::ErrorCode),
    /// SyncGroup answered COORDINATOR_LOAD_IN_PROGRESS, which the classic client does not
    /// retry there.
    SyncGroupLoadInProgress,
    /// The leader's assignor threw the exception Kafka's own assignor throws at that point.
    KafkasAssignorThrew(JavaException),
    /// The leader's assignor failed where Kafka's would not (a limit of the model's own).
    AssignorFailed,
    /// The leader's assignor never returns: its poll thread spins in `assign()`, as Kafka's
    /// sticky assignors do on some inputs.
    AssignorSpins,
}

/// The exceptions Kafka's own assignors throw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JavaException {
    NullPointerException,
    IllegalStateException,
}

impl JavaException {
    pub const ALL: [JavaException; 2] = [
        JavaException::NullPointerException,
        JavaException::IllegalStateException,
    ];

    pub fn name(self) -> &'static str {
        match self {
            JavaException::NullPointerException => "NullPointerException",
            JavaException::IllegalStateException => "IllegalStateException",
        }
    }
}

impl FatalError {
    /// In words, as the report lists it.
    pub fn name(self) -> &'static str {
        match self {
            FatalError::Coordinator(code) => code.name(),
            FatalError::SyncGroupLoadInProgress => "COORDINATOR_LOAD_IN_PROGRESS (SyncGroup)",
            FatalError::KafkasAssignorThrew(JavaException::NullPointerException) => {
                "NullPointerException (the leader's assignor)"
            }
            FatalError::KafkasAssignorThrew(JavaException::IllegalStateException) => {
                "IllegalStateException (the leader's assignor)"
            }
            FatalError::AssignorFailed => "the leader's assignor failed",
            FatalError::AssignorSpins => "the leader's assignor never returns (poll() spins in it)",
        }
    }
}

/// Why a notification of the partition-local join missed (`app/join.rs` decides it), in
/// DESIGN.md's order of precedence. Recorded in [`Fact::Notification`]'s outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The price partition is owned by another member.
    NotCoLocated,
    /// No price for the symbol was produced before the notification.
    NoPriceYet,
    /// The price is in the log but not yet processed here.
    OutOfOrder,
    /// This member's state for the price partition is being rebuilt.
    Restoring,
    /// The price is before this member's start position and was never restored.
    StateEmpty,
}

/// How a classic member learned it must rejoin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejoinCause {
    /// A heartbeat answer said REBALANCE_IN_PROGRESS (read on the heartbeat thread's pass, or
    /// by the next poll if that came first).
    HeartbeatRebalance,
    /// A heartbeat answer ended the membership (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, ...).
    HeartbeatError(ErrorCode),
    /// An OffsetCommit answer said REBALANCE_IN_PROGRESS (`requestRejoin`).
    CommitRebalance,
    /// An OffsetCommit answer ended the membership (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION:
    /// `resetStateOnResponseError`).
    CommitError(ErrorCode),
    /// COOPERATIVE: it revoked partitions after the SyncGroup, so it rejoins for the follow-up.
    FollowUp,
    /// Its subscription changed.
    Subscription,
    /// The leader saw partition counts change since it last assigned.
    Metadata,
}

/// A consumer group record, as its replay changes what ConsumerGroupDescribe returns. Every
/// record about a member `put`s it in the group's member map (a `TimelineHashMap`) except a
/// member-metadata tombstone, which removes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsumerRecord {
    /// CONSUMER_GROUP_MEMBER_METADATA (`tombstone`: the member is gone).
    Member {
        member_id: String,
        member: Option<usize>,
        tombstone: bool,
    },
    /// CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: the member's epoch, whether its state is
    /// STABLE, and what it is assigned (a tombstone: epoch -1 and nothing).
    CurrentAssignment {
        member_id: String,
        member_epoch: i32,
        stable: bool,
        assigned: Vec<usize>,
    },
    /// CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER (`None`: a tombstone).
    TargetMember {
        member_id: String,
        partitions: Option<Vec<usize>>,
    },
    /// CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: the target assignment epoch.
    TargetEpoch { epoch: i32 },
    /// CONSUMER_GROUP_METADATA: the group epoch.
    GroupEpoch { epoch: i32 },
}

/// A `ConsumerRebalanceListener` callback, as Kafka's consumer metrics name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callback {
    /// `onPartitionsRevoked` (in a rebalance or from `close()`).
    Revoked,
    Assigned,
    Lost,
}

/// Each member's current member id: the last one the coordinator added for the member's
/// newest process, or put in place of a static member's. A JoinGroup that an earlier process
/// sent before it closed can reach the coordinator after the new process has joined (held by a
/// latency spike): the coordinator adds that id too, a member no running process stands behind,
/// until its LeaveGroup or its session removes it. Neither that add nor that removal is the
/// running process's.
#[derive(Clone, Debug, Default)]
pub struct MemberIds {
    ids: Vec<Option<(u32, String)>>,
}

impl MemberIds {
    /// Takes in a fact: whether it makes `member_id` the member's current id (an add by an
    /// earlier process than the one whose id is current does not).
    pub fn observe(&mut self, fact: &Fact) -> bool {
        let (member, incarnation, member_id) = match fact {
            Fact::MemberAdded {
                member,
                incarnation,
                member_id,
            } => (*member, Some(*incarnation), member_id),
            // `replaceStaticMember` puts the new id in the instance's entry, whichever process
            // sent it: the process holding the old one is fenced.
            Fact::MemberReplaced { member, member_id } => (*member, None, member_id),
            _ => return false,
        };
        if self.ids.len() <= member {
            self.ids.resize(member + 1, None);
        }
        let current = &mut self.ids[member];
        let newest = current.as_ref().map_or(0, |(i, _)| *i);
        if incarnation.is_some_and(|i| i < newest) {
            return false;
        }
        *current = Some((incarnation.unwrap_or(newest), member_id.clone()));
        true
    }

    /// The member's current id, if it has had one.
    pub fn current(&self, member: usize) -> Option<&str> {
        self.ids.get(member)?.as_ref().map(|(_, id)| id.as_str())
    }

    /// Whether removing `member_id` ends the member's current membership: it is its current
    /// id, or it has none known. A crashed process's old id expiring after its restart joined
    /// under a new one, or an earlier process's late add, ends nothing of the running one's.
    pub fn removes_current(&self, member: usize, member_id: &str) -> bool {
        self.current(member)
            .is_none_or(|current| current == member_id)
    }
}

/// KIP-848 answers that belong to a member's previous membership, told from the facts: what
/// the coordinator's answers gave each member since it was last added, and what they had
/// given it when it was last removed. An answer is on the wire until it arrives, so one sent
/// before the removal can arrive after the member rejoined, and Kafka's client takes it
/// (`ConsumerMembershipManager.onHeartbeatSuccess` reads any answer while JOINING). A
/// partition it takes that way is a zombie's claim: the coordinator has handed it on and
/// fences the member's next heartbeat. The checkers and the metrics both read it.
///
/// So is a partition the coordinator freed on the member's word before the member took it:
/// a heartbeat that left it out, sent while the `onPartitionsAssigned` that takes it had not
/// completed (`CurrentAssignmentBuilder.ownsRevokedPartitions`), and handed to another member;
/// the callback still completes afterwards (`AbstractMembershipManager.revokeAndAssign` does
/// not abort for a newer epoch).
#[derive(Clone, Debug, Default)]
pub struct LateAnswers {
    /// Per partition: the member the coordinator's answers last gave it to, and whether that
    /// member has taken it since.
    last_sent: Vec<Option<(usize, bool)>>,
    /// Per partition: the member whose report left it out after it was sent to it, before
    /// it took it.
    freed_on_word_of: Vec<Option<usize>>,
    member_ids: MemberIds,
    /// `None` until the coordinator answers the membership with an assignment: a classic
    /// membership never is (its SyncGroup answers are not heartbeat answers), and nothing it
    /// takes is late.
    sent_this_membership: Vec<Option<BTreeSet<usize>>>,
    sent_before_removal: Vec<BTreeSet<usize>>,
}

impl LateAnswers {
    pub fn observe(&mut self, fact: &Fact) {
        match fact {
            Fact::MemberAdded { member, .. } | Fact::MemberReplaced { member, .. } => {
                self.grow(*member);
                if self.member_ids.observe(fact) {
                    self.sent_this_membership[*member] = None;
                }
            }
            Fact::MemberRemoved { member, member_id } => {
                self.grow(*member);
                if self.member_ids.removes_current(*member, member_id) {
                    self.sent_before_removal[*member] = self.sent_this_membership[*member]
                        .take()
                        .unwrap_or_default();
                }
            }
            // A group converted either way starts over: a classic group's assignments are
            // not heartbeat answers, and the members a consumer group brings over are added.
            Fact::GroupConverted { .. } => {
                self.sent_this_membership.fill(None);
                self.sent_before_removal.fill(BTreeSet::new());
                self.last_sent.fill(None);
                self.freed_on_word_of.fill(None);
            }
            Fact::AssignmentSent { member, partitions } => {
                self.grow(*member);
                self.sent_this_membership[*member]
                    .get_or_insert_with(BTreeSet::new)
                    .extend(partitions.iter().copied());
                for &p in partitions {
                    if self.last_sent.len() <= p {
                        self.last_sent.resize(p + 1, None);
                        self.freed_on_word_of.resize(p + 1, None);
                    }
                    // An answer repeats what the member holds: only a partition new to it
                    // waits to be taken.
                    if self.last_sent[p].is_none_or(|(to, _)| to != *member) {
                        self.last_sent[p] = Some((*member, false));
                    }
                    if self.freed_on_word_of[p] == Some(*member) {
                        self.freed_on_word_of[p] = None;
                    }
                }
            }
            Fact::OwnedReported { member, partitions } => {
                let reported = PartitionLookup::of(partitions);
                for (p, sent) in self.last_sent.iter().enumerate() {
                    if *sent == Some((*member, false)) && !reported.contains(&p) {
                        self.freed_on_word_of[p] = Some(*member);
                    }
                }
            }
            Fact::Assigned { member, partitions } => {
                for &p in partitions {
                    if let Some(Some((to, taken))) = self.last_sent.get_mut(p) {
                        *taken |= *to == *member;
                    }
                }
            }
            _ => {}
        }
    }

    /// Member `m` taking partition `p` now takes an answer the coordinator no longer stands
    /// by: one its previous membership was sent (the coordinator gave `p` to that membership
    /// and has not to this one, which it has answered, so the member has rejoined under
    /// KIP-848), or one whose `p` the coordinator freed on its word and gave to another.
    pub fn is_late(&self, m: usize, p: usize) -> bool {
        let freed = self.freed_on_word_of.get(p) == Some(&Some(m))
            && self.last_sent[p].is_some_and(|(to, _)| to != m);
        freed
            || self
                .sent_before_removal
                .get(m)
                .is_some_and(|before| before.contains(&p))
                && self.sent_this_membership[m]
                    .as_ref()
                    .is_some_and(|now| !now.contains(&p))
    }

    fn grow(&mut self, m: usize) {
        if self.sent_this_membership.len() <= m {
            self.sent_this_membership.resize(m + 1, None);
            self.sent_before_removal.resize(m + 1, BTreeSet::new());
        }
    }
}
