//! Unit tests for the orders the uniform assignor inherits from Kafka's Java collections.
