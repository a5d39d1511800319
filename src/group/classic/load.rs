//! A coordinator fail-over, the classic group's part. The old coordinator unloads the group
//! (GMM `onUnloaded`: it becomes Dead; its parked JoinGroups and SyncGroups are answered
//! NOT_COORDINATOR, which the world does at the network). The new one loads it from the log
//! (GMM `replay` of the GROUP_METADATA record, then `onLoaded`): what the log holds survives,
//! nothing else. A classic group comes back Stable (Empty without members) at the generation of
//! its last record, with that record's leader, protocol, members and assignments, and no parked
//! JoinGroup or SyncGroup, pending member or join/sync timer; a rebalance in progress is
//! forgotten, and its members' retried JoinGroups start a new one. Every member's session is
//! counted from the load (`rescheduleClassicGroupMemberHeartbeat`).

use super::*;
use crate::log;

impl ClassicGroup {
    /// Unloaded by the old coordinator: Dead, with nothing armed (the world drops its timers).
    pub(in crate::group) fn unload(&mut self) {
        self.transition(ClassicGroupState::Dead);
    }

    /// The group as the log has it, loaded at `cx.now`: a new group value in place of this one.
    /// `record` is the group's latest GROUP_METADATA, if any. The timers the loaded group needs
    /// are set here.
    pub(in crate::group) fn load(&mut self, cx: &mut Cx, record: Option<&GroupRecord>) {
        // Which process each member id was (facts name scenario members); the log does not
        // say, the old coordinator's memory does.
        let clients: BTreeMap<String, ClientRef> = self
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.client))
            .chain(cx.known_clients.iter().map(|(id, c)| (id.clone(), *c)))
            .collect();
        // Created from the record, not entered: its previous state is Dead, as Kafka's
        // constructor leaves it.
        *self = ClassicGroup::new(self.config);
        self.previous_state = ClassicGroupState::Dead;
        let Some(GroupRecord::GroupMetadata(r)) = record else {
            log!(cx, "coordinator loaded no group (none was written)");
            return;
        };
        self.exists = true;
        self.generation = r.generation;
        self.protocol_type = r.protocol_type.clone();
        self.protocol_name = r.protocol.clone();
        self.leader = r.leader.clone();
        for m in &r.members {
            let Some(&client) = clients.get(&m.member_id) else {
                continue;
            };
            // Only the selected protocol's metadata is in the record.
            let protocols = match (&r.protocol, &m.subscription) {
                (Some(name), Some(metadata)) => vec![JoinProtocol {
                    name: name.clone(),
                    metadata: metadata.clone(),
                }],
                _ => Vec::new(),
            };
            if let Some(instance) = &m.group_instance_id {
                self.static_members
                    .insert(instance.clone(), m.member_id.clone());
            }
            self.members.insert(
                m.member_id.clone(),
                GroupMember {
                    client,
                    group_instance_id: m.group_instance_id.clone(),
                    protocols,
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    session_timeout_ms: m.session_timeout_ms,
                    awaiting_join: None,
                    awaiting_sync: None,
                    is_new: false,
                    assignment: m.assignment.clone(),
                    session: None,
                },
            );
        }
        self.state = if self.members.is_empty() {
            ClassicGroupState::Empty
        } else {
            ClassicGroupState::Stable
        };
        let ids: Vec<String> = self.members.iter().map(|(id, _)| id.clone()).collect();
        for id in &ids {
            self.reschedule_session_default(cx, id);
        }
        log!(
            cx,
            "coordinator loaded the group: {} at generation {} with {} member(s)",
            self.state.name(),
            self.generation,
            ids.len()
        );
    }
}
