//! A coordinator that takes the group over: its broker became the leader of the group's
//! `__consumer_offsets` partition and loads the group from the log (GMM `replay` of the
//! GROUP_METADATA record, then `onLoaded`). What the log holds survives, nothing else: a
//! classic group comes back Stable (Empty without members) at the generation of its last
//! record, with that record's leader, protocol, members and assignments, and no parked
//! JoinGroup or SyncGroup, pending member or join/sync timer; a rebalance in progress is
//! forgotten, and its members' retried JoinGroups start a new one. Every member's session is
//! counted from the load (`rescheduleClassicGroupMemberHeartbeat`). A KIP-848 group writes
//! every change before it answers, so it comes back as it was; its members' sessions restart
//! from the load (`scheduleConsumerGroupSessionTimeout`).

use super::*;
use crate::log;

impl Coordinator {
    /// The group as the log has it, loaded at `now`. `record` is the group's latest
    /// GROUP_METADATA, if any. Every timer the old coordinator had is gone (the world drops
    /// them); the ones the loaded group needs are set here.
    pub fn load(
        &mut self,
        now: SimTime,
        record: Option<&GroupRecord>,
        out: &mut Out<CoordinatorEffect>,
    ) {
        let cx = &mut Cx {
            now,
            out,
            records: 0,
        };
        // Which process each member id was (facts name scenario members); the log does not
        // say, the old coordinator's memory does.
        let clients: BTreeMap<String, ClientRef> = self
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.client))
            .chain(self.known_clients.iter().map(|(id, c)| (id.clone(), *c)))
            .collect();
        self.members = Default::default();
        self.static_members.clear();
        self.pending_join.clear();
        self.pending_sync = JavaHashSet::new(Capacity::Default);
        self.new_member_added = false;
        self.join_timer = None;
        self.sync_timer = None;
        if let Some(GroupRecord::GroupMetadata(r)) = record {
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
                GroupState::Empty
            } else {
                GroupState::Stable
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
        } else if self.consumer.is_none() {
            self.exists = false;
            self.state = GroupState::Empty;
            log!(cx, "coordinator loaded no group (none was written)");
        }
        self.previous_state = self.state;
        if let Some(host) = self.consumer.as_mut() {
            let timers = host.loaded(now);
            for (timer, at) in timers {
                cx.set_timer(CoordTimer::Consumer(timer), at);
            }
            log!(cx, "coordinator loaded the consumer group");
        }
    }
}
