//! Each rebalance's story, kept as the facts come: when it began and why, who rejoined when and
//! how they had learned of it, who revoked or lost what, and (KIP-848) what the coordinator sent
//! each member and when each acknowledged; per member the events that explain rebalance loops
//! (poll timeouts, stalls, request timeouts), and the static takeovers that rebalanced nothing.
//! Nothing here is inferred from settings: every field is a fact's, or a count of facts.
//! `cgsim explain` tells it.

use crate::facts::{Callback, Fact, RejoinCause};
use crate::messages::{ErrorCode, RequestKind, Trigger};
use crate::sim::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// What a member last did that explains why it joined or left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
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
pub struct Joiner {
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
pub struct Record {
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

/// How a member's process went down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Down {
    Closed,
    Crashed,
}

/// KIP-345: a static member's new process took its entry over while the group was Stable, and
/// no rebalance followed: a place a reader might expect one.
#[derive(Clone, Debug)]
pub struct Takeover {
    pub member: usize,
    pub at: SimTime,
    /// When its previous process went down, and how.
    pub down: Option<(SimTime, Down)>,
    /// When its new process started.
    pub restarted: Option<SimTime>,
}

/// Every rebalance of the run, in order, and per member the events kept for loops.
#[derive(Clone, Debug, Default)]
pub struct Story {
    pub records: Vec<Record>,
    /// Entries taken over with no rebalance, in order.
    pub takeovers: Vec<Takeover>,
    /// Stalls of a poll loop that ended before `max.poll.interval.ms` (no poll timeout during
    /// them): (member, from, until), in order.
    pub quiet_stalls: Vec<(usize, SimTime, SimTime)>,
    /// Cuts from the coordinator the member's session outlasted (the coordinator did not remove
    /// it meanwhile): (member, from, until), in order.
    pub quiet_cuts: Vec<(usize, SimTime, SimTime)>,
    /// Each member's poll timeouts: (when, last poll).
    pub poll_timeouts: BTreeMap<usize, Vec<(SimTime, SimTime)>>,
    /// Each member's batch ends (time, records) after a poll timeout (the zombie batch).
    pub batch_after_timeout: BTreeMap<usize, Vec<(SimTime, u64)>>,
    /// Each member's stalls: (from, until).
    pub stalls: BTreeMap<usize, Vec<(SimTime, SimTime)>>,
    /// Each member's JoinGroup and SyncGroup timeouts: (when, request, ms waited).
    pub request_timeouts: BTreeMap<usize, Vec<(SimTime, RequestKind, u64)>>,
}

/// The walk over the facts that builds the [`Story`].
#[derive(Default)]
pub(super) struct Walk {
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
    /// Each member's last process end and start.
    down: BTreeMap<usize, (SimTime, Down)>,
    restarted: BTreeMap<usize, SimTime>,
    takeovers: Vec<Takeover>,
    /// Cuts from the coordinator: (member, from, until).
    cuts: Vec<(usize, SimTime, SimTime)>,
    /// When the coordinator removed each member.
    removed_at: BTreeMap<usize, Vec<SimTime>>,
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

    pub(super) fn fact(&mut self, now: SimTime, fact: &Fact) {
        match fact {
            Fact::ProcessStarted { member } => {
                self.restarted.insert(*member, now);
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
            Fact::CloseRequested { member } => {
                self.down.insert(*member, (now, Down::Closed));
                self.note(now, *member, Event::Closed);
            }
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
                self.down.insert(*member, (now, Down::Crashed));
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
                self.last_event.insert(
                    *member,
                    (
                        now,
                        Event::Fatal {
                            error: error.name(),
                        },
                    ),
                );
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
            // KIP-848: a static member's new process is added under a member id of its own while
            // its previous one's entry is still there (it left with epoch -2): it takes it over.
            // (A dynamic member's restart within its old session is added the same way; the
            // teller keeps only static members' takeovers.)
            Fact::MemberAdded { member, .. } => {
                let again = !self.in_group.insert(*member);
                if again && self.open.is_none() {
                    self.taken_over(now, *member);
                }
            }
            Fact::MemberReplaced { member, .. } => {
                self.in_group.insert(*member);
                // Its JoinGroup, answered at once in a Stable group, is over: no part of the
                // next rebalance's join phase.
                if self.open.is_none() {
                    self.joining.remove(member);
                    self.taken_over(now, *member);
                }
            }
            // A cut of a member the group holds: one a reader expects a rebalance from.
            Fact::CutOffFromCoordinator { member, until } if self.in_group.contains(member) => {
                self.cuts.push((*member, now, *until));
            }
            Fact::MemberRemoved { member, .. } => {
                self.removed_at.entry(*member).or_default().push(now);
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
                // Only a running epoch bump's: a static member's new process is sent its entry's
                // assignment after the group's last bump was acknowledged, with no new one.
                if let Some(r) = self.open.and_then(|i| self.records.get_mut(i)) {
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

    /// KIP-345: a static member's new process took over its entry of a Stable group: unless it
    /// starts a rebalance itself (at once, as a changed subscription does), a rebalance that
    /// did not happen.
    fn taken_over(&mut self, now: SimTime, member: usize) {
        self.takeovers.push(Takeover {
            member,
            at: now,
            down: self.down.get(&member).copied(),
            restarted: self.restarted.get(&member).copied(),
        });
    }

    fn take_away(&mut self, member: usize, partitions: &[usize]) {
        if let Some(o) = self.owned.get_mut(&member) {
            for p in partitions {
                o.remove(p);
            }
        }
    }

    fn started(&mut self, now: SimTime, generation: i32, trigger: Trigger, member: Option<usize>) {
        // A takeover that starts this rebalance is a rebalance that happened.
        self.takeovers
            .retain(|t| !(t.at == now && Some(t.member) == member));
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

impl Walk {
    pub(super) fn finish(self) -> Story {
        let timed_out = |m: usize, from: SimTime, until: SimTime| {
            self.poll_timeouts
                .get(&m)
                .is_some_and(|ts| ts.iter().any(|&(t, _)| from <= t && t <= until))
        };
        let quiet_stalls = self
            .stalls
            .iter()
            .flat_map(|(&m, spans)| spans.iter().map(move |&(from, until)| (m, from, until)))
            .filter(|&(m, from, until)| !timed_out(m, from, until))
            .collect::<Vec<_>>();
        let removed = |m: usize, from: SimTime, until: SimTime| {
            self.removed_at
                .get(&m)
                .is_some_and(|ts| ts.iter().any(|&t| from <= t && t <= until))
        };
        let quiet_cuts: Vec<_> = self
            .cuts
            .iter()
            .copied()
            .filter(|&(m, from, until)| !removed(m, from, until))
            .collect();
        let mut quiet_stalls = quiet_stalls;
        quiet_stalls.sort_by_key(|&(m, from, _)| (from, m));
        Story {
            quiet_stalls,
            quiet_cuts,
            records: self.records,
            takeovers: self.takeovers,
            poll_timeouts: self.poll_timeouts,
            batch_after_timeout: self.batch_after_timeout,
            stalls: self.stalls,
            request_timeouts: self.request_timeouts,
        }
    }
}

/// Walks the facts once.
#[cfg(test)]
fn walk(facts: &[(SimTime, Fact)]) -> Story {
    let mut w = Walk::default();
    for (now, fact) in facts {
        w.fact(*now, fact);
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    /// c1 and c2 form generation 1.
    fn formed() -> Vec<(SimTime, Fact)> {
        let mut facts = Vec::new();
        for member in [0, 1] {
            facts.push((ms(0), Fact::ProcessStarted { member }));
            facts.push((
                ms(1),
                Fact::MemberAdded {
                    member,
                    incarnation: 1,
                    member_id: format!("m{member}"),
                },
            ));
        }
        facts.push((
            ms(1),
            Fact::RebalanceStarted {
                generation: 1,
                trigger: Trigger::MemberJoined,
                member: Some(0),
            },
        ));
        facts.push((ms(3_000), Fact::GroupStable { generation: 1 }));
        facts
    }

    /// A static member's new process that takes its entry of a Stable group over is a takeover,
    /// with when it went down and restarted.
    #[test]
    fn a_takeover_of_a_stable_groups_entry_is_a_rebalance_that_did_not_happen() {
        let mut facts = formed();
        facts.push((ms(60_000), Fact::CloseRequested { member: 1 }));
        facts.push((ms(65_000), Fact::ProcessStarted { member: 1 }));
        facts.push((ms(65_005), Fact::JoinGroupSent { member: 1 }));
        facts.push((
            ms(65_006),
            Fact::MemberReplaced {
                member: 1,
                member_id: "m1b".into(),
            },
        ));
        let story = walk(&facts);
        assert_eq!(story.takeovers.len(), 1);
        let t = &story.takeovers[0];
        assert_eq!((t.member, t.at), (1, ms(65_006)));
        assert_eq!(t.down, Some((ms(60_000), Down::Closed)));
        assert_eq!(t.restarted, Some(ms(65_000)));
        assert_eq!(story.records.len(), 1);
    }

    /// A takeover that starts a rebalance at once (its subscription changed) happened; one while
    /// a rebalance runs is part of it.
    #[test]
    fn a_takeover_that_rebalances_or_falls_in_a_rebalance_is_no_non_event() {
        let mut facts = formed();
        let replaced = |at| {
            (
                ms(at),
                Fact::MemberReplaced {
                    member: 1,
                    member_id: format!("m1-{at}"),
                },
            )
        };
        facts.push(replaced(65_000));
        facts.push((
            ms(65_000),
            Fact::RebalanceStarted {
                generation: 2,
                trigger: Trigger::MemberJoined,
                member: Some(1),
            },
        ));
        facts.push(replaced(65_001));
        let story = walk(&facts);
        assert!(story.takeovers.is_empty(), "{:?}", story.takeovers);
    }

    /// KIP-848: the new process is added under its own member id while the entry it left with
    /// epoch -2 is still there.
    #[test]
    fn a_kip848_member_added_again_without_a_removal_is_a_takeover() {
        let mut facts = formed();
        facts.push((
            ms(60_000),
            Fact::Crashed {
                member: 0,
                owned: vec![0],
            },
        ));
        facts.push((ms(61_000), Fact::ProcessStarted { member: 0 }));
        facts.push((
            ms(61_010),
            Fact::MemberAdded {
                member: 0,
                incarnation: 2,
                member_id: "m0b".into(),
            },
        ));
        let story = walk(&facts);
        assert_eq!(story.takeovers.len(), 1);
        assert_eq!(story.takeovers[0].down, Some((ms(60_000), Down::Crashed)));
    }

    /// KIP-848: an assignment sent after the last bump was acknowledged (a takeover's) is no
    /// part of that bump: its acknowledgement stays the one it had.
    #[test]
    fn an_assignment_sent_after_the_group_was_stable_leaves_its_bump_alone() {
        let mut facts = formed();
        facts.truncate(facts.len() - 1);
        let sent = |at, member| {
            (
                ms(at),
                Fact::AssignmentSent {
                    member,
                    partitions: vec![member],
                },
            )
        };
        let owned = |at, member| {
            (
                ms(at),
                Fact::OwnedReported {
                    member,
                    partitions: vec![member],
                },
            )
        };
        facts.extend([sent(10, 0), sent(10, 1), owned(20, 0), owned(30, 1)]);
        facts.push((ms(30), Fact::GroupStable { generation: 1 }));
        facts.extend([sent(65_000, 1), owned(65_100, 1)]);
        let story = walk(&facts);
        let r = &story.records[0];
        assert_eq!(r.acknowledged.get(&1), Some(&ms(30)));
        assert_eq!(r.sent[&1].len(), 1);
    }

    fn added(member: usize) -> (SimTime, Fact) {
        (
            ms(1),
            Fact::MemberAdded {
                member,
                incarnation: 1,
                member_id: format!("m{member}"),
            },
        )
    }

    /// A stall with no poll timeout in it is quiet; one the poll timer ended is not.
    #[test]
    fn a_stall_the_poll_timer_did_not_end_is_quiet() {
        let stall = |member, at, until| {
            (
                ms(at),
                Fact::Stalled {
                    member,
                    until: ms(until),
                },
            )
        };
        let facts = [
            added(0),
            added(1),
            stall(0, 10_000, 20_000),
            stall(1, 10_000, 400_000),
            (
                ms(310_000),
                Fact::PollTimeout {
                    member: 1,
                    last_poll: ms(10_000),
                },
            ),
        ];
        let story = walk(&facts);
        assert_eq!(story.quiet_stalls, [(0, ms(10_000), ms(20_000))]);
    }

    /// A cut the member's session outlasted is quiet; one that ended in its removal is not, nor
    /// is a cut of a process the group does not hold.
    #[test]
    fn a_cut_the_session_outlasted_is_quiet() {
        let cut = |member, at, until| {
            (
                ms(at),
                Fact::CutOffFromCoordinator {
                    member,
                    until: ms(until),
                },
            )
        };
        let facts = [
            added(0),
            added(1),
            cut(0, 10_000, 15_000),
            cut(1, 10_000, 70_000),
            cut(2, 10_000, 15_000),
            (
                ms(55_000),
                Fact::MemberRemoved {
                    member: 1,
                    member_id: "m1".into(),
                },
            ),
        ];
        let story = walk(&facts);
        assert_eq!(story.quiet_cuts, [(0, ms(10_000), ms(15_000))]);
    }
}
