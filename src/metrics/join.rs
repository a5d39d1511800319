//! The partition-local join and state recovery: notifications joined or missed (one cause
//! each), their latency, and the restores begun, overall and per rebalance window.

use super::*;
use crate::facts::Miss;

impl Metrics {
    /// A notification was joined (or missed, for one reason) `latency_us` after it was
    /// produced; `in_window` while a rebalance's window is open.
    pub(super) fn notification(
        &mut self,
        outcome: Result<(), Miss>,
        latency_us: u64,
        in_window: bool,
    ) {
        self.join.notifications += 1;
        for misses in [
            Some(&mut self.join.misses),
            in_window.then_some(&mut self.window.join_misses),
        ]
        .into_iter()
        .flatten()
        {
            match outcome {
                Ok(()) => {}
                Err(Miss::NotCoLocated) => misses.not_co_located += 1,
                Err(Miss::NoPriceYet) => misses.no_price_yet += 1,
                Err(Miss::OutOfOrder) => misses.out_of_order += 1,
                Err(Miss::Restoring) => misses.restoring += 1,
                Err(Miss::StateEmpty) => misses.state_empty += 1,
            }
        }
        if outcome.is_ok() {
            self.join.local_hits += 1;
        }
        self.join_latencies_ms.push(latency_us / 1000);
    }

    /// A member begins rebuilding a price partition's state: `records` replayed over
    /// `duration_us` (0 for a standby takeover).
    pub(super) fn restore_started(
        &mut self,
        standby: bool,
        records: u64,
        duration_us: u64,
        in_window: bool,
    ) {
        let r = &mut self.recovery;
        r.restores += 1;
        r.standby_takeovers += u64::from(standby);
        r.restored_records += records;
        r.restore_ms += duration_us / 1000;
        if in_window {
            let w = &mut self.window;
            w.restores += 1;
            w.standby_takeovers += u64::from(standby);
            w.restored_records += records;
            w.restore_ms += duration_us / 1000;
        }
    }
}
