//! KIP-848 reconciliation on the client (`AbstractMembershipManager.maybeReconcile`,
//! `revokeAndAssign`). The background thread starts it when the application thread's poll sends
//! an `AsyncPollEvent` (`maybeReconcile(canCommit = true)`), or at once when it neither commits
//! nor revokes (auto-commit off, nothing to take away: `maybeReconcile(false)` from its own
//! loop). It commits (auto-commit), then queues `onPartitionsRevoked` for the application
//! thread; when that completes it queues `onPartitionsAssigned` (even with nothing added); when
//! that completes the member acknowledges. Each callback runs at the application thread's next
//! poll pass (`processBackgroundEvents`), so revoke and assign fall in different passes. A
//! member that stops RECONCILING meanwhile aborts there (`maybeAbortReconciliation`).

use super::super::MembershipStep;
use super::{ConsumerMemberState, QueuedCallback};
use crate::client::poll::Listener;
use crate::client::*;
use crate::facts::Callback;

/// What a reconciliation from `owned` towards `target` takes away and adds, in partition order.
pub(in crate::client) fn diff(owned: &[usize], target: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let (targeted, held) = (PartitionLookup::of(target), PartitionLookup::of(owned));
    let revoked = owned
        .iter()
        .filter(|p| !targeted.contains(p))
        .copied()
        .collect();
    let added = target
        .iter()
        .filter(|p| !held.contains(p))
        .copied()
        .collect();
    (revoked, added)
}

impl Consumer {
    /// `maybeReconcile`: the background thread reconciles towards `target`. The member's first
    /// assignment (from none: joining, or rejoining) is always reconciled, callbacks and all,
    /// even when empty; a later one equal to what it owns is acknowledged without callbacks.
    pub(super) fn reconcile(&mut self, env: &mut ClientEnv, target: Vec<usize>) {
        let (revoked, added) = diff(&self.owned, &target);
        let first = !self.kip848().reconciled_once;
        self.kip848().reconciled_once = true;
        if revoked.is_empty() && added.is_empty() && !first {
            self.acknowledge(env);
            return;
        }
        self.kip848().assigning = added;
        let from = self.owned.clone();
        self.kip848().reconciling_from = Some(from);
        if revoked.is_empty() {
            self.queue_assignment(env);
            return;
        }
        // `markPendingRevocationToPauseFetching`: nothing more is fetched from what goes, so
        // what the commit below covers is all the member processes of it.
        self.pending_revocation.clone_from(&revoked);
        self.pending_revocation.sort_unstable();
        // Auto-commit before revoking (the revoked partitions' progress is committed first).
        if self.auto_commit_sync(
            env,
            AfterCommit::Membership(MembershipStep::Revoke(revoked.clone())),
        ) {
            return;
        }
        self.queue_revocation(env, revoked);
    }

    /// `maybeReconcile(false)`, the background thread's own loop: a reconciliation that
    /// neither commits nor revokes does not wait for the application thread's poll.
    pub(super) fn maybe_reconcile_in_background(&mut self, env: &mut ClientEnv) {
        let m = self.kip848();
        if m.state != ConsumerMemberState::Reconciling || m.reconciling_from.is_some() {
            return;
        }
        let Some(target) = m.target.clone() else {
            return;
        };
        let (revoked, _) = diff(&self.owned, &target);
        if env.scenario.group.enable_auto_commit || !revoked.is_empty() {
            return;
        }
        let target = self.kip848().target.take().expect("checked above");
        self.reconcile(env, target);
    }

    /// `revokePartitions`: `onPartitionsRevoked` is queued for the application thread.
    pub(in crate::client) fn queue_revocation(&mut self, env: &mut ClientEnv, revoked: Vec<usize>) {
        self.queue_callback(env, QueuedCallback::Revoke(revoked));
    }

    /// `assignPartitions`, chained after the revocation: `onPartitionsAssigned` is queued.
    pub(in crate::client) fn queue_assignment(&mut self, env: &mut ClientEnv) {
        let added = std::mem::take(&mut self.kip848().assigning);
        self.queue_callback(env, QueuedCallback::Assign(added));
    }

    /// A callback queued for the application thread's next pass: its trace line and fact.
    fn queue_callback(&mut self, env: &mut ClientEnv, queued: QueuedCallback) {
        let (name, callback, partitions) = match &queued {
            QueuedCallback::Revoke(p) => ("onPartitionsRevoked", Callback::Revoked, p),
            QueuedCallback::Assign(p) => ("onPartitionsAssigned", Callback::Assigned, p),
        };
        log!(
            env,
            "{} queues {name} {}",
            self.name(),
            env.partitions.list(partitions)
        );
        env.fact(Fact::CallbackQueued {
            member: self.idx,
            callback,
        });
        self.kip848().queued.push_back(queued);
    }

    /// The application thread runs a queued callback (`processBackgroundEvents`); its
    /// completion goes back to the background thread, which goes on with the reconciliation.
    pub(super) fn run_queued_callback(&mut self, env: &mut ClientEnv, callback: QueuedCallback) {
        match callback {
            QueuedCallback::Revoke(revoked) => {
                self.listener(env, Listener::Revoked, &revoked);
                self.pending_revocation.clear();
                let gone = PartitionLookup::of(&revoked);
                self.owned.retain(|p| !gone.contains(p));
                self.drop_partitions(&revoked, env);
                let ms = self.settings().on_partitions_revoked_ms;
                self.callback(env, ms, AfterCallback::Membership(MembershipStep::Assign));
            }
            QueuedCallback::Assign(added) => {
                self.owned.extend(added.iter().copied());
                self.owned.sort_unstable();
                self.listener(env, Listener::Assigned, &added);
                self.pending_fetch.extend(added.iter().copied());
                let ms = self.settings().on_partitions_assigned_ms;
                self.callback(
                    env,
                    ms,
                    AfterCallback::Membership(MembershipStep::Acknowledge),
                );
            }
        }
    }

    /// The reconciliation in progress is still the member's own: it is RECONCILING, or
    /// ACKNOWLEDGING the one before (a newer target starts reconciling as soon as the last
    /// one is done, before the acknowledgement is answered).
    pub(in crate::client) fn still_reconciling(&mut self) -> bool {
        matches!(
            self.kip848().state,
            ConsumerMemberState::Reconciling | ConsumerMemberState::Acknowledging
        )
    }

    /// The reconciliation in progress stops: what it was to assign is not.
    pub(in crate::client) fn abort_reconciliation(&mut self) {
        self.kip848().assigning.clear();
    }

    /// The reconciliation is complete: the next heartbeat, sent at once, reports what it owns.
    pub(in crate::client) fn acknowledge(&mut self, env: &mut ClientEnv) {
        self.kip848().reconciling_from = None;
        self.move_to(env, ConsumerMemberState::Acknowledging);
        self.send_consumer_heartbeat(env);
    }
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn the_diff_is_what_goes_and_what_comes() {
        assert_eq!(diff(&[1, 2, 3], &[2, 3, 4]), (vec![1], vec![4]));
        assert_eq!(diff(&[], &[]), (vec![], vec![]));
        assert_eq!(diff(&[5], &[]), (vec![5], vec![]));
    }
}
