//! Replays a KIP-848 script (`consumer_heartbeat` steps) against the simulator's consumer group
//! coordinator (`group::consumer`), with the harness's client memory of the reference
//! README section 2: each alias remembers its member id and epoch, the fields it last sent, the
//! last assignment it received and what it owns; it sends full requests while joining and
//! otherwise only what changed.

use super::replay::Replayed;
use super::script::{ConsumerHeartbeatStep, Script, Step, TopicPartitions};
use crate::assignor::{Topic, TopicPartition};
use crate::group::consumer::{
    ConsumerGroup, ConsumerGroupConfig, ConsumerGroupTimer, ConsumerHeartbeat,
    ConsumerHeartbeatResponse, GroupEffect, Partitions,
};
use crate::java::{string_compare, Uuid};
use crate::messages::{ErrorCode, LEAVE_EPOCH, STATIC_LEAVE_EPOCH};
use crate::sim::rng::Stream;
use crate::sim::{Out, SimTime};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// What one client process remembers between heartbeats.
#[derive(Default)]
struct Alias {
    member_id: Option<String>,
    epoch: i32,
    instance_id: Option<String>,
    /// The fields it last sent: rebalance timeout, topics, assignor, owned.
    sent_timeout: Option<i32>,
    sent_topics: Option<Vec<String>>,
    sent_assignor: Option<String>,
    sent_owned: Option<Partitions>,
    /// Its subscription and assignor as configured.
    topics: Vec<String>,
    assignor: Option<String>,
    rebalance_timeout_ms: i32,
    last_assignment: Option<Partitions>,
    owned: Partitions,
    /// After FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: the next heartbeat rejoins.
    must_rejoin: bool,
}

pub struct ConsumerReplay<'s> {
    script: &'s Script,
    group: ConsumerGroup,
    aliases: BTreeMap<String, Alias>,
    /// Kafka's ids by label, in issue order (from `--member-ids-from`).
    known: Vec<(String, String)>,
    ids: Stream,
    /// id -> label.
    labels: BTreeMap<String, String>,
    /// Armed timers: name -> (deadline, order set).
    timers: BTreeMap<ConsumerGroupTimer, (SimTime, u64)>,
    timers_set: u64,
    now: u64,
    seq: u64,
    events: Vec<Value>,
}

impl<'s> ConsumerReplay<'s> {
    pub fn new(script: &'s Script, member_ids: Option<&[(String, String)]>) -> Self {
        let u64_of = |key: &str| script.broker_config.get(key).and_then(Value::as_u64);
        let defaults = ConsumerGroupConfig::default();
        let config = ConsumerGroupConfig {
            heartbeat_interval_ms: u64_of("group.consumer.heartbeat.interval.ms")
                .unwrap_or(defaults.heartbeat_interval_ms),
            session_timeout_ms: u64_of("group.consumer.session.timeout.ms")
                .unwrap_or(defaults.session_timeout_ms),
            assignment_interval_ms: u64_of("group.consumer.assignment.interval.ms")
                .unwrap_or(defaults.assignment_interval_ms),
            assignors: defaults.assignors,
            mutant: None,
            // The scripts drive consumer-protocol members only: nothing to downgrade.
            migration_policy: defaults.migration_policy,
        };
        let mut topics: Vec<Topic> = script
            .topics
            .iter()
            .map(|t| Topic {
                name: t.name.clone(),
                partitions: t.partitions as i32,
                id: t.id.as_deref().and_then(|id| Uuid::parse(id).ok()),
            })
            .collect();
        topics.sort_by(|a, b| string_compare(&a.name, &b.name));
        ConsumerReplay {
            script,
            group: ConsumerGroup::new(config, topics),
            aliases: BTreeMap::new(),
            known: member_ids.map(<[_]>::to_vec).unwrap_or_default(),
            ids: Stream::derive(script.seed, "consumer-member-ids"),
            labels: BTreeMap::new(),
            timers: BTreeMap::new(),
            timers_set: 0,
            now: 0,
            seq: 0,
            events: Vec::new(),
        }
    }

    pub fn run(mut self) -> Result<Replayed, String> {
        for (i, step) in self.script.steps.iter().enumerate() {
            let at = step.at().unwrap_or(self.now);
            self.fire_timers_until(at);
            self.now = at;
            match step {
                Step::Advance(_) => {}
                Step::ConsumerHeartbeat(s) => self.heartbeat(s),
                Step::SetPartitions(s) => {
                    self.group.set_partitions(&s.topic, s.partitions as i32);
                    let mut event = Map::new();
                    event.insert("seq".into(), json!(self.next_seq()));
                    event.insert("t".into(), json!(self.now));
                    event.insert("kind".into(), json!("metadata"));
                    event.insert("op".into(), json!("set_partitions"));
                    event.insert("topic".into(), json!(s.topic));
                    event.insert("partitions".into(), json!(s.partitions));
                    self.finish(event, Vec::new());
                }
                _ => {
                    return Err(format!(
                        "step {i}: a classic request in a KIP-848 script is not supported (the classic-to-consumer migration is another issue)"
                    ))
                }
            }
        }
        let member_ids: Map<String, Value> = {
            let mut by_label: Vec<(&String, &String)> =
                self.labels.iter().map(|(id, l)| (l, id)).collect();
            by_label.sort();
            by_label
                .into_iter()
                .map(|(l, id)| (l.clone(), Value::String(id.clone())))
                .collect()
        };
        let trace = json!({
            "id": self.script.id,
            "kafka_version": "cgsim",
            "member_ids": member_ids,
            "events": self.events,
            "pending_at_end": [],
            "end_t": self.now,
        });
        Ok(Replayed { trace })
    }

    fn heartbeat(&mut self, step: &ConsumerHeartbeatStep) {
        let request = self.build_request(step);
        let mut out = Out::new(false);
        let now = SimTime::from_millis(self.now);
        let response = self.group.heartbeat(now, &request, &mut out);
        let effects: Vec<GroupEffect> = out.drain().0.collect();
        // A new id gets its label when it first appears.
        if let Some(id) = &response.member_id {
            self.give_label(id, &step.member);
        }
        self.give_label(&request.member_id, &step.member);
        self.remember(&step.member, &request, &response);
        let mut event = Map::new();
        event.insert("seq".into(), json!(self.next_seq()));
        event.insert("t".into(), json!(self.now));
        event.insert("kind".into(), json!("request"));
        event.insert("op".into(), json!("consumer_heartbeat"));
        event.insert("member".into(), json!(step.member));
        event.insert("request".into(), self.render_request(&request));
        event.insert("response".into(), self.render_response(&response));
        self.finish(event, effects);
    }

    /// The request a Java consumer sends for this step (README section 2).
    fn build_request(&mut self, step: &ConsumerHeartbeatStep) -> ConsumerHeartbeat {
        let fresh_id = self.next_member_id(&step.member);
        let a = self.aliases.entry(step.member.clone()).or_default();
        if let Some(id) = &step.member_id {
            a.member_id = Some(id.clone());
        }
        let member_id = a.member_id.get_or_insert(fresh_id).clone();
        if let Some(id) = &step.instance_id {
            a.instance_id = Some(id.clone());
        }
        if let Some(topics) = &step.subscribe {
            a.topics = topics.clone();
        }
        if let Some(assignor) = &step.server_assignor {
            a.assignor = Some(assignor.clone());
        }
        if a.rebalance_timeout_ms == 0 {
            a.rebalance_timeout_ms = 300_000;
        }
        if let Some(t) = step.rebalance_timeout_ms {
            a.rebalance_timeout_ms = t;
        }
        // What it owns: by default it installs the last assignment it received.
        if let Some(owned) = &step.owned {
            a.owned = partitions_of(self.group.topics(), owned);
        } else if step.apply_assignment != Some(false) {
            if let Some(last) = &a.last_assignment {
                a.owned = last.clone();
            }
        }
        let joining = step.join || a.must_rejoin;
        if joining {
            a.must_rejoin = false;
            a.epoch = 0;
            a.sent_timeout = Some(a.rebalance_timeout_ms);
            a.sent_topics = Some(a.topics.clone());
            a.sent_assignor = a.assignor.clone();
            a.sent_owned = Some(a.owned.clone());
            return ConsumerHeartbeat {
                member_id,
                member_epoch: step.member_epoch.unwrap_or(0),
                instance_id: a.instance_id.clone(),
                rebalance_timeout_ms: a.rebalance_timeout_ms,
                subscribed_topic_names: Some(a.topics.clone()),
                server_assignor: a.assignor.clone(),
                owned: Some(a.owned.clone()),
            };
        }
        let epoch = if step.leave {
            if a.instance_id.is_some() && !step.dynamic_leave {
                STATIC_LEAVE_EPOCH
            } else {
                LEAVE_EPOCH
            }
        } else {
            step.member_epoch.unwrap_or(a.epoch)
        };
        let timeout = (changed(&a.sent_timeout, &a.rebalance_timeout_ms) && !step.leave)
            .then_some(a.rebalance_timeout_ms);
        let topics = (changed(&a.sent_topics, &a.topics) && !step.leave).then(|| a.topics.clone());
        let assignor = (a.assignor.is_some() && a.sent_assignor != a.assignor && !step.leave)
            .then(|| a.assignor.clone())
            .flatten();
        let owned = if step.omit_owned || step.leave {
            None
        } else if step.send_owned || changed(&a.sent_owned, &a.owned) {
            Some(a.owned.clone())
        } else {
            None
        };
        if let Some(t) = timeout {
            a.sent_timeout = Some(t);
        }
        if let Some(t) = &topics {
            a.sent_topics = Some(t.clone());
        }
        if assignor.is_some() {
            a.sent_assignor = assignor.clone();
        }
        if let Some(o) = &owned {
            a.sent_owned = Some(o.clone());
        }
        ConsumerHeartbeat {
            member_id,
            member_epoch: epoch,
            instance_id: a.instance_id.clone(),
            rebalance_timeout_ms: timeout.unwrap_or(-1),
            subscribed_topic_names: topics,
            server_assignor: assignor,
            owned,
        }
    }

    /// The alias's memory after an answer.
    fn remember(
        &mut self,
        alias: &str,
        request: &ConsumerHeartbeat,
        response: &ConsumerHeartbeatResponse,
    ) {
        let a = self.aliases.entry(alias.to_string()).or_default();
        match response.error {
            ErrorCode::None => {
                a.epoch = response.member_epoch;
                if let Some(id) = &response.member_id {
                    a.member_id = Some(id.clone());
                }
                if let Some(assignment) = &response.assignment {
                    a.last_assignment = Some(assignment.clone());
                }
                if request.member_epoch < 0 {
                    a.owned.clear();
                    a.last_assignment = None;
                    a.sent_owned = None;
                }
            }
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId => {
                a.owned.clear();
                a.last_assignment = None;
                a.must_rejoin = true;
            }
            _ => {}
        }
    }

    /// The id a new alias uses: Kafka's own (its label's) when given, else a seeded one.
    fn next_member_id(&mut self, alias: &str) -> String {
        if let Some((_, id)) = self.known.iter().find(|(l, _)| l == alias) {
            return id.clone();
        }
        let mut bytes = [0u8; 16];
        for b in &mut bytes {
            *b = self.ids.between(0, 255) as u8;
        }
        Uuid::from_bytes(bytes).to_string()
    }

    fn give_label(&mut self, id: &str, alias: &str) {
        if self.labels.contains_key(id) {
            return;
        }
        let label = match self.known.iter().find(|(_, k)| k == id) {
            Some((label, _)) => label.clone(),
            None => {
                let taken = self
                    .labels
                    .values()
                    .filter(|l| l.split('~').next() == Some(alias))
                    .count();
                if taken == 0 {
                    alias.to_string()
                } else {
                    format!("{alias}~{}", taken + 1)
                }
            }
        };
        self.labels.insert(id.to_string(), label);
    }

    fn label(&self, id: &str) -> String {
        self.labels
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("?{id}"))
    }

    fn fire_timers_until(&mut self, until: u64) {
        loop {
            let due = self
                .timers
                .iter()
                .filter(|(_, (at, _))| at.as_millis() <= until)
                .min_by_key(|(_, (at, order))| (*at, *order))
                .map(|(t, (at, _))| (t.clone(), *at));
            let Some((timer, at)) = due else {
                return;
            };
            self.timers.remove(&timer);
            self.now = at.as_millis();
            let mut out = Out::new(false);
            self.group.on_timer(at, &timer, &mut out);
            let effects: Vec<GroupEffect> = out.drain().0.collect();
            let mut event = Map::new();
            event.insert("seq".into(), json!(self.next_seq()));
            event.insert("t".into(), json!(self.now));
            event.insert("kind".into(), json!("timer"));
            event.insert("timer".into(), json!(self.timer_label(&timer)));
            self.finish(event, effects);
        }
    }

    fn finish(&mut self, mut event: Map<String, Value>, effects: Vec<GroupEffect>) {
        let mut records = Vec::new();
        for effect in effects {
            match effect {
                GroupEffect::Record(r) => records.push(Value::String(r.name())),
                GroupEffect::SetTimer { timer, at } => {
                    self.timers_set += 1;
                    self.timers.insert(timer, (at, self.timers_set));
                }
                GroupEffect::CancelTimer(timer) => {
                    self.timers.remove(&timer);
                }
                GroupEffect::EpochBumped { .. }
                | GroupEffect::Fenced { .. }
                | GroupEffect::Removed { .. }
                | GroupEffect::ConvertToClassic { .. }
                | GroupEffect::ConvertToClassicReplacing { .. } => {}
            }
        }
        event.insert("records".into(), Value::Array(records));
        event.insert("group".into(), self.render_group());
        event.insert("timers".into(), self.render_timers());
        self.events.push(Value::Object(event));
    }

    fn next_seq(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        s
    }

    fn timer_label(&self, timer: &ConsumerGroupTimer) -> String {
        match timer {
            ConsumerGroupTimer::Session { member_id } => {
                format!("session-timeout:{}", self.label(member_id))
            }
            ConsumerGroupTimer::Rebalance { member_id } => {
                format!("rebalance-timeout:{}", self.label(member_id))
            }
            ConsumerGroupTimer::ClassicJoin { member_id } => {
                format!("join-timeout:{}", self.label(member_id))
            }
            ConsumerGroupTimer::ClassicSync { member_id } => {
                format!("sync-timeout:{}", self.label(member_id))
            }
        }
    }

    fn render_timers(&self) -> Value {
        let mut list: Vec<(SimTime, u64, String)> = self
            .timers
            .iter()
            .map(|(t, (at, order))| (*at, *order, self.timer_label(t)))
            .collect();
        list.sort();
        Value::Array(
            list.into_iter()
                .map(|(at, _, name)| json!({"timer": name, "deadline_t": at.as_millis()}))
                .collect(),
        )
    }

    fn render_parts(&self, parts: &Partitions) -> Value {
        let topics = self.group.topics();
        let mut map: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for tp in parts {
            map.entry(topics[tp.topic as usize].name.clone())
                .or_default()
                .push(tp.partition);
        }
        json!(map)
    }

    fn render_request(&self, r: &ConsumerHeartbeat) -> Value {
        json!({
            "version": 1,
            "member_id": self.label(&r.member_id),
            "member_epoch": r.member_epoch,
            "instance_id": r.instance_id,
            "rebalance_timeout_ms": r.rebalance_timeout_ms,
            "subscribed_topic_names": r.subscribed_topic_names,
            "server_assignor": r.server_assignor,
            "owned": r.owned.as_ref().map(|o| self.render_parts(o)),
        })
    }

    fn render_response(&self, r: &ConsumerHeartbeatResponse) -> Value {
        let mut v = Map::new();
        v.insert("error".into(), json!(r.error.name()));
        if let Some(m) = &r.error_message {
            v.insert("error_message".into(), json!(m));
        }
        v.insert(
            "member_id".into(),
            r.member_id
                .as_ref()
                .map_or(Value::Null, |id| json!(self.label(id))),
        );
        v.insert("member_epoch".into(), json!(r.member_epoch));
        v.insert(
            "heartbeat_interval_ms".into(),
            json!(r.heartbeat_interval_ms),
        );
        v.insert(
            "assignment".into(),
            r.assignment
                .as_ref()
                .map_or(Value::Null, |a| self.render_parts(a)),
        );
        Value::Object(v)
    }

    fn render_group(&self) -> Value {
        let g = &self.group;
        let topics = g.topics();
        let mut members: Vec<(String, Value)> = g
            .members()
            .map(|m| {
                let mut epochs: BTreeMap<String, Vec<i32>> = BTreeMap::new();
                for (tp, e) in &m.assigned {
                    epochs
                        .entry(topics[tp.topic as usize].name.clone())
                        .or_default()
                        .push(*e);
                }
                let label = self.label(&m.member_id);
                (
                    label.clone(),
                    json!({
                        "member_id": label,
                        "instance_id": m.instance_id,
                        "member_epoch": m.member_epoch,
                        "previous_member_epoch": m.previous_member_epoch,
                        "state": m.state.name(),
                        "assigned": self.render_parts(&m.assigned_partitions()),
                        "assigned_epochs": epochs,
                        "pending_revocation": self.render_parts(&m.pending_revocation.keys().copied().collect()),
                        "target": self.render_parts(&g.target_of(&m.member_id)),
                        "subscribed_topic_names": m.subscribed_topic_names,
                        "server_assignor": m.server_assignor,
                        "rebalance_timeout_ms": m.rebalance_timeout_ms,
                    }),
                )
            })
            .collect();
        members.sort_by(|a, b| a.0.cmp(&b.0));
        json!({
            "type": "consumer",
            "state": g.state().name(),
            "group_epoch": g.group_epoch(),
            "assignment_epoch": g.assignment_epoch(),
            "assignment_t": g.assignment_time().map_or(-1, |t| t.as_millis() as i64),
            "preferred_server_assignor": g.preferred_assignor(),
            "subscription_type": if g.is_homogeneous() { "Homogeneous" } else { "Heterogeneous" },
            "members": members.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        })
    }
}

/// Whether `now` differs from what was last sent.
fn changed<T: PartialEq>(sent: &Option<T>, now: &T) -> bool {
    sent.as_ref() != Some(now)
}

/// A script's `{topic: [p]}` as coordinator partitions.
fn partitions_of(topics: &[Topic], parts: &TopicPartitions) -> Partitions {
    let mut out = Partitions::new();
    for (name, ps) in parts {
        if let Some(t) = topics.iter().position(|x| &x.name == name) {
            for &p in ps {
                out.insert(TopicPartition::new(t as u32, p as i32));
            }
        }
    }
    out
}
