//! KIP-848 reconciliation on the client, in the application thread's `poll()`
//! (`AbstractMembershipManager.maybeReconcile`, `revokeAndAssign`): commit (auto-commit), revoke
//! what the new target no longer gives, then assign what it adds, then acknowledge; a member
//! that stops RECONCILING while a callback runs aborts there.

use super::super::MembershipStep;
use super::ConsumerMemberState;
use crate::client::poll::Listener;
use crate::client::*;

impl Consumer {
    /// `maybeReconcile` / `revokeAndAssign`: commit (auto-commit), revoke what it loses, then
    /// assign what it gains, then acknowledge.
    pub(super) fn reconcile(&mut self, env: &mut ClientEnv, target: Vec<usize>) {
        let (targeted, owned) = (
            PartitionLookup::of(&target),
            PartitionLookup::of(&self.owned),
        );
        let revoked: Vec<usize> = self
            .owned
            .iter()
            .filter(|p| !targeted.contains(p))
            .copied()
            .collect();
        let added: Vec<usize> = target
            .iter()
            .filter(|p| !owned.contains(p))
            .copied()
            .collect();
        // Nothing to revoke or assign (a newer target gave back what an earlier reconciliation
        // ended with): acknowledge without callbacks (`maybeReconcile`: the resolved target's
        // partitions equal `currentAssignment`'s).
        if revoked.is_empty() && added.is_empty() {
            self.acknowledge(env);
            return;
        }
        self.kip848().assigning = added;
        let from = self.owned.clone();
        self.kip848().reconciling_from.get_or_insert(from);
        if revoked.is_empty() {
            self.assign_reconciled(env);
            return;
        }
        // Auto-commit before revoking (the revoked partitions' progress is committed first).
        if self.auto_commit_sync(
            env,
            AfterCommit::Membership(MembershipStep::Revoke(revoked.clone())),
        ) {
            return;
        }
        self.revoke_reconciled(env, revoked);
    }

    pub(in crate::client) fn revoke_reconciled(
        &mut self,
        env: &mut ClientEnv,
        revoked: Vec<usize>,
    ) {
        self.listener(env, Listener::Revoked, &revoked);
        let gone = PartitionLookup::of(&revoked);
        self.owned.retain(|p| !gone.contains(p));
        self.drop_partitions(&revoked, env);
        let ms = self.settings().on_partitions_revoked_ms;
        self.callback(env, ms, AfterCallback::Membership(MembershipStep::Assign));
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

    pub(in crate::client) fn assign_reconciled(&mut self, env: &mut ClientEnv) {
        let added = std::mem::take(&mut self.kip848().assigning);
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

    /// The reconciliation is complete: the next heartbeat, sent at once, reports what it owns.
    pub(in crate::client) fn acknowledge(&mut self, env: &mut ClientEnv) {
        self.kip848().reconciling_from = None;
        self.move_to(env, ConsumerMemberState::Acknowledging);
        self.send_consumer_heartbeat(env);
    }
}
