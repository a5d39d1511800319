//! The application thread: the poll loop and the rebalance-listener callbacks. A rebalance
//! advances only inside `poll()`: JoinGroup and SyncGroup responses wait for the member's next
//! poll (at once when it is blocked in poll with nothing to process), so a long batch delays
//! it; a listener callback blocks the loop for its time; a stall holds the batch in progress.

use super::*;
use crate::facts::Callback;
use crate::messages::OffsetFetchRequest;

/// A `ConsumerRebalanceListener` callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Listener {
    Assigned,
    /// In a rebalance (EAGER's `onJoinPrepare`, COOPERATIVE's `onJoinComplete`).
    Revoked,
    /// From `close()`.
    RevokedOnClose,
    Lost,
}

impl Consumer {
    /// A rebalance-listener callback runs with `partitions`: its trace line and its fact.
    pub(super) fn listener(&self, env: &mut ClientEnv, callback: Listener, partitions: &[usize]) {
        let (name, suffix) = match callback {
            Listener::Assigned => ("onPartitionsAssigned", ""),
            Listener::Revoked => ("onPartitionsRevoked", ""),
            Listener::RevokedOnClose => ("onPartitionsRevoked", " (close)"),
            Listener::Lost => ("onPartitionsLost", ""),
        };
        log!(
            env,
            "{} {name} {}{suffix}",
            self.name(),
            env.partitions.list(partitions)
        );
        let (member, partitions) = (self.idx, partitions.to_vec());
        // The time the callback takes, as the callers spend it (`callback`): on close and for
        // lost partitions the listener takes none.
        let s = self.settings();
        let (kind, ms) = match callback {
            Listener::Assigned => (Callback::Assigned, s.on_partitions_assigned_ms),
            Listener::Revoked => (Callback::Revoked, s.on_partitions_revoked_ms),
            Listener::RevokedOnClose => (Callback::Revoked, 0),
            Listener::Lost => (Callback::Lost, 0),
        };
        env.fact(Fact::ListenerTime {
            member,
            callback: kind,
            ms,
        });
        env.fact(match callback {
            Listener::Assigned => Fact::Assigned { member, partitions },
            Listener::Revoked => Fact::Revoked { member, partitions },
            Listener::RevokedOnClose => Fact::RevokedOnClose { member, partitions },
            Listener::Lost => Fact::Lost { member, partitions },
        });
    }
    /// The poll loop is blocked until `until`, inside the batch in progress.
    pub(super) fn begin_stall(&mut self, env: &mut ClientEnv, until: SimTime) {
        let App::Busy { batch, .. } = std::mem::replace(&mut self.app, App::Idle) else {
            return;
        };
        // The batch's BatchDone is re-armed (replaced) at the stall's end.
        self.stall_batch(env, until, batch);
    }

    /// `batch` ends at `until`, when the stall that holds it does.
    pub(super) fn stall_batch(
        &mut self,
        env: &mut ClientEnv,
        until: SimTime,
        batch: Vec<(usize, u64, u64)>,
    ) {
        self.stalled_until = Some(until);
        env.fact(Fact::Stalled {
            member: self.idx,
            until,
        });
        self.busy_until(env, until, batch);
    }

    /// The application processes `batch` until `until`.
    pub(super) fn busy_until(
        &mut self,
        env: &mut ClientEnv,
        until: SimTime,
        batch: Vec<(usize, u64, u64)>,
    ) {
        env.set_timer(ClientTimer::BatchDone, until);
        self.app = App::Busy { until, batch };
    }

    pub(super) fn schedule_poll(&mut self, env: &mut ClientEnv, at: SimTime) {
        env.set_timer(ClientTimer::Poll, at);
        self.app = App::Idle;
    }

    /// A member blocked in `poll()` with nothing to process returns at once.
    pub(super) fn wake(&mut self, env: &mut ClientEnv) {
        if matches!(self.app, App::Idle) {
            self.schedule_poll(env, env.now());
        }
    }

    pub(super) fn poll(&mut self, env: &mut ClientEnv) {
        if !self.alive
            || self.spinning_in_assignor
            || matches!(self.app, App::Blocked | App::Busy { .. })
        {
            return;
        }
        let now = env.now();
        self.last_poll = now;
        if self.closing {
            self.begin_close(env);
            return;
        }
        if self.poll_membership(env) {
            self.poll_fetch_and_process(env);
        }
        self.membership_pass_done();
    }

    /// Committed offsets for new partitions, auto-commit, then the next batch or an idle wait.
    pub(super) fn poll_fetch_and_process(&mut self, env: &mut ClientEnv) {
        let now = env.now();
        if !self.pending_fetch.is_empty() {
            // `updateAssignmentMetadataIfNeeded`: the poll loop waits for committed offsets.
            let partitions = std::mem::take(&mut self.pending_fetch);
            self.offsets_requested.clone_from(&partitions);
            self.awaiting_offsets = true;
            self.offsets_retry = backoff::SyncRetry::default();
            self.app = App::Blocked;
            env.send(OffsetFetchRequest { partitions });
            return;
        }
        self.maybe_auto_commit(env);
        // One batch buffer, handed back when its batch is done: no allocation per poll.
        let mut batch = std::mem::take(&mut self.batch_buffer);
        self.take_batch(env, &mut batch);
        if batch.is_empty() {
            self.batch_buffer = batch;
            let wake = self.next_wake(env);
            let wake = self.membership_wait_cap(env, wake);
            self.schedule_poll(env, wake);
        } else {
            let records: u64 = batch.iter().map(|(_, a, b)| b - a).sum();
            let until = now + Duration::from_micros(records * self.settings().record_processing_us);
            match self.pending_stall.take() {
                // The stall's window is still on: the batch is processed after it.
                Some(end) if end > now => self.stall_batch(env, end + (until - now), batch),
                _ => self.busy_until(env, until, batch),
            }
        }
    }

    pub(super) fn batch_done(&mut self, env: &mut ClientEnv) {
        let App::Busy { batch, .. } = std::mem::replace(&mut self.app, App::Idle) else {
            return;
        };
        for &(p, from, to) in &batch {
            self.run_app(env, p, from, to);
        }
        for &(p, from, to) in &batch {
            env.fact(Fact::Processed {
                member: self.idx,
                partition: p,
                from,
                to,
            });
            self.positions.advance(env.logs, p, to);
        }
        self.batch_buffer = batch;
        if self.stalled_until.take().is_some() {
            env.fact(Fact::StallEnded { member: self.idx });
        }
        match env.scenario.group.commit_after_batch {
            CommitAfterBatch::Sync if self.generation_if_stable().is_some() => {
                self.send_commit(env);
                self.block_on_commit(AfterCommit::Resume);
                return;
            }
            CommitAfterBatch::Async => self.commit_async(env),
            _ => {}
        }
        self.poll(env);
    }

    /// Partitions leave this member (revoked or lost): their positions go, and so does their join
    /// state unless the member keeps state across revocations.
    pub(super) fn drop_partitions(&mut self, parts: &[usize], env: &ClientEnv) {
        // MUTANT(process-after-revoke): the fetch positions stay, so the member goes on
        // processing what its callback gave up.
        let keep_fetching = env.scenario.mutant == Some(Mutant::ProcessAfterRevoke);
        if !keep_fetching {
            self.positions.remove_all(&PartitionLookup::of(parts));
            for p in parts {
                self.start_positions.remove(p);
            }
        }
        let keep = env
            .scenario
            .app
            .as_ref()
            .is_some_and(|a| a.keep_state_on_revoke);
        self.task.dropped(parts, keep);
    }

    /// A rebalance-listener callback takes `ms`: the poll loop is blocked, then goes on with
    /// `after`.
    pub(super) fn callback(&mut self, env: &mut ClientEnv, ms: u64, after: AfterCallback) {
        if ms == 0 {
            self.after_callback_done(env, after);
            return;
        }
        self.after_callback = Some(after);
        self.app = App::Blocked;
        let at = env.now() + Duration::from_millis(ms);
        env.after(at, ClientTimer::CallbackDone);
    }

    pub(super) fn after_callback_done(&mut self, env: &mut ClientEnv, after: AfterCallback) {
        match after {
            AfterCallback::Resume => {}
            AfterCallback::Membership(step) => self.membership_step(env, step),
        }
    }
}
