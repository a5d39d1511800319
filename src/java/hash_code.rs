//! `hashCode()` and `compareTo` as the JDK defines them for the keys Kafka hashes.

use std::cmp::Ordering;

/// A key whose Java `hashCode()` is known.
pub trait JavaHash {
    fn java_hash(&self) -> i32;
}

/// `String.hashCode()`: s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, wrapping.
pub fn string_hash(s: &str) -> i32 {
    // ASCII bytes are their own UTF-16 code units, so the ASCII head of the string (all of it,
    // for the member ids hashed by the thousand) is hashed from its bytes, eight at a time:
    // h*31^8 + (b0*31^7 + ... + b7) is the same sum with an eighth of the chain of dependent
    // multiplications, and one test of the eight bytes' high bits. The ASCII bytes after the
    // last whole eight go one by one, and only what follows the first non-ASCII byte goes
    // through UTF-16, whose set-up cost about as much as a short id's whole head.
    let bytes = s.as_bytes();
    let mut h = 0u32;
    let mut done = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        if word & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        h = h
            .wrapping_mul(THIRTY_ONE_TO_THE_8)
            .wrapping_add(ascii8_hash(word));
        done += 8;
    }
    while let Some(&b) = bytes.get(done).filter(|b| b.is_ascii()) {
        h = h.wrapping_mul(31).wrapping_add(u32::from(b));
        done += 1;
    }
    // `done` is a character boundary: it follows an ASCII byte, or is 0.
    let h = s[done..].encode_utf16().fold(h, |h, unit| {
        h.wrapping_mul(31).wrapping_add(u32::from(unit))
    });
    h as i32
}

/// 31^8, wrapping.
const THIRTY_ONE_TO_THE_8: u32 = 923_521u32.wrapping_mul(923_521);

/// b0*31^7 + b1*31^6 + ... + b7, wrapping, for eight ASCII bytes packed little-endian in `word`
/// (b0 lowest). Adjacent bytes are summed in 16-bit lanes, then adjacent pairs in 32-bit lanes,
/// two multiplications where one per byte took twice the instructions. No lane overflows: bytes
/// are below 128, so a pair is at most 127*31 + 127 = 4,064 and a four at most 4,064*962.
fn ascii8_hash(word: u64) -> u32 {
    const BYTES: u64 = 0x00FF_00FF_00FF_00FF;
    const PAIRS: u64 = 0x0000_FFFF_0000_FFFF;
    let pairs = (word & BYTES) * 31 + ((word >> 8) & BYTES);
    let fours = (pairs & PAIRS) * 961 + ((pairs >> 16) & PAIRS);
    (fours as u32)
        .wrapping_mul(923_521)
        .wrapping_add((fours >> 32) as u32)
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

/// `Double.compare`: numeric order, except that -0.0 sorts below 0.0 and every NaN is equal to
/// every other and above everything (it compares `doubleToLongBits` when neither is less). The
/// KIP-1071 assignor's queues compare process loads with it (`Comparator.comparingDouble`).
pub fn double_compare(a: f64, b: f64) -> Ordering {
    if a < b {
        return Ordering::Less;
    }
    if a > b {
        return Ordering::Greater;
    }
    // `doubleToLongBits` collapses every NaN to one canonical pattern.
    let bits = |x: f64| {
        if x.is_nan() {
            0x7ff8_0000_0000_0000_i64
        } else {
            x.to_bits() as i64
        }
    };
    bits(a).cmp(&bits(b))
}

/// Whether Rust's `str` order gives [`string_compare`]'s answer for `s` against any other string
/// for which this holds too. UTF-8 bytes sort like code points, and code points like UTF-16 code
/// units except that a character outside the BMP (four UTF-8 bytes, lead byte 0xF0 and up) sorts
/// by its surrogates, below U+E000..=U+FFFF. A sort checks its keys once with this and then
/// compares bytes, instead of checking both strings on every comparison.
pub fn str_order_is_java_order(s: &str) -> bool {
    // The largest byte, not a search that stops early: a reduction the compiler vectorizes.
    s.bytes().max().is_none_or(|b| b < 0xF0)
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
        // The eight-at-a-time head and the rest agree with the definition at every length and
        // wherever a non-ASCII character falls.
        let by_definition = |s: &str| {
            s.encode_utf16()
                .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
        };
        let long = "consumer-grp-27-63e8540e-9dd8-404f-8748-967121bade02\x7f~ {}|";
        for end in 0..long.len() {
            for odd in ["", "\u{E9}", "\u{1F600}", "\u{FF5E}x"] {
                for at in [0, end / 2, end] {
                    let s = format!("{}{odd}{}", &long[..at], &long[at..end]);
                    assert_eq!(string_hash(&s), by_definition(&s), "{s:?}");
                }
            }
        }
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

    #[test]
    fn double_compare_is_java_double_compare() {
        // jshell> Double.compare(...) for each pair.
        assert_eq!(double_compare(0.5, 1.0), Ordering::Less);
        assert_eq!(double_compare(2.0 / 3.0, 4.0 / 6.0), Ordering::Equal);
        assert_eq!(double_compare(-0.0, 0.0), Ordering::Less);
        assert_eq!(double_compare(f64::NAN, f64::INFINITY), Ordering::Greater);
        assert_eq!(double_compare(f64::NAN, -f64::NAN), Ordering::Equal);
        assert_eq!(double_compare(f64::MAX, 1e300), Ordering::Greater);
    }

    #[test]
    fn str_order_is_java_order_without_supplementary_characters() {
        let bmp = [
            "",
            "c10",
            "c2",
            "B",
            "a",
            "\u{E9}t\u{E9}",
            "\u{FF5E}",
            "\u{FFFF}",
            "\u{E000}",
        ];
        for a in bmp {
            assert!(str_order_is_java_order(a), "{a:?}");
            for b in bmp {
                assert_eq!(a.cmp(b), string_compare(a, b), "{a:?} vs {b:?}");
            }
        }
        assert!(!str_order_is_java_order("x\u{1F600}"));
    }
}
