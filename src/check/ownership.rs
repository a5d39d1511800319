//! always `double_ownership`: a member owns a partition from its assignment until the first of
//! its revoke or lost callback, its crash, or the coordinator removing it or completing a join
//! phase without it (a static member, which Kafka keeps but fences) (DESIGN.md "What counts");
//! two owners at one instant is a violation. The same record tells a zombie batch:
//! records processed by a member that no longer owns them. A member that gave a partition up
//! through its own callback (revoked, lost) and is still in the group must not process it again
//! until it is assigned it anew: `processed_after_revoke` (a removed member's batch is a zombie,
//! Kafka's real behaviour, not a violation). A second owner that KIP-848's online upgrade made,
//! handing on what a classic member had not yet revoked ([`UPGRADE_BEFORE_SYNC`]), is a
//! violation in Kafka too: reported, with why.

use super::{Coverage, Findings, Verdict, Zombie};
use crate::cluster::PartitionLookup;
use crate::facts::{Fact, LateAnswers, MemberIds};
use crate::sim::SimTime;
use std::collections::BTreeSet;

/// The end of a `double_ownership` detail when the first owner held the partition outside the
/// classic assignment the online upgrade recorded for it: it had not yet read the assignment
/// that moved it away (a cooperative rebalance's SyncGroup answer), or the rebalance in
/// progress had reset every stored assignment. Kafka's own outcome (`cgsim fuzz` counts it
/// instead of failing the run: fuzz/runner.rs).
pub const UPGRADE_BEFORE_SYNC: &str = "Kafka's online upgrade records each classic member as owning the last assignment its classic group stored for it, read by the member or not, empty after a reset rebalance (ConsumerGroup.fromClassicGroup), and hands on at once whatever else the member still holds";

pub struct Ownership {
    owner: Vec<Option<usize>>,
    /// Per partition: the members whose own callback gave it up, still in the group.
    released: Vec<BTreeSet<usize>>,
    /// Per member: the member id of its current process. A removal of another id (a crashed
    /// process's session expiring after the restarted process rejoined under a new id, or an
    /// earlier process's late JoinGroup) ends nothing of the current one's.
    member_ids: MemberIds,
    /// Per partition: its owner's accepted heartbeat (KIP-848) has since reported it not owned,
    /// and the owner has not processed it since it was assigned: a partition whose
    /// `onPartitionsAssigned` is still running.
    reported_unowned: Vec<bool>,
    processed_by_owner: Vec<bool>,
    /// Per partition: the member the coordinator last sent it to (KIP-848).
    sent_to: Vec<Option<usize>>,
    /// Per partition: the member the coordinator's answers sent it to that has not taken it
    /// since (KIP-848).
    awaiting_take: Vec<Option<usize>>,
    /// Per member: the assignment the coordinator's answers last gave it (KIP-848).
    target: Vec<Option<BTreeSet<usize>>>,
    /// Per partition: the member on whose word the coordinator freed it while the member held
    /// it or was about to take it: a report that left it out, sent before the member's
    /// `onPartitionsAssigned` for it completed, read with the partition out of the member's
    /// target (`ownsRevokedPartitions`). A later report listing it does not take it back. The
    /// member holds it as a zombie once another member takes it.
    freed_on_word_of: Vec<Option<usize>>,
    /// Per partition: the member that held it (or went on holding it, a zombie) when the
    /// coordinator, having freed it on that member's word, handed it on. The coordinator had
    /// moved that member to a new epoch without it, and a commit at the member's own epoch is
    /// written whatever partitions it names (`validateOffsetCommit` checks partitions only at
    /// an older epoch, KIP-1251). Kept until the member takes the partition again, crashes or
    /// leaves the group: a commit it sent while holding it may land after its revocation.
    freed_zombie: Vec<Option<usize>>,
    /// Per partition: the member whose heartbeat, received after the partition was sent to
    /// it, left it out (its `onPartitionsAssigned` had not run yet): if it then takes the
    /// partition, the coordinator may already have freed it.
    reported_before_taken: Vec<Option<usize>>,
    /// Per member: the coordinator removed it and has not added it again. An assignment it
    /// takes meanwhile (an answer the coordinator sent before the removal, delivered late) is
    /// a zombie's: its claim counts for nothing at the coordinator, which has already handed
    /// the partitions on, and its commits are fenced.
    removed: Vec<bool>,
    /// A member that rejoined may take an answer its previous membership was sent: a zombie's
    /// claim, not ownership.
    late: LateAnswers,
    /// Per partition: the classic member that held it when the online upgrade recorded that
    /// member's last classic assignment without it (a cooperative rebalance had moved it away
    /// and the member had not applied that generation yet, or a reset rebalance had emptied
    /// it); spent at the partition's next acquisition.
    freed_by_upgrade: Vec<Option<usize>>,
    /// Per member: partitions it took as a zombie (while removed, or from a late answer) and
    /// has not given up since. KIP-848: once the coordinator's answer to its new membership
    /// gives it one of them (`AssignmentSent`), it owns it from there, though its client,
    /// already holding it, runs no callback for it (`revokeAndAssign` keeps what it owns).
    zombie_held: Vec<BTreeSet<usize>>,
}

impl Ownership {
    pub fn new(partitions: usize) -> Self {
        Ownership {
            owner: vec![None; partitions],
            released: vec![BTreeSet::new(); partitions],
            member_ids: MemberIds::default(),
            reported_unowned: vec![false; partitions],
            processed_by_owner: vec![false; partitions],
            sent_to: vec![None; partitions],
            target: Vec::new(),
            freed_on_word_of: vec![None; partitions],
            freed_zombie: vec![None; partitions],
            freed_by_upgrade: vec![None; partitions],
            awaiting_take: vec![None; partitions],
            reported_before_taken: vec![None; partitions],
            removed: Vec::new(),
            late: LateAnswers::default(),
            zombie_held: Vec::new(),
        }
    }

    /// Who owns partition `p` now.
    pub fn owner(&self, p: usize) -> Option<usize> {
        self.owner[p]
    }

    /// Whether member `m` holds partition `p`, or held it, as the zombie its own word freed it
    /// to be (`freed_zombie`): the coordinator writes its commits of `p`.
    pub fn is_freed_zombie(&self, m: usize, p: usize) -> bool {
        self.freed_zombie[p] == Some(m)
    }

    /// Member `m`'s epoch is no longer current (crashed, removed, a new member id): its
    /// commits are fenced from here.
    fn end_freed_zombie(&mut self, m: usize) {
        for z in &mut self.freed_zombie {
            if *z == Some(m) {
                *z = None;
            }
        }
    }

    /// Its owner processed a batch of partition `p` (the one thing an owner's batch tells).
    pub fn processed_by_owner(&mut self, p: usize) {
        self.processed_by_owner[p] = true;
    }

    pub fn observe(&mut self, now: SimTime, fact: &Fact, found: &mut Findings) {
        self.late.observe(fact);
        match fact {
            Fact::Assigned { member, partitions } => self.acquire(now, *member, partitions, found),
            // What the member held all along is its own again (after a `MissedRejoin`).
            Fact::Kept { member, partitions } => {
                let resumed: Vec<usize> = partitions
                    .iter()
                    .copied()
                    .filter(|&p| self.owner[p] != Some(*member))
                    .collect();
                self.acquire(now, *member, &resumed, found);
            }
            Fact::Revoked { member, partitions }
            | Fact::RevokedOnClose { member, partitions }
            | Fact::Lost { member, partitions } => {
                if let Some(held) = self.zombie_held.get_mut(*member).filter(|h| !h.is_empty()) {
                    let gone = PartitionLookup::of(partitions);
                    held.retain(|p| !gone.contains(p));
                }
                self.release(*member, partitions);
                for &p in partitions {
                    self.released[p].insert(*member);
                }
            }
            Fact::Crashed { member, owned } => {
                if let Some(held) = self.zombie_held.get_mut(*member) {
                    held.clear();
                }
                self.end_freed_zombie(*member);
                self.release(*member, owned);
                self.forget_releases(*member);
            }
            Fact::MemberAdded { member, .. } | Fact::MemberReplaced { member, .. } => {
                self.member_added(*member, fact)
            }
            // The coordinator removes one member id: a crashed process's old id expiring after
            // its restart joined under a new one is not the running process's removal (Kafka's
            // coordinator knows them as two members; the new one keeps its assignment), nor is
            // an earlier process's id that a late JoinGroup added after the restart.
            Fact::MemberRemoved { member, member_id }
                if !self.member_ids.removes_current(*member, member_id) => {}
            // Removed, or it gave up its generation on a poll timeout (the heartbeat thread
            // resets it; a static member sends no LeaveGroup, so no removal may ever come):
            // what it processes from here on is a zombie's, and its partitions may move.
            Fact::PollTimeout { member, .. } | Fact::MemberRemoved { member, .. } => {
                let mut held = Vec::new();
                for (p, o) in self.owner.iter_mut().enumerate() {
                    if *o == Some(*member) {
                        *o = None;
                        held.push(p);
                    }
                }
                self.forget_releases(*member);
                self.end_freed_zombie(*member);
                if matches!(fact, Fact::MemberRemoved { .. }) {
                    self.set_removed(*member, true);
                    // Its process goes on holding them until a callback gives them up: a
                    // zombie's, until its next membership is sent them (KIP-848 keeps the
                    // member id, and a leave the coordinator reads after the member's rejoin
                    // heartbeat went out is followed at once by that join).
                    self.hold_as_zombie(*member, &held);
                }
            }
            // A converted group starts over: a classic group's assignments are not answers.
            Fact::GroupConverted {
                to_consumer,
                members,
                assignments,
                ..
            } => {
                self.target.clear();
                self.freed_by_upgrade.fill(None);
                // Only the upgrade hands partitions on by what it recorded: after a downgrade
                // the classic rebalance collects what each member reports it owns.
                if *to_consumer {
                    for (&m, recorded) in members.iter().zip(assignments) {
                        let recorded = PartitionLookup::of(recorded);
                        for (p, owner) in self.owner.iter().enumerate() {
                            if *owner == Some(m) && !recorded.contains(&p) {
                                self.freed_by_upgrade[p] = Some(m);
                            }
                        }
                    }
                }
            }
            // A new coordinator loads the group as its log has it: a member the old one
            // removed from its memory only (a rebalance in progress is forgotten) is a member
            // again, and one the log lacks rejoins (added anew).
            Fact::CoordinatorLoaded => self.removed.clear(),
            // A static member the join phase completed without (it did not rejoin within the
            // rebalance timeout, say stalled in a batch): Kafka keeps it in the group, but the
            // new generation's assignment may hand its partitions on and its commits are fenced
            // (ILLEGAL_GENERATION). Its poll timer may run a little past the join deadline (it
            // may have polled after the rebalance began, before its heartbeat told it), so its
            // own poll timeout can come after the new owner's assignment: what it processes from
            // the join's completion is a zombie's, not a second owner's.
            Fact::MissedRejoin { member, .. } => {
                for o in &mut self.owner {
                    if *o == Some(*member) {
                        *o = None;
                    }
                }
            }
            // Kafka's heartbeat reports `currentAssignment`, which takes a reconciliation's
            // partitions only once its callbacks have completed (AbstractMembershipManager
            // .revokeAndAssign).
            // A heartbeat may also come before the callback starts (sent while the assignment
            // waited for the poll loop, or delayed on the wire): the partitions sent to the
            // member and left out of its report count as reported unowned once it takes them.
            Fact::OwnedReported { member, partitions } => {
                let m = *member;
                let reported = PartitionLookup::of(partitions);
                for p in 0..self.owner.len() {
                    let left_out = !reported.contains(&p);
                    if self.owner[p] == Some(m) {
                        self.reported_unowned[p] = left_out;
                    } else if self.sent_to[p] == Some(m) {
                        self.reported_before_taken[p] = left_out.then_some(m);
                    }
                    // Cheapest first: most of the partitions are neither held nor coming.
                    if left_out && self.held_or_coming(m, p) {
                        let target = self.target.get(m).and_then(Option::as_ref);
                        if target.is_some_and(|t| !t.contains(&p)) {
                            self.maybe_freed_on_word_of(m, p);
                        }
                    }
                }
            }
            Fact::AssignmentSent { member, partitions } => {
                // One given back is the member's again.
                for &p in partitions {
                    self.sent_to[p] = Some(*member);
                    if self.owner[p] != Some(*member) {
                        self.awaiting_take[p] = Some(*member);
                    }
                    if self.freed_on_word_of[p] == Some(*member) {
                        self.freed_on_word_of[p] = None;
                    }
                }
                // The answer to a report that left out a partition the member holds (or is about
                // to take), and the partition out of its target: the coordinator has freed it.
                let target: BTreeSet<usize> = partitions.iter().copied().collect();
                for p in 0..self.owner.len() {
                    if self.held_or_coming(*member, p) && !target.contains(&p) {
                        self.maybe_freed_on_word_of(*member, p);
                    }
                }
                if self.target.len() <= *member {
                    self.target.resize(*member + 1, None);
                }
                self.target[*member] = Some(target);
                // The member's membership (not removed) is given what it went on holding from
                // a zombie's claim: its own from here.
                let in_group = !self.is_removed(*member);
                if let Some(held) = self.zombie_held.get_mut(*member).filter(|_| in_group) {
                    let kept: Vec<usize> = partitions
                        .iter()
                        .copied()
                        .filter(|p| held.remove(p))
                        .collect();
                    if !kept.is_empty() {
                        self.acquire(now, *member, &kept, found);
                    }
                }
            }
            Fact::Processed {
                member,
                partition,
                from,
                to,
            } => {
                let owner = self.owner[*partition];
                if owner == Some(*member) {
                    self.processed_by_owner[*partition] = true;
                }
                if owner != Some(*member) && self.released[*partition].contains(member) {
                    let verdict = Verdict::ProcessedAfterRevoke {
                        member: found.member(*member),
                        partition: found.partition(*partition),
                        records: to - from,
                        owner: owner.map(|o| found.member(o)),
                    };
                    found.violation(now, verdict);
                } else if owner != Some(*member) {
                    let names = found.names;
                    found.zombies.push(Zombie {
                        at_ms: now.as_millis(),
                        member: names.members[*member].clone(),
                        partition: names.partitions[*partition].clone(),
                        records: to - from,
                        owner: owner.map(|o| names.members[o].clone()),
                    });
                    found.reached(Coverage::ZombieBatch);
                }
            }
            _ => {}
        }
    }

    /// Ownership starts; a partition still owned by another member is a violation, except one
    /// Kafka's coordinator moved on with that member's word: KIP-848, its heartbeat reported
    /// the partition not owned while its `onPartitionsAssigned` ran (not yet fetchable), so
    /// `CurrentAssignmentBuilder` found nothing of it to revoke (`ownsRevokedPartitions`) and
    /// freed it. The first member gives it up there: it must not process it again.
    fn acquire(&mut self, now: SimTime, m: usize, parts: &[usize], found: &mut Findings) {
        if self.is_removed(m) {
            if !parts.is_empty() {
                found.reached(Coverage::AssignedAfterRemoval);
                self.hold_as_zombie(m, parts);
            }
            return;
        }
        for &p in parts {
            if self.late.is_late(m, p) {
                // What it processes of `p` from here on is a zombie's batch.
                found.reached(Coverage::AssignedAfterRemoval);
                self.released[p].remove(&m);
                self.hold_as_zombie(m, &[p]);
                continue;
            }
            let previous = self.owner[p].filter(|&o| o != m);
            if let Some(o) =
                previous.filter(|_| self.reported_unowned[p] && !self.processed_by_owner[p])
            {
                self.released[p].insert(o);
                self.freed_zombie[p] = Some(o);
                found.reached(Coverage::MovedInCallback);
            } else if let Some(o) = previous.filter(|&o| self.freed_on_word_of[p] == Some(o)) {
                // The report that left `p` out was sent before `o`'s callback for it completed
                // and read with `p` out of `o`'s target (held on the wire past the callback, or
                // the callback waited behind a commit): the coordinator freed `p` on that word.
                // `o` goes on holding it, a zombie, until the answer with its new target
                // reaches it and its reconciliation revokes it (fuzz --cluster-faults seeds
                // 5253944, 6507884).
                found.reached(Coverage::MovedInCallback);
                self.hold_as_zombie(o, &[p]);
                self.freed_zombie[p] = Some(o);
            } else if let Some(o) = previous {
                let upgrade_before_sync = self.freed_by_upgrade[p] == Some(o);
                if upgrade_before_sync {
                    found.reached(Coverage::UpgradeDoubleOwned);
                }
                let verdict = Verdict::DoubleOwnership {
                    partition: found.partition(p),
                    owner: found.member(o),
                    claimant: found.member(m),
                    upgrade_before_sync,
                };
                found.violation(now, verdict);
            }
            self.freed_by_upgrade[p] = None;
            self.owner[p] = Some(m);
            self.awaiting_take[p] = None;
            if self.freed_zombie[p] == Some(m) {
                self.freed_zombie[p] = None;
            }
            // Handed over: what was freed on another member's word is this one's now.
            self.freed_on_word_of[p] = self.freed_on_word_of[p].filter(|&f| f == m);
            self.released[p].remove(&m);
            self.reported_unowned[p] = self.reported_before_taken[p].take() == Some(m);
            self.processed_by_owner[p] = false;
        }
    }

    /// Whether member `m` holds partition `p` or is about to take it: only then can the
    /// coordinator free it on `m`'s word ([`Self::maybe_freed_on_word_of`]).
    fn held_or_coming(&self, m: usize, p: usize) -> bool {
        self.owner[p] == Some(m) || self.awaiting_take[p] == Some(m)
    }

    /// Member `m`'s report and target both leave `p` out: the coordinator freed it on `m`'s
    /// word if `m` holds it (its report left it out while its callback took it) or was sent it
    /// and has not taken it yet (nor given it up since).
    fn maybe_freed_on_word_of(&mut self, m: usize, p: usize) {
        let held = self.owner[p] == Some(m) && self.reported_unowned[p];
        let coming = self.awaiting_take[p] == Some(m) && self.reported_before_taken[p] == Some(m);
        if held || coming {
            self.freed_on_word_of[p] = Some(m);
        }
    }

    fn hold_as_zombie(&mut self, m: usize, parts: &[usize]) {
        if self.zombie_held.len() <= m {
            self.zombie_held.resize(m + 1, BTreeSet::new());
        }
        self.zombie_held[m].extend(parts.iter().copied());
    }

    /// The coordinator added (or put in place) an id of member `m`: if it is its current
    /// process's (not an earlier one's late add), the member is in the group.
    fn member_added(&mut self, m: usize, fact: &Fact) {
        if self.member_ids.observe(fact) {
            self.set_removed(m, false);
            self.end_freed_zombie(m);
        }
    }

    fn is_removed(&self, m: usize) -> bool {
        self.removed.get(m).copied().unwrap_or(false)
    }

    fn set_removed(&mut self, m: usize, removed: bool) {
        if self.removed.len() <= m {
            self.removed.resize(m + 1, false);
        }
        self.removed[m] = removed;
    }

    /// A member that crashed or was removed: what it processes now is a zombie's.
    fn forget_releases(&mut self, m: usize) {
        for r in &mut self.released {
            r.remove(&m);
        }
    }

    fn release(&mut self, m: usize, parts: &[usize]) {
        for &p in parts {
            if self.owner[p] == Some(m) {
                self.owner[p] = None;
                if self.freed_on_word_of[p] == Some(m) {
                    self.freed_on_word_of[p] = None;
                }
            }
        }
    }
}
