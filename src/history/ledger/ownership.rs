//! Ownership and the members' lifecycles. A member owns a partition from its assignment until
//! the first of its revoke or lost callback, its crash, or the coordinator removing it
//! (DESIGN.md "What counts"); revocations, lost and moved partitions are counted as ownership
//! changes.

use super::faults::PauseCause;
use super::*;
use crate::cluster::PartitionLookup;

impl Ledger {
    /// A member's process starts.
    pub(super) fn process_started(&mut self, now: SimTime, m: usize) {
        self.running_process[m] = true;
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "start",
            },
        );
        self.started_at[m] = now;
        self.close_requested_at[m] = None;
        self.crashed_at[m] = None;
    }

    pub(super) fn close_requested(&mut self, now: SimTime, m: usize) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "close",
            },
        );
        self.close_requested_at[m] = Some(now);
    }

    pub(super) fn process_stopped(&mut self, m: usize) {
        self.running_process[m] = false;
        self.tallies.paused_since[m] = None;
    }

    pub(super) fn crashed(&mut self, now: SimTime, m: usize, owned: &[usize]) {
        self.running_process[m] = false;
        self.held_when_removed[m].clear();
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "crash",
            },
        );
        if self.in_group[m] {
            self.unreachable(now, m, "crash", None);
        }
        self.crashed_at[m] = Some(now);
        self.tallies.paused_since[m] = None;
        if self.formed() {
            self.tallies.lost_by_crash += owned.len() as u64;
        }
        for &p in owned {
            self.release(now, m, p, PauseCause::MemberCrash);
        }
        self.unhold(now, owned);
    }

    pub(super) fn stalled(&mut self, now: SimTime, m: usize) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "stall_begin",
            },
        );
        self.stall_started_at[m] = Some(now);
        let parts: Vec<usize> = (0..self.active.len())
            .filter(|&p| self.active[p] == Some(m))
            .collect();
        for &p in &parts {
            self.stop_processing(now, p, PauseCause::MemberStall);
        }
        self.stalled_parts[m] = parts;
    }

    /// For the pictures: a member of the group can no longer reach the coordinator, which goes
    /// on counting it as a member (and the owner of its partitions) until its entry is removed
    /// or replaced. Only recorded in the marks.
    fn unreachable(&mut self, now: SimTime, m: usize, cause: &'static str, until: Option<SimTime>) {
        if self.marks.is_none() {
            return;
        }
        self.unreachable_id[m] = Some(self.member_ids.current(m).unwrap_or_default().to_string());
        self.mark(
            now,
            Mark::Unreachable {
                member: m,
                cause,
                until_us: until.map(SimTime::as_micros),
            },
        );
    }

    /// A network partition cuts member `m` off from the coordinator's broker until `until`.
    pub(super) fn cut_off_from_coordinator(&mut self, now: SimTime, m: usize, until: SimTime) {
        if self.in_group[m] && self.running_process[m] {
            self.unreachable(now, m, "cut_off", Some(until));
        }
    }

    /// The coordinator removed or replaced the entry of a member that could not reach it.
    fn unreachable_ended(&mut self, now: SimTime, m: usize, member_id: &str, event: &'static str) {
        let ends = match event {
            "replaced" => self.unreachable_id[m].is_some(),
            _ => self.unreachable_id[m].as_deref() == Some(member_id),
        };
        if ends {
            self.unreachable_id[m] = None;
            self.mark(now, Mark::Member { member: m, event });
        }
    }

    /// KIP-345: a static member's new process took over its entry.
    pub(super) fn member_replaced(&mut self, now: SimTime, m: usize) {
        self.unreachable_ended(now, m, "", "replaced");
    }

    /// The coordinator removed the member: its ownership ends now.
    pub(super) fn member_removed(&mut self, now: SimTime, m: usize, member_id: &str) {
        self.unreachable_ended(now, m, member_id, "removed");
        // An older member id of this member (a crashed process's, expiring after the restart
        // joined under a new id) is another member to the coordinator: the running process
        // keeps what it owns.
        if self.member_ids.current(m) != Some(member_id) {
            return;
        }
        self.in_group[m] = false;
        if self.owned_count[m] > 0 {
            let cause = self.rebalance_cause(now, m);
            for p in 0..self.owner.len() {
                if self.owner[p] == Some(m) {
                    self.release(now, m, p, cause);
                    self.held_when_removed[m].push(p);
                }
            }
        }
        self.tallies.paused_since[m] = None;
    }

    /// KIP-848: the coordinator's answer gives member `m` partitions. Those its process went
    /// on holding since the coordinator removed it are its own again (a leave read after its
    /// rejoin went out, followed at once by that join): its client, holding them already,
    /// runs no callback for them (`revokeAndAssign` keeps what it owns).
    pub(super) fn assignment_sent(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        if !self.in_group[m] || self.held_when_removed[m].is_empty() {
            return;
        }
        let held = &mut self.held_when_removed[m];
        let held_now = PartitionLookup::of(held);
        let back: Vec<usize> = parts
            .iter()
            .copied()
            .filter(|p| held_now.contains(p))
            .collect();
        let given_back = PartitionLookup::of(&back);
        held.retain(|p| !given_back.contains(p));
        if !back.is_empty() {
            self.kept(now, m, &back);
        }
    }

    /// A callback or a crash gave up what the member held since its removal.
    fn give_up_held(&mut self, m: usize, parts: &[usize]) {
        let held = &mut self.held_when_removed[m];
        if !held.is_empty() {
            let gone = PartitionLookup::of(parts);
            held.retain(|p| !gone.contains(p));
        }
    }

    /// A member receives partitions (SyncGroup): it owns them from now. A member the
    /// coordinator has removed takes only what nobody owns: an answer sent before the removal
    /// and delivered late (KIP-848 processes it when rejoining) is a zombie's claim, and the
    /// owner the coordinator gave the partitions to keeps them (check/ownership.rs). So is such
    /// an answer taken after the member rejoined ([`crate::facts::LateAnswers`]).
    pub(super) fn assigned(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        let taken: Vec<usize>;
        let zombie = |p: usize| !self.in_group[m] || self.late.is_late(m, p);
        let parts = if parts.iter().all(|&p| !zombie(p)) {
            parts
        } else {
            taken = parts
                .iter()
                .copied()
                .filter(|&p| !zombie(p) || self.owner[p].is_none_or(|o| o == m))
                .collect();
            &taken
        };
        self.acquire(now, m, parts);
        self.hold(now, parts);
        if parts.is_empty() {
            self.end_pause(now, m);
        }
    }

    /// A SyncGroup kept partitions the member went on holding: those whose ownership had ended
    /// (a `MissedRejoin` handed them on) are its own again, and it processes them at once (it
    /// never stopped fetching them). So are those of a member a new coordinator loaded back
    /// into the group after the old one had removed it from its memory only: it is in the
    /// group again.
    pub(super) fn kept(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        self.in_group[m] = true;
        for &p in parts {
            if self.owner[p] != Some(m) {
                self.acquire(now, m, &[p]);
                if self.active[p] != Some(m) {
                    self.start_processing(now, m, p);
                }
            }
        }
    }

    /// Ownership starts (double ownership is the checkers' concern: check/ownership.rs).
    fn acquire(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        for &p in parts {
            if self.formed() && self.last_owner[p].is_some_and(|o| o != m) {
                self.tallies.moved_total += 1;
            }
            if self.owner[p] != Some(m) {
                if let Some(o) = self.owner[p] {
                    self.owned_count[o] -= 1;
                }
                self.owned_count[m] += 1;
            }
            self.owner[p] = Some(m);
            self.last_owner[p] = Some(m);
            self.mark(
                now,
                Mark::Owner {
                    partition: p,
                    member: Some(m),
                },
            );
        }
    }

    /// `onPartitionsRevoked` in a rebalance: EAGER's `onJoinPrepare`, or COOPERATIVE's
    /// `onJoinComplete` right after a rebalance (counted with it: whether the member stays is
    /// known now).
    pub(super) fn revoked(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        if self.formed() {
            let n = parts.len() as u64;
            match self.running.as_mut() {
                Some(r) => *r.revoked_by.entry(m).or_default() += n,
                None if self.in_group[m] => self.tallies.revocations_by_staying += n,
                None => {}
            }
        }
        self.revoked_on_close(now, m, parts);
    }

    /// `onPartitionsRevoked` by `close()`: a leaver's own revocation.
    pub(super) fn revoked_on_close(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        self.give_up_held(m, parts);
        if self.formed() {
            self.tallies.revocations_total += parts.len() as u64;
            self.tallies.revocations_per_member[m] += parts.len() as u64;
        }
        let cause = self.rebalance_cause(now, m);
        for &p in parts {
            self.release(now, m, p, cause);
        }
        self.unhold(now, parts);
        let owns_nothing = self.owned_count[m] == 0;
        let stops = self
            .running
            .as_ref()
            .is_some_and(|r| r.owners_at_start.contains(&m));
        if owns_nothing && stops {
            self.tallies.paused_since[m].get_or_insert(now);
        }
    }

    pub(super) fn lost(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        self.give_up_held(m, parts);
        if self.formed() {
            self.tallies.lost_total += parts.len() as u64;
        }
        let cause = self.rebalance_cause(now, m);
        for &p in parts {
            self.release(now, m, p, cause);
        }
        self.unhold(now, parts);
    }

    /// The member has positions for these partitions and processes them from now.
    pub(super) fn processing_started(&mut self, now: SimTime, m: usize, parts: &[usize]) {
        for &p in parts {
            if self.owner[p] == Some(m) {
                self.start_processing(now, m, p);
            }
        }
        self.end_pause(now, m);
    }

    /// The stalled poll loop returned.
    pub(super) fn stall_ended(&mut self, now: SimTime, m: usize) {
        self.mark(
            now,
            Mark::Member {
                member: m,
                event: "stall_end",
            },
        );
        for p in std::mem::take(&mut self.stalled_parts[m]) {
            if self.owner[p] == Some(m) {
                self.start_processing(now, m, p);
            }
        }
    }

    fn release(&mut self, now: SimTime, m: usize, p: usize, cause: PauseCause) {
        if self.owner[p] == Some(m) {
            self.owner[p] = None;
            self.owned_count[m] -= 1;
            self.mark(
                now,
                Mark::Owner {
                    partition: p,
                    member: None,
                },
            );
        }
        if self.active[p] == Some(m) {
            self.stop_processing(now, p, cause);
        }
    }
}
