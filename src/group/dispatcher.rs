//! The group coordinator's dispatcher, Kafka's `GroupMetadataManager` role: it owns the group
//! and routes each request and each timer to it by the group's type, a classic group
//! (`classic/`) or a KIP-848 consumer group (`consumer/`). Both write the same effects
//! (`effects.rs`) into one [`Out`]; an online migration replaces one group value with the
//! other (`migration.rs`). OffsetFetch needs no group and is answered here.
//!
//! A pure state machine, as Kafka's own `GroupMetadataManager` is (its handlers return a
//! `CoordinatorResult` of responses and records, and its timers are keyed by name):
//! - [`Coordinator::handle`] takes one request at `now` and [`Coordinator::on_timer`] one timer
//!   firing; both write [`CoordinatorEffect`]s into an [`Out`]. The caller (the world, a test,
//!   or `cgsim conform`'s replay of Kafka's traces) delivers the responses and fires each timer
//!   when its deadline comes; setting a key replaces its pending timer.
//! - [`Coordinator::unload`] and [`Coordinator::load`] are a coordinator fail-over: the old
//!   coordinator drops the group, the new one reads it back from `__consumer_offsets`.
//! - [`Coordinator::classic`] and [`Coordinator::consumer_group`] read the group of each type;
//!   [`is_stable`](Coordinator::is_stable), [`state_name`](Coordinator::state_name) and
//!   [`generation`](Coordinator::generation) read whichever it is.
//!
//! It imports nothing of the world, the metrics or the report.

use super::classic::{ClassicGroup, Join, Sync};
use super::consumer::{
    ConsumerGroup, ConsumerGroupConfig, ConsumerGroupState, ConsumerHost, ConsumerSetup,
    ConsumerTopic, Downgrade,
};
use super::effects::{CoordTimer, CoordinatorConfig, CoordinatorEffect, Cx, MemberIds};
use super::migration;
use crate::cluster::OffsetsStore;
use crate::facts::Fact;
use crate::messages::records::GroupRecord;
use crate::messages::{
    ClientRef, HeartbeatResponse, LeaveGroupResponse, OffsetCommitResponse, OffsetFetchResponse,
    Request,
};
use crate::sim::rng::Stream;
use crate::sim::{Out, SimTime};
use std::collections::BTreeMap;

/// The group, of whichever type it is now.
enum Group {
    Classic(ClassicGroup),
    Consumer(ConsumerHost),
}

pub struct Coordinator {
    config: CoordinatorConfig,
    group: Group,
    /// What a consumer group is made of, when one may be created or converted to.
    consumer_setup: Option<ConsumerSetup>,
    ids: MemberIds,
    /// Every member id the group has had, with its process (see [`Cx`]).
    known_clients: BTreeMap<String, ClientRef>,
    /// What the last [`Fact::GroupState`] said.
    reported_state: Option<Fact>,
}

impl Coordinator {
    /// A coordinator for a classic group (none exists until its first JoinGroup).
    pub fn new(config: CoordinatorConfig, ids: Stream) -> Self {
        Coordinator {
            config,
            group: Group::Classic(ClassicGroup::new(config)),
            consumer_setup: None,
            ids: MemberIds::new(ids),
            known_clients: BTreeMap::new(),
            reported_state: None,
        }
    }

    /// The coordinator can hold a consumer group: a consumer-protocol member's first heartbeat
    /// creates one, or converts the classic group (the group starts as whichever protocol its
    /// first member speaks).
    pub fn with_consumer_support(
        mut self,
        config: ConsumerGroupConfig,
        topics: Vec<ConsumerTopic>,
    ) -> Self {
        self.consumer_setup = Some(ConsumerSetup { config, topics });
        self
    }

    /// Makes the group a KIP-848 consumer group over `topics` (scenario order).
    pub fn with_consumer_group(
        self,
        config: ConsumerGroupConfig,
        topics: &[ConsumerTopic],
    ) -> Self {
        let mut coordinator = self.with_consumer_support(config, topics.to_vec());
        let setup = coordinator.consumer_setup.as_ref().expect("just set");
        coordinator.group = Group::Consumer(ConsumerHost::new(setup));
        coordinator
    }

    /// Member ids to hand out, in order, before the seeded ones (a replay of Kafka's trace:
    /// the ids decide `HashMap` order, hence leader hand-over and the members' order).
    pub fn give_member_ids(&mut self, ids: impl IntoIterator<Item = String>) {
        self.ids.given.extend(ids);
    }

    /// A topic grew: a consumer group notices on its next heartbeat, and one made later is
    /// made with the new count.
    pub fn set_partitions(&mut self, name: &str, partitions: u32) {
        if let Group::Consumer(host) = &mut self.group {
            host.set_partitions(name, partitions);
        }
        if let Some(setup) = self.consumer_setup.as_mut() {
            if let Some(t) = setup.topics.iter_mut().find(|t| t.name == name) {
                t.partitions = partitions;
            }
        }
    }

    // ---- Reading the group ----

    /// The classic group, if the group is one.
    pub fn classic(&self) -> Option<&ClassicGroup> {
        match &self.group {
            Group::Classic(g) => Some(g),
            Group::Consumer(_) => None,
        }
    }

    /// The KIP-848 consumer group, if the group is one.
    pub fn consumer_group(&self) -> Option<&ConsumerGroup> {
        match &self.group {
            Group::Classic(_) => None,
            Group::Consumer(host) => Some(&host.group),
        }
    }

    /// At rest: a classic group Stable; a consumer group Stable or Empty.
    pub fn is_stable(&self) -> bool {
        match &self.group {
            Group::Classic(g) => g.state() == super::classic::ClassicGroupState::Stable,
            Group::Consumer(host) => host.is_at_rest(),
        }
    }

    /// Empty: no members left (a classic group rests there; a consumer group's Empty is
    /// already [`is_stable`](Coordinator::is_stable)).
    pub fn is_empty(&self) -> bool {
        match &self.group {
            Group::Classic(g) => g.state() == super::classic::ClassicGroupState::Empty,
            Group::Consumer(host) => host.group.state() == ConsumerGroupState::Empty,
        }
    }

    /// The group's state, by Kafka's name for its type.
    pub fn state_name(&self) -> &'static str {
        match &self.group {
            Group::Classic(g) => g.state().name(),
            Group::Consumer(host) => host.group.state().name(),
        }
    }

    /// The group's state as [`Fact::GroupState`] reports it.
    fn state_fact(&self) -> Fact {
        Fact::GroupState {
            state: self.state_name(),
            generation: self.generation(),
            at_rest: self.is_stable(),
            empty: self.is_empty(),
        }
    }

    /// After each input (and once at the start): a [`Fact::GroupState`] if the group's state,
    /// generation, rest or emptiness changed since the last one.
    pub fn report_state(&mut self, out: &mut Out<CoordinatorEffect>) {
        let now = self.state_fact();
        if self.reported_state.as_ref() != Some(&now) {
            self.reported_state = Some(now.clone());
            out.push(CoordinatorEffect::Fact(now));
        }
    }

    /// The generation (a consumer group's group epoch).
    pub fn generation(&self) -> i32 {
        match &self.group {
            Group::Classic(g) => g.generation(),
            Group::Consumer(host) => host.group.group_epoch(),
        }
    }

    /// The classic group's members (none for a consumer group).
    pub fn members(&self) -> Vec<super::classic::MemberState> {
        self.classic()
            .map(ClassicGroup::members)
            .unwrap_or_default()
    }

    /// Every armed classic timer by Kafka's name, with the deadline it stands for (a session's
    /// real expiry, even while its check is armed earlier), ordered by deadline, then name.
    pub fn timers(&self) -> Vec<(String, SimTime)> {
        let mut timers = self.classic().map(ClassicGroup::timers).unwrap_or_default();
        timers.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        timers
    }

    // ---- Inputs ----

    /// A request from `from` arrives at `now`; `offsets` is `__consumer_offsets` as the cluster
    /// holds it (read for OffsetFetch; commits are written back as effects).
    pub fn handle(
        &mut self,
        now: SimTime,
        from: ClientRef,
        request: Request,
        offsets: &OffsetsStore,
        out: &mut Out<CoordinatorEffect>,
    ) {
        let Coordinator {
            config,
            group,
            consumer_setup,
            ids,
            known_clients,
            ..
        } = self;
        let config = *config;
        let cx = &mut Cx {
            now,
            out,
            records: 0,
            ids,
            known_clients,
        };
        match request {
            Request::JoinGroup(req) => {
                let join = Join { client: from, req };
                match group {
                    Group::Classic(g) => g.join_group(cx, join),
                    Group::Consumer(host) => {
                        let (response, downgrade) = host.classic_join(cx, &join);
                        convert_to_classic(group, config, cx, downgrade);
                        cx.respond(join.client, response);
                    }
                }
            }
            Request::SyncGroup(req) => {
                let sync = Sync { client: from, req };
                match group {
                    Group::Classic(g) => g.sync_group(cx, sync),
                    Group::Consumer(host) => {
                        let (response, downgrade) = host.classic_sync(cx, &sync);
                        convert_to_classic(group, config, cx, downgrade);
                        cx.respond(sync.client, response);
                    }
                }
            }
            Request::Heartbeat(req) => {
                let error = match group {
                    Group::Classic(g) => g.heartbeat(cx, &req),
                    Group::Consumer(host) => {
                        let (error, downgrade) = host.classic_heartbeat(cx, &req);
                        convert_to_classic(group, config, cx, downgrade);
                        error
                    }
                };
                cx.respond(from, HeartbeatResponse { error });
            }
            Request::LeaveGroup(req) => {
                let response = match group {
                    Group::Classic(g) => g.leave_group(cx, req),
                    Group::Consumer(_) => {
                        let mut answers = Vec::with_capacity(req.members.len());
                        for leaving in req.members {
                            // A leave that made the group classic again ends the batch there.
                            let Group::Consumer(host) = group else {
                                break;
                            };
                            let (answer, downgrade) = host.classic_leave(cx, leaving);
                            convert_to_classic(group, config, cx, downgrade);
                            answers.push(answer);
                        }
                        LeaveGroupResponse {
                            error: crate::messages::ErrorCode::None,
                            members: answers,
                        }
                    }
                };
                cx.respond(from, response);
            }
            Request::OffsetCommit(req) => {
                let error = match group {
                    Group::Classic(g) => g.offset_commit(cx, from, &req),
                    Group::Consumer(host) => host.offset_commit(cx, &config, from, &req),
                };
                cx.respond(from, OffsetCommitResponse { error });
            }
            Request::OffsetFetch(req) => {
                let committed: Vec<(usize, Option<u64>)> = req
                    .partitions
                    .iter()
                    .map(|&p| (p, offsets.committed(p)))
                    .collect();
                for &(partition, offset) in &committed {
                    cx.fact(Fact::CommittedRead { partition, offset });
                }
                cx.respond(from, OffsetFetchResponse { committed });
            }
            // Any broker answers FindCoordinator from the cluster's metadata (the world does);
            // it never reaches the group's state.
            Request::FindCoordinator(_) => {}
            Request::ConsumerGroupHeartbeat(req) => {
                if let Group::Classic(g) = group {
                    let upgraded = migration::upgrade_for_heartbeat(
                        g,
                        consumer_setup.as_ref(),
                        cx,
                        from,
                        req.member_epoch,
                    );
                    match upgraded {
                        Some(host) => *group = Group::Consumer(host),
                        None => return,
                    }
                }
                let Group::Consumer(host) = group else {
                    unreachable!("upgraded above")
                };
                let (response, downgrade) = host.heartbeat(cx, from, req);
                convert_to_classic(group, config, cx, downgrade);
                cx.respond(from, response);
            }
        }
    }

    /// The timer `timer` fires at `now` (the world has forgotten it: it is no longer armed). A
    /// timer of a group type the group no longer is finds nothing to do.
    pub fn on_timer(&mut self, now: SimTime, timer: CoordTimer, out: &mut Out<CoordinatorEffect>) {
        let Coordinator {
            config,
            group,
            ids,
            known_clients,
            ..
        } = self;
        let cx = &mut Cx {
            now,
            out,
            records: 0,
            ids,
            known_clients,
        };
        match group {
            Group::Classic(g) => g.on_timer(cx, timer),
            Group::Consumer(host) => {
                if let CoordTimer::Consumer(timer) = timer {
                    let downgrade = host.on_timer(cx, timer);
                    convert_to_classic(group, *config, cx, downgrade);
                }
            }
        }
    }

    /// The old coordinator unloads the group (its broker crashed, or the leadership of the
    /// group's `__consumer_offsets` partition moved): a classic group is Dead. Its parked
    /// requests are answered NOT_COORDINATOR and its timers dropped by the caller.
    pub fn unload(&mut self) {
        if let Group::Classic(g) = &mut self.group {
            g.unload();
        }
    }

    /// A new coordinator loads the group at `now`; `record` is the group's latest
    /// GROUP_METADATA, if any. Every timer the old coordinator had is gone (the caller drops
    /// them); the ones the loaded group needs are set here. A consumer group writes every
    /// change before it answers, so it comes back as it was.
    pub fn load(
        &mut self,
        now: SimTime,
        record: Option<&GroupRecord>,
        out: &mut Out<CoordinatorEffect>,
    ) {
        let Coordinator {
            group,
            ids,
            known_clients,
            ..
        } = self;
        let cx = &mut Cx {
            now,
            out,
            records: 0,
            ids,
            known_clients,
        };
        match group {
            Group::Classic(g) => g.load(cx, record),
            Group::Consumer(host) => host.load(cx),
        }
    }
}

/// The consumer group became a classic group again: the classic group made from it takes its
/// place.
fn convert_to_classic(
    group: &mut Group,
    config: CoordinatorConfig,
    cx: &mut Cx,
    downgrade: Option<Downgrade>,
) {
    let (Some(downgrade), Group::Consumer(host)) = (downgrade, &*group) else {
        return;
    };
    let classic = migration::to_classic(host, config, cx, downgrade);
    *group = Group::Classic(classic);
}

#[cfg(test)]
mod tests;
