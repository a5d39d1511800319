//! What a client's connections to the brokers carry: the requests in flight on each, with the
//! time the client gives up on them (`request.timeout.ms`), and the answers on their way back.
//! A request that times out closes its connection (`NetworkClient.handleTimedOutRequests`):
//! everything on it fails with a disconnect, and what was still on its way is lost.

use super::*;
use crate::group::messages::{ErrorCode, RequestKind};

/// A request on its way or waiting for its answer.
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    pub kind: RequestKind,
    /// When the client gives up on it: `request.timeout.ms`, for a JoinGroup the rebalance
    /// timeout and 5 s more (`AbstractCoordinator` JOIN_GROUP_TIMEOUT_LAPSE).
    pub deadline: SimTime,
    /// Its `AtCoordinator` event while it is on its way: cancelled if the connection closes
    /// first (the request is lost with it).
    pub on_its_way: Option<TimerId>,
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

impl World<'_> {
    /// The connection closes when its request times out: at once if it is overdue already.
    /// Timeouts are scheduled only where an answer is known lost, so a request the coordinator
    /// left unanswered (a stopped process's parked SyncGroup) can be past its deadline when a
    /// crash or a hang comes to time it out.
    pub(super) fn time_out(&mut self, client: ClientRef, broker: u32, at: SimTime) {
        let at = at.max(self.now());
        self.queue
            .schedule(at, Event::ConnectionClosed { client, broker });
    }

    /// When the first of the requests in flight on a connection times out (each has its own
    /// timeout, `NetworkClient.handleTimedOutRequests`; a JoinGroup's is the longest).
    pub(super) fn first_deadline(&self, from: ClientRef, broker: u32) -> Option<SimTime> {
        self.in_flight
            .get(&(from, broker))
            .and_then(|q| q.iter().map(|e| e.deadline).min())
    }

    /// The request of `kind` answered now: the oldest of that kind on the connection.
    pub(super) fn take_in_flight(
        &mut self,
        to: ClientRef,
        broker: u32,
        kind: RequestKind,
    ) -> Option<InFlight> {
        let queue = self.in_flight.get_mut(&(to, broker))?;
        let i = queue.iter().position(|e| e.kind == kind)?;
        let entry = queue.remove(i);
        if queue.is_empty() {
            self.in_flight.remove(&(to, broker));
        }
        entry
    }

    /// The client's connection to `broker` closes: every request still in flight on it fails
    /// (`NetworkClient` on a disconnect or a request timeout).
    pub(super) fn connection_closed(&mut self, client: ClientRef, broker: u32) {
        let now = self.now();
        let Some(deadline) = self.first_deadline(client, broker) else {
            return;
        };
        // A timeout closes the connection only once one of its requests is overdue (a timer
        // may have fired after the connection was reopened).
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
        self.disconnect(client, broker);
    }

    /// The connection is closed: whatever was known of it (hung, opened, dead, the order of
    /// its messages) goes; the next request opens a new one.
    pub(super) fn forget_connection(&mut self, client: ClientRef, broker: u32) {
        self.hung.remove(&(client, broker));
        self.connections.remove(&(client, broker));
        self.dead.remove(&(client, broker));
        self.net.forget(Connection {
            member: client.member,
            incarnation: client.incarnation,
            broker,
        });
    }

    /// The client closes its connection to `broker` (`NetworkClient.disconnect`, or on a
    /// request timeout): every request it has not had the answer to fails now with a
    /// disconnect, those whose answers were on their way back first. What was still on its way
    /// either way is lost with the connection.
    pub(super) fn disconnect(&mut self, client: ClientRef, broker: u32) {
        let unanswered = self.in_flight.remove(&(client, broker)).unwrap_or_default();
        for id in unanswered.iter().filter_map(|e| e.on_its_way) {
            self.queue.cancel(id);
        }
        let transit = self
            .in_transit
            .remove(&(client, broker))
            .unwrap_or_default();
        let lost = transit
            .into_iter()
            .filter(|t| self.queue.cancel(t.event))
            .map(|t| t.kind);
        let failed: Vec<RequestKind> = lost.chain(unanswered.iter().map(|e| e.kind)).collect();
        self.forget_connection(client, broker);
        let now = self.now();
        for request in failed {
            let response = Box::new(Response::Failed {
                request,
                error: ErrorCode::Disconnected,
            });
            self.queue.schedule(
                now,
                Event::AtClient {
                    to: client,
                    response,
                },
            );
        }
    }
}
