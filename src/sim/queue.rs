//! The event queue: a min-heap on (time, insertion sequence), so events at the same instant run
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

/// A heap entry: `(time, seq)` packed in one integer (time in the high 64 bits), so ordering
/// is a single comparison; `seq` is unique, so the slot never decides.
#[derive(Clone, Copy, Debug)]
struct Key {
    order: u128,
    slot: u32,
}

impl Key {
    fn new(at: SimTime, seq: u64, slot: u32) -> Self {
        Key {
            order: (u128::from(at.as_micros()) << 64) | u128::from(seq),
            slot,
        }
    }

    fn at(&self) -> SimTime {
        SimTime::from_micros((self.order >> 64) as u64)
    }

    fn seq(&self) -> u64 {
        self.order as u64
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.order == other.order
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order.cmp(&other.order)
    }
}

/// Events live in a slab; the heap orders small `(time, seq)` keys, so popping moves no
/// event payloads and needs no hashing. A cancelled event's slot is emptied at once and its
/// heap key skipped when it surfaces.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Key>>,
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
            heap: BinaryHeap::new(),
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
    /// When `at` is in the past: that is a bug in the caller, never a property of the input.
    pub fn schedule(&mut self, at: SimTime, event: E) -> TimerId {
        assert!(
            at >= self.now,
            "scheduling in the past ({at} < {})",
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some((seq, event));
                slot
            }
            None => {
                self.slots.push(Some((seq, event)));
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Reverse(Key::new(at, seq, slot)));
        TimerId { slot, seq }
    }

    pub fn cancel(&mut self, id: TimerId) {
        if let Some(entry) = self.slots.get_mut(id.slot as usize) {
            if entry.as_ref().is_some_and(|(seq, _)| *seq == id.seq) {
                *entry = None;
            }
        }
    }

    /// Drops cancelled keys from the top of the heap.
    fn skip_cancelled(&mut self) {
        while let Some(&Reverse(key)) = self.heap.peek() {
            let (seq, slot) = (key.seq(), key.slot);
            let live = self.slots[slot as usize]
                .as_ref()
                .is_some_and(|(s, _)| *s == seq);
            if live {
                return;
            }
            self.heap.pop();
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
        let Reverse(key) = self.heap.pop()?;
        let (at, seq, slot) = (key.at(), key.seq(), key.slot);
        let (_, event) = self.slots[slot as usize].take().expect("live slot");
        self.free.push(slot);
        self.now = at;
        self.popped += 1;
        Some((at, seq, event))
    }

    /// Time of the next live event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.skip_cancelled();
        self.heap.peek().map(|Reverse(key)| key.at())
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
}
