//! Unit tests of the sticky port; its parity with Kafka is checked on the reference cases in
//! `tests/`.
