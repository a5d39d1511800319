//! The event queue: a min-heap on (time, insertion sequence), so events at the same instant run
//! in the order they were scheduled (FIFO ties). Timers that get re-armed are cancelled by
//! their id rather than left to fire and be ignored.

use super::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// Identifies a scheduled event, for cancelling it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TimerId(u64);

pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<(SimTime, u64)>>,
    // Events by sequence number; kept beside the heap so E needs no Ord.
    events: std::collections::HashMap<u64, E>,
    // Lookup only; its iteration order never matters.
    cancelled: HashSet<u64>,
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
            events: std::collections::HashMap::new(),
            cancelled: HashSet::new(),
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
        self.heap.push(Reverse((at, seq)));
        self.events.insert(seq, event);
        TimerId(seq)
    }

    pub fn cancel(&mut self, id: TimerId) {
        if self.events.remove(&id.0).is_some() {
            self.cancelled.insert(id.0);
        }
    }

    /// The next event, advancing the clock to it; `None` when nothing is left.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        while let Some(Reverse((at, seq))) = self.heap.pop() {
            if self.cancelled.remove(&seq) {
                continue;
            }
            let event = self.events.remove(&seq).expect("scheduled event is stored");
            self.now = at;
            self.popped += 1;
            return Some((at, event));
        }
        None
    }

    /// Time of the next live event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        while let Some(Reverse((at, seq))) = self.heap.peek().copied() {
            if self.cancelled.contains(&seq) {
                self.heap.pop();
                self.cancelled.remove(&seq);
                continue;
            }
            return Some(at);
        }
        None
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
