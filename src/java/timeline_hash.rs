//! Kafka's `TimelineHashMap` iteration order (`org.apache.kafka.timeline.BaseHashTable`): the
//! table a KIP-848 consumer group keeps its members in, which ConsumerGroupDescribe walks. It
//! is not a `java.util.HashMap`: a power-of-two array of slots (2 at least), a slot holding one
//! element or an array of them in insertion order, the slot chosen by a Fibonacci hash of the
//! key's `hashCode()` (its top bits), and the table doubled *before* a put whenever
//! `(size + 1) * 0.75 > slots` (a replacing put included). A rehash walks the old slots in
//! order and appends to the new ones. Only the latest epoch is modelled: a describe at a run's
//! end reads the committed state, which the historical iterator lists in the same order when
//! nothing is pending.

use super::hash_code::JavaHash;

/// Keys in Kafka's `BaseHashTable` layout (values live beside it, by key).
#[derive(Clone, Debug)]
pub struct TimelineHashSet<K> {
    slots: Vec<Vec<K>>,
    size: usize,
}

const MAX_LOAD_FACTOR: f64 = 0.75;

/// `BaseHashTable.findSlot`: the key's hash times Knuth's 64-bit constant, top bits.
fn find_slot(hash: i32, slots: usize) -> usize {
    let log2size = 32 - (slots as u32).leading_zeros();
    let shift = 65 - log2size;
    ((i64::from(hash).wrapping_mul(-7_046_029_254_386_353_131_i64) as u64) >> shift) as usize
}

impl<K: JavaHash + PartialEq + Clone> TimelineHashSet<K> {
    /// `new TimelineHashMap<>(registry, 0)`: two slots.
    pub fn new() -> Self {
        TimelineHashSet {
            slots: vec![Vec::new(); 2],
            size: 0,
        }
    }

    /// `baseAddOrReplace`: the growth check runs first, even when the key is already there.
    pub fn put(&mut self, key: K) {
        if (self.size + 1) as f64 * MAX_LOAD_FACTOR > self.slots.len() as f64 {
            self.rehash(self.slots.len() * 2);
        }
        let slot = find_slot(key.java_hash(), self.slots.len());
        let chain = &mut self.slots[slot];
        if let Some(existing) = chain.iter_mut().find(|k| **k == key) {
            *existing = key;
        } else {
            chain.push(key);
            self.size += 1;
        }
    }

    /// `baseRemove`: the rest of the slot keeps its order.
    pub fn remove(&mut self, key: &K) {
        let slot = find_slot(key.java_hash(), self.slots.len());
        let chain = &mut self.slots[slot];
        if let Some(i) = chain.iter().position(|k| k == key) {
            chain.remove(i);
            self.size -= 1;
        }
    }

    fn rehash(&mut self, slots: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Vec::new(); slots]);
        for key in old.into_iter().flatten() {
            let slot = find_slot(key.java_hash(), slots);
            self.slots[slot].push(key);
        }
    }

    /// The keys in the order the table's iterator returns them.
    pub fn iter(&self) -> impl Iterator<Item = &K> {
        self.slots.iter().flatten()
    }

    pub fn len(&self) -> usize {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }
}

impl<K: JavaHash + PartialEq + Clone> Default for TimelineHashSet<K> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_the_top_bits_of_the_fibonacci_hash() {
        // Worked by hand: 1 * -7046029254386353131 as an unsigned 64-bit value is
        // 0x9E3779B97F4A7C15; its top bit is 1, its top two bits 0b10, top three 0b100.
        assert_eq!(find_slot(1, 2), 1);
        assert_eq!(find_slot(1, 4), 2);
        assert_eq!(find_slot(1, 8), 4);
        assert_eq!(find_slot(0, 8), 0);
    }

    #[test]
    fn the_table_doubles_before_the_put_that_would_pass_the_load_factor() {
        let mut t = TimelineHashSet::new();
        t.put("a".to_string());
        assert_eq!(t.slots.len(), 2);
        // (1 + 1) * 0.75 = 1.5 <= 2: still two slots; (2 + 1) * 0.75 = 2.25 > 2: four.
        t.put("b".to_string());
        assert_eq!(t.slots.len(), 2);
        t.put("c".to_string());
        assert_eq!(t.slots.len(), 4);
        // A replacing put runs the check too: (3 + 1) * 0.75 = 3 <= 4.
        t.put("c".to_string());
        assert_eq!((t.slots.len(), t.len()), (4, 3));
        t.remove(&"b".to_string());
        let mut keys: Vec<&String> = t.iter().collect();
        keys.sort();
        assert_eq!(keys, ["a", "c"]);
    }

    #[test]
    fn iteration_goes_slot_by_slot_then_in_insertion_order() {
        // Integer keys hash to themselves. K = 0x9E3779B97F4A7C15; the top two bits (four
        // slots) of 1*K, 2*K, 3*K (mod 2^64) are 0b10, 0b00, 0b11, and of 0 are 0b00.
        let mut t = TimelineHashSet::new();
        for k in [1, 2, 3] {
            t.put(k);
        }
        // The third put doubled the table to four slots first: 2 (slot 0), 1 (2), 3 (3).
        assert_eq!(t.iter().copied().collect::<Vec<i32>>(), [2, 1, 3]);
        // 0 shares slot 0 with 2, after it.
        t.put(0);
        assert_eq!(t.iter().copied().collect::<Vec<i32>>(), [2, 0, 1, 3]);
        t.remove(&2);
        assert_eq!(t.iter().copied().collect::<Vec<i32>>(), [0, 1, 3]);
    }
}
