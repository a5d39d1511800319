//! JoinGroup: a member's subscription for each assignor it supports, and the generation, leader
//! and (to the leader) member list the coordinator answers with.

use super::{ErrorCode, JoinReason};

/// What a member's JoinGroup carries for one protocol (ConsumerProtocol Subscription).
/// The coordinator compares it as Kafka compares the metadata bytes: two are the same
/// metadata exactly when they are equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    pub topics: Vec<String>,
    /// `ownedPartitions`: what the member still owns after `onJoinPrepare` (empty under EAGER).
    pub owned: Vec<usize>,
    /// StickyAssignor's userData: the assignment of the member's last `onAssignment` (EAGER
    /// members; kept through the revocation before each join, which is how sticky stays
    /// sticky, and through a reset or lost partitions, until the next assignment).
    pub previous_assignment: Vec<usize>,
    /// `generationId` (ConsumerProtocolSubscription v2+): the generation the member joins
    /// from, `None` after a reset (Kafka's -1).
    pub generation: Option<i32>,
    /// The generation of the member's last `onAssignment`, which the sticky assignors keep in
    /// their userData (`None`: none yet). It differs from `generation` after a reset, or after
    /// a JoinGroup answer whose SyncGroup failed.
    pub assigned_generation: Option<i32>,
    /// userData sent as opaque bytes (a conformance script's `user_data_b64`); `None` is
    /// Kafka's null userData. The simulated clients keep theirs in `previous_assignment`.
    pub user_data: Option<Vec<u8>>,
    /// `rackId` (ConsumerProtocolSubscription v3, KIP-881): the member's `client.rack`.
    pub rack_id: Option<String>,
}

/// One entry of a JoinGroup's protocol list: an assignor name and its metadata
/// (`JoinGroupRequestProtocol`), in the member's preference order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinProtocol {
    pub name: String,
    pub metadata: Subscription,
}

/// The JoinGroup version the simulated clients send (Kafka 4.x's latest).
pub const JOIN_GROUP_VERSION: i16 = 9;

/// `protocol_type` of a consumer's JoinGroup and SyncGroup.
pub const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

/// A JoinGroup request.
#[derive(Clone, Debug)]
pub struct JoinGroupRequest {
    /// The request's API version: below 4 there is no MEMBER_ID_REQUIRED round trip, below
    /// 9 no `skip_assignment` (KIP-394, KIP-814).
    pub version: i16,
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub protocol_type: String,
    /// The assignors in preference order, each with its metadata.
    pub protocols: Vec<JoinProtocol>,
    pub rebalance_timeout_ms: u64,
    pub session_timeout_ms: u64,
    pub reason: JoinReason,
}

/// A member as the JoinGroup response lists it to the leader.
#[derive(Clone, Debug)]
pub struct JoinedMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub subscription: Subscription,
}

/// A JoinGroup response.
#[derive(Clone, Debug)]
pub struct JoinGroupResponse {
    pub error: ErrorCode,
    pub member_id: String,
    pub generation: i32,
    /// `None` is Kafka's null (an error answer).
    pub protocol_type: Option<String>,
    /// The selected protocol; `None` is null, and an error answer usually carries `""`.
    pub protocol_name: Option<String>,
    pub leader: String,
    /// Only the leader gets the members, in the broker's member-map order.
    pub members: Vec<JoinedMember>,
    /// Static replacement in a Stable group: the leader must not reassign (KIP-345).
    pub skip_assignment: bool,
}

impl JoinGroupResponse {
    /// An error answer as Kafka builds one: the error and the member id, every other field at
    /// its default (generation -1, protocol type null, protocol name and leader "").
    pub fn error(error: ErrorCode, member_id: &str) -> JoinGroupResponse {
        JoinGroupResponse {
            error,
            member_id: member_id.to_string(),
            generation: -1,
            protocol_type: None,
            protocol_name: Some(String::new()),
            leader: String::new(),
            members: Vec::new(),
            skip_assignment: false,
        }
    }
}
