//! Kafka's default partitioner against the reference vectors (Kafka's UtilsTest values and
//! keys checked with Java-compatible ports).

use cgsim::workload::partitioner::{default_partition, kafka_murmur2};
use serde_json::Value;

#[test]
fn murmur2_vectors() {
    let v: Value = serde_json::from_str(include_str!("data/murmur2_vectors.json")).unwrap();
    let mut checked = 0;
    for case in v["java"].as_array().unwrap() {
        let key = case["key"].as_str().unwrap();
        assert_eq!(
            i64::from(kafka_murmur2(key.as_bytes())),
            case["murmur2"].as_i64().unwrap(),
            "{key}"
        );
        checked += 1;
    }
    for case in v["keys"].as_array().unwrap() {
        let key = case["key"].as_str().unwrap();
        let hex = case["utf8_hex"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(bytes, key.as_bytes(), "{key}");
        assert_eq!(
            i64::from(kafka_murmur2(&bytes)),
            case["murmur2"].as_i64().unwrap(),
            "{key}"
        );
        for (n, p) in case["partitions"].as_object().unwrap() {
            let n: u32 = n.parse().unwrap();
            assert_eq!(
                i64::from(default_partition(&bytes, n)),
                p.as_i64().unwrap(),
                "{key} % {n}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 123);
}
