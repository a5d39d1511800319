//! Kafka's `org.apache.kafka.common.Uuid`: 128 bits shown as URL-safe base64 without padding.

use super::JavaHash;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::cmp::Ordering;
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Uuid {
    pub msb: i64,
    pub lsb: i64,
}

#[derive(Debug, PartialEq, Eq)]
pub struct UuidError(pub String);

impl fmt::Display for UuidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Uuid {
    pub fn from_bytes(bytes: [u8; 16]) -> Uuid {
        let msb = i64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
        let lsb = i64::from_be_bytes(bytes[8..].try_into().expect("8 bytes"));
        Uuid { msb, lsb }
    }

    /// `Uuid.fromString`: 22 characters of URL-safe base64.
    pub fn parse(s: &str) -> Result<Uuid, UuidError> {
        if s.len() != 22 {
            return Err(UuidError(format!(
                "topic id {s:?} is not a Kafka Uuid: expected 22 base64 characters, got {}",
                s.len()
            )));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|e| UuidError(format!("topic id {s:?} is not a Kafka Uuid: {e}")))?;
        let bytes: [u8; 16] = bytes
            .try_into()
            .map_err(|_| UuidError(format!("topic id {s:?} does not decode to 16 bytes")))?;
        Ok(Uuid::from_bytes(bytes))
    }

    pub fn to_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.msb.to_be_bytes());
        out[8..].copy_from_slice(&self.lsb.to_be_bytes());
        out
    }

    /// `Uuid.compareTo`: most significant bits as signed longs, then least significant.
    pub fn java_cmp(&self, other: &Uuid) -> Ordering {
        self.msb.cmp(&other.msb).then(self.lsb.cmp(&other.lsb))
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.to_bytes()))
    }
}

impl JavaHash for Uuid {
    /// `Uuid.hashCode`: x = msb ^ lsb; (int)(x >> 32) ^ (int)x.
    fn java_hash(&self) -> i32 {
        let x = self.msb ^ self.lsb;
        ((x >> 32) as i32) ^ (x as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_base64() {
        let s = "Rj3kq4YcT7uF0v8mQ2w1aA";
        assert_eq!(Uuid::parse(s).unwrap().to_string(), s);
        assert!(Uuid::parse("short").is_err());
        assert!(Uuid::parse("Rj3kq4YcT7uF0v8mQ2w1a!").is_err());
    }

    #[test]
    fn hash_and_order_follow_kafka() {
        let u = Uuid { msb: 1, lsb: 2 };
        assert_eq!(u.java_hash(), 3);
        let big = Uuid {
            msb: 1 << 32,
            lsb: 0,
        };
        assert_eq!(big.java_hash(), 1);
        // Signed comparison: a high first bit sorts first.
        let neg = Uuid { msb: -1, lsb: 0 };
        assert_eq!(neg.java_cmp(&u), Ordering::Less);
    }
}
