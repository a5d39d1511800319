//! The event queue: min-heaps on (time, insertion sequence), so events at the same instant run
//! in the order they were scheduled (FIFO ties). Timers that get re-armed are cancelled by
//! their id rather than left to fire and be ignored.

use super::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Identifies a scheduled event, for cancelling it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TimerId {
    slot: u32,
    seq: u64,
}

/// Bits of a heap key that hold the slot; the sequence number sits above them.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u128 = (1 << SLOT_BITS) - 1;
/// Sequence numbers fit in the 40 bits between the time and the slot.
const MAX_SEQ: u64 = (1 << (64 - SLOT_BITS)) - 1;

/// A heap key: `time_us << 64 | seq << 24 | slot`, so ordering is one comparison of one
/// integer (time first, then insertion order; `seq` is unique, so the slot never decides).
fn key(at: SimTime, seq: u64, slot: u32) -> u128 {
    (u128::from(at.as_micros()) << 64) | (u128::from(seq) << SLOT_BITS) | u128::from(slot)
}

fn key_at(key: u128) -> SimTime {
    SimTime::from_micros((key >> 64) as u64)
}

fn key_seq(key: u128) -> u64 {
    (key >> SLOT_BITS) as u64 & MAX_SEQ
}

fn key_slot(key: u128) -> u32 {
    (key & SLOT_MASK) as u32
}

/// Events scheduled less than this far ahead go to the near heap, the rest to the far one.
/// Most events are due within a few milliseconds (a batch done, a request on the wire, a poll
/// at once) while most of those pending are timers seconds away (heartbeats, session checks,
/// an idle poll's max wait): the near heap holds about three entries on average in both
/// benchmark runs, so a pop there walks two levels instead of the nine (500 pending) or twelve
/// (5,000) of one heap holding everything.
const NEAR_US: u64 = 10_000;

/// Events live in a slab; two min-heaps order 16-byte keys (near and far, by how far ahead
/// each event was scheduled), so popping moves no event payloads and needs no hashing. The
/// next event is the smaller of the two tops: the same order as one heap, since every key is
/// unique. A cancelled event's slot is emptied at once and its heap key skipped when it
/// surfaces.
pub struct EventQueue<E> {
    near: BinaryHeap<Reverse<u128>>,
    far: BinaryHeap<Reverse<u128>>,
    slots: Vec<Option<(u64, E)>>,
    free: Vec<u32>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            near: BinaryHeap::new(),
            far: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events handled so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Schedules `event` at `at`.
    ///
    /// # Panics
    /// When `at` is in the past: that is a bug in the caller, never a property of the input;
    /// and past 2^40 events scheduled or 2^24 pending, far beyond any run the scenario
    /// limits allow.
    pub fn schedule(&mut self, at: SimTime, event: E) -> TimerId {
        assert!(
            at >= self.now,
            "scheduling in the past ({at} < {})",
            self.now
        );
        let seq = self.next_seq;
        assert!(seq <= MAX_SEQ, "more than 2^40 events scheduled");
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some((seq, event));
                slot
            }
            None => {
                assert!(
                    (self.slots.len() as u128) <= SLOT_MASK,
                    "more than 2^24 events pending"
                );
                self.slots.push(Some((seq, event)));
                (self.slots.len() - 1) as u32
            }
        };
        let key = key(at, seq, slot);
        if at.as_micros() - self.now.as_micros() < NEAR_US {
            self.near.push(Reverse(key));
        } else {
            self.far.push(Reverse(key));
        }
        TimerId { slot, seq }
    }

    /// Cancels the event if it is still pending; whether it was.
    pub fn cancel(&mut self, id: TimerId) -> bool {
        if let Some(entry) = self.slots.get_mut(id.slot as usize) {
            if entry.as_ref().is_some_and(|(seq, _)| *seq == id.seq) {
                *entry = None;
                return true;
            }
        }
        false
    }

    /// The next key, and whether it is the far heap's top.
    fn top(&self) -> Option<(u128, bool)> {
        match (self.near.peek(), self.far.peek()) {
            (Some(&Reverse(near)), Some(&Reverse(far))) if far < near => Some((far, true)),
            (Some(&Reverse(near)), _) => Some((near, false)),
            (None, Some(&Reverse(far))) => Some((far, true)),
            (None, None) => None,
        }
    }

    /// Removes the next key (from the heap `top` named).
    fn pop_top(&mut self, far: bool) {
        if far {
            self.far.pop();
        } else {
            self.near.pop();
        }
    }

    /// Drops cancelled keys from the tops of the heaps: the next key is then live.
    fn skip_cancelled(&mut self) {
        while let Some((key, far)) = self.top() {
            let (seq, slot) = (key_seq(key), key_slot(key));
            let live = self.slots[slot as usize]
                .as_ref()
                .is_some_and(|(s, _)| *s == seq);
            if live {
                return;
            }
            self.pop_top(far);
            // The slot is reusable once no heap key refers to it.
            if self.slots[slot as usize].is_none() {
                self.free.push(slot);
            }
        }
    }

    /// The next event, advancing the clock to it; `None` when nothing is left.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_with_seq().map(|(at, _, event)| (at, event))
    }

    /// The next event with its insertion sequence number (what the run digest records).
    pub fn pop_with_seq(&mut self) -> Option<(SimTime, u64, E)> {
        self.skip_cancelled();
        let (key, far) = self.top()?;
        self.pop_top(far);
        let (at, seq, slot) = (key_at(key), key_seq(key), key_slot(key));
        let (_, event) = self.slots[slot as usize].take().expect("live slot");
        self.free.push(slot);
        self.now = at;
        self.popped += 1;
        Some((at, seq, event))
    }

    /// Time of the next live event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.skip_cancelled();
        self.top().map(|(key, _)| key_at(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_run_in_insertion_order_and_cancel_works() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_millis(5), "b");
        q.schedule(SimTime::from_millis(1), "a");
        let c = q.schedule(SimTime::from_millis(5), "cancelled");
        q.schedule(SimTime::from_millis(5), "c");
        q.cancel(c);
        let order: Vec<&str> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["a", "b", "c"]);
        assert_eq!(q.now(), SimTime::from_millis(5));
    }

    #[test]
    #[should_panic(expected = "past")]
    fn scheduling_in_the_past_is_a_bug() {
        let mut q = EventQueue::new();
        q.schedule(SimTime::from_millis(5), ());
        q.pop();
        q.schedule(SimTime::from_millis(4), ());
    }

    /// Against a model (every live event in a sorted set of (time, seq)): random schedules,
    /// cancels and pops, some at the same instant, pop in the same order.
    #[test]
    fn pops_in_time_then_insertion_order_like_a_sorted_model() {
        use crate::sim::rng::Stream;
        use std::collections::BTreeSet;
        let mut rng = Stream::derive(5, "queue");
        for round in 0..20 {
            let mut q = EventQueue::new();
            let mut model: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut ids: Vec<(TimerId, u64, u64)> = Vec::new();
            for step in 0..3000u64 {
                match rng.between(0, 9) {
                    0..=4 => {
                        // Ties are common: a handful of instants ahead, some on either side
                        // of the near heap's bound (an instant reached through both heaps).
                        let ahead = match rng.between(0, 3) {
                            0 => rng.between(1, 4) * NEAR_US / 2,
                            _ => rng.between(0, 5) * 100,
                        };
                        let at = q.now().as_micros() + ahead;
                        let id = q.schedule(SimTime::from_micros(at), step);
                        model.insert((at, step));
                        ids.push((id, at, step));
                    }
                    5..=6 if !ids.is_empty() => {
                        let (id, at, step) =
                            ids.swap_remove(rng.between(0, ids.len() as u64 - 1) as usize);
                        q.cancel(id);
                        model.remove(&(at, step));
                    }
                    _ => {
                        let want = model.pop_first();
                        let got = q.pop();
                        assert_eq!(
                            got.map(|(t, e)| (t.as_micros(), e)),
                            want,
                            "round {round} step {step}"
                        );
                        if let Some((_, e)) = want {
                            ids.retain(|&(_, _, s)| s != e);
                        }
                    }
                }
            }
            while let Some(want) = model.pop_first() {
                assert_eq!(q.pop().map(|(t, e)| (t.as_micros(), e)), Some(want));
            }
            assert!(q.pop().is_none());
        }
    }
}
