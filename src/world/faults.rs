//! Broker and network faults, applied where messages travel: which broker a request reaches,
//! whether it is there to answer, whether it is the coordinator and has loaded the group, and
//! what the client sees when not (a reset connection at once, a hung one after
//! `request.timeout.ms`, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS). The coordinator's
//! moves come from the controller's plan (`cluster::availability`): its old state dies with
//! its broker (or is unloaded when the leadership moves off a live one), the new one loads
//! the group from `__consumer_offsets` after `coordinator_load_ms`.
//!
//! Kafka's new group coordinator answers a Heartbeat with NONE while the group loads ("the
//! group is still loading, so blindly respond"), and every other group request with
//! COORDINATOR_LOAD_IN_PROGRESS; a broker that does not host the group answers NOT_COORDINATOR
//! (GroupCoordinatorService, CoordinatorRuntime). Only used when the scenario scripts broker or
//! network faults, so a run without them routes exactly as before.

use super::connections::{disconnected, request_timeout, Setup};
use super::*;
use crate::messages::{
    ErrorCode, FailedResponse, FindCoordinatorResponse, HeartbeatResponse, RequestKind,
};
use crate::scenario::Connections;

/// When Linux sends a connection's SYN again while no answer comes: 1, 3, 7, 15, 31 and 63 s
/// after the first (`tcp_syn_retries` 6, an initial RTO of 1 s doubled).
const SYN_RETRANSMITS_MS: [u64; 6] = [1_000, 3_000, 7_000, 15_000, 31_000, 63_000];

/// Kafka's `socket.connection.setup.timeout.ms` and `socket.connection.setup.timeout.max.ms`
/// defaults: a connection not set up by then fails; each failure in a row doubles the next
/// one's, up to the maximum, with a fifth of jitter (`ClusterConnectionStates`).
const CONNECTION_SETUP_TIMEOUT_MS: u64 = 10_000;
const CONNECTION_SETUP_TIMEOUT_MAX_MS: u64 = 30_000;

impl World<'_> {
    /// The coordinator's moves and the fetch gaps, as events.
    pub(super) fn schedule_cluster_faults(&mut self) {
        if !self.faults {
            return;
        }
        let end = SimTime::from_millis(self.scenario.duration_ms);
        let availability = &self.cluster.availability;
        let moves: Vec<SimTime> = availability
            .coordinator_moves()
            .iter()
            .map(|m| m.at)
            .collect();
        let gaps: Vec<_> = availability.all_gaps().collect();
        for (i, at) in moves.into_iter().enumerate() {
            self.queue.schedule(at, Event::CoordinatorMoved(i));
        }
        for (partition, member, gap) in gaps {
            for (at, open) in [(gap.from, true), (gap.until, false)] {
                if at <= end {
                    let event = Event::FetchGap {
                        partition,
                        member,
                        cause: gap.cause,
                        open,
                    };
                    self.queue.schedule(at, event);
                }
            }
        }
    }

    /// A member sends a request: for FindCoordinator, to the live broker it can reach with the
    /// fewest of its requests in flight (the first such, `NetworkClient.leastLoadedNode`
    /// prefers a ready connection with nothing outstanding), else to the coordinator it knows.
    /// With none known, nothing goes out: the client's `checkAndGetCoordinator` finds no node,
    /// so the request fails at once with COORDINATOR_NOT_AVAILABLE
    /// (`RequestFuture.coordinatorNotAvailable()`: a `commitSync` or an OffsetFetch waits for
    /// the coordinator and is sent again), and a LeaveGroup is not sent at all
    /// (`maybeLeaveGroup` only leaves through a known coordinator).
    pub(super) fn send(&mut self, from: ClientRef, request: Request) {
        let now = self.now();
        let availability = &self.cluster.availability;
        let broker = match request {
            Request::FindCoordinator(_) => (0..self.cluster.brokers)
                .filter(|&b| {
                    availability.broker_down(b, now).is_none()
                        && availability.cut_until(from.member, b, now).is_none()
                })
                .min_by_key(|&b| self.carried.get((from, b)).map_or(0, |c| c.in_flight.len()))
                .unwrap_or(BOOTSTRAP_BROKER),
            _ => match self.members[from.member].coordinator() {
                Some(broker) => broker,
                None => return self.no_coordinator(from, request.kind()),
            },
        };
        let opens = self.connections.insert((from, broker));
        let back = availability.broker_down(broker, now).is_none();
        if back && self.dead.remove(&(from, broker)) {
            // The connection died with its broker's old process: this request fails on it
            // now (a LeaveGroup is lost with it).
            if request.kind() != RequestKind::LeaveGroup {
                self.queue.schedule(now, disconnected(from, request.kind()));
            }
            return;
        }
        let setup = if opens {
            self.open_connection(from, broker)
        } else {
            self.carried
                .get((from, broker))
                .map_or(Setup::Up, |c| c.setup)
        };
        let timeout = now + request_timeout(&self.scenario.group, &request);
        let (deadline, connecting) = match setup {
            Setup::Failing(at) => (at, None),
            Setup::Connecting(at) if at > now => (timeout, Some(at - now)),
            _ => (timeout, Some(Duration::ZERO)),
        };
        let kind = request.kind();
        let arrival = connecting
            .and_then(|after| self.carry(from, broker, Direction::ToBroker, deadline, after));
        let on_its_way = arrival.map(|at| {
            let request = Box::new(request);
            let event = Event::AtCoordinator {
                from,
                request,
                broker,
            };
            self.queue.schedule(at, event)
        });
        self.track(from, broker, kind, deadline, on_its_way);
        if on_its_way.is_none() {
            self.time_out(from, broker, deadline);
        }
    }

    /// A connection opens now: how it is set up (kept for every request sent on it): at once, unless nothing answers its SYN (its
    /// broker is down with its connections hanging, or the member is cut off from it). Linux
    /// sends the SYN again 1, 3, 7, 15... s after the first, and the client gives up at its
    /// setup timeout (10 s, doubled per setup in a row that failed up to 30 s, jittered by a
    /// fifth), so the connection is set up at the first retransmit before then that finds the
    /// broker back or the partition healed, else fails then with everything sent on it
    /// meanwhile.
    fn open_connection(&mut self, from: ClientRef, broker: u32) -> Setup {
        let now = self.now();
        let availability = &self.cluster.availability;
        let hang = availability.hangs_until(broker, now);
        let cut = availability.cut_until(from.member, broker, now);
        let carried = self.carried.entry((from, broker));
        let Some(answered_from) = hang.max(cut) else {
            carried.failed_setups = 0;
            carried.setup = Setup::Up;
            return Setup::Up;
        };
        let timeout_ms = crate::client::exponential_backoff(
            CONNECTION_SETUP_TIMEOUT_MS,
            CONNECTION_SETUP_TIMEOUT_MAX_MS,
            carried.failed_setups,
            &mut self.connection_setup,
        );
        let fails_at = now + Duration::from_millis(timeout_ms);
        let connected = SYN_RETRANSMITS_MS
            .iter()
            .map(|&ms| now + Duration::from_millis(ms))
            .take_while(|&at| at < fails_at)
            .find(|&at| at >= answered_from);
        carried.setup = match connected {
            Some(at) => {
                carried.failed_setups = 0;
                Setup::Connecting(at)
            }
            None => {
                carried.failed_setups += 1;
                Setup::Failing(fails_at)
            }
        };
        carried.setup
    }

    /// A request for the coordinator while the member knows none: see `send`.
    fn no_coordinator(&mut self, from: ClientRef, kind: RequestKind) {
        if kind == RequestKind::LeaveGroup {
            return;
        }
        let response = Box::new(Response::Failed(FailedResponse {
            request: kind,
            error: ErrorCode::CoordinatorNotAvailable,
        }));
        let now = self.now();
        self.queue
            .schedule(now, Event::AtClient { to: from, response });
    }

    /// When a message sent now on `from`'s connection to `broker` arrives: the network's
    /// latency and any spike, after `connecting` (the connection's own setup); across a network
    /// partition, when it heals (TCP retransmits). Never if that is past `deadline`, its
    /// request's timeout: the client closes the connection then (`NetworkClient`'s
    /// `handleTimedOutRequests`), and what was still on its way is lost with it.
    pub(super) fn carry(
        &mut self,
        from: ClientRef,
        broker: u32,
        direction: Direction,
        deadline: SimTime,
        connecting: Duration,
    ) -> Option<SimTime> {
        let now = self.now();
        let connection = Connection {
            member: from.member,
            incarnation: from.incarnation,
            broker,
        };
        let availability = &self.cluster.availability;
        let spike = Duration::from_micros(availability.extra_latency_us(now));
        // Held until the cut heals, then on its way: after every message sent before it on
        // the connection (a TCP stream keeps order). A connection still being set up sends it
        // once it is: across a cut then.
        let held = match availability.cut_until(from.member, broker, now + connecting) {
            None => connecting,
            Some(heal) if heal < deadline => heal - now,
            Some(_) => return None,
        };
        let at = self
            .net
            .deliver_slowed(now, connection, direction, spike + held);
        (at <= deadline).then_some(at)
    }

    /// A request reaches `broker`.
    pub(super) fn at_broker(&mut self, from: ClientRef, request: Request, broker: u32) {
        let now = self.now();
        let kind = request.kind();
        let down = self.cluster.availability.broker_down(broker, now);
        match down {
            // The host's kernel resets the connection: the client hears at once.
            Some(Connections::Reset) => {
                self.connections.remove(&(from, broker));
                self.dead.remove(&(from, broker));
                return self.fail(from, broker, kind, ErrorCode::Disconnected);
            }
            Some(Connections::Hang) => {
                self.hung.insert((from, broker));
            }
            None => {}
        }
        if self.hung.contains(&(from, broker)) {
            // It waits behind the request that never gets an answer: the connection closes
            // when the oldest request on it times out.
            let deadline = self.first_deadline(from, broker).unwrap_or(now);
            self.time_out(from, broker, deadline);
            return;
        }
        if kind == RequestKind::FindCoordinator {
            // Any broker answers from its metadata: the leader of the group's
            // `__consumer_offsets` partition, dead or not (a dead one until it is fenced).
            let offsets = self.partitions.len();
            let response = match self.cluster.availability.leader_at(offsets, now) {
                Some(b) => Response::FindCoordinator(FindCoordinatorResponse { broker: b }),
                None => Response::Failed(FailedResponse {
                    request: kind,
                    error: ErrorCode::CoordinatorNotAvailable,
                }),
            };
            return self.respond(from, broker, response);
        }
        if self.coordinator_home != Some(broker) {
            return self.fail(from, broker, kind, ErrorCode::NotCoordinator);
        }
        if now < self.coordinator_loading_until {
            return match kind {
                RequestKind::Heartbeat => self.respond(
                    from,
                    broker,
                    Response::Heartbeat(HeartbeatResponse {
                        error: ErrorCode::None,
                    }),
                ),
                _ => self.fail(from, broker, kind, ErrorCode::CoordinatorLoadInProgress),
            };
        }
        self.at_coordinator(from, request, broker);
    }

    /// `broker` answers `kind` with an error that carries no group state.
    fn fail(&mut self, to: ClientRef, broker: u32, kind: RequestKind, error: ErrorCode) {
        self.respond(
            to,
            broker,
            Response::Failed(FailedResponse {
                request: kind,
                error,
            }),
        );
    }

    /// A broker crashed: if it held the coordinator, the group's state there is gone; the
    /// requests in flight on its connections fail at once (reset) or at their timeouts (hang).
    pub(super) fn broker_crashed(&mut self) {
        let now = self.now();
        let down: Vec<(u32, Connections)> = (0..self.cluster.brokers)
            .filter_map(|b| {
                self.cluster
                    .availability
                    .broker_down(b, now)
                    .map(|c| (b, c))
            })
            .collect();
        for &(broker, connections) in &down {
            let clients: Vec<ClientRef> = self
                .carried
                .iter()
                .filter(|((_, b), c)| *b == broker && !c.in_flight.is_empty())
                .map(|((c, _), _)| c)
                .collect();
            // A connection with nothing in flight dies as well: its client finds out with
            // its next request on it (`dead`).
            let idle: Vec<(ClientRef, u32)> = self
                .connections
                .iter()
                .filter(|&&(c, b)| b == broker && !clients.contains(&c))
                .copied()
                .collect();
            self.dead.extend(idle);
            for client in clients {
                let deadline = self.first_deadline(client, broker).unwrap_or(now);
                let at = match connections {
                    Connections::Reset => {
                        let lag = self.scenario.cluster.latency_max_us;
                        now + Duration::from_micros(lag)
                    }
                    Connections::Hang => {
                        self.hung.insert((client, broker));
                        deadline
                    }
                };
                self.time_out(client, broker, at);
            }
            if self.coordinator_home == Some(broker) {
                self.log(|| format!("broker-{broker} crashes with the group's coordinator"));
                self.drop_coordinator_state();
                self.observers
                    .observe(now, &Fact::CoordinatorFailed { broker });
            } else {
                self.log(|| format!("broker-{broker} crashes"));
            }
        }
    }

    /// The coordinator's in-memory state goes: its timers are cancelled (what it wrote stays).
    fn drop_coordinator_state(&mut self) {
        self.coordinator_home = None;
        self.coordinator.unload();
        for (_, id) in std::mem::take(&mut self.timers.coordinator) {
            self.queue.cancel(id);
        }
    }

    /// The leadership of the group's `__consumer_offsets` partition moved: a live old
    /// coordinator unloads the group (its parked JoinGroup and SyncGroup answered
    /// NOT_COORDINATOR), the new one loads it.
    pub(super) fn coordinator_moved(&mut self, i: usize) {
        let now = self.now();
        let mv = self.cluster.availability.coordinator_moves()[i];
        if let Some(old) = mv.from.filter(|&b| self.coordinator_home == Some(b)) {
            let parked: Vec<(ClientRef, RequestKind)> = self
                .carried
                .iter()
                .filter(|((_, b), _)| *b == old)
                .flat_map(|((c, _), carried)| {
                    carried
                        .in_flight
                        .iter()
                        .filter(|e| {
                            matches!(e.kind, RequestKind::JoinGroup | RequestKind::SyncGroup)
                        })
                        .map(move |e| (c, e.kind))
                })
                .collect();
            for (client, kind) in parked {
                self.fail(client, old, kind, ErrorCode::NotCoordinator);
            }
            self.drop_coordinator_state();
        }
        let load = Duration::from_millis(self.scenario.cluster.coordinator_load_ms);
        self.coordinator_home = mv.to;
        if mv.to.is_some() {
            self.coordinator_loading_until = now + load;
            self.queue
                .schedule(self.coordinator_loading_until, Event::CoordinatorLoaded);
        }
        self.log(|| match mv.to {
            Some(to) => format!("the group's coordinator moves to broker-{to}; it loads the group"),
            None => "the group's coordinator is unavailable (its __consumer_offsets partition has no leader)".into(),
        });
        let fact = Fact::CoordinatorMoved {
            from: mv.from,
            to: mv.to,
        };
        self.observers.observe(now, &fact);
    }
}
