//! Replays one script through the simulator's coordinator, request by request on its own clock,
//! and writes the trace in the format of Kafka's (`traces.jsonl`): responses, the requests each
//! event completed, the records written, the group state and the timers after every event.
//!
//! The harness plays the clients' part as the reference harness does: per alias it remembers
//! the member id, generation, protocol, last JoinGroup answer and last assignment a Java
//! consumer would, and the leader's `assignments: "auto"` runs the project's own assignor.

use super::script::{
    Assignments, ClientDefaults, Generation, JoinStep, LeaveStep, Owned, ProtocolSpec, Script,
    Step, SyncStep, TopicPartitions,
};
use crate::assignor::{by_name, GroupSpec, RebalanceProtocol, Topic, TopicPartition};
use crate::client::leader;
use crate::cluster::OffsetsStore;
use crate::group::classic::ClassicGroup;
use crate::group::effects::{CoordTimer, CoordinatorConfig, CoordinatorEffect};
use crate::group::Coordinator;
use crate::java::string_compare;
use crate::messages::{
    ClientRef, ErrorCode, HeartbeatRequest, JoinGroupRequest, JoinProtocol, JoinReason,
    JoinedMember, LeaveGroupRequest, LeaveReason, LeavingMember, Request, Response, Subscription,
    SyncGroupRequest,
};
use crate::sim::rng::Stream;
use crate::sim::{Out, SimTime};
use base64::Engine;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Global partition indexes of the replay: topic index times this, plus the partition.
const TOPIC_STRIDE: usize = 1 << 24;

/// Kafka's defaults for what a JoinGroup step leaves out.
const DEFAULT_SESSION_TIMEOUT_MS: u64 = 45_000;
const DEFAULT_REBALANCE_TIMEOUT_MS: u64 = 300_000;
const DEFAULT_INITIAL_DELAY_MS: u64 = 3_000;

/// What the replay produced for one script: Kafka's trace format.
pub struct Replayed {
    pub trace: Value,
}

/// What a client process (an alias) remembers, as a Java consumer would.
#[derive(Clone, Default)]
struct Alias {
    /// Position among the script's aliases (its client id is `consumer-<group>-<n>`).
    number: usize,
    member_id: String,
    generation: i32,
    protocol: Option<String>,
    /// The last successful JoinGroup answer.
    last_join: Option<JoinAnswer>,
    /// The last classic assignment received.
    assignment: Option<Vec<usize>>,
}

#[derive(Clone)]
struct JoinAnswer {
    member_id: String,
    generation: i32,
    leader: String,
    skip_assignment: bool,
    members: Vec<JoinedMember>,
}

/// A request sent and not yet answered.
struct Outstanding {
    seq: u64,
    alias: String,
    op: &'static str,
    no_update: bool,
    /// The member id and generation the request went out with (Kafka's `sentGeneration`):
    /// a SyncGroup's or Heartbeat's own fields, else the alias's when it was sent.
    sent: (String, i32),
}

pub struct Replay<'s> {
    script: &'s Script,
    coordinator: Coordinator,
    offsets: OffsetsStore,
    now: u64,
    seq: u64,
    aliases: BTreeMap<String, Alias>,
    /// Topic names by replay topic index, with their current partition counts.
    topics: Vec<(String, u32)>,
    /// Member id -> label, and the labels in the order they were given.
    labels: BTreeMap<String, String>,
    label_order: Vec<(String, String)>,
    /// Kafka's labels for ids (from its trace), used first.
    known_labels: BTreeMap<String, String>,
    /// Timer name -> (deadline, order it was set in), to fire ties in setting order.
    timer_order: BTreeMap<String, (SimTime, u64)>,
    timers_set: u64,
    outstanding: BTreeMap<u64, Outstanding>,
    events: Vec<Value>,
}

impl<'s> Replay<'s> {
    /// A replay of `script`; `member_ids` (label -> id, in issue order) makes the coordinator
    /// hand out Kafka's own ids.
    pub fn new(script: &'s Script, member_ids: Option<&[(String, String)]>) -> Self {
        let config_u64 = |key: &str| script.broker_config.get(key).and_then(Value::as_u64);
        let config = CoordinatorConfig {
            mutant: None,
            initial_rebalance_delay_ms: config_u64("group.initial.rebalance.delay.ms")
                .unwrap_or(DEFAULT_INITIAL_DELAY_MS),
            max_size: config_u64("group.classic.max.size")
                .map_or(i32::MAX as usize, |n| n as usize),
        };
        let mut coordinator = Coordinator::new(config, Stream::derive(script.seed, "member-ids"));
        let mut known_labels = BTreeMap::new();
        if let Some(ids) = member_ids {
            coordinator.give_member_ids(ids.iter().map(|(_, id)| id.clone()));
            for (label, id) in ids {
                known_labels.insert(id.clone(), label.clone());
            }
        }
        let mut aliases = BTreeMap::new();
        let mut names: Vec<&String> = script.clients.keys().collect();
        for step in &script.steps {
            for alias in step_aliases(step) {
                if !names.contains(&alias) {
                    names.push(alias);
                }
            }
        }
        for name in names {
            let number = aliases.len() + 1;
            aliases.insert(
                name.clone(),
                Alias {
                    number,
                    generation: -1,
                    ..Alias::default()
                },
            );
        }
        Replay {
            script,
            coordinator,
            offsets: OffsetsStore::new(0),
            now: 0,
            seq: 0,
            aliases,
            topics: script
                .topics
                .iter()
                .map(|t| (t.name.clone(), t.partitions))
                .collect(),
            labels: BTreeMap::new(),
            label_order: Vec::new(),
            known_labels,
            timer_order: BTreeMap::new(),
            timers_set: 0,
            outstanding: BTreeMap::new(),
            events: Vec::new(),
        }
    }

    /// Runs every step; the script must be classic (no `consumer_heartbeat`).
    pub fn run(mut self) -> Result<Replayed, String> {
        for (i, step) in self.script.steps.iter().enumerate() {
            let at = step.at().unwrap_or(self.now);
            self.fire_timers_until(at);
            self.now = at;
            match step {
                Step::Advance(_) => {}
                Step::Join(join) => self.join(join).map_err(|e| format!("step {i}: {e}"))?,
                Step::Sync(sync) => self.sync(sync).map_err(|e| format!("step {i}: {e}"))?,
                Step::Heartbeat(hb) => {
                    let alias = self
                        .alias(&hb.member)
                        .map_err(|e| format!("step {i}: {e}"))?;
                    let member_id = self.member_id(&alias, hb.member_id.as_deref())?;
                    let generation = generation_of(hb.generation, alias.generation);
                    let instance = hb
                        .group_instance_id
                        .clone()
                        .or_else(|| self.defaults(&hb.member).group_instance_id.clone());
                    let echo = json!({
                        "version": 4,
                        "member_id": self.label(&member_id),
                        "generation_id": generation,
                        "group_instance_id": instance,
                    });
                    let request = Request::Heartbeat(HeartbeatRequest {
                        member_id,
                        generation,
                        group_instance_id: instance,
                    });
                    self.send(&hb.member, "heartbeat", hb.no_update, request, echo, None);
                }
                Step::Leave(leave) => self.leave(leave).map_err(|e| format!("step {i}: {e}"))?,
                Step::SetPartitions(sp) => {
                    match self.topics.iter_mut().find(|(name, _)| *name == sp.topic) {
                        Some(topic) => topic.1 = sp.partitions,
                        None => self.topics.push((sp.topic.clone(), sp.partitions)),
                    }
                    // A classic group does not act on a metadata image (only its members'
                    // leader does, at its next assignment).
                    let event = json!({
                        "seq": self.next_seq(),
                        "t": self.now,
                        "kind": "metadata",
                        "op": "set_partitions",
                        "topic": sp.topic,
                        "partitions": sp.partitions,
                    });
                    self.finish_event(event, Vec::new(), None, None);
                }
                Step::ConsumerHeartbeat(_) => {
                    return Err(format!(
                        "step {i}: consumer_heartbeat (the KIP-848 protocol) is not supported yet"
                    ))
                }
            }
        }
        let pending: Vec<Value> = self
            .outstanding
            .values()
            .map(|o| json!({"seq": o.seq, "member": o.alias, "op": o.op}))
            .collect();
        let member_ids: Map<String, Value> = self
            .label_order
            .iter()
            .map(|(label, id)| (label.clone(), Value::String(id.clone())))
            .collect();
        let trace = json!({
            "id": self.script.id,
            "model": "cgsim",
            "member_ids": member_ids,
            "events": self.events,
            "pending_at_end": pending,
            "end_t": self.now,
        });
        Ok(Replayed { trace })
    }

    // ---- Steps ----

    fn join(&mut self, step: &JoinStep) -> Result<(), String> {
        if step.restart {
            // A new process: no member id, no generation, owns nothing.
            let a = self.alias_mut(&step.member)?;
            a.member_id.clear();
            a.generation = -1;
            a.protocol = None;
            a.last_join = None;
            a.assignment = None;
        }
        let alias = self.alias(&step.member)?;
        let defaults = self.defaults(&step.member);
        let member_id = self.member_id(&alias, step.member_id.as_deref())?;
        let group_instance_id = step
            .group_instance_id
            .clone()
            .or_else(|| defaults.group_instance_id.clone());
        let session_timeout_ms = step
            .session_timeout_ms
            .or(defaults.session_timeout_ms)
            .unwrap_or(DEFAULT_SESSION_TIMEOUT_MS);
        let rebalance_timeout_ms = step
            .rebalance_timeout_ms
            .or(defaults.rebalance_timeout_ms)
            .unwrap_or(DEFAULT_REBALANCE_TIMEOUT_MS);
        let protocol_type = step
            .protocol_type
            .clone()
            .or_else(|| defaults.protocol_type.clone())
            .unwrap_or_else(|| "consumer".into());
        let version = step.version.or(defaults.version).unwrap_or(9);
        let specs = step
            .protocols
            .clone()
            .or_else(|| defaults.protocols.clone())
            .ok_or_else(|| format!("join of {}: no protocols (step or clients)", step.member))?;
        let mut protocols = Vec::with_capacity(specs.len());
        let mut echo_protocols = Vec::with_capacity(specs.len());
        for spec in &specs {
            let metadata = self.subscription(&alias, spec)?;
            echo_protocols.push(json!({
                "name": spec.name,
                "topics": metadata.topics,
                "owned": self.decode(&metadata.owned),
                "generation": metadata.generation.unwrap_or(-1),
            }));
            protocols.push(JoinProtocol {
                name: spec.name.clone(),
                metadata,
            });
        }
        let client_id = format!("consumer-{}-{}", self.script.group_id, alias.number);
        let echo = json!({
            "version": version,
            "client_id": client_id,
            "member_id": self.label(&member_id),
            "group_instance_id": group_instance_id,
            "session_timeout_ms": session_timeout_ms,
            "rebalance_timeout_ms": rebalance_timeout_ms,
            "protocol_type": protocol_type,
            "protocols": echo_protocols,
        });
        let request = Request::JoinGroup(JoinGroupRequest {
            version,
            member_id,
            group_instance_id,
            client_id,
            protocol_type,
            protocols,
            rebalance_timeout_ms,
            session_timeout_ms,
            reason: JoinReason::Rebalance,
        });
        let restarted = step.restart.then_some(true);
        self.send(
            &step.member,
            "join",
            step.no_update,
            request,
            echo,
            restarted,
        );
        Ok(())
    }

    fn sync(&mut self, step: &SyncStep) -> Result<(), String> {
        let alias = self.alias(&step.member)?;
        let defaults = self.defaults(&step.member);
        let member_id = self.member_id(&alias, step.member_id.as_deref())?;
        let generation = generation_of(step.generation, alias.generation);
        let group_instance_id = step
            .group_instance_id
            .clone()
            .or_else(|| defaults.group_instance_id.clone());
        let protocol_name = step
            .protocol_name
            .clone()
            .or_else(|| alias.protocol.clone());
        let protocol_type = Some(
            step.protocol_type
                .clone()
                .unwrap_or_else(|| "consumer".into()),
        );
        let assignments: Vec<(String, Vec<usize>)> = match &step.assignments {
            None | Some(Assignments::Auto(_)) => {
                self.leader_assignment(&alias, &member_id, generation, protocol_name.as_deref())?
            }
            Some(Assignments::Map(map)) => {
                let mut list = Vec::with_capacity(map.len());
                for (label, parts) in map {
                    let id = self.id_of_label(label);
                    list.push((id, self.encode(parts)));
                }
                list
            }
        };
        let echo_assignments: Map<String, Value> = assignments
            .iter()
            .map(|(id, parts)| (self.label(id), self.decode(parts)))
            .collect();
        let echo = json!({
            "version": 5,
            "member_id": self.label(&member_id),
            "generation_id": generation,
            "group_instance_id": group_instance_id,
            "protocol_type": protocol_type,
            "protocol_name": protocol_name,
            "assignments": echo_assignments,
        });
        let request = Request::SyncGroup(SyncGroupRequest {
            member_id,
            generation,
            group_instance_id,
            protocol_type,
            protocol_name,
            assignments: Some(assignments),
        });
        self.send(&step.member, "sync", step.no_update, request, echo, None);
        Ok(())
    }

    fn leave(&mut self, step: &LeaveStep) -> Result<(), String> {
        let mut members = Vec::with_capacity(step.members.len());
        let mut echo = Vec::with_capacity(step.members.len());
        for m in &step.members {
            let alias = self.alias(&m.member)?;
            let member_id = self.member_id(&alias, m.member_id.as_deref())?;
            let instance = match &m.group_instance_id {
                Some(explicit) => explicit.clone(),
                None => self.defaults(&m.member).group_instance_id.clone(),
            };
            echo.push(json!({
                "member": m.member,
                "member_id": self.label(&member_id),
                "group_instance_id": instance,
            }));
            members.push(LeavingMember {
                member_id,
                group_instance_id: instance,
                reason: LeaveReason::Close,
            });
        }
        let first = step
            .members
            .first()
            .map(|m| m.member.clone())
            .ok_or("leave: no members")?;
        let request = Request::LeaveGroup(LeaveGroupRequest { members });
        let echo = json!({"version": 5, "members": echo});
        self.send(&first, "leave", false, request, echo, None);
        Ok(())
    }

    /// What a Java consumer's leader does with `auto`: the assignment, if its last JoinGroup
    /// answer (for this id and generation) made it leader without `skip_assignment`.
    fn leader_assignment(
        &self,
        alias: &Alias,
        member_id: &str,
        generation: i32,
        protocol: Option<&str>,
    ) -> Result<Vec<(String, Vec<usize>)>, String> {
        let Some(answer) = &alias.last_join else {
            return Ok(Vec::new());
        };
        if answer.member_id != member_id
            || answer.generation != generation
            || answer.leader != member_id
            || answer.skip_assignment
        {
            return Ok(Vec::new());
        }
        let protocol = protocol.unwrap_or("");
        let assignor = by_name(protocol).map_err(|e| e.0)?;
        // Topics that exist, sorted by name as the assignors see them.
        let mut order: Vec<usize> = (0..self.topics.len())
            .filter(|&t| self.topics[t].1 > 0)
            .collect();
        order.sort_by(|&a, &b| string_compare(&self.topics[a].0, &self.topics[b].0));
        let topics: Vec<Topic> = order
            .iter()
            .map(|&t| Topic {
                name: self.topics[t].0.clone(),
                partitions: self.topics[t].1 as i32,
                id: None,
            })
            .collect();
        // The subscriptions are read as sent, as the simulation's leader reads them
        // (client/leader.rs).
        let mut group = GroupSpec {
            topics,
            members: Vec::with_capacity(answer.members.len()),
            protocol: RebalanceProtocol::Cooperative,
            racks: Default::default(),
        };
        for m in &answer.members {
            // Owned partitions of topics the metadata does not have are left out.
            let history = m.subscription.owned.iter().filter_map(|&p| {
                let topic = group.topic_index(&self.topics[p / TOPIC_STRIDE].0)?;
                Some(TopicPartition::new(topic, (p % TOPIC_STRIDE) as i32))
            });
            let generation = m.subscription.generation;
            let member = leader::assignor_member(m, &group, history, generation);
            group.members.push(member);
        }
        let result = assignor.assign(&group).map_err(|e| e.0)?;
        Ok(group
            .members
            .iter()
            .zip(result.assignment)
            .map(|(m, parts)| {
                let encoded = parts
                    .iter()
                    .map(|tp| order[tp.topic as usize] * TOPIC_STRIDE + tp.partition as usize)
                    .collect();
                (m.member_id.clone(), encoded)
            })
            .collect())
    }

    // ---- Sending and recording ----

    fn send(
        &mut self,
        alias: &str,
        op: &'static str,
        no_update: bool,
        request: Request,
        echo: Value,
        restarted: Option<bool>,
    ) {
        let seq = self.next_seq();
        let number = self.aliases.get(alias).map_or(0, |a| a.number);
        let sent = match &request {
            Request::SyncGroup(r) => (r.member_id.clone(), r.generation),
            Request::Heartbeat(r) => (r.member_id.clone(), r.generation),
            _ => self
                .aliases
                .get(alias)
                .map_or((String::new(), -1), |a| (a.member_id.clone(), a.generation)),
        };
        let from = ClientRef {
            member: number,
            incarnation: seq as u32,
        };
        self.outstanding.insert(
            seq,
            Outstanding {
                seq,
                alias: alias.to_string(),
                op,
                no_update,
                sent,
            },
        );
        let mut out = Out::new(false);
        self.coordinator.handle(
            SimTime::from_millis(self.now),
            from,
            request,
            &self.offsets,
            &mut out,
        );
        let mut event = Map::new();
        event.insert("seq".into(), json!(seq));
        event.insert("t".into(), json!(self.now));
        event.insert("kind".into(), json!("request"));
        event.insert("op".into(), json!(op));
        event.insert("member".into(), json!(alias));
        event.insert("request".into(), echo);
        if let Some(r) = restarted {
            event.insert("client_restarted".into(), json!(r));
        }
        let effects = take_effects(out);
        self.finish_event(Value::Object(event), effects, Some(seq), Some(alias));
    }

    /// Applies an event's effects: answers go to their requests (this one's, or `completed`
    /// for earlier ones), records are listed, and the group and timers after it are added.
    fn finish_event(
        &mut self,
        event: Value,
        effects: Vec<CoordinatorEffect>,
        this_seq: Option<u64>,
        alias: Option<&str>,
    ) {
        let mut answers: Vec<(u64, Response)> = Vec::new();
        let mut records: Vec<Value> = Vec::new();
        for effect in effects {
            match effect {
                CoordinatorEffect::Respond { to, response } => {
                    answers.push((to.incarnation as u64, *response))
                }
                CoordinatorEffect::Record(record) => records.push(json!(record.name())),
                CoordinatorEffect::CommitOffset { partition, offset } => {
                    self.offsets.commit(partition, offset)
                }
                // The harness fires timers from the coordinator's own view of them.
                CoordinatorEffect::SetTimer { .. }
                | CoordinatorEffect::CancelTimer(_)
                | CoordinatorEffect::Fact(_) => {}
            }
        }
        // New ids belong to the alias whose request this is.
        if let Some(alias) = alias {
            for (_, response) in &answers {
                for id in response_ids(response) {
                    self.give_label(id, alias);
                }
            }
            let group = self.classic_group();
            let ids: Vec<String> = group
                .members()
                .into_iter()
                .map(|m| m.member_id)
                .chain(group.pending_members())
                .collect();
            for id in &ids {
                self.give_label(id, alias);
            }
        }
        let Value::Object(mut event) = event else {
            unreachable!("events are objects")
        };
        let mut own: Option<Value> = None;
        let mut completed: Vec<(u64, Value)> = Vec::new();
        for (seq, response) in answers {
            let Some(outstanding) = self.outstanding.remove(&seq) else {
                continue;
            };
            let rendered = self.render_response(&response);
            if !outstanding.no_update {
                self.remember(&outstanding.alias, &response, &outstanding.sent);
            }
            if Some(seq) == this_seq {
                own = Some(rendered);
            } else {
                completed.push((
                    seq,
                    json!({
                        "seq": seq,
                        "member": outstanding.alias,
                        "op": outstanding.op,
                        "response": rendered,
                    }),
                ));
            }
        }
        if this_seq.is_some() {
            match own {
                Some(response) => event.insert("response".into(), response),
                None => event.insert("pending".into(), json!(true)),
            };
        }
        if !completed.is_empty() {
            completed.sort_by_key(|(seq, _)| *seq);
            event.insert(
                "completed".into(),
                Value::Array(completed.into_iter().map(|(_, v)| v).collect()),
            );
        }
        event.insert("records".into(), Value::Array(records));
        event.insert("group".into(), self.render_group());
        event.insert("timers".into(), self.render_timers());
        self.events.push(Value::Object(event));
    }

    /// Fires, in deadline order (ties in the order they were set), every timer due at or
    /// before `until`, each at its own deadline.
    fn fire_timers_until(&mut self, until: u64) {
        loop {
            self.note_timers();
            let due = self
                .timer_order
                .iter()
                .filter(|(_, (at, _))| at.as_millis() <= until)
                .min_by_key(|(_, (at, order))| (*at, *order))
                .map(|(name, (at, _))| (name.clone(), *at));
            let Some((name, at)) = due else {
                return;
            };
            self.timer_order.remove(&name);
            let Some(timer) = CoordTimer::from_name(&name) else {
                return;
            };
            self.now = at.as_millis();
            let mut out = Out::new(false);
            self.coordinator.on_timer(at, timer, &mut out);
            let effects = take_effects(out);
            let event = json!({
                "seq": self.next_seq(),
                "t": self.now,
                "kind": "timer",
                "timer": self.timer_label(&name),
            });
            self.finish_event(event, effects, None, None);
        }
    }

    /// Records when each armed timer was (re)set, from the coordinator's own list.
    fn note_timers(&mut self) {
        let armed = self.coordinator.timers();
        self.timer_order
            .retain(|name, _| armed.iter().any(|(n, _)| n == name));
        for (name, at) in armed {
            let changed = self
                .timer_order
                .get(&name)
                .is_none_or(|(old, _)| *old != at);
            if changed {
                self.timers_set += 1;
                self.timer_order.insert(name, (at, self.timers_set));
            }
        }
    }

    /// A Java consumer's memory of its answers. An error that resets it does so only if the
    /// request went out with the member id and generation the consumer still holds
    /// (`AbstractCoordinator`'s response handlers: `if (generationUnchanged())`); an answer to
    /// a request of an older generation is ignored.
    fn remember(&mut self, alias: &str, response: &Response, sent: &(String, i32)) {
        let Some(a) = self.aliases.get_mut(alias) else {
            return;
        };
        let unchanged = a.member_id == sent.0 && a.generation == sent.1;
        let forget = |a: &mut Alias, error: ErrorCode| {
            if unchanged {
                forget(a, error);
            }
        };
        match response {
            Response::JoinGroup(r) => match r.error {
                ErrorCode::None => {
                    a.member_id = r.member_id.clone();
                    a.generation = r.generation;
                    a.protocol = r.protocol_name.clone();
                    a.last_join = Some(JoinAnswer {
                        member_id: r.member_id.clone(),
                        generation: r.generation,
                        leader: r.leader.clone(),
                        skip_assignment: r.skip_assignment,
                        members: r.members.clone(),
                    });
                }
                ErrorCode::MemberIdRequired => a.member_id = r.member_id.clone(),
                other => forget(a, other),
            },
            Response::SyncGroup(r) => match r.error {
                ErrorCode::None => a.assignment = Some(r.assignment.clone().unwrap_or_default()),
                other => forget(a, other),
            },
            Response::Heartbeat(r) => forget(a, r.error),
            Response::LeaveGroup(_)
            | Response::OffsetCommit(_)
            | Response::OffsetFetch(_)
            | Response::FindCoordinator(_)
            | Response::Failed(_)
            | Response::ConsumerGroupHeartbeat(_) => {}
        }
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    // ---- Aliases, ids, labels ----

    /// A copy of an alias's memory, so a step can read it while the replay changes.
    fn alias(&self, name: &str) -> Result<Alias, String> {
        self.aliases
            .get(name)
            .cloned()
            .ok_or_else(|| format!("unknown member alias {name:?}"))
    }

    fn alias_mut(&mut self, name: &str) -> Result<&mut Alias, String> {
        self.aliases
            .get_mut(name)
            .ok_or_else(|| format!("unknown member alias {name:?}"))
    }

    fn defaults(&self, alias: &str) -> &ClientDefaults {
        static NONE: ClientDefaults = ClientDefaults {
            protocols: None,
            session_timeout_ms: None,
            rebalance_timeout_ms: None,
            group_instance_id: None,
            protocol_type: None,
            version: None,
        };
        self.script.clients.get(alias).unwrap_or(&NONE)
    }

    /// The member id a step sends: `current` (default), `none`, `id:<label>`, or a literal.
    fn member_id(&self, alias: &Alias, spec: Option<&str>) -> Result<String, String> {
        Ok(match spec.unwrap_or("current") {
            "current" => alias.member_id.clone(),
            "none" => String::new(),
            s => match s.strip_prefix("id:") {
                Some(label) => self
                    .label_order
                    .iter()
                    .find(|(l, _)| l == label)
                    .map(|(_, id)| id.clone())
                    .ok_or_else(|| format!("member_id {s:?}: no id has label {label:?} yet"))?,
                None => s.to_string(),
            },
        })
    }

    fn id_of_label(&self, label: &str) -> String {
        self.label_order
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, id)| id.clone())
            .unwrap_or_else(|| label.strip_prefix('?').unwrap_or(label).to_string())
    }

    fn give_label(&mut self, id: &str, alias: &str) {
        if id.is_empty() || self.labels.contains_key(id) {
            return;
        }
        let label = match self.known_labels.get(id) {
            Some(label) => label.clone(),
            None => {
                let taken = self
                    .label_order
                    .iter()
                    .filter(|(l, _)| l == alias || l.starts_with(&format!("{alias}~")))
                    .count();
                if taken == 0 {
                    alias.to_string()
                } else {
                    format!("{alias}~{}", taken + 1)
                }
            }
        };
        self.labels.insert(id.to_string(), label.clone());
        self.label_order.push((label, id.to_string()));
    }

    /// An id as the traces write it: its label, `""`, or `?<id>` for one never issued.
    fn label(&self, id: &str) -> String {
        if id.is_empty() {
            return String::new();
        }
        self.labels
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("?{id}"))
    }

    fn timer_label(&self, name: &str) -> String {
        match name.strip_prefix("heartbeat:") {
            Some(id) => format!("heartbeat:{}", self.label(id)),
            None => name.to_string(),
        }
    }

    // ---- Partitions ----

    fn topic_index(&mut self, name: &str) -> usize {
        match self.topics.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.topics.push((name.to_string(), 0));
                self.topics.len() - 1
            }
        }
    }

    fn encode(&mut self, parts: &TopicPartitions) -> Vec<usize> {
        let mut encoded = Vec::new();
        for (topic, ps) in parts {
            let t = self.topic_index(topic);
            encoded.extend(ps.iter().map(|&p| t * TOPIC_STRIDE + p as usize));
        }
        encoded
    }

    /// `{topic: [p]}` with partitions in order.
    fn decode(&self, parts: &[usize]) -> Value {
        let mut map: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &p in parts {
            map.entry(self.topics[p / TOPIC_STRIDE].0.as_str())
                .or_default()
                .push(p % TOPIC_STRIDE);
        }
        for ps in map.values_mut() {
            ps.sort_unstable();
        }
        json!(map)
    }

    fn subscription(&mut self, alias: &Alias, spec: &ProtocolSpec) -> Result<Subscription, String> {
        let owned = match &spec.owned {
            None => Vec::new(),
            Some(Owned::Current(_)) => alias.assignment.clone().unwrap_or_default(),
            Some(Owned::Map(map)) => self.encode(map),
        };
        let generation = generation_of(spec.generation, alias.generation);
        let user_data = match &spec.user_data_b64 {
            None => None,
            Some(b64) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| format!("user_data_b64 of {}: {e}", spec.name))?,
            ),
        };
        Ok(Subscription {
            topics: spec.topics.clone(),
            owned,
            previous_assignment: Vec::new(),
            generation: (generation >= 0).then_some(generation),
            // The script's userData bytes stand for the assignor's own; the coordinator reads
            // neither.
            assigned_generation: None,
            user_data,
            rack_id: None,
        })
    }

    // ---- Rendering ----

    fn render_response(&self, response: &Response) -> Value {
        match response {
            Response::JoinGroup(r) => json!({
                "error": r.error.name(),
                "member_id": self.label(&r.member_id),
                "generation_id": r.generation,
                "protocol_type": r.protocol_type,
                "protocol_name": r.protocol_name,
                "leader": self.label(&r.leader),
                "skip_assignment": r.skip_assignment,
                "members": r.members.iter().map(|m| json!({
                    "member_id": self.label(&m.member_id),
                    "group_instance_id": m.group_instance_id,
                    "metadata": {
                        "topics": m.subscription.topics,
                        "owned": self.decode(&m.subscription.owned),
                        "generation": m.subscription.generation.unwrap_or(-1),
                        "user_data_bytes": m.subscription.user_data.as_ref().map_or(-1, |b| b.len() as i64),
                    },
                })).collect::<Vec<_>>(),
            }),
            Response::SyncGroup(r) => json!({
                "error": r.error.name(),
                "protocol_type": r.protocol_type,
                "protocol_name": r.protocol_name,
                "assignment": r.assignment.as_ref().map(|a| self.decode(a)),
            }),
            Response::Heartbeat(r) => json!({"error": r.error.name()}),
            Response::OffsetCommit(r) => json!({"error": r.error.name()}),
            Response::LeaveGroup(r) => json!({
                "error": r.error.name(),
                "members": r.members.iter().map(|m| json!({
                    "member_id": self.label(&m.member_id),
                    "group_instance_id": m.group_instance_id,
                    "error": m.error.name(),
                })).collect::<Vec<_>>(),
            }),
            Response::OffsetFetch(_) => json!({}),
            Response::FindCoordinator(r) => json!({"node_id": r.broker}),
            Response::Failed(r) => json!({"failed": r.request.name(), "error": r.error.name()}),
            // A classic script gets no KIP-848 answers (`replay_consumer.rs` renders those).
            Response::ConsumerGroupHeartbeat(_) => Value::Null,
        }
    }

    /// The group, classic in every script this replay runs (`replay_consumer.rs` runs the
    /// KIP-848 ones).
    fn classic_group(&self) -> &ClassicGroup {
        self.coordinator
            .classic()
            .expect("a classic script keeps a classic group")
    }

    fn render_group(&self) -> Value {
        let c = self.classic_group();
        if !c.exists() {
            return Value::Null;
        }
        let mut members: Vec<(String, Value)> = c
            .members()
            .into_iter()
            .map(|m| {
                let label = self.label(&m.member_id);
                let value = json!({
                    "member_id": label,
                    "group_instance_id": m.group_instance_id,
                    "protocols": m.protocols,
                    "session_timeout_ms": m.session_timeout_ms,
                    "rebalance_timeout_ms": m.rebalance_timeout_ms,
                    "awaiting_join": m.awaiting_join,
                    "awaiting_sync": m.awaiting_sync,
                    "is_new": m.is_new,
                    "assignment": m.assignment.as_ref().map(|a| self.decode(a)),
                });
                (label, value)
            })
            .collect();
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let labels = |ids: Vec<String>| -> Vec<String> {
            let mut v: Vec<String> = ids.iter().map(|id| self.label(id)).collect();
            v.sort();
            v
        };
        let pending = labels(c.pending_members());
        json!({
            "type": "classic",
            "state": c.state().name(),
            "generation_id": c.generation(),
            "protocol_type": c.protocol_type(),
            "protocol_name": c.protocol(),
            "leader": c.leader().map(|l| self.label(l)),
            "members": members.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
            "num_pending_join_members": pending.len(),
            "pending_join_members": pending,
            "pending_sync_members": labels(c.pending_sync_members()),
        })
    }

    fn render_timers(&self) -> Value {
        let mut timers: Vec<(SimTime, u64, String)> = self
            .coordinator
            .timers()
            .into_iter()
            .map(|(name, at)| {
                let order = self
                    .timer_order
                    .get(&name)
                    .filter(|(t, _)| *t == at)
                    .map_or(u64::MAX, |(_, o)| *o);
                (at, order, name)
            })
            .collect();
        timers.sort();
        Value::Array(
            timers
                .into_iter()
                .map(|(at, _, name)| {
                    json!({"timer": self.timer_label(&name), "deadline_t": at.as_millis()})
                })
                .collect(),
        )
    }
}

fn take_effects(mut out: Out<CoordinatorEffect>) -> Vec<CoordinatorEffect> {
    let (effects, _) = out.drain();
    effects.collect()
}

/// A Java consumer resets its generation on these errors, and its member id too on
/// UNKNOWN_MEMBER_ID (`AbstractCoordinator.resetGenerationOnResponseError`).
fn forget(a: &mut Alias, error: ErrorCode) {
    match error {
        ErrorCode::UnknownMemberId => {
            a.member_id.clear();
            a.generation = -1;
        }
        ErrorCode::IllegalGeneration => a.generation = -1,
        _ => {}
    }
}

fn generation_of(spec: Option<Generation>, current: i32) -> i32 {
    match spec {
        None | Some(Generation::Current(_)) => current,
        Some(Generation::Value(g)) => g,
    }
}

/// Member ids an answer carries (its own and the leader's member list).
fn response_ids(response: &Response) -> Vec<&str> {
    match response {
        Response::JoinGroup(r) => {
            let mut ids = vec![r.member_id.as_str(), r.leader.as_str()];
            ids.extend(r.members.iter().map(|m| m.member_id.as_str()));
            ids
        }
        _ => Vec::new(),
    }
}

/// The aliases a step names.
fn step_aliases(step: &Step) -> Vec<&String> {
    match step {
        Step::Join(s) => vec![&s.member],
        Step::Sync(s) => vec![&s.member],
        Step::Heartbeat(s) => vec![&s.member],
        Step::Leave(s) => s.members.iter().map(|m| &m.member).collect(),
        Step::Advance(_) | Step::SetPartitions(_) | Step::ConsumerHeartbeat(_) => Vec::new(),
    }
}
