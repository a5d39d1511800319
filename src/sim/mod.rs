//! The simulation kernel, which knows no Kafka: simulated time, the event queue, seeded random
//! streams, the effect buffer state machines write into, the run digest and the trace.

pub mod digest;
pub mod out;
pub mod queue;
pub mod rng;
pub mod time;
pub mod trace;

pub use digest::Digest;
pub use out::Out;
pub use queue::EventQueue;
pub use rng::RngStreams;
pub use time::SimTime;
pub use trace::Trace;
