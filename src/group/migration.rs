//! The online migration between the classic and the consumer protocol (KIP-848), as Kafka
//! 4.3's `GroupMetadataManager` does it under `group.consumer.migration.policy`: when a group
//! of one type becomes the other, as a conversion of one group value into the other.
//!
//! - **upgrade**: a ConsumerGroupHeartbeat joining (epoch 0) a classic group converts it
//!   (`getOrMaybeCreateConsumerGroup`): an empty classic group is deleted and a new consumer
//!   group takes its place; a live one only if the policy allows it (`validateOnlineUpgrade`),
//!   else the heartbeat is answered GROUP_ID_NOT_FOUND. Parked JoinGroups and SyncGroups are
//!   answered REBALANCE_IN_PROGRESS; every classic member becomes a consumer-group member
//!   Stable at the generation with its last assignment (`convertToConsumerGroup`,
//!   `ConsumerGroup.fromClassicGroup`);
//! - classic members go on through the bridge (`consumer/bridge.rs`);
//! - **downgrade**: when the last consumer-protocol member leaves or is fenced and the rest speak
//!   the classic protocol, the group becomes a classic group again, Stable at the group epoch
//!   with each member's target assignment, and a rebalance begins (`convertToClassicGroup`,
//!   `ClassicGroup.fromConsumerGroup`). When a classic static member's new process takes over
//!   the entry of the last consumer-protocol member instead, the group becomes classic the
//!   same way with the joining member in the replaced one's place, and no rebalance begins
//!   (`validateOnlineDowngradeWithReplacedMemberId`).

use super::classic::ClassicGroup;
use super::consumer::{ConsumerHost, ConsumerSetup, Downgrade};
use super::effects::{CoordTimer, CoordinatorConfig, Cx};
use crate::facts::Fact;
use crate::log;
use crate::messages::{ClientRef, ConsumerGroupHeartbeatResponse, ErrorCode};

/// A ConsumerGroupHeartbeat reached a classic group: the consumer group that takes its place,
/// or `None` when the heartbeat has been answered (GROUP_ID_NOT_FOUND) and the classic group
/// stays.
pub(super) fn upgrade_for_heartbeat(
    classic: &mut ClassicGroup,
    setup: Option<&ConsumerSetup>,
    cx: &mut Cx,
    from: ClientRef,
    member_epoch: i32,
) -> Option<ConsumerHost> {
    let setup = setup?;
    let empty = classic.has_no_members();
    let refusal = if empty && member_epoch == 0 {
        // `maybeDeleteEmptyClassicGroup`: an empty classic group is deleted and a new
        // consumer group takes its place, whatever the policy.
        None
    } else if member_epoch != 0 {
        Some("is not a consumer group")
    } else if !setup.config.migration_policy.upgrade_enabled() {
        Some("cannot be upgraded to a consumer group because online upgrade is disabled")
    } else {
        None
    };
    if let Some(why) = refusal {
        log!(
            cx,
            "coordinator ConsumerGroupHeartbeat: GROUP_ID_NOT_FOUND (the classic group {why})"
        );
        cx.respond(
            from,
            ConsumerGroupHeartbeatResponse {
                error: ErrorCode::GroupIdNotFound,
                member_id: None,
                member_epoch: 0,
                heartbeat_interval_ms: 0,
                assignment: None,
            },
        );
        return None;
    }
    if empty {
        let host = ConsumerHost::new(setup);
        classic.delete(cx);
        return Some(host);
    }
    Some(to_consumer(classic, setup, cx, from))
}

/// `convertToConsumerGroup`: the live classic group as a consumer group; `by` is the process
/// whose heartbeat converted it.
fn to_consumer(
    classic: &mut ClassicGroup,
    setup: &ConsumerSetup,
    cx: &mut Cx,
    by: ClientRef,
) -> ConsumerHost {
    let generation = classic.generation();
    let handed_over = classic.hand_over(cx);
    let host = ConsumerHost::from_classic_group(setup, generation, handed_over);
    let (members, assignments) = host.converted_members();
    log!(
        cx,
        "coordinator converts the classic group (generation {generation}, {}) to a consumer group",
        classic.state().name()
    );
    cx.fact(Fact::GroupConverted {
        to_consumer: true,
        by: Some(by.member),
        replaced: false,
        epoch: generation,
        members,
        assignments,
    });
    classic.delete(cx);
    // `scheduleConsumerGroupSessionTimeout` for every member it brought over.
    for (timer, at) in host.group.session_timers_from(cx.now) {
        cx.set_timer(CoordTimer::Consumer(timer), at);
    }
    host
}

/// `convertToClassicGroup` after the last consumer-protocol member left or was replaced.
pub(super) fn to_classic(
    host: &ConsumerHost,
    config: CoordinatorConfig,
    cx: &mut Cx,
    downgrade: Downgrade,
) -> ClassicGroup {
    let epoch = host.group.group_epoch();
    ClassicGroup::from_consumer_group(
        config,
        cx,
        epoch,
        host.classic_members(),
        downgrade.by,
        downgrade.how,
    )
}
