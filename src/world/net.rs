//! The network: every request a client sends and every response a broker sends travels here,
//! on a connection (one client process to one broker, as Kafka's `NetworkClient` keeps one per
//! node), with a one-way latency drawn from the scenario's seeded distribution. This is the one
//! place where network faults and per-connection ordering go: the models only say "send", the
//! world asks the network when (and, later, whether) the message arrives.

use crate::scenario::Scenario;
use crate::sim::rng::Stream;
use crate::sim::time::Duration;
use crate::sim::SimTime;

/// A client process's connection to a broker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Connection {
    /// The scenario member whose consumer holds the connection.
    pub member: usize,
    pub broker: u32,
}

pub struct Network {
    latency_min_us: u64,
    latency_max_us: u64,
    /// One-way latencies, drawn in the order messages are sent.
    latency: Stream,
}

impl Network {
    pub fn new(scenario: &Scenario, latency: Stream) -> Self {
        Network {
            latency_min_us: scenario.cluster.latency_min_us,
            latency_max_us: scenario.cluster.latency_max_us,
            latency,
        }
    }

    /// A message (either way) sent at `now` on `_connection`: when it arrives. Today every
    /// connection has the same latency distribution and never fails.
    pub fn deliver(&mut self, now: SimTime, _connection: Connection) -> SimTime {
        now + self.one_way()
    }

    fn one_way(&mut self) -> Duration {
        Duration::from_micros(
            self.latency
                .between(self.latency_min_us, self.latency_max_us),
        )
    }
}
