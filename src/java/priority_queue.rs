//! `java.util.PriorityQueue` (JDK 17) with a comparator: a binary min-heap in an array whose
//! order among equal elements is whatever the sift operations leave, not insertion order.
//!
//! Kafka's KIP-1071 `StickyTaskAssignor` keeps processes and members in queues that compare
//! only the load (../shared/reference/streams/STREAMS.md §1.3, §8), so which of two equally
//! loaded processes is polled first is decided by this heap's exact shape. The operations are
//! Java's:
//! - `offer`/`add`: append, then sift up while strictly less than the parent
//!   (`siftUpUsingComparator`: stop when `compare(x, parent) >= 0`);
//! - `poll`: take the root, move the last element to the root and sift it down, preferring the
//!   left child on a tie (`siftDownUsingComparator`: the right child only when
//!   `compare(left, right) > 0`; stop when `compare(x, child) <= 0`);
//! - `addAll`: `AbstractQueue.addAll`, one `offer` per element in the collection's order (not
//!   the heapify of the `PriorityQueue(Collection)` constructor, which is `from_collection`);
//! - `remove(Object)`: the last element fills the hole and sifts down, else up.

use std::cmp::Ordering;

/// A comparator as Java's `Comparator.compare`.
pub type Comparator<T> = fn(&T, &T) -> Ordering;

/// A `java.util.PriorityQueue` built with a comparator.
#[derive(Clone, Debug)]
pub struct PriorityQueue<T> {
    queue: Vec<T>,
    comparator: Comparator<T>,
}

impl<T> PriorityQueue<T> {
    /// `new PriorityQueue<>(comparator)`.
    pub fn new(comparator: Comparator<T>) -> Self {
        PriorityQueue {
            queue: Vec::new(),
            comparator,
        }
    }

    /// `new PriorityQueue<>(initialCapacity, comparator)`: the capacity never shows in the order.
    pub fn with_capacity(capacity: usize, comparator: Comparator<T>) -> Self {
        PriorityQueue {
            queue: Vec::with_capacity(capacity),
            comparator,
        }
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// `peek`: the head, without removing it.
    pub fn peek(&self) -> Option<&T> {
        self.queue.first()
    }

    /// The elements in heap (array) order, as Java's `iterator()` and `toArray()` give them.
    pub fn as_slice(&self) -> &[T] {
        &self.queue
    }

    /// `offer` (and `add`): the new element sifts up from the end of the array.
    pub fn offer(&mut self, x: T) {
        self.queue.push(x);
        // Java moves parents down into the hole and writes `x` once; swapping along the same
        // path leaves the same array.
        self.sift_up(self.queue.len() - 1);
    }

    /// `addAll` of `AbstractQueue`: an `offer` per element, in iteration order.
    pub fn add_all<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for x in items {
            self.offer(x);
        }
    }

    /// `poll`: the head, or `None` when empty. The last element takes the root and sifts down.
    pub fn poll(&mut self) -> Option<T> {
        let last = self.queue.pop()?;
        if self.queue.is_empty() {
            return Some(last);
        }
        let result = std::mem::replace(&mut self.queue[0], last);
        self.sift_down_from_root();
        Some(result)
    }

    /// `new PriorityQueue<>(collection)` of a collection that is not a `SortedSet` or another
    /// queue: the elements in the collection's iteration order, then `heapify` (a sift down
    /// from every parent, the last first), not one `offer` each.
    pub fn from_collection<I: IntoIterator<Item = T>>(items: I, comparator: Comparator<T>) -> Self {
        let mut q = PriorityQueue {
            queue: items.into_iter().collect(),
            comparator,
        };
        for k in (0..q.queue.len() / 2).rev() {
            q.sift_down(k);
        }
        q
    }

    /// `contains`: an element equal to `x`.
    pub fn contains(&self, x: &T) -> bool
    where
        T: PartialEq,
    {
        self.queue.contains(x)
    }

    /// `remove(Object)`: the first element equal to `x` in array order is removed
    /// (`removeAt`): the last element takes its place and sifts down, or up when it did not
    /// move down. Returns whether one was found.
    pub fn remove(&mut self, x: &T) -> bool
    where
        T: PartialEq,
    {
        let Some(i) = self.queue.iter().position(|e| e == x) else {
            return false;
        };
        let last = self.queue.len() - 1;
        if i == last {
            self.queue.pop();
            return true;
        }
        self.queue.swap_remove(i);
        if self.sift_down(i) == i {
            self.sift_up(i);
        }
        true
    }

    /// Sifts the element at `k` up while strictly less than its parent.
    fn sift_up(&mut self, mut k: usize) {
        let cmp = self.comparator;
        while k > 0 {
            let parent = (k - 1) >> 1;
            if cmp(&self.queue[k], &self.queue[parent]) != Ordering::Less {
                break;
            }
            self.queue.swap(k, parent);
            k = parent;
        }
    }

    fn sift_down_from_root(&mut self) {
        self.sift_down(0);
    }

    /// Sifts the element at `k` down (the right child only when strictly less than the left;
    /// stop when not greater than the child); returns where it stopped.
    fn sift_down(&mut self, mut k: usize) -> usize {
        let cmp = self.comparator;
        let n = self.queue.len();
        let half = n >> 1;
        while k < half {
            let mut child = (k << 1) + 1;
            let right = child + 1;
            if right < n && cmp(&self.queue[child], &self.queue[right]) == Ordering::Greater {
                child = right;
            }
            if cmp(&self.queue[k], &self.queue[child]) != Ordering::Greater {
                break;
            }
            self.queue.swap(k, child);
            k = child;
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (key, label): compared by key only, so equal keys show the heap's own tie order.
    fn by_key(a: &(i32, char), b: &(i32, char)) -> Ordering {
        a.0.cmp(&b.0)
    }

    fn labels(q: &PriorityQueue<(i32, char)>) -> String {
        q.as_slice().iter().map(|e| e.1).collect()
    }

    fn drain(q: &mut PriorityQueue<(i32, char)>) -> String {
        std::iter::from_fn(|| q.poll()).map(|e| e.1).collect()
    }

    #[test]
    fn the_collection_constructor_heapifies() {
        // `new PriorityQueue<>(List.of(5, 1, 4, 2, 3))` holds [1, 2, 4, 5, 3] (JDK 17).
        let q = PriorityQueue::from_collection([5, 1, 4, 2, 3], i32::cmp);
        assert_eq!(q.as_slice(), &[1, 2, 4, 5, 3]);
        // One offer each would have left [1, 2, 4, 5, 3] too here, but not for [3, 2, 1]:
        let heapified = PriorityQueue::from_collection([3, 2, 1], i32::cmp);
        let mut offered = PriorityQueue::new(i32::cmp);
        offered.add_all([3, 2, 1]);
        assert_eq!(heapified.as_slice(), &[1, 2, 3]);
        assert_eq!(offered.as_slice(), &[1, 3, 2]);
    }

    #[test]
    fn remove_fills_the_hole_with_the_last_element() {
        let mut q = PriorityQueue::from_collection([5, 1, 4, 2, 3], i32::cmp);
        assert!(q.remove(&2));
        assert_eq!(q.as_slice(), &[1, 3, 4, 5]);
        assert!(!q.remove(&7));
        // The last element sifts up when it is smaller than the removed one's parent.
        let mut q = PriorityQueue::from_collection([1, 5, 2, 6, 7, 3], i32::cmp);
        assert_eq!(q.as_slice(), &[1, 5, 2, 6, 7, 3]);
        assert!(q.remove(&6));
        assert_eq!(q.as_slice(), &[1, 3, 2, 5, 7]);
        assert!(q.contains(&7) && !q.contains(&6));
    }

    #[test]
    fn polls_in_comparator_order() {
        let mut q = PriorityQueue::new(by_key);
        q.add_all([(5, 'e'), (1, 'a'), (4, 'd'), (2, 'b'), (3, 'c')]);
        assert_eq!(q.len(), 5);
        assert_eq!(q.peek(), Some(&(1, 'a')));
        assert_eq!(drain(&mut q), "abcde");
        assert!(q.is_empty());
        assert_eq!(q.poll(), None);
    }

    #[test]
    fn an_equal_element_stays_below_its_parent_on_offer() {
        // siftUp stops at compare(x, parent) >= 0: ties never climb.
        let mut q = PriorityQueue::new(by_key);
        q.add_all([(0, 'a'), (0, 'b'), (0, 'c'), (0, 'd')]);
        assert_eq!(labels(&q), "abcd");
        // A strictly smaller element climbs past every equal one.
        q.offer((-1, 'x'));
        // JDK 17's iterator over the same queue: x a c d b.
        assert_eq!(labels(&q), "xacdb");
    }

    #[test]
    fn ties_fall_to_heap_order_not_insertion_order() {
        // All equal: poll moves the last element to the root, and it stays there (siftDown
        // stops at compare(x, child) <= 0). So equal elements come out a, d, c, b, as JDK 17's
        // jshell prints for four `SimpleEntry`s of value 0 in a `PriorityQueue` by
        // `Map.Entry.comparingByValue()`, added a..d and polled.
        let mut q = PriorityQueue::new(by_key);
        q.add_all([(0, 'a'), (0, 'b'), (0, 'c'), (0, 'd')]);
        assert_eq!(drain(&mut q), "adcb");
    }

    #[test]
    fn sift_down_prefers_the_left_child_on_a_tie() {
        // Heap [0a, 1b, 1c, 2d]: polling 0a puts 2d at the root; both children are 1, and the
        // right one is taken only when the left is strictly greater, so b rises.
        let mut q = PriorityQueue::new(by_key);
        q.add_all([(0, 'a'), (1, 'b'), (1, 'c'), (2, 'd')]);
        assert_eq!(labels(&q), "abcd");
        assert_eq!(q.poll(), Some((0, 'a')));
        assert_eq!(labels(&q), "bdc");
        // And the right child when it is strictly smaller.
        let mut q = PriorityQueue::new(by_key);
        q.add_all([(0, 'a'), (2, 'b'), (1, 'c'), (3, 'd')]);
        assert_eq!(q.poll(), Some((0, 'a')));
        assert_eq!(labels(&q), "cbd");
    }

    #[test]
    fn poll_then_re_add_keeps_a_rotating_order_among_equals() {
        // The KIP-1071 pattern: poll the least loaded, load it, add it back. Three processes
        // with one member each and one task at a time: the order in which they are dealt
        // tasks follows the heap, not the names (JDK 17 prints p r q r q p for the same
        // entries polled, incremented and added back).
        let mut q = PriorityQueue::new(by_key);
        q.add_all([(0, 'p'), (0, 'q'), (0, 'r')]);
        let mut dealt = String::new();
        for _ in 0..6 {
            let (load, name) = q.poll().unwrap();
            dealt.push(name);
            q.offer((load + 1, name));
        }
        assert_eq!(dealt, "prqrqp");
    }

    #[test]
    fn matches_a_reference_heap_on_many_random_operations() {
        // A direct transcription of the two sift loops as Java writes them (hole, then one
        // write), against the swap-based implementation above.
        fn java_offer(es: &mut Vec<(i32, u32)>, x: (i32, u32)) {
            es.push(x);
            let mut k = es.len() - 1;
            while k > 0 {
                let parent = (k - 1) >> 1;
                let e = es[parent];
                if x.0 >= e.0 {
                    break;
                }
                es[k] = e;
                k = parent;
            }
            es[k] = x;
        }
        fn java_poll(es: &mut Vec<(i32, u32)>) -> Option<(i32, u32)> {
            if es.is_empty() {
                return None;
            }
            let result = es[0];
            let x = es.pop().expect("non-empty");
            let n = es.len();
            if n > 0 {
                let half = n >> 1;
                let mut k = 0;
                while k < half {
                    let mut child = (k << 1) + 1;
                    let mut c = es[child];
                    let right = child + 1;
                    if right < n && c.0 > es[right].0 {
                        child = right;
                        c = es[child];
                    }
                    if x.0 <= c.0 {
                        break;
                    }
                    es[k] = c;
                    k = child;
                }
                es[k] = x;
            }
            Some(result)
        }
        let mut state = 0x2545_f491_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut reference = Vec::new();
        let mut q = PriorityQueue::new(|a: &(i32, u32), b: &(i32, u32)| a.0.cmp(&b.0));
        for label in 0..5_000u32 {
            if next() % 3 == 0 {
                assert_eq!(q.poll(), java_poll(&mut reference));
            } else {
                let x = ((next() % 6) as i32, label);
                q.offer(x);
                java_offer(&mut reference, x);
            }
            assert_eq!(q.as_slice(), &reference[..]);
        }
    }
}
