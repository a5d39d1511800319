//! The `cgsim assign` wire format of classic Kafka Streams cases (reference/streams/README.md).
