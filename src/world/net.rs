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
    /// Its process: a restarted consumer opens new connections.
    pub incarnation: u32,
    pub broker: u32,
}

/// Which way a message travels on its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    ToBroker,
    ToClient,
}

pub struct Network {
    latency_min_us: u64,
    latency_max_us: u64,
    /// One-way latencies, drawn in the order messages are sent.
    latency: Stream,
    /// The last arrival on each connection and direction, by member (a handful each: the
    /// bootstrap and coordinator brokers, both ways, per process): a Kafka connection is one
    /// TCP stream, so a message never overtakes one sent before it on the same connection.
    last_arrival: Vec<Vec<(Connection, Direction, SimTime)>>,
}

impl Network {
    pub fn new(scenario: &Scenario, latency: Stream) -> Self {
        Network {
            latency_min_us: scenario.cluster.latency_min_us,
            latency_max_us: scenario.cluster.latency_max_us,
            latency,
            last_arrival: Vec::new(),
        }
    }

    /// A message sent at `now` on `connection` in `direction`: when it arrives. Every
    /// connection has the same latency distribution and never fails; messages on one connection
    /// arrive in the order sent (a later one waits for the one before it, as on a TCP stream),
    /// and the broker answers a connection's requests in order.
    pub fn deliver(
        &mut self,
        now: SimTime,
        connection: Connection,
        direction: Direction,
    ) -> SimTime {
        self.deliver_slowed(now, connection, direction, Duration::ZERO)
    }

    /// As [`Network::deliver`], the one-way latency `extra` longer (a latency spike): still
    /// never before a message sent earlier on the connection.
    pub fn deliver_slowed(
        &mut self,
        now: SimTime,
        connection: Connection,
        direction: Direction,
        extra: Duration,
    ) -> SimTime {
        let drawn = now + self.one_way() + extra;
        if self.last_arrival.len() <= connection.member {
            self.last_arrival
                .resize_with(connection.member + 1, Vec::new);
        }
        let member = &mut self.last_arrival[connection.member];
        match member
            .iter_mut()
            .find(|(c, d, _)| *c == connection && *d == direction)
        {
            Some((_, _, last)) => {
                *last = drawn.max(*last);
                *last
            }
            None => {
                member.push((connection, direction, drawn));
                drawn
            }
        }
    }

    /// `connection` closed: a new one to the same broker is a new TCP stream, whose messages
    /// wait for none sent on the old one.
    pub fn forget(&mut self, connection: Connection) {
        if let Some(member) = self.last_arrival.get_mut(connection.member) {
            member.retain(|(c, _, _)| *c != connection);
        }
    }

    fn one_way(&mut self) -> Duration {
        Duration::from_micros(
            self.latency
                .between(self.latency_min_us, self.latency_max_us),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load_str, LoadOptions};

    /// A network of 1-5 ms one way, and member 0's connection to broker 0.
    fn one_ms_to_five() -> (Network, Connection) {
        let toml = "name = \"n\"\nduration_ms = 1000\n\n[cluster]\nrequest_latency_ms = { min = 1, max = 5 }\n\n\
            [[topics]]\nname = \"t\"\npartitions = 1\n\n[[members]]\nname = \"c\"\n";
        let scenario = load_str("n", toml, &LoadOptions::default()).expect("valid");
        let net = Network::new(&scenario, Stream::derive(3, "latency"));
        let connection = Connection {
            member: 0,
            incarnation: 1,
            broker: 0,
        };
        (net, connection)
    }

    #[test]
    fn messages_on_one_connection_arrive_in_the_order_sent() {
        let (mut net, a) = one_ms_to_five();
        let b = Connection { member: 1, ..a };
        let mut last = SimTime::ZERO;
        let mut overtaken = false;
        for i in 0..200 {
            let now = SimTime::from_micros(i * 10);
            let at = net.deliver(now, a, Direction::ToBroker);
            assert!(at >= last, "message {i} overtook the one before it");
            last = at;
            // Another connection's messages are independent and may overtake.
            let other = net.deliver(now, b, Direction::ToBroker);
            overtaken |= other < at;
        }
        assert!(
            overtaken,
            "different connections are not ordered with each other"
        );
    }

    /// A message slowed far past the others (a latency spike) holds back every later one on
    /// its connection, until the connection closes: the next one is a new TCP stream.
    #[test]
    fn a_new_connection_waits_for_nothing_sent_on_the_closed_one() {
        let (mut net, c) = one_ms_to_five();
        let (now, slow) = (SimTime::ZERO, Duration::from_millis(20_000));
        let late = net.deliver_slowed(now, c, Direction::ToClient, slow);
        let held = net.deliver(now, c, Direction::ToClient);
        assert_eq!(held, late, "held behind the slow message");
        net.forget(c);
        let fresh = net.deliver(now, c, Direction::ToClient);
        assert!(fresh <= now + Duration::from_millis(5), "{fresh}");
    }
}
