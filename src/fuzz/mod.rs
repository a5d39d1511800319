//! `cgsim fuzz`: generated scenarios, every property checked (issue #23). Each seed draws a
//! case (`generate`: a small group from scratch or the given scenario's, a swarm of fault kinds
//! switched on, a fault plan of them with stability floors), written as a scenario file and run
//! as `cgsim run` runs it (`runner`), judged by the checkers' safety and settle properties and
//! the fuzz liveness properties; failures can be shrunk (`shrink`); the coverage paths reached
//! are counted (`coverage`); `--mutant` turns on a deliberately broken behaviour (`mutants`)
//! to show the whole loop catches it.
//!
//! Data flows one way: seed -> [`case::Case`] -> scenario text -> `Scenario` -> run ->
//! [`runner::Verdict`]. Determinism: a case is a function of its seed (and the base scenario
//! and mutant); runs go in parallel across threads but are handed on in seed order.

pub mod case;
pub mod coverage;
pub mod generate;
pub mod mutants;
pub mod runner;
pub mod shrink;
pub mod swarm;

pub use case::Case;
pub use generate::{base_of, generate, generate_with, Faults};
pub use runner::{run_case, run_case_with, Failure, Verdict};
