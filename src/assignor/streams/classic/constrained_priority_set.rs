//! `ConstrainedPrioritySet` (`SPA/ConstrainedPrioritySet.java`): the clients in a
//! `java.util.PriorityQueue` by (weight, `ProcessId`), polled for the lightest one that meets a
//! constraint. High availability uses it for standbys, task movements and stateless tasks
//! (STREAMS.md §4-5).
//!
//! Two Java details decide its answers and are kept here:
//! - the weight (a client's load) is read at every comparison, not when the client is
//!   offered. A client whose load changes while it sits in the queue leaves the heap out of
//!   order until it is offered again, and the sift operations then see the new load; so the
//!   heap is a real `PriorityQueue` (`offer`, `poll`, `remove(Object)` as JDK 17 writes them),
//!   whose comparator reads the clients at each call;
//! - the clients a poll passed over are offered back from a `HashSet<ProcessId>`, in its
//!   bucket order (`ConstrainedPrioritySet.java:49-63`), which reshapes the heap.

use super::{ClientState, TaskId};
use crate::java::{double_compare, iteration_order, Capacity, JavaHash};
use std::cmp::Ordering;

/// The constraint every candidate must meet (`constraint`, a `BiFunction<ProcessId, TaskId,
/// Boolean>`).
pub(crate) type Constraint<'a> = Box<dyn Fn(&ClientState, TaskId) -> bool + 'a>;

/// The clients as indexes into the assignor's `ClientState`s; every operation is handed those
/// states, so that the comparator sees their loads as they are now.
pub(crate) struct ConstrainedPrioritySet<'a> {
    /// The `PriorityQueue`'s array.
    heap: Vec<usize>,
    /// `uniqueClients`: which clients are queued (membership only, never iterated).
    queued: Vec<bool>,
    constraint: Constraint<'a>,
    weight: fn(&ClientState) -> f64,
}

impl<'a> ConstrainedPrioritySet<'a> {
    /// `new ConstrainedPrioritySet(constraint, weight)` over `clients` client states.
    pub(crate) fn new(
        clients: usize,
        constraint: Constraint<'a>,
        weight: fn(&ClientState) -> f64,
    ) -> Self {
        ConstrainedPrioritySet {
            heap: Vec::with_capacity(clients),
            queued: vec![false; clients],
            constraint,
            weight,
        }
    }

    /// The heap's array (the order `PriorityQueue.iterator()` gives).
    #[cfg(test)]
    pub(crate) fn as_slice(&self) -> &[usize] {
        &self.heap
    }

    /// `Comparator.comparing(weight).thenComparing(clientId -> clientId)`
    /// (`ConstrainedPrioritySet.java:42`): `Double.compareTo`, then `UUID.compareTo`.
    fn compare(&self, states: &[ClientState], a: usize, b: usize) -> Ordering {
        double_compare((self.weight)(&states[a]), (self.weight)(&states[b]))
            .then_with(|| states[a].process_id.cmp(&states[b].process_id))
    }

    /// `poll(task, extraConstraint)` (`:48-64`): the least client that meets both
    /// constraints, taken out of the queue; the ones passed over go back in `HashSet` order.
    pub(crate) fn poll(
        &mut self,
        states: &[ClientState],
        task: TaskId,
        extra: impl Fn(&ClientState) -> bool,
    ) -> Option<usize> {
        let mut passed_over = Vec::new();
        while let Some(candidate) = self.poll_next(states) {
            if (self.constraint)(&states[candidate], task) && extra(&states[candidate]) {
                self.offer_hash_set(states, &passed_over);
                return Some(candidate);
            }
            passed_over.push(candidate);
        }
        self.offer_hash_set(states, &passed_over);
        None
    }

    /// `offerAll(invalidPolledClients)`: a `new HashSet<>()` filled in poll order, iterated.
    fn offer_hash_set(&mut self, states: &[ClientState], clients: &[usize]) {
        let hashes: Vec<i32> = clients
            .iter()
            .map(|&c| states[c].process_id.java_hash())
            .collect();
        for i in iteration_order(&hashes, Capacity::Default) {
            self.offer(states, clients[i]);
        }
    }

    /// `offerAll(clients)`, in the given order.
    pub(crate) fn offer_all(&mut self, states: &[ClientState], clients: &[usize]) {
        for &c in clients {
            self.offer(states, c);
        }
    }

    /// `offer(client)` (`:79-86`): a queued client is removed first (`remove(Object)`), so it
    /// re-enters at its current weight.
    pub(crate) fn offer(&mut self, states: &[ClientState], client: usize) {
        if self.queued[client] {
            self.remove(states, client);
        } else {
            self.queued[client] = true;
        }
        self.heap.push(client);
        self.sift_up(states, self.heap.len() - 1);
    }

    /// `pollNextClient` (`:88-92`): `PriorityQueue.remove()`.
    fn poll_next(&mut self, states: &[ClientState]) -> Option<usize> {
        let last = self.heap.pop()?;
        let head = if self.heap.is_empty() {
            last
        } else {
            let head = std::mem::replace(&mut self.heap[0], last);
            self.sift_down(states, 0);
            head
        };
        self.queued[head] = false;
        Some(head)
    }

    /// `PriorityQueue.remove(Object)`: the first equal element in array order goes
    /// (`removeAt`); the last element fills its slot and sifts down, or up if it did not move.
    fn remove(&mut self, states: &[ClientState], client: usize) {
        let Some(i) = self.heap.iter().position(|&c| c == client) else {
            return;
        };
        let moved = self.heap.pop().expect("the client was found in the heap");
        if i == self.heap.len() {
            return;
        }
        self.heap[i] = moved;
        if self.sift_down(states, i) == i {
            self.sift_up(states, i);
        }
    }

    /// `siftUpUsingComparator`: climb while strictly less than the parent.
    fn sift_up(&mut self, states: &[ClientState], mut k: usize) {
        while k > 0 {
            let parent = (k - 1) >> 1;
            if self.compare(states, self.heap[k], self.heap[parent]) != Ordering::Less {
                break;
            }
            self.heap.swap(k, parent);
            k = parent;
        }
    }

    /// `siftDownUsingComparator`: the right child only when the left is strictly greater; stop
    /// when not greater than the child. Returns where the element came to rest.
    fn sift_down(&mut self, states: &[ClientState], mut k: usize) -> usize {
        let n = self.heap.len();
        let half = n >> 1;
        while k < half {
            let mut child = (k << 1) + 1;
            let right = child + 1;
            if right < n
                && self.compare(states, self.heap[child], self.heap[right]) == Ordering::Greater
            {
                child = right;
            }
            if self.compare(states, self.heap[k], self.heap[child]) != Ordering::Greater {
                break;
            }
            self.heap.swap(k, child);
            k = child;
        }
        k
    }
}
