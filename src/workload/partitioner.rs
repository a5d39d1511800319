//! Kafka's default partitioner for keyed records, and Redis Cluster's key slot as the
//! data-placement analogue seed 000 mentions.

use crc::{Crc, CRC_16_XMODEM};

/// Kafka's `Utils.murmur2` of the key bytes (seed 0x9747b28c), as Java's signed int.
pub fn kafka_murmur2(key: &[u8]) -> i32 {
    murmur2::murmur2(key, murmur2::KAFKA_SEED) as i32
}

/// `Utils.toPositive(murmur2(key)) % numPartitions`: the partition of a keyed record under
/// Kafka's default partitioner (the `BuiltInPartitioner` for non-null keys).
///
/// # Panics
/// When `partitions` is 0: a topic always has at least one partition; callers validate input.
pub fn default_partition(key: &[u8], partitions: u32) -> u32 {
    assert!(partitions > 0, "a topic has at least one partition");
    ((kafka_murmur2(key) & 0x7fff_ffff) as u32) % partitions
}

/// Number of Redis Cluster hash slots.
pub const REDIS_SLOTS: u16 = 16384;

const CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_XMODEM);

/// The part of a key Redis Cluster hashes: the text between the first `{` and the first `}`
/// after it when that is non-empty, else the whole key (`market:{BBCA}` and `notif:{BBCA}` share
/// a slot).
pub fn redis_hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// `CRC16(hash tag) mod 16384` (CRC-16/XMODEM, as the Redis Cluster specification says).
pub fn redis_slot(key: &[u8]) -> u16 {
    CRC16.checksum(redis_hash_tag(key)) % REDIS_SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_murmur2_vectors() {
        // Kafka's UtilsTest.testMurmur2.
        assert_eq!(kafka_murmur2(b"21"), -973932308);
        assert_eq!(kafka_murmur2(b"foobar"), -790332482);
        assert_eq!(kafka_murmur2(b"abc"), 479470107);
    }

    #[test]
    fn redis_slots_follow_the_cluster_spec() {
        // The spec's example: "123456789" -> CRC16 0x31C3 = 12739.
        assert_eq!(redis_slot(b"123456789"), 12739);
        assert_eq!(redis_slot(b"market:{BBCA}"), redis_slot(b"notif:{BBCA}"));
        assert_eq!(redis_slot(b"{BBCA}"), redis_slot(b"BBCA"));
        // Empty tag: the whole key is hashed.
        assert_eq!(redis_hash_tag(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(redis_hash_tag(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(redis_hash_tag(b"foo{bar}{zap}"), b"bar");
    }
}
