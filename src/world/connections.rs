//! What a client's connections to the brokers carry: the requests in flight on each, with the
//! time the client gives up on them (`request.timeout.ms`), and the answers on their way back.
//! A request that times out closes its connection (`NetworkClient.handleTimedOutRequests`):
//! everything on it fails with a disconnect, and what was still on its way is lost.

use super::*;
use crate::messages::{ErrorCode, FailedResponse, JoinGroupRequest, RequestKind};
use crate::scenario::GroupSpec;

/// A request on its way or waiting for its answer.
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    pub kind: RequestKind,
    pub sent: SimTime,
    /// When the client gives up on it: `request.timeout.ms`, for a JoinGroup the rebalance
    /// timeout and 5 s more (`AbstractCoordinator` JOIN_GROUP_TIMEOUT_LAPSE).
    pub deadline: SimTime,
    /// Its `AtCoordinator` event while it is on its way: cancelled if the connection closes
    /// first (the request is lost with it).
    pub on_its_way: Option<TimerId>,
    /// It has reached its broker.
    pub arrived: bool,
    /// Its `ConnectionClosed` event at `deadline`, once the coordinator has parked it (a
    /// JoinGroup until the join phase completes, a follower's SyncGroup until the leader's
    /// comes): cancelled when it is answered.
    pub timeout: Option<TimerId>,
}

/// An answer on its way back to the client.
#[derive(Clone, Copy, Debug)]
pub(super) struct InTransit {
    pub arrives: SimTime,
    /// Its `AtClient` event, cancelled if the connection closes first.
    pub event: TimerId,
    /// What it answers, failed instead if the connection closes first.
    pub kind: RequestKind,
}

/// Where a connection's setup stands, worked out when it opens and shared by every request
/// sent on it until then (`NetworkClient` sends nothing on a connection still connecting, and
/// fails everything waiting on one whose setup fails).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Setup {
    /// Set up (or set up at once: a broker that is up and reachable).
    #[default]
    Up,
    /// Its SYN is answered at this instant: what is sent goes then, in order.
    Connecting(SimTime),
    /// No SYN is answered within `socket.connection.setup.timeout.ms`: it fails at this
    /// instant with everything sent on it.
    Failing(SimTime),
}

/// What one connection (client process, broker) carries, and how often it has been closed.
#[derive(Debug, Default)]
pub(super) struct Carried {
    /// Requests on their way or waiting for their answers, oldest first.
    pub in_flight: VecDeque<InFlight>,
    /// Answers on their way back: a close loses them.
    in_transit: Vec<InTransit>,
    /// How many times it has been closed: a timeout set for an earlier connection does not
    /// close the one opened since.
    closes: u32,
    /// Its setup, while it is open.
    pub setup: Setup,
    /// Setups in a row that failed: each waits longer (`ClusterConnectionStates` counts them
    /// per broker and starts over once one is set up).
    pub failed_setups: u32,
}

/// Something kept per connection (client process, broker), by member: a member has a handful
/// of connections (its processes, to the bootstrap broker and the coordinator), so a short scan
/// of its own beats a map over every connection. Iterates in (client, broker) order.
pub(super) struct ByConnection<T> {
    members: Vec<Vec<(ClientRef, u32, T)>>,
}

impl<T: Default> ByConnection<T> {
    pub fn new() -> Self {
        ByConnection {
            members: Vec::new(),
        }
    }

    /// Where the connection is in its member's list (kept sorted), or would go.
    fn find(&self, (client, broker): (ClientRef, u32)) -> Result<usize, usize> {
        let member = self
            .members
            .get(client.member)
            .map_or(&[][..], Vec::as_slice);
        member.binary_search_by_key(&(client, broker), |(c, b, _)| (*c, *b))
    }

    pub fn get(&self, key: (ClientRef, u32)) -> Option<&T> {
        let i = self.find(key).ok()?;
        Some(&self.members[key.0.member][i].2)
    }

    pub fn get_mut(&mut self, key: (ClientRef, u32)) -> Option<&mut T> {
        let i = self.find(key).ok()?;
        Some(&mut self.members[key.0.member][i].2)
    }

    /// The connection's, made empty if it has none.
    pub fn entry(&mut self, key: (ClientRef, u32)) -> &mut T {
        let (client, broker) = key;
        if self.members.len() <= client.member {
            self.members.resize_with(client.member + 1, Vec::new);
        }
        let i = self.find(key).unwrap_or_else(|i| {
            self.members[client.member].insert(i, (client, broker, T::default()));
            i
        });
        &mut self.members[client.member][i].2
    }

    pub fn iter(&self) -> impl Iterator<Item = ((ClientRef, u32), &T)> {
        self.members.iter().flatten().map(|(c, b, t)| ((*c, *b), t))
    }
}

/// How long the client waits for the answer to `request`: `request.timeout.ms`, for a
/// JoinGroup at least the rebalance timeout and 5 s more (`AbstractCoordinator`
/// JOIN_GROUP_TIMEOUT_LAPSE), as the coordinator may hold it that long.
pub(super) fn request_timeout(group: &GroupSpec, request: &Request) -> Duration {
    let ms = match request {
        Request::JoinGroup(JoinGroupRequest {
            rebalance_timeout_ms,
            ..
        }) => group.request_timeout_ms.max(rebalance_timeout_ms + 5_000),
        _ => group.request_timeout_ms,
    };
    Duration::from_millis(ms)
}

impl World<'_> {
    /// A member sends a request with no broker or network fault scripted: to the bootstrap
    /// broker for FindCoordinator, else to the coordinator, after the network's latency.
    pub(super) fn send_direct(&mut self, from: ClientRef, request: Request) {
        let now = self.now();
        let broker = if matches!(request, Request::FindCoordinator(_)) {
            BOOTSTRAP_BROKER
        } else {
            self.cluster.coordinator_broker
        };
        let connection = Connection {
            member: from.member,
            incarnation: from.incarnation,
            broker,
        };
        let deadline = now + request_timeout(&self.scenario.group, &request);
        let kind = request.kind();
        let at = self.net.deliver(now, connection, Direction::ToBroker);
        let request = Box::new(request);
        let event = Event::AtCoordinator {
            from,
            request,
            broker,
        };
        let on_its_way = self.queue.schedule(at, event);
        self.track(from, broker, kind, deadline, Some(on_its_way));
    }

    /// A request of `kind` goes on `from`'s connection to `broker`, answered by `deadline` or
    /// timed out then; `on_its_way` is its arrival (`None`: it never arrives).
    pub(super) fn track(
        &mut self,
        from: ClientRef,
        broker: u32,
        kind: RequestKind,
        deadline: SimTime,
        on_its_way: Option<TimerId>,
    ) {
        let entry = InFlight {
            kind,
            sent: self.now(),
            deadline,
            on_its_way,
            arrived: false,
            timeout: None,
        };
        self.carried
            .entry((from, broker))
            .in_flight
            .push_back(entry);
    }

    /// The coordinator on `broker` handles a request that reached it. One it leaves unanswered
    /// is parked, and times out at its deadline if it is still unanswered then: the client
    /// closes the connection (`NetworkClient.handleTimedOutRequests` checks every request in
    /// flight, parked or not).
    pub(super) fn at_coordinator(&mut self, from: ClientRef, request: Request, broker: u32) {
        let now = self.now();
        let kind = request.kind();
        // A connection delivers in order: the oldest of its kind still on its way is this one.
        let carried = self.carried.get_mut((from, broker));
        let arriving = carried.and_then(|c| {
            c.in_flight
                .iter_mut()
                .find(|e| e.kind == kind && !e.arrived && e.on_its_way.is_some())
        });
        if let Some(entry) = arriving {
            entry.arrived = true;
            entry.on_its_way = None;
        }
        let offsets = &self.cluster.offsets;
        let out = &mut self.coordinator_out;
        self.coordinator.handle(now, from, request, offsets, out);
        self.apply_coordinator();
        // Those that arrived before it were answered or are parked with their timeouts: the
        // first arrived one without a timeout is this one, unanswered.
        let carried = self.carried.get((from, broker));
        let parked = carried.and_then(|c| {
            c.in_flight
                .iter()
                .enumerate()
                .find(|(_, e)| e.kind == kind && e.arrived && e.timeout.is_none())
                .map(|(i, e)| (i, e.deadline))
        });
        if let Some((i, deadline)) = parked {
            let id = self.time_out(from, broker, deadline);
            self.carried.entry((from, broker)).in_flight[i].timeout = Some(id);
        }
    }

    /// `broker` answers `to`: the request it answers is no longer in flight once the answer
    /// arrives; an answer that cannot reach the client by the request's deadline (across a
    /// network partition, or sent just before it) is lost, and its request times out. An
    /// answer to a request whose connection has closed since is lost with it.
    pub(super) fn respond(&mut self, to: ClientRef, broker: u32, response: Response) {
        let kind = response.kind();
        let Some(mut entry) = self.take_in_flight(to, broker, kind) else {
            return;
        };
        let arrival = if self.faults {
            self.carry(
                to,
                broker,
                Direction::ToClient,
                entry.deadline,
                Duration::ZERO,
            )
        } else if kind == RequestKind::LeaveGroup {
            // Without faults its answer comes in time: not carried at all.
            return;
        } else {
            let connection = Connection {
                member: to.member,
                incarnation: to.incarnation,
                broker,
            };
            let at = self
                .net
                .deliver(self.now(), connection, Direction::ToClient);
            (at <= entry.deadline).then_some(at)
        };
        match arrival {
            // The consumer does not wait for its LeaveGroup answer.
            Some(_) if kind == RequestKind::LeaveGroup => {}
            Some(at) => {
                let response = Box::new(response);
                let id = self.queue.schedule(at, Event::AtClient { to, response });
                let now = self.now();
                let transit = &mut self.carried.entry((to, broker)).in_transit;
                transit.retain(|t| t.arrives >= now);
                transit.push(InTransit {
                    arrives: at,
                    event: id,
                    kind,
                });
            }
            None => {
                entry.timeout = Some(self.time_out(to, broker, entry.deadline));
                let in_flight = &mut self.carried.entry((to, broker)).in_flight;
                in_flight.push_front(entry);
            }
        }
    }

    /// The connection closes when its request times out: at once if it is overdue already.
    /// Timeouts are scheduled where an answer is known lost or the coordinator parks the
    /// request (`at_coordinator`), so one can be past its deadline when a crash or a hang comes
    /// to time it out.
    pub(super) fn time_out(&mut self, client: ClientRef, broker: u32, at: SimTime) -> TimerId {
        let at = at.max(self.now());
        let opened = self.carried.get((client, broker)).map_or(0, |c| c.closes);
        let event = Event::ConnectionClosed {
            client,
            broker,
            opened,
        };
        self.queue.schedule(at, event)
    }

    /// When the first of the requests in flight on a connection times out (each has its own
    /// timeout, `NetworkClient.handleTimedOutRequests`; a JoinGroup's is the longest).
    pub(super) fn first_deadline(&self, from: ClientRef, broker: u32) -> Option<SimTime> {
        self.carried
            .get((from, broker))
            .and_then(|c| c.in_flight.iter().map(|e| e.deadline).min())
    }

    /// The request of `kind` answered now: the oldest of that kind on the connection.
    pub(super) fn take_in_flight(
        &mut self,
        to: ClientRef,
        broker: u32,
        kind: RequestKind,
    ) -> Option<InFlight> {
        let queue = &mut self.carried.get_mut((to, broker))?.in_flight;
        let i = queue.iter().position(|e| e.kind == kind)?;
        // The connection's queue stays, empty, for its next request (no allocation each time).
        let entry = queue.remove(i)?;
        if let Some(id) = entry.timeout {
            self.queue.cancel(id);
        }
        Some(entry)
    }

    /// The client's connection to `broker` closes: every request still in flight on it fails
    /// (`NetworkClient` on a disconnect or a request timeout).
    pub(super) fn connection_closed(&mut self, client: ClientRef, broker: u32, opened: u32) {
        let now = self.now();
        if self.carried.get((client, broker)).map_or(0, |c| c.closes) != opened {
            // Meant for a connection closed since: its requests failed then.
            return;
        }
        if !self.members[client.member].runs_process(client.incarnation) {
            // Its process has stopped or crashed, and its sockets went with it: nothing of it
            // times out.
            return;
        }
        let Some(deadline) = self.first_deadline(client, broker) else {
            return;
        };
        // A timeout closes the connection only once one of its requests is overdue (an earlier
        // request's timer may fire after it was answered); a broker down or cut off closes it
        // at once.
        if deadline > now
            && self.cluster.availability.broker_down(broker, now).is_none()
            && self
                .cluster
                .availability
                .cut_until(client.member, broker, now)
                .is_none()
        {
            return;
        }
        let carried = self.carried.get((client, broker)).expect("a deadline");
        if matches!(carried.setup, Setup::Failing(at) if at <= now) {
            // Not a request timeout: the connection was never set up, and everything waiting
            // to go on it fails with it.
            let name = &self.scenario.members[client.member].name;
            self.log(|| {
                format!(
                    "{name}'s connection to broker-{broker} is not set up within socket.connection.setup.timeout.ms: the client closes it"
                )
            });
            return self.disconnect_now(client, broker);
        }
        let overdue: Vec<InFlight> = carried
            .in_flight
            .iter()
            .filter(|e| e.deadline <= now)
            .copied()
            .collect();
        for e in overdue {
            let waited_ms = (now - e.sent).as_millis();
            let name = &self.scenario.members[client.member].name;
            self.log(|| {
                format!(
                    "{name}'s {} to broker-{broker} timed out after {waited_ms} ms: the client closes the connection",
                    e.kind.name()
                )
            });
            let fact = Fact::RequestTimedOut {
                member: client.member,
                request: e.kind,
                waited_ms,
            };
            self.observers.observe(now, &fact);
        }
        self.disconnect_now(client, broker);
    }

    /// The connection is closed: whatever was known of it (hung, opened, dead, the order of
    /// its messages) goes; the next request opens a new one.
    pub(super) fn forget_connection(&mut self, client: ClientRef, broker: u32) {
        self.hung.remove(&(client, broker));
        self.connections.remove(&(client, broker));
        self.dead.remove(&(client, broker));
        let carried = self.carried.entry((client, broker));
        carried.closes += 1;
        carried.setup = Setup::Up;
        self.net.forget(Connection {
            member: client.member,
            incarnation: client.incarnation,
            broker,
        });
    }

    /// The client closes its connection to `broker` (`NetworkClient.disconnect`): every
    /// request it has not had the answer to fails with a disconnect (see `close`), handled by
    /// the client next.
    pub(super) fn disconnect(&mut self, client: ClientRef, broker: u32) {
        let now = self.now();
        for request in self.close(client, broker) {
            self.queue.schedule(now, disconnected(client, request));
        }
    }

    /// The connection to `broker` closes under the client: every request it has not had the
    /// answer to fails with a disconnect (see `close`), handled at once, as `NetworkClient`
    /// completes them in the same poll that closed it: nothing the client does next finds the
    /// coordinator still known.
    fn disconnect_now(&mut self, client: ClientRef, broker: u32) {
        for request in self.close(client, broker) {
            self.dispatch(disconnected(client, request));
        }
    }

    /// The connection's requests still unanswered, those whose answers were on their way back
    /// first: what was still on its way either way is lost with the connection.
    fn close(&mut self, client: ClientRef, broker: u32) -> Vec<RequestKind> {
        let carried = self.carried.entry((client, broker));
        let unanswered = std::mem::take(&mut carried.in_flight);
        let transit = std::mem::take(&mut carried.in_transit);
        for id in unanswered
            .iter()
            .flat_map(|e| [e.on_its_way, e.timeout])
            .flatten()
        {
            self.queue.cancel(id);
        }
        let lost = transit
            .into_iter()
            .filter(|t| self.queue.cancel(t.event))
            .map(|t| t.kind);
        let failed: Vec<RequestKind> = lost.chain(unanswered.iter().map(|e| e.kind)).collect();
        self.forget_connection(client, broker);
        failed
    }
}

/// `request` of `client` failed with a disconnect: the answer it gets.
pub(super) fn disconnected(client: ClientRef, request: RequestKind) -> Event {
    let response = Box::new(Response::Failed(FailedResponse {
        request,
        error: ErrorCode::Disconnected,
    }));
    Event::AtClient {
        to: client,
        response,
    }
}
