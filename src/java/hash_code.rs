//! `hashCode()` and `compareTo` as the JDK defines them for the keys Kafka hashes.

use std::cmp::Ordering;

/// A key whose Java `hashCode()` is known.
pub trait JavaHash {
    fn java_hash(&self) -> i32;
}

/// `String.hashCode()`: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, wrapping.
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32))
}

/// `Integer.hashCode()`: the value itself.
pub fn int_hash(v: i32) -> i32 {
    v
}

/// Kafka's `TopicPartition.hashCode()`: `31 * (31 + partition) + topic.hashCode()`.
pub fn topic_partition_hash(topic: &str, partition: i32) -> i32 {
    31i32
        .wrapping_mul(31i32.wrapping_add(partition))
        .wrapping_add(string_hash(topic))
}

/// `String.compareTo`: lexicographic by UTF-16 code unit (so `"c10" < "c2"`, and a character
/// outside the BMP sorts by its surrogates, not by its code point as Rust's `str` order does).
pub fn string_compare(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

impl JavaHash for str {
    fn java_hash(&self) -> i32 {
        string_hash(self)
    }
}

impl JavaHash for String {
    fn java_hash(&self) -> i32 {
        string_hash(self)
    }
}

impl JavaHash for i32 {
    fn java_hash(&self) -> i32 {
        int_hash(*self)
    }
}

impl<T: JavaHash + ?Sized> JavaHash for &T {
    fn java_hash(&self) -> i32 {
        (**self).java_hash()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Values from `jshell> "...".hashCode()`.
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("range"), 108280125);
        assert_eq!(string_hash("cooperative-sticky"), 1843682987);
        assert_eq!(string_hash("c1"), 3118);
        assert_eq!(string_hash("hello world"), 1794106052);
        // A non-BMP character hashes by its two surrogates.
        assert_eq!(string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn topic_partition_hash_matches_kafka() {
        // 31 * (31 + 0) + "t".hashCode() = 961 + 116
        assert_eq!(topic_partition_hash("t", 0), 1077);
        assert_eq!(topic_partition_hash("t", 2), 31 * 33 + 116);
    }

    #[test]
    fn string_order_is_utf16_code_units() {
        assert_eq!(string_compare("c10", "c2"), Ordering::Less);
        assert_eq!(string_compare("B", "a"), Ordering::Less);
        // U+FF5E (one unit 0xFF5E) sorts after U+1F600 (surrogate 0xD83D) in Java,
        // though before it by code point.
        assert_eq!(string_compare("\u{FF5E}", "\u{1F600}"), Ordering::Greater);
        assert!("\u{FF5E}" < "\u{1F600}");
    }
}
