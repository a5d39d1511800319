//! The canonical record of each event the run processes, for the run digest: its time (µs), its
//! queue sequence number, a tag for its kind and its fields, each in a fixed binary layout
//! (integers little-endian, strings and lists length-prefixed). Log wording never enters it.
//! A new event field belongs here too, so that runs differing in it differ in digest.

use super::Event;
use crate::client::ClientTimer;
use crate::group::effects::CoordTimer;
use crate::messages::{
    ClientRef, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ErrorCode,
    FailedResponse, FindCoordinatorRequest, FindCoordinatorResponse, HeartbeatRequest,
    HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, JoinProtocol, JoinReason, JoinedMember,
    LeaveGroupRequest, LeaveGroupResponse, LeaveReason, LeavingMember, LeftMember,
    OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse, Request,
    Response, Subscription, SyncGroupRequest, SyncGroupResponse,
};
use crate::sim::{Digest, SimTime};

pub fn record(d: &mut Digest, at: SimTime, seq: u64, event: &Event) {
    d.u64(at.as_micros());
    d.u64(seq);
    match event {
        Event::Timeline(i) => {
            d.u8(1);
            d.u64(*i as u64);
        }
        Event::AtCoordinator { from, request, .. } => {
            d.u8(2);
            client(d, *from);
            self::request(d, request);
        }
        Event::CoordinatorTimer(timer) => {
            d.u8(3);
            coordinator_timer(d, timer);
        }
        Event::AtClient { to, response } => {
            d.u8(4);
            client(d, *to);
            self::response(d, response);
        }
        Event::ClientTimer { to, timer } => {
            d.u8(5);
            client(d, *to);
            client_timer(d, timer);
        }
        Event::SettleCheck => d.u8(6),
        Event::SettleWindowEnd => d.u8(9),
        Event::MemberStart(m) => {
            d.u8(10);
            d.u64(*m as u64);
        }
        Event::ForceOwnership { member, partition } => {
            d.u8(8);
            d.u64(*member as u64);
            d.u64(*partition as u64);
        }
        Event::ConnectionClosed {
            client: c, broker, ..
        } => {
            d.u8(11);
            client(d, *c);
            d.u32(*broker);
        }
        Event::CoordinatorMoved(i) => {
            d.u8(12);
            d.u64(*i as u64);
        }
        Event::CoordinatorLoaded => d.u8(13),
        Event::FetchGap {
            partition,
            member,
            open,
            ..
        } => {
            d.u8(14);
            d.u64(*partition as u64);
            d.u64(member.map_or(u64::MAX, |m| m as u64));
            d.u8(u8::from(*open));
        }
    }
    d.end_record();
}

fn client(d: &mut Digest, c: ClientRef) {
    d.u64(c.member as u64);
    d.u32(c.incarnation);
}

fn coordinator_timer(d: &mut Digest, timer: &CoordTimer) {
    match timer {
        CoordTimer::Join => d.u8(1),
        CoordTimer::Sync => d.u8(2),
        CoordTimer::Heartbeat { member_id } => {
            d.u8(3);
            d.str(member_id);
        }
        CoordTimer::Consumer(t) => {
            d.u8(4);
            d.str(&t.name());
        }
    }
}

fn client_timer(d: &mut Digest, timer: &ClientTimer) {
    match timer {
        ClientTimer::Poll => d.u8(1),
        ClientTimer::BatchDone => d.u8(2),
        ClientTimer::Heartbeat => d.u8(3),
        ClientTimer::HeartbeatRead => d.u8(4),
        ClientTimer::PollTimer => d.u8(5),
        ClientTimer::CallbackDone => d.u8(6),
        ClientTimer::MetadataRefresh => d.u8(7),
        ClientTimer::RestoreDone(p) => {
            d.u8(8);
            d.u64(*p as u64);
        }
        ClientTimer::FindCoordinator => d.u8(9),
        ClientTimer::CoordinatorWait => d.u8(10),
        ClientTimer::SessionCheck => d.u8(11),
        ClientTimer::RetryBackoff => d.u8(12),
    }
}

fn error_code(d: &mut Digest, e: ErrorCode) {
    d.u8(match e {
        ErrorCode::None => 0,
        ErrorCode::MemberIdRequired => 1,
        ErrorCode::UnknownMemberId => 2,
        ErrorCode::IllegalGeneration => 3,
        ErrorCode::RebalanceInProgress => 4,
        ErrorCode::InconsistentGroupProtocol => 5,
        ErrorCode::FencedInstanceId => 6,
        ErrorCode::GroupMaxSizeReached => 7,
        ErrorCode::FencedMemberEpoch => 8,
        ErrorCode::UnreleasedInstanceId => 9,
        ErrorCode::StaleMemberEpoch => 10,
        ErrorCode::NotCoordinator => 11,
        ErrorCode::CoordinatorNotAvailable => 12,
        ErrorCode::CoordinatorLoadInProgress => 13,
        ErrorCode::Disconnected => 14,
        ErrorCode::GroupIdNotFound => 15,
    });
}

fn opt_str(d: &mut Digest, s: Option<&str>) {
    match s {
        Some(s) => {
            d.u8(1);
            d.str(s);
        }
        None => d.u8(0),
    }
}

fn strs(d: &mut Digest, v: &[String]) {
    d.u64(v.len() as u64);
    for s in v {
        d.str(s);
    }
}

fn subscription(d: &mut Digest, s: &Subscription) {
    strs(d, &s.topics);
    d.usizes(&s.owned);
    d.usizes(&s.previous_assignment);
    // The userData's generation is written only where it differs from the Subscription's
    // (tag 2), so runs where the two never part keep the records they had before it existed.
    match (s.generation, s.assigned_generation) {
        (Some(g), Some(a)) if a == g => {
            d.u8(1);
            d.i32(g);
        }
        (None, None) => d.u8(0),
        (g, a) => {
            d.u8(2);
            for x in [g, a] {
                match x {
                    Some(x) => {
                        d.u8(1);
                        d.i32(x);
                    }
                    None => d.u8(0),
                }
            }
        }
    }
    match &s.user_data {
        Some(bytes) => {
            d.u8(1);
            d.u64(bytes.len() as u64);
            for &b in bytes {
                d.u8(b);
            }
        }
        None => d.u8(0),
    }
}

fn opt_usizes(d: &mut Digest, v: Option<&[usize]>) {
    match v {
        Some(v) => {
            d.u8(1);
            d.usizes(v);
        }
        None => d.u8(0),
    }
}

fn leave_reason(d: &mut Digest, reason: LeaveReason) {
    d.u8(match reason {
        LeaveReason::Close => 0,
        LeaveReason::PollTimeout => 1,
    });
}

fn request(d: &mut Digest, r: &Request) {
    match r {
        Request::JoinGroup(JoinGroupRequest {
            version,
            member_id,
            group_instance_id,
            client_id,
            protocol_type,
            protocols,
            rebalance_timeout_ms,
            session_timeout_ms,
            reason,
        }) => {
            d.u8(1);
            d.u64(*version as u64);
            d.str(member_id);
            opt_str(d, group_instance_id.as_deref());
            d.str(client_id);
            d.str(protocol_type);
            d.u64(protocols.len() as u64);
            for JoinProtocol { name, metadata } in protocols {
                d.str(name);
                subscription(d, metadata);
            }
            d.u64(*rebalance_timeout_ms);
            d.u64(*session_timeout_ms);
            d.u8(match reason {
                JoinReason::New => 0,
                JoinReason::Rebalance => 1,
                JoinReason::FollowUp => 2,
                JoinReason::Subscription => 3,
                JoinReason::Metadata => 4,
            });
        }
        Request::SyncGroup(SyncGroupRequest {
            member_id,
            generation,
            group_instance_id,
            protocol_type,
            protocol_name,
            assignments,
        }) => {
            d.u8(2);
            d.str(member_id);
            d.i32(*generation);
            opt_str(d, group_instance_id.as_deref());
            opt_str(d, protocol_type.as_deref());
            opt_str(d, protocol_name.as_deref());
            match assignments {
                Some(a) => {
                    d.u8(1);
                    d.u64(a.len() as u64);
                    for (id, parts) in a {
                        d.str(id);
                        d.usizes(parts);
                    }
                }
                None => d.u8(0),
            }
        }
        Request::Heartbeat(HeartbeatRequest {
            member_id,
            generation,
            group_instance_id,
        }) => {
            d.u8(3);
            d.str(member_id);
            d.i32(*generation);
            opt_str(d, group_instance_id.as_deref());
        }
        Request::LeaveGroup(LeaveGroupRequest { members }) => {
            d.u8(4);
            d.u64(members.len() as u64);
            for LeavingMember {
                member_id,
                group_instance_id,
                reason,
            } in members
            {
                d.str(member_id);
                opt_str(d, group_instance_id.as_deref());
                leave_reason(d, *reason);
            }
        }
        Request::OffsetCommit(OffsetCommitRequest {
            member_id,
            generation,
            offsets,
        }) => {
            d.u8(5);
            d.str(member_id);
            d.i32(*generation);
            d.u64(offsets.len() as u64);
            for &(p, o) in offsets {
                d.u64(p as u64);
                d.u64(o);
            }
        }
        Request::OffsetFetch(OffsetFetchRequest { partitions }) => {
            d.u8(6);
            d.usizes(partitions);
        }
        Request::FindCoordinator(FindCoordinatorRequest) => d.u8(7),
        Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
            member_id,
            member_epoch,
            instance_id,
            rebalance_timeout_ms,
            subscribed_topic_names,
            server_assignor,
            owned,
        }) => {
            d.u8(8);
            d.str(member_id);
            d.i32(*member_epoch);
            opt_str(d, instance_id.as_deref());
            d.i32(*rebalance_timeout_ms);
            match subscribed_topic_names {
                Some(t) => {
                    d.u8(1);
                    strs(d, t);
                }
                None => d.u8(0),
            }
            opt_str(d, server_assignor.as_deref());
            opt_usizes(d, owned.as_deref());
        }
    }
}

fn joined_member(d: &mut Digest, m: &JoinedMember) {
    d.str(&m.member_id);
    opt_str(d, m.group_instance_id.as_deref());
    subscription(d, &m.subscription);
}

fn response(d: &mut Digest, r: &Response) {
    match r {
        Response::JoinGroup(JoinGroupResponse {
            error,
            member_id,
            generation,
            protocol_type,
            protocol_name,
            leader,
            members,
            skip_assignment,
        }) => {
            d.u8(1);
            error_code(d, *error);
            d.str(member_id);
            d.i32(*generation);
            opt_str(d, protocol_type.as_deref());
            opt_str(d, protocol_name.as_deref());
            d.str(leader);
            d.u64(members.len() as u64);
            for m in members {
                joined_member(d, m);
            }
            d.bool(*skip_assignment);
        }
        Response::SyncGroup(SyncGroupResponse {
            error,
            protocol_type,
            protocol_name,
            assignment,
        }) => {
            d.u8(2);
            error_code(d, *error);
            opt_str(d, protocol_type.as_deref());
            opt_str(d, protocol_name.as_deref());
            opt_usizes(d, assignment.as_deref());
        }
        Response::FindCoordinator(FindCoordinatorResponse { broker }) => {
            d.u8(7);
            d.u64(*broker as u64);
        }
        Response::Failed(FailedResponse { request, error }) => {
            d.u8(20);
            d.u8(*request as u8);
            error_code(d, *error);
        }
        Response::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse {
            error,
            member_id,
            member_epoch,
            heartbeat_interval_ms,
            assignment,
        }) => {
            d.u8(8);
            error_code(d, *error);
            opt_str(d, member_id.as_deref());
            d.i32(*member_epoch);
            d.i32(*heartbeat_interval_ms);
            opt_usizes(d, assignment.as_deref());
        }
        Response::LeaveGroup(LeaveGroupResponse { error, members }) => {
            d.u8(6);
            error_code(d, *error);
            d.u64(members.len() as u64);
            for LeftMember {
                member_id,
                group_instance_id,
                error,
            } in members
            {
                d.str(member_id);
                opt_str(d, group_instance_id.as_deref());
                error_code(d, *error);
            }
        }
        Response::Heartbeat(HeartbeatResponse { error }) => {
            d.u8(3);
            error_code(d, *error);
        }
        Response::OffsetCommit(OffsetCommitResponse { error }) => {
            d.u8(4);
            error_code(d, *error);
        }
        Response::OffsetFetch(OffsetFetchResponse { committed }) => {
            d.u8(5);
            d.u64(committed.len() as u64);
            for &(p, o) in committed {
                d.u64(p as u64);
                match o {
                    Some(o) => {
                        d.u8(1);
                        d.u64(o);
                    }
                    None => d.u8(0),
                }
            }
        }
    }
}
