//! The simulation kernel: simulated time, the event queue, seeded random streams, the trace.

pub mod queue;
pub mod rng;
pub mod time;
pub mod trace;

pub use queue::EventQueue;
pub use rng::RngStreams;
pub use time::SimTime;
pub use trace::Trace;
