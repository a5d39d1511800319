//! Iteration order of `java.util.HashMap` and `HashSet` (JDK 17), without storing Java's table.
//!
//! Java iterates buckets in ascending index, where `index = (h ^ (h >>> 16)) & (capacity - 1)`,
//! and a bucket's chain in insertion order (new keys are appended at the tail; a resize splits a
//! chain into two while keeping relative order; re-putting a key does not move it). So the
//! iteration order is exactly "sort by (bucket index at the current capacity, insertion
//! sequence)", and all we need to track is the capacity, which only ever grows (`compute` and
//! `computeIfAbsent` put a new key at the *head* of its bucket instead: [`JavaHashMap::insert_first`]
//! gives it a sequence below every other). Tree bins (8+ keys
//! in one bucket of a table of 64+) are not emulated: unreachable with Kafka's member ids and
//! topic names in practice.

use super::JavaHash;
use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::hash::Hash;

/// How the Java collection was constructed, which fixes its starting capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    /// `new HashMap<>()` / `new HashSet<>()`: 16.
    Default,
    /// `new HashMap<>(n)`: the next power of two >= n.
    Initial(usize),
    /// `new HashSet<>(collection)` (JDK 17): `max((int)(n / 0.75f) + 1, 16)`, rounded up to a
    /// power of two. JDK 19+ sizes differently (README finding 5); Kafka's reference is JDK 17.
    CopyOfSet(usize),
    /// `new HashMap<>(map)` (JDK 17): `(int)(n / 0.75f + 1.0f)`, rounded up to a power of two.
    CopyOfMap(usize),
}

const MAXIMUM_CAPACITY: usize = 1 << 30;

/// `HashMap.tableSizeFor`: the smallest power of two >= n (1 for n <= 1).
fn table_size_for(n: usize) -> usize {
    n.max(1).next_power_of_two().min(MAXIMUM_CAPACITY)
}

impl Capacity {
    /// The table size Java allocates on the first put.
    pub fn initial_table_size(self) -> usize {
        match self {
            Capacity::Default => 16,
            Capacity::Initial(n) => table_size_for(n),
            Capacity::CopyOfSet(n) => table_size_for((((n as f32) / 0.75f32) as usize + 1).max(16)),
            Capacity::CopyOfMap(n) => {
                let t = ((n as f32) / 0.75f32 + 1.0f32) as usize;
                // An empty source map leaves the table unsized: default 16 on first put.
                if n == 0 {
                    16
                } else {
                    table_size_for(t)
                }
            }
        }
    }

    /// The capacity after `n` distinct keys were put into a fresh collection.
    pub fn after_inserts(self, n: usize) -> usize {
        let mut cap = self.initial_table_size();
        while n > threshold(cap) && cap < MAXIMUM_CAPACITY {
            cap *= 2;
        }
        cap
    }
}

/// Resize threshold: `(int)(capacity * 0.75f)`.
fn threshold(capacity: usize) -> usize {
    (capacity as f32 * 0.75f32) as usize
}

/// `(h ^ (h >>> 16)) & (capacity - 1)`.
pub fn bucket_index(hash: i32, capacity: usize) -> usize {
    let h = hash as u32;
    ((h ^ (h >> 16)) as usize) & (capacity - 1)
}

/// Order in which Java iterates keys that were inserted in the given order (distinct keys, no
/// removals) into a collection built as `capacity`: returns indexes into `hashes`.
pub fn iteration_order(hashes: &[i32], capacity: Capacity) -> Vec<usize> {
    let cap = capacity.after_inserts(hashes.len());
    // A table at most a few times the keys (always, once a map has grown) is cheaper to walk
    // than the keys are to sort: count the keys per bucket, then place each in insertion order.
    if cap <= 4 * hashes.len() {
        return iteration_order_by_counting(hashes, cap);
    }
    // One integer per key, bucket above insertion index: sorting plain integers is several
    // times faster than sorting indexes by a computed pair.
    let mut keys: Vec<u64> = hashes
        .iter()
        .enumerate()
        .map(|(i, &h)| (bucket_index(h, cap) as u64) << 32 | i as u64)
        .collect();
    keys.sort_unstable();
    keys.into_iter()
        .map(|k| (k & u64::from(u32::MAX)) as usize)
        .collect()
}

/// [`iteration_order`] as a counting sort over the buckets: stable, so keys of one bucket keep
/// their insertion order.
fn iteration_order_by_counting(hashes: &[i32], cap: usize) -> Vec<usize> {
    let buckets: Vec<u32> = hashes
        .iter()
        .map(|&h| bucket_index(h, cap) as u32)
        .collect();
    let mut start = vec![0u32; cap + 1];
    for &b in &buckets {
        start[b as usize + 1] += 1;
    }
    for i in 0..cap {
        start[i + 1] += start[i];
    }
    let mut order = vec![0usize; hashes.len()];
    for (i, &b) in buckets.iter().enumerate() {
        let at = &mut start[b as usize];
        order[*at as usize] = i;
        *at += 1;
    }
    order
}

struct Slot<K, V> {
    key: K,
    value: V,
    hash: i32,
    /// Chain position: tail inserts count up from 0, head inserts down from -1.
    seq: i64,
}

/// A map that iterates as a `java.util.HashMap` built the same way would.
pub struct JavaHashMap<K, V> {
    slots: Vec<Option<Slot<K, V>>>,
    // Lookup only; its own iteration order never leaks (we iterate `slots`). Fx hashing:
    // member ids are looked up at every heartbeat and commit, and SipHash's resistance to
    // chosen keys buys nothing in a simulation.
    index: FxHashMap<K, usize>,
    capacity: usize,
    len: usize,
    next_seq: i64,
    next_head_seq: i64,
}

impl<K: JavaHash + Hash + Eq + Clone, V> JavaHashMap<K, V> {
    pub fn new(capacity: Capacity) -> Self {
        JavaHashMap {
            slots: Vec::new(),
            index: FxHashMap::default(),
            capacity: capacity.initial_table_size(),
            len: 0,
            next_seq: 0,
            next_head_seq: -1,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Current table size (grows as Java's does, never shrinks).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `put`: a new key goes to the tail of its bucket; an existing key keeps its place.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let (key, value) = match self.replace(key, value) {
            Ok(old) => return Some(old),
            Err(new) => new,
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        self.link(key, value, seq);
        while self.len > threshold(self.capacity) && self.capacity < MAXIMUM_CAPACITY {
            self.capacity *= 2;
        }
        None
    }

    /// `compute` (or `computeIfAbsent`) of an absent key: unlike `put`, it links the new key at
    /// the *head* of its bucket (`tab[i] = newNode(hash, key, v, first)`), so it iterates before
    /// the keys already there; and it resizes only *before* linking, when the map is already
    /// over its threshold, not after. An existing key is replaced in place, as by `insert`.
    pub fn insert_first(&mut self, key: K, value: V) -> Option<V> {
        let (key, value) = match self.replace(key, value) {
            Ok(old) => return Some(old),
            Err(new) => new,
        };
        if self.len > threshold(self.capacity) && self.capacity < MAXIMUM_CAPACITY {
            self.capacity *= 2;
        }
        let seq = self.next_head_seq;
        self.next_head_seq -= 1;
        self.link(key, value, seq);
        None
    }

    /// An existing key's value replaced in place (`Ok` with the old value), or the pair back.
    fn replace(&mut self, key: K, value: V) -> Result<V, (K, V)> {
        match self.index.get(&key) {
            Some(&i) => {
                let slot = self.slots[i].as_mut().expect("indexed slot is live");
                Ok(std::mem::replace(&mut slot.value, value))
            }
            None => Err((key, value)),
        }
    }

    /// A new key linked at `seq` in its bucket's order.
    fn link(&mut self, key: K, value: V, seq: i64) {
        let hash = key.java_hash();
        self.index.insert(key.clone(), self.slots.len());
        self.slots.push(Some(Slot {
            key,
            value,
            hash,
            seq,
        }));
        self.len += 1;
    }

    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.index
            .get(key)
            .map(|&i| &self.slots[i].as_ref().expect("indexed slot is live").value)
    }

    pub fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        match self.index.get(key) {
            Some(&i) => Some(&mut self.slots[i].as_mut().expect("indexed slot is live").value),
            None => None,
        }
    }

    pub fn contains_key<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.index.contains_key(key)
    }

    /// `remove`: the other keys keep their places.
    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.index.remove(key)?;
        self.len -= 1;
        self.slots[i].take().map(|s| s.value)
    }

    /// `clear`: no entries, the table keeps its size (as Java's does).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.index.clear();
        self.len = 0;
    }

    /// Entries in Java's iteration order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        let mut live: Vec<&Slot<K, V>> = self.slots.iter().flatten().collect();
        live.sort_by_key(|s| (bucket_index(s.hash, self.capacity), s.seq));
        live.into_iter().map(|s| (&s.key, &s.value))
    }

    /// Values in no particular order: only for reads whose result does not depend on order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.slots.iter().flatten().map(|s| &s.value)
    }

    /// Values in no particular order: only for updates whose result does not depend on order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.slots.iter_mut().flatten().map(|s| &mut s.value)
    }

    /// Keys in Java's iteration order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }
}

/// A set that iterates as a `java.util.HashSet` built the same way would.
pub struct JavaHashSet<K> {
    map: JavaHashMap<K, ()>,
}

impl<K: JavaHash + Hash + Eq + Clone> JavaHashSet<K> {
    pub fn new(capacity: Capacity) -> Self {
        JavaHashSet {
            map: JavaHashMap::new(capacity),
        }
    }

    /// `new HashSet<>(collection)`, JDK 17 sizing, elements added in the collection's order.
    pub fn copy_of<I: IntoIterator<Item = K>>(items: I) -> Self
    where
        I::IntoIter: ExactSizeIterator,
    {
        let items = items.into_iter();
        let mut set = JavaHashSet::new(Capacity::CopyOfSet(items.len()));
        for k in items {
            set.insert(k);
        }
        set
    }

    /// `add`: true when the key was not present.
    pub fn insert(&mut self, key: K) -> bool {
        self.map.insert(key, ()).is_none()
    }

    pub fn remove(&mut self, key: &K) -> bool {
        self.map.remove(key).is_some()
    }

    pub fn contains(&self, key: &K) -> bool {
        self.map.contains_key(key)
    }

    pub fn clear(&mut self) {
        self.map.clear()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.map.capacity()
    }

    pub fn iter(&self) -> impl Iterator<Item = &K> {
        self.map.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(m: &JavaHashSet<String>) -> Vec<&str> {
        m.iter().map(|s| s.as_str()).collect()
    }

    #[test]
    fn capacities_follow_jdk17() {
        assert_eq!(Capacity::Default.initial_table_size(), 16);
        assert_eq!(Capacity::Initial(0).initial_table_size(), 1);
        assert_eq!(Capacity::Initial(5).initial_table_size(), 8);
        assert_eq!(Capacity::Initial(16).initial_table_size(), 16);
        // new HashSet<>(12 elements): (int)(12/.75f)+1 = 17 -> 32 on JDK 17 (16 on JDK 21).
        assert_eq!(Capacity::CopyOfSet(12).initial_table_size(), 32);
        assert_eq!(Capacity::CopyOfSet(11).initial_table_size(), 16);
        assert_eq!(Capacity::CopyOfSet(3).initial_table_size(), 16);
        assert_eq!(Capacity::CopyOfSet(24).initial_table_size(), 64);
        // new HashMap<>(map of 12): (int)(12/.75f + 1) = 17 -> 32.
        assert_eq!(Capacity::CopyOfMap(12).initial_table_size(), 32);
        assert_eq!(Capacity::CopyOfMap(6).initial_table_size(), 16);
        // Growth: 16 holds 12, the 13th key doubles it.
        assert_eq!(Capacity::Default.after_inserts(12), 16);
        assert_eq!(Capacity::Default.after_inserts(13), 32);
        assert_eq!(Capacity::Initial(0).after_inserts(1), 2);
        assert_eq!(Capacity::Initial(0).after_inserts(2), 4);
        assert_eq!(Capacity::Initial(0).after_inserts(4), 8);
    }

    #[test]
    fn assignor_names_iterate_range_first() {
        // ALGORITHMS.md section 5: range (bucket 9) before cooperative-sticky (bucket 15).
        let mut m = JavaHashSet::new(Capacity::Default);
        m.insert("cooperative-sticky".to_string());
        m.insert("range".to_string());
        assert_eq!(keys_of(&m), ["range", "cooperative-sticky"]);
    }

    #[test]
    fn small_strings_iterate_by_bucket() {
        // jshell> new HashSet<>(List.of(...)) with a default table iterates c1..c9 ascending
        // ("c1".hashCode() = 3118, bucket 14; "c2" = 3119, bucket 15; "c3" = 3120, bucket 0).
        let mut m = JavaHashSet::new(Capacity::Default);
        for k in ["c1", "c2", "c3", "c4"] {
            m.insert(k.to_string());
        }
        assert_eq!(keys_of(&m), ["c3", "c4", "c1", "c2"]);
    }

    #[test]
    fn same_bucket_keeps_insertion_order_and_survives_resize() {
        // "Aa" and "BB" share a hash code (2112), so they always share a bucket.
        let mut m = JavaHashSet::new(Capacity::Default);
        m.insert("BB".to_string());
        m.insert("Aa".to_string());
        for i in 0..20 {
            m.insert(format!("k{i}"));
        }
        let order = keys_of(&m);
        let bb = order.iter().position(|k| *k == "BB").unwrap();
        let aa = order.iter().position(|k| *k == "Aa").unwrap();
        assert_eq!(aa, bb + 1);
        assert_eq!(m.capacity(), 32);
    }

    #[test]
    fn remove_keeps_others_and_reinsert_goes_to_tail() {
        let mut m = JavaHashSet::new(Capacity::Default);
        for k in ["BB", "Aa", "C#"] {
            // "C#".hashCode() = 67*31 + 35 = 2112 too.
            m.insert(k.to_string());
        }
        assert_eq!(keys_of(&m), ["BB", "Aa", "C#"]);
        m.remove(&"BB".to_string());
        m.insert("BB".to_string());
        assert_eq!(keys_of(&m), ["Aa", "C#", "BB"]);
    }

    #[test]
    fn compute_links_a_new_key_at_the_head_of_its_bucket() {
        // What `ConsumerGroup.computePreferredServerAssignor` does to its copy of the counts
        // (checked with JDK 17): `new HashMap<>(Map.of-like {uniform=1, range=1})` has 4
        // buckets, "uniform" and "range" both in bucket 1; `compute("range", dec)` drops range
        // (count 1 -> null), `compute("range", inc)` links it again, at the head:
        // [range, uniform]. A `put` would have appended it: [uniform, range].
        let mut m: JavaHashMap<String, u32> = JavaHashMap::new(Capacity::CopyOfMap(2));
        m.insert("uniform".to_string(), 1);
        m.insert("range".to_string(), 1);
        assert_eq!(m.capacity(), 4);
        assert_eq!(m.keys().collect::<Vec<_>>(), ["uniform", "range"]);
        m.remove("range");
        m.insert_first("range".to_string(), 1);
        assert_eq!(m.keys().collect::<Vec<_>>(), ["range", "uniform"]);
        // A later put still goes to the tail.
        m.insert("C#".to_string(), 1);
        m.insert_first("Aa".to_string(), 1);
        m.insert("BB".to_string(), 1);
        let keys: Vec<&String> = m.keys().collect();
        let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
        assert!(at("Aa") < at("C#") && at("C#") < at("BB"));
        // compute grows only before linking, when already over the threshold (3 of 4).
        let mut m: JavaHashMap<String, u32> = JavaHashMap::new(Capacity::CopyOfMap(2));
        for k in ["a", "b", "c"] {
            m.insert(k.to_string(), 1);
        }
        m.insert_first("d".to_string(), 1);
        assert_eq!((m.len(), m.capacity()), (4, 4));
        m.insert_first("e".to_string(), 1);
        assert_eq!((m.len(), m.capacity()), (5, 8));
    }

    #[test]
    fn integers_iterate_ascending_below_capacity() {
        let mut s = JavaHashSet::new(Capacity::Default);
        for p in [5, 3, 17, 1] {
            s.insert(p);
        }
        // 17 lands in bucket 1, after 1 (inserted later? no: 17 was inserted before 1).
        assert_eq!(s.iter().copied().collect::<Vec<i32>>(), [17, 1, 3, 5]);
    }

    #[test]
    fn iteration_order_counts_or_sorts_alike() {
        // Dense tables take the counting sort, sparse ones the sort: the same order either way.
        let mut state = 0x9e37_79b9_u32;
        let hashes: Vec<i32> = (0..3000)
            .map(|i| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                // Every fifth key repeats a hash: collisions keep insertion order.
                if i % 5 == 4 {
                    (state % 7) as i32
                } else {
                    state as i32
                }
            })
            .collect();
        for n in [0, 1, 2, 11, 12, 13, 100, 1000, 3000] {
            for capacity in [
                Capacity::Default,
                Capacity::Initial(n),
                Capacity::Initial(64 * n),
            ] {
                let keys = &hashes[..n];
                let cap = capacity.after_inserts(n);
                let mut sorted: Vec<usize> = (0..n).collect();
                sorted.sort_by_key(|&i| (bucket_index(keys[i], cap), i));
                assert_eq!(iteration_order(keys, capacity), sorted, "{n} {capacity:?}");
                assert_eq!(
                    iteration_order_by_counting(keys, cap),
                    sorted,
                    "{n} {capacity:?}"
                );
            }
        }
    }

    #[test]
    fn iteration_order_matches_map() {
        let names = ["consumer-1", "consumer-2", "c10", "c2", "member-x"];
        let hashes: Vec<i32> = names.iter().map(|n| n.java_hash()).collect();
        let order = iteration_order(&hashes, Capacity::Default);
        let mut m = JavaHashSet::new(Capacity::Default);
        for n in names {
            m.insert(n.to_string());
        }
        let via_map = keys_of(&m);
        let via_fn: Vec<&str> = order.iter().map(|&i| names[i]).collect();
        assert_eq!(via_map, via_fn);
    }
}
