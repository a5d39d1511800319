//! Every integration test in one binary: each file of `tests/` is a module of this crate
//! (Cargo's `autotests` is off), so `cargo test` links the library into one test binary,
//! not one per file. `cargo test --test all NAME` runs the tests whose path contains NAME
//! (`snapshots::`, `lab::`, ...).

mod browser_support;
mod lab_support;

mod architecture;
mod assign_reference;
mod assign_table;
mod assignor_properties;
mod bad_input;
mod brokers;
mod cli;
mod cli_table;
mod client_timing;
mod compare;
mod conform;
mod conform_kip848;
mod consumer_protocol;
mod describe;
mod e2e;
mod emit;
mod expect;
mod explain;
mod fuzz;
mod fuzz_parsers;
mod java_order;
mod join;
mod kafka_metrics;
mod keyed_logs;
mod lab;
mod lab_browser;
mod metrics_facts;
mod migration;
mod partitioner;
mod rack_reference;
mod racks;
mod readme;
mod recovery;
mod restart_settings;
mod simulation;
mod snapshots;
mod sticky_reference;
mod streams_classic_properties;
mod streams_classic_reference;
mod streams_properties;
mod streams_reference;
mod sweep;
mod timeline;
mod timeline_browser;
mod uniform_after_range;
mod uniform_reference;
mod upgrade;
