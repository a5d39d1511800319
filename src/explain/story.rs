//! One walk over a run's facts, in order, that keeps what each rebalance's story needs: when
//! it began and why, who rejoined when and how they had learned of it, who revoked or lost what,
//! and (KIP-848) what the coordinator sent each member and when each acknowledged. Nothing here
//! is inferred from settings: every field is a fact's, or a count of facts.

use crate::facts::{Callback, Fact, RejoinCause};
use crate::messages::{ErrorCode, RequestKind, Trigger};
use crate::sim::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// What a member last did that explains why it joined or left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Event {
    /// A new process started.
    Started,
    /// It learned it must rejoin, and how.
    Rejoin(RejoinCause),
    /// `max.poll.interval.ms` passed since its last poll at `last_poll`.
    PollTimeout { last_poll: SimTime },
    /// `close()` was called.
    Closed,
    /// The process died owning `owned` partitions.
    Crashed { owned: usize },
    /// The poll loop got stuck in a batch until `until` (a timeline stall).
    Stalled { until: SimTime },
    /// A fatal error stopped it.
    Fatal { error: &'static str },
    /// Its JoinGroup or SyncGroup got no answer within its timeout: it disconnected and joins
    /// again.
    TimedOut {
        request: RequestKind,
        waited_ms: u64,
    },
}

/// A member's JoinGroup(s) in one join phase (classic).
#[derive(Clone, Debug)]
pub(super) struct Joiner {
    pub member: usize,
    pub first_sent: SimTime,
    pub last_sent: SimTime,
    /// Why it (re)joined: the last explaining event before its first JoinGroup.
    pub why: Option<(SimTime, Event)>,
    /// Partitions it owned when the rebalance began.
    pub owned_at_start: usize,
    /// EAGER: partitions it revoked before this JoinGroup (onJoinPrepare).
    pub revoked_before: usize,
}

/// One rebalance (classic generation or KIP-848 group epoch) as the facts tell it.
#[derive(Clone, Debug)]
pub(super) struct Record {
    pub generation: i32,
    pub trigger: Trigger,
    pub member: Option<usize>,
    pub start: SimTime,
    /// The trigger member's last explaining event before the start.
    pub cause: Option<(SimTime, Event)>,
    /// The group was forming (no generation had been Stable before).
    pub formation: bool,
    pub join_completed: Option<SimTime>,
    pub stable: Option<SimTime>,
    /// A later rebalance began before this one was Stable.
    pub superseded_by: Option<i32>,
    /// Members in the group when it began, and what each owned.
    pub owned_at_start: BTreeMap<usize, usize>,
    pub joined: Vec<Joiner>,
    /// Members the coordinator removed while it ran, and when.
    pub removed: Vec<(usize, SimTime)>,
    /// Revocations after the SyncGroup (COOPERATIVE) or in reconciliation (KIP-848).
    pub revoked: BTreeMap<usize, (SimTime, usize)>,
    pub lost: BTreeMap<usize, (SimTime, usize)>,
    /// KIP-848: each assignment the coordinator sent a member while it ran, in order.
    pub sent: BTreeMap<usize, Vec<(SimTime, Vec<usize>)>>,
    /// KIP-848: what each member had been given before it began.
    pub assigned_before: BTreeMap<usize, Vec<usize>>,
    /// KIP-848: when a member's heartbeat first reported exactly its latest assignment.
    pub acknowledged: BTreeMap<usize, SimTime>,
    /// When each member's `onPartitionsAssigned` ran with something new.
    pub assigned: BTreeMap<usize, (SimTime, usize)>,
    /// KIP-848: when each member's poll event reconciled and queued its revocation, and when
    /// its `onPartitionsAssigned` (even with nothing new) ran after it.
    pub revoke_queued: BTreeMap<usize, SimTime>,
    pub assign_ran: BTreeMap<usize, SimTime>,
    /// Failed JoinGroup/SyncGroup answers (member, error) while it ran.
    pub failed: Vec<(usize, SimTime, ErrorCode)>,
}

/// Every rebalance of the run, in order, and per member the events kept for loops.
pub(super) struct Story {
    pub records: Vec<Record>,
    /// Each member's poll timeouts: (when, last poll).
    pub poll_timeouts: BTreeMap<usize, Vec<(SimTime, SimTime)>>,
    /// Each member's batch ends (time, records) after a poll timeout (the zombie batch).
    pub batch_after_timeout: BTreeMap<usize, Vec<(SimTime, u64)>>,
    /// Each member's stalls: (from, until).
    pub stalls: BTreeMap<usize, Vec<(SimTime, SimTime)>>,
    /// Each member's JoinGroup and SyncGroup timeouts: (when, request, ms waited).
    pub request_timeouts: BTreeMap<usize, Vec<(SimTime, RequestKind, u64)>>,
}

#[derive(Default)]
struct Walk {
    records: Vec<Record>,
    /// Index of the record still running (not Stable), if any.
    open: Option<usize>,
    owned: BTreeMap<usize, BTreeSet<usize>>,
    in_group: BTreeSet<usize>,
    why: BTreeMap<usize, (SimTime, Event)>,
    /// The last explaining event per member, never cleared (for the trigger's cause).
    last_event: BTreeMap<usize, (SimTime, Event)>,
    joining: BTreeMap<usize, Joiner>,
    /// EAGER revocations since the member learned it must rejoin.
    revoked_pending: BTreeMap<usize, usize>,
    /// KIP-848: each member's current assignment as last sent.
    assignment: BTreeMap<usize, Vec<usize>>,
    ever_stable: bool,
    poll_timeouts: BTreeMap<usize, Vec<(SimTime, SimTime)>>,
    /// Members whose next batch end is the one after a poll timeout.
    awaiting_batch: BTreeSet<usize>,
    batch_after_timeout: BTreeMap<usize, Vec<(SimTime, u64)>>,
    stalls: BTreeMap<usize, Vec<(SimTime, SimTime)>>,
    request_timeouts: BTreeMap<usize, Vec<(SimTime, RequestKind, u64)>>,
}

impl Walk {
    /// The rebalance a late fact (a cooperative revocation, an acknowledgement) belongs to.
    fn current(&mut self) -> Option<&mut Record> {
        let i = self.open.or(self.records.len().checked_sub(1))?;
        self.records.get_mut(i)
    }

    fn note(&mut self, now: SimTime, member: usize, event: Event) {
        self.why.insert(member, (now, event));
        self.last_event.insert(member, (now, event));
    }

    fn fact(&mut self, now: SimTime, fact: &Fact) {
        match fact {
            Fact::ProcessStarted { member } => {
                self.why.remove(member);
                self.revoked_pending.remove(member);
                self.note(now, *member, Event::Started);
            }
            Fact::RejoinNeeded { member, cause } => self.note(now, *member, Event::Rejoin(*cause)),
            Fact::PollTimeout { member, last_poll } => {
                self.note(
                    now,
                    *member,
                    Event::PollTimeout {
                        last_poll: *last_poll,
                    },
                );
                self.poll_timeouts
                    .entry(*member)
                    .or_default()
                    .push((now, *last_poll));
                self.awaiting_batch.insert(*member);
            }
            Fact::CloseRequested { member } => self.note(now, *member, Event::Closed),
            Fact::RequestTimedOut {
                member,
                request: request @ (RequestKind::JoinGroup | RequestKind::SyncGroup),
                waited_ms,
            } => {
                let (request, waited_ms) = (*request, *waited_ms);
                self.note(now, *member, Event::TimedOut { request, waited_ms });
                self.request_timeouts
                    .entry(*member)
                    .or_default()
                    .push((now, request, waited_ms));
            }
            Fact::Crashed { member, owned } => {
                let crashed = Event::Crashed { owned: owned.len() };
                self.last_event.insert(*member, (now, crashed));
                self.owned.remove(member);
            }
            // Not a reason to join: kept only for what started a rebalance.
            Fact::Stalled { member, until } => {
                self.stalls.entry(*member).or_default().push((now, *until));
                self.last_event
                    .insert(*member, (now, Event::Stalled { until: *until }));
            }
            Fact::FatalError { member, error } => {
                self.last_event
                    .insert(*member, (now, Event::Fatal { error }));
            }
            Fact::Processed {
                member, from, to, ..
            } if self.awaiting_batch.contains(member) => {
                let batches = self.batch_after_timeout.entry(*member).or_default();
                match batches.last_mut() {
                    Some((at, n)) if *at == now => *n += to - from,
                    _ => batches.push((now, to - from)),
                }
            }
            Fact::ProcessingStarted { member, .. } => {
                self.awaiting_batch.remove(member);
            }
            Fact::JoinGroupSent { member } => {
                if let Some(j) = self.joining.get_mut(member) {
                    j.last_sent = now;
                } else {
                    let owned_at_start = self.owned.get(member).map_or(0, BTreeSet::len);
                    self.joining.insert(
                        *member,
                        Joiner {
                            member: *member,
                            first_sent: now,
                            last_sent: now,
                            why: self.why.remove(member),
                            owned_at_start,
                            revoked_before: self.revoked_pending.remove(member).unwrap_or(0),
                        },
                    );
                }
            }
            // MEMBER_ID_REQUIRED is the first round trip of a new member's join, not a failure
            // of the rebalance.
            Fact::JoinGroupAnswered { member, error }
                if *error != ErrorCode::None && *error != ErrorCode::MemberIdRequired =>
            {
                if let Some(r) = self.open.and_then(|i| self.records.get_mut(i)) {
                    r.failed.push((*member, now, *error));
                }
            }
            Fact::SyncGroupAnswered { member, error, .. } if *error != ErrorCode::None => {
                if let Some(r) = self.current() {
                    r.failed.push((*member, now, *error));
                }
            }
            Fact::MemberAdded { member, .. } => {
                self.in_group.insert(*member);
            }
            Fact::MemberReplaced { member, .. } => {
                self.in_group.insert(*member);
                // KIP-345: a static member's new process took over its entry of a Stable group,
                // its JoinGroup answered at once with no rebalance: that join is over, and is no
                // part of the next rebalance's join phase.
                if self.open.is_none() {
                    self.joining.remove(member);
                }
            }
            Fact::MemberRemoved { member, .. } => {
                self.in_group.remove(member);
                self.assignment.remove(member);
                if let Some(r) = self.open.and_then(|i| self.records.get_mut(i)) {
                    r.removed.push((*member, now));
                }
            }
            Fact::RebalanceStarted {
                generation,
                trigger,
                member,
            } => self.started(now, *generation, *trigger, *member),
            Fact::JoinCompleted { generation, .. } => {
                let joined: Vec<Joiner> = std::mem::take(&mut self.joining).into_values().collect();
                if let Some(r) = self.open.and_then(|i| self.records.get_mut(i)) {
                    if r.generation == *generation {
                        r.join_completed = Some(now);
                        r.joined = joined;
                        r.joined.sort_by_key(|j| (j.last_sent, j.member));
                    }
                }
            }
            Fact::GroupStable { generation } => {
                self.ever_stable = true;
                if let Some(i) = self.open {
                    if self.records[i].generation == *generation {
                        self.records[i].stable = Some(now);
                        self.open = None;
                    }
                }
            }
            Fact::Assigned { member, partitions } => {
                self.owned
                    .entry(*member)
                    .or_default()
                    .extend(partitions.iter().copied());
                if let Some(r) = self.current() {
                    if !partitions.is_empty() {
                        r.assigned.insert(*member, (now, partitions.len()));
                    }
                    if r.revoke_queued.contains_key(member) {
                        r.assign_ran.entry(*member).or_insert(now);
                    }
                }
            }
            Fact::CallbackQueued {
                member,
                callback: Callback::Revoked,
            } => {
                if let Some(r) = self.current() {
                    r.revoke_queued.entry(*member).or_insert(now);
                }
            }
            Fact::Revoked { member, partitions } => {
                self.take_away(*member, partitions);
                if partitions.is_empty() {
                    return;
                }
                let before_join = matches!(
                    self.why.get(member),
                    Some((_, Event::Rejoin(c))) if *c != RejoinCause::FollowUp
                );
                if before_join && !self.joining.contains_key(member) {
                    // EAGER: revoked in onJoinPrepare, before the JoinGroup it is about to send.
                    *self.revoked_pending.entry(*member).or_default() += partitions.len();
                } else if let Some(r) = self.current() {
                    let e = r.revoked.entry(*member).or_insert((now, 0));
                    e.1 += partitions.len();
                }
            }
            Fact::RevokedOnClose { member, partitions } => self.take_away(*member, partitions),
            Fact::Lost { member, partitions } => {
                self.take_away(*member, partitions);
                if !partitions.is_empty() {
                    if let Some(r) = self.current() {
                        let e = r.lost.entry(*member).or_insert((now, 0));
                        e.1 += partitions.len();
                    }
                }
            }
            Fact::AssignmentSent { member, partitions } => {
                self.assignment.insert(*member, partitions.clone());
                if let Some(r) = self.current() {
                    r.sent
                        .entry(*member)
                        .or_default()
                        .push((now, partitions.clone()));
                    r.acknowledged.remove(member);
                }
            }
            Fact::OwnedReported { member, partitions } => {
                let matches = self.assignment.get(member).is_some_and(|a| {
                    let mut a = a.clone();
                    let mut p = partitions.clone();
                    a.sort_unstable();
                    p.sort_unstable();
                    a == p
                });
                if matches {
                    if let Some(r) = self.current() {
                        if r.sent.contains_key(member) {
                            r.acknowledged.entry(*member).or_insert(now);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn take_away(&mut self, member: usize, partitions: &[usize]) {
        if let Some(o) = self.owned.get_mut(&member) {
            for p in partitions {
                o.remove(p);
            }
        }
    }

    fn started(&mut self, now: SimTime, generation: i32, trigger: Trigger, member: Option<usize>) {
        if let Some(i) = self.open.take() {
            self.records[i].superseded_by = Some(generation);
        }
        let owned_at_start = self
            .in_group
            .iter()
            .map(|&m| (m, self.owned.get(&m).map_or(0, BTreeSet::len)))
            .collect();
        let cause = member.and_then(|m| self.last_event.get(&m).copied());
        self.records.push(Record {
            generation,
            trigger,
            member,
            start: now,
            cause,
            formation: !self.ever_stable,
            join_completed: None,
            stable: None,
            superseded_by: None,
            owned_at_start,
            joined: Vec::new(),
            removed: Vec::new(),
            revoked: BTreeMap::new(),
            lost: BTreeMap::new(),
            sent: BTreeMap::new(),
            assigned_before: self.assignment.clone(),
            acknowledged: BTreeMap::new(),
            revoke_queued: BTreeMap::new(),
            assign_ran: BTreeMap::new(),
            assigned: BTreeMap::new(),
            failed: Vec::new(),
        });
        self.open = Some(self.records.len() - 1);
    }
}

/// Walks the facts once.
pub(super) fn walk(facts: &[(SimTime, Fact)]) -> Story {
    let mut w = Walk::default();
    for (now, fact) in facts {
        w.fact(*now, fact);
    }
    Story {
        records: w.records,
        poll_timeouts: w.poll_timeouts,
        batch_after_timeout: w.batch_after_timeout,
        stalls: w.stalls,
        request_timeouts: w.request_timeouts,
    }
}
