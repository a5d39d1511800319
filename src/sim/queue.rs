//! The event queue: ordered on (time, insertion sequence), so events at the same instant run
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

/// Bits of a key that hold the slot; the sequence number sits above them.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u128 = (1 << SLOT_BITS) - 1;
/// Sequence numbers fit in the 40 bits between the time and the slot.
const MAX_SEQ: u64 = (1 << (64 - SLOT_BITS)) - 1;

/// A key: `time_us << 64 | seq << 24 | slot`, so ordering is one comparison of one
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

/// A calendar bucket spans 2^10 µs (about a millisecond) of simulated time.
const BUCKET_SHIFT: u32 = 10;
/// Buckets in the calendar's ring: about 4.2 s ahead, past a heartbeat interval (3 s) and an
/// idle poll's `fetch.max.wait.ms`, the timers most pending events are.
const RING: u64 = 4096;
const WORDS: usize = (RING / 64) as usize;
/// No node: the end of a bucket's list.
const NIL: u32 = u32::MAX;

/// A key in a ring bucket's list.
#[derive(Clone, Copy)]
struct Node {
    key: u128,
    next: u32,
}

fn key_bucket(key: u128) -> u64 {
    (key >> 64) as u64 >> BUCKET_SHIFT
}

/// Events live in a slab; their 16-byte keys wait in a calendar (a ring of millisecond
/// buckets, unordered, and a heap for keys beyond the ring) until their bucket comes up, then
/// are sorted into a short list, latest first. Most events are due within milliseconds while
/// most of those pending are timers seconds away (heartbeats, session checks, an idle poll's
/// max wait): scheduling one is a push onto a bucket's list, and a pop takes the last key of
/// the current millisecond's few (about seven in `hour-1000x10k`), where one heap of 5,000
/// walked twelve levels. Every key in the sorted list is earlier than every key in the
/// calendar, so events pop in the same (time, sequence) order as from one heap. A cancelled
/// event's slot is emptied at once and its key dropped when its bucket comes up or it
/// surfaces.
pub struct EventQueue<E> {
    /// Keys in buckets before `cursor`, sorted latest first: the next key is the last.
    near: Vec<u128>,
    /// The last key of `near` is known to be live (a peek found it so, and nothing was popped
    /// or cancelled since; a key filed meanwhile is live itself): the pop after a peek, at
    /// every event, need not look again.
    last_live: bool,
    /// Keys in buckets `cursor..cursor + RING`: bucket `b`'s list starts at `heads[b % RING]`.
    heads: Vec<u32>,
    /// Which ring buckets hold keys.
    occupied: [u64; WORDS],
    in_ring: usize,
    /// The ring's list nodes, and the first of the unused ones (chained through `next`).
    nodes: Vec<Node>,
    unused: u32,
    /// The first bucket the ring holds.
    cursor: u64,
    /// Keys in buckets from `cursor + RING` on.
    overflow: BinaryHeap<Reverse<u128>>,
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
            near: Vec::new(),
            last_live: false,
            heads: vec![NIL; RING as usize],
            occupied: [0; WORDS],
            in_ring: 0,
            nodes: Vec::new(),
            unused: NIL,
            cursor: 0,
            overflow: BinaryHeap::new(),
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
        self.file(key(at, seq, slot));
        TimerId { slot, seq }
    }

    /// Puts a key where its bucket says: the sorted list, the ring or the overflow.
    fn file(&mut self, key: u128) {
        let bucket = key_bucket(key);
        if bucket < self.cursor {
            // Sorted latest first: the next key is the last, and a few keys move to make room.
            let at = self.near.partition_point(|&k| k > key);
            self.near.insert(at, key);
        } else if bucket < self.cursor + RING {
            let i = (bucket % RING) as usize;
            let node = Node {
                key,
                next: self.heads[i],
            };
            self.heads[i] = if self.unused == NIL {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            } else {
                let n = self.unused;
                self.unused = self.nodes[n as usize].next;
                self.nodes[n as usize] = node;
                n
            };
            self.occupied[i / 64] |= 1 << (i % 64);
            self.in_ring += 1;
        } else {
            self.overflow.push(Reverse(key));
        }
    }

    /// Cancels the event if it is still pending; whether it was.
    pub fn cancel(&mut self, id: TimerId) -> bool {
        if let Some(entry) = self.slots.get_mut(id.slot as usize) {
            if entry.as_ref().is_some_and(|(seq, _)| *seq == id.seq) {
                *entry = None;
                self.last_live = false;
                return true;
            }
        }
        false
    }

    /// Whether `key`'s event is still pending; if not, its slot is free again (no other key
    /// refers to it).
    fn live_or_free(slots: &[Option<(u64, E)>], free: &mut Vec<u32>, key: u128) -> bool {
        let (seq, slot) = (key_seq(key), key_slot(key));
        let live = slots[slot as usize]
            .as_ref()
            .is_some_and(|(s, _)| *s == seq);
        if !live && slots[slot as usize].is_none() {
            free.push(slot);
        }
        live
    }

    /// The first ring bucket at or after `cursor` that holds keys (the ring is not empty).
    fn next_occupied(&self) -> u64 {
        let start = (self.cursor % RING) as usize;
        let (mut word, bit) = (start / 64, start % 64);
        let mut bits = self.occupied[word] & (!0u64 << bit);
        let mut wrapped = 0u64;
        while bits == 0 {
            word += 1;
            if word == WORDS {
                word = 0;
                wrapped = RING;
            }
            bits = self.occupied[word];
        }
        let i = (word * 64) as u64 + u64::from(bits.trailing_zeros());
        self.cursor + (i + wrapped) - start as u64
    }

    /// The sorted list is empty: the next bucket holding keys comes up, its live keys into it,
    /// and the overflow keys the ring now reaches move into it. Whether any key was left.
    fn advance(&mut self) -> bool {
        let bucket = if self.in_ring > 0 {
            self.next_occupied()
        } else {
            match self.overflow.peek() {
                Some(&Reverse(key)) => key_bucket(key),
                None => return false,
            }
        };
        self.cursor = bucket + 1;
        let i = (bucket % RING) as usize;
        if self.occupied[i / 64] & (1 << (i % 64)) != 0 {
            self.occupied[i / 64] &= !(1 << (i % 64));
            // The bucket's live keys into the (empty) list, then sorted in place: a handful,
            // so a sort and pops from the end beat a heap's sift at every pop.
            let keys = &mut self.near;
            let mut n = std::mem::replace(&mut self.heads[i], NIL);
            while n != NIL {
                let Node { key, next } = self.nodes[n as usize];
                if Self::live_or_free(&self.slots, &mut self.free, key) {
                    keys.push(key);
                }
                self.nodes[n as usize].next = self.unused;
                self.unused = n;
                self.in_ring -= 1;
                n = next;
            }
            keys.sort_unstable_by(|a, b| b.cmp(a));
        }
        while let Some(&Reverse(key)) = self.overflow.peek() {
            if key_bucket(key) >= self.cursor + RING {
                break;
            }
            self.overflow.pop();
            self.file(key);
        }
        true
    }

    /// Makes the sorted list's last key the next live key, if any (unless it is known to be).
    #[inline]
    fn skip_cancelled(&mut self) {
        if !self.last_live {
            self.find_live_last();
        }
    }

    /// Drops cancelled keys from the end of the sorted list, bringing the next bucket up when
    /// it is empty.
    fn find_live_last(&mut self) {
        loop {
            match self.near.last().copied() {
                Some(key) => {
                    if Self::live_or_free(&self.slots, &mut self.free, key) {
                        self.last_live = true;
                        return;
                    }
                    self.near.pop();
                }
                None if self.advance() => {}
                None => return,
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
        let key = self.near.pop()?;
        self.last_live = false;
        let (at, seq, slot) = (key_at(key), key_seq(key), key_slot(key));
        let (_, event) = self.slots[slot as usize].take().expect("live slot");
        self.free.push(slot);
        self.now = at;
        self.popped += 1;
        Some((at, seq, event))
    }

    /// Time of the next live event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.peek().map(|(at, _)| at)
    }

    /// Time and insertion sequence number of the next live event.
    pub fn peek(&mut self) -> Option<(SimTime, u64)> {
        self.skip_cancelled();
        self.near.last().map(|&key| (key_at(key), key_seq(key)))
    }

    /// The sequence number the next scheduled event gets: something that is not an event
    /// (an observer's sample) placed at an instant with it comes after every event scheduled
    /// so far for that instant and before every one scheduled from now on.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Far beyond the ring (an hour ahead: the overflow heap), the clock jumps there when
    /// nothing is nearer; an event scheduled meanwhile in the ring or the current bucket still
    /// comes first; a cancelled far event is never popped and its slot is used again.
    #[test]
    fn events_hours_ahead_wait_past_the_ring_and_come_in_order() {
        const HOUR_US: u64 = 3_600_000_000;
        let mut q = EventQueue::new();
        let later = q.schedule(SimTime::from_micros(2 * HOUR_US), "two hours");
        q.schedule(
            SimTime::from_micros(HOUR_US + 1),
            "an hour and a microsecond",
        );
        q.schedule(SimTime::from_micros(HOUR_US), "an hour");
        assert_eq!(q.peek_time(), Some(SimTime::from_micros(HOUR_US)));
        // Nothing nearer: the ring moved to the hour, and what is scheduled now goes in front.
        q.schedule(SimTime::from_micros(5), "soon");
        assert!(q.cancel(later));
        let order: Vec<(u64, &str)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t.as_micros(), e))
            .collect();
        assert_eq!(
            order,
            [
                (5, "soon"),
                (HOUR_US, "an hour"),
                (HOUR_US + 1, "an hour and a microsecond"),
            ]
        );
        assert_eq!(q.peek_time(), None);
        assert_eq!(q.slots.len(), 4, "no slot left behind");
        assert_eq!(q.free.len(), 4, "every slot free again");
    }

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
    /// cancels, peeks and pops, some at the same instant, pop in the same order (a peek
    /// followed by a cancel of the peeked event, then a pop, included).
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
                match rng.between(0, 10) {
                    0..=4 => {
                        // Ties are common: a handful of instants ahead, on either side of a
                        // bucket's bound, in the current bucket (the sorted list), the ring and
                        // past it (the overflow), so an instant is reached by several ways.
                        const BUCKET: u64 = 1 << BUCKET_SHIFT;
                        let ahead = match rng.between(0, 5) {
                            0 => rng.between(1, 4) * RING * BUCKET / 2,
                            1 => rng.between(1, 8) * BUCKET / 2,
                            2 => rng.between(RING - 2, RING + 2) * BUCKET,
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
                    7 => {
                        let want = model.first().map(|&(t, _)| t);
                        assert_eq!(q.peek_time().map(|t| t.as_micros()), want, "round {round}");
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
