//! What every group type hands back to the dispatcher, kept in one place: the coordinator's
//! effects (responses, timers by key, records, commits, facts), the timer keys, the broker's
//! settings, and the context one handler call writes into. As Kafka's `GroupMetadataManager`
//! handlers return a `CoordinatorResult` of responses and records whatever the group's type,
//! the classic group and the consumer group (`classic/`, `consumer/`) both write
//! [`CoordinatorEffect`]s; the caller (the world, a test, or `cgsim conform`'s replay) carries
//! them out.

use crate::facts::Fact;
use crate::group::consumer::ConsumerGroupTimer;
use crate::messages::records::GroupRecord;
use crate::messages::{ClientRef, Response};
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::{Out, SimTime};
use std::collections::{BTreeMap, VecDeque};

/// The coordinator's timers, by key (Kafka's timer keys): setting one replaces the pending
/// timer of the same key, so a stale timer never fires.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CoordTimer {
    /// `join`: the classic join phase's timer (initial delay or rebalance timeout).
    Join,
    /// `sync`: classic members that have not sent SyncGroup by now are removed.
    Sync,
    /// `heartbeat:<member id>`: a classic member's (or pending member's) session timer.
    Heartbeat { member_id: String },
    /// A KIP-848 consumer group's timer (`session-timeout:<id>`, `rebalance-timeout:<id>`).
    Consumer(ConsumerGroupTimer),
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

    /// The classic timer named `name` (`join`, `sync`, `heartbeat:<member id>`).
    pub fn from_name(name: &str) -> Option<CoordTimer> {
        match name {
            "join" => Some(CoordTimer::Join),
            "sync" => Some(CoordTimer::Sync),
            _ => name.strip_prefix("heartbeat:").map(CoordTimer::heartbeat),
        }
    }

    pub(super) fn heartbeat(member_id: &str) -> Self {
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

    /// The `fenced-commit` mutant: a fenced member's commit is written as if it were the
    /// owner's.
    pub(super) fn accepts_fenced_commits(&self) -> bool {
        self.mutant == Some(crate::scenario::Mutant::FencedCommit)
    }
}

/// Where member ids' UUIDs come from: the coordinator's seeded `UUID.randomUUID()`, or ids
/// given in advance (a conformance replay uses the ids Kafka issued), in issue order. One
/// source for every group type, so a conversion draws from the same sequence.
pub(super) struct MemberIds {
    pub(super) given: VecDeque<String>,
    random: Stream,
}

impl MemberIds {
    pub(super) fn new(random: Stream) -> Self {
        MemberIds {
            given: VecDeque::new(),
            random,
        }
    }

    /// A classic member id: `<client id or instance id>-<UUID>` (`ClassicGroup.generateMemberId`).
    pub(super) fn classic(&mut self, prefix: &str) -> String {
        match self.given.pop_front() {
            Some(id) => id,
            None => {
                let uuid = crate::sim::rng::random_uuid_string(&mut self.random);
                format!("{prefix}-{uuid}")
            }
        }
    }

    /// A consumer group's member id: a bare UUID (`Uuid.randomUuid().toString()`).
    pub(super) fn bare(&mut self) -> String {
        match self.given.pop_front() {
            Some(id) => id,
            None => crate::sim::rng::random_uuid_string(&mut self.random),
        }
    }
}

/// One handler call: the time, where effects go, and what the dispatcher lends every group.
pub(super) struct Cx<'o> {
    pub(super) now: SimTime,
    pub(super) out: &'o mut Out<CoordinatorEffect>,
    /// Records written in this call (a new classic group writes one if nothing else did).
    pub(super) records: usize,
    pub(super) ids: &'o mut MemberIds,
    /// Every member id the group has had, with its process: a loaded record may name a member
    /// the coordinator has since removed without writing a record (facts name processes).
    pub(super) known_clients: &'o mut BTreeMap<String, ClientRef>,
}

impl Cx<'_> {
    pub(super) fn respond(&mut self, to: ClientRef, response: impl Into<Response>) {
        self.out.push(CoordinatorEffect::Respond {
            to,
            response: Box::new(response.into()),
        });
    }

    pub(super) fn at(&self, after_ms: u64) -> SimTime {
        self.now + Duration::from_millis(after_ms)
    }

    pub(super) fn set_timer(&mut self, timer: CoordTimer, at: SimTime) {
        self.out.push(CoordinatorEffect::SetTimer { timer, at });
    }

    pub(super) fn cancel_timer(&mut self, timer: CoordTimer) {
        self.out.push(CoordinatorEffect::CancelTimer(timer));
    }

    pub(super) fn record(&mut self, record: GroupRecord) {
        self.records += 1;
        self.out.push(CoordinatorEffect::Record(Box::new(record)));
    }

    pub(super) fn fact(&mut self, fact: Fact) {
        self.out.push(CoordinatorEffect::Fact(fact));
    }

    /// An accepted commit: each offset written to `__consumer_offsets`, and its fact.
    pub(super) fn write_commits(&mut self, from: ClientRef, offsets: &[(usize, u64)]) {
        for &(partition, offset) in offsets {
            self.out
                .push(CoordinatorEffect::CommitOffset { partition, offset });
            self.fact(Fact::OffsetCommitted {
                member: from.member,
                partition,
                offset,
            });
        }
    }

    pub(super) fn logging(&self) -> bool {
        self.out.logging()
    }

    pub(super) fn log_line(&mut self, line: String) {
        self.out.log_line(line);
    }
}
