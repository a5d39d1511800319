//! The coordinator driven alone, request by request, with no world around it. The timings are
//! those Kafka 4.3.1's own `GroupMetadataManager` answered in the reference traces
//! (../shared/reference/coordinator/: c01 initial delay, c06 session expiry, c10 static
//! restart), with session.timeout.ms 10000, rebalance timeout 30000, initial delay 3000.

use super::*;
use crate::group::classic::ClassicGroupState;
use crate::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ErrorCode, HeartbeatRequest,
    JoinGroupRequest, JoinGroupResponse, JoinProtocol, JoinReason, OffsetCommitRequest,
    OffsetFetchRequest, Response, Subscription, SyncGroupRequest, SyncGroupResponse, Trigger,
};

const SESSION_MS: u64 = 10_000;
const REBALANCE_MS: u64 = 30_000;

/// Drives one coordinator: delivers requests, fires timers when their deadline comes (a timer
/// due when a request arrives fires first, as in Kafka's mock-clock harness), and keeps what
/// it sent and recorded.
struct Harness {
    coordinator: Coordinator,
    now: SimTime,
    /// Armed timers: key -> (deadline, arming order).
    timers: BTreeMap<CoordTimer, (SimTime, u64)>,
    armed: u64,
    sent: Vec<(ClientRef, Response)>,
    facts: Vec<Fact>,
    /// Names of the group records written.
    records: Vec<&'static str>,
    /// `__consumer_offsets`, written by the coordinator's commit records.
    offsets: OffsetsStore,
}

fn client(member: usize) -> ClientRef {
    ClientRef {
        member,
        incarnation: 1,
    }
}

fn ms(t: u64) -> SimTime {
    SimTime::from_millis(t)
}

impl Harness {
    fn new() -> Self {
        Harness {
            coordinator: Coordinator::new(
                CoordinatorConfig::with_initial_delay(3000),
                Stream::derive(1, "member-ids"),
            ),
            now: SimTime::ZERO,
            timers: BTreeMap::new(),
            armed: 0,
            sent: Vec::new(),
            facts: Vec::new(),
            records: Vec::new(),
            offsets: OffsetsStore::new(6),
        }
    }

    fn apply(&mut self, mut out: Out<CoordinatorEffect>) {
        let (effects, _) = out.drain();
        for effect in effects {
            match effect {
                CoordinatorEffect::Respond { to, response } => self.sent.push((to, *response)),
                CoordinatorEffect::SetTimer { timer, at } => {
                    assert!(at >= self.now, "{timer:?} set in the past");
                    self.armed += 1;
                    self.timers.insert(timer, (at, self.armed));
                }
                CoordinatorEffect::CancelTimer(timer) => {
                    self.timers.remove(&timer);
                }
                CoordinatorEffect::CommitOffset { partition, offset } => {
                    self.offsets.commit(partition, offset)
                }
                CoordinatorEffect::Record(record) => {
                    self.records.push(record.name());
                    self.offsets.write_group(*record);
                }
                CoordinatorEffect::Fact(fact) => self.facts.push(fact),
            }
        }
    }

    /// The group, which is a classic group here.
    fn classic(&self) -> &ClassicGroup {
        self.coordinator.classic().expect("a classic group")
    }

    /// The classic group's state.
    fn state(&self) -> ClassicGroupState {
        self.classic().state()
    }

    /// Fires every timer due at or before `t_ms`, in deadline order, then moves the clock.
    fn advance(&mut self, t_ms: u64) {
        loop {
            let next = self
                .timers
                .iter()
                .filter(|(_, &(at, _))| at <= ms(t_ms))
                .min_by_key(|(_, &(at, order))| (at, order))
                .map(|(k, &(at, _))| (k.clone(), at));
            let Some((timer, at)) = next else { break };
            self.timers.remove(&timer);
            self.now = at;
            let mut out = Out::new(false);
            self.coordinator.on_timer(at, timer, &mut out);
            self.apply(out);
        }
        self.now = ms(t_ms);
    }

    /// Delivers `request` from member `from` at `t_ms`; returns what was sent during it.
    fn request(&mut self, t_ms: u64, from: usize, request: Request) -> Vec<(ClientRef, Response)> {
        self.advance(t_ms);
        let before = self.sent.len();
        let mut out = Out::new(false);
        self.coordinator
            .handle(self.now, client(from), request, &self.offsets, &mut out);
        self.apply(out);
        self.sent[before..].to_vec()
    }

    /// The one response to member `from` of a request.
    fn ask(&mut self, t_ms: u64, from: usize, request: Request) -> Response {
        let sent = self.request(t_ms, from, request);
        let mine: Vec<Response> = sent
            .into_iter()
            .filter(|(to, _)| to.member == from)
            .map(|(_, r)| r)
            .collect();
        assert_eq!(mine.len(), 1, "one response to member {from}: {mine:?}");
        mine.into_iter().next().unwrap()
    }

    /// The coordinator's timers as (name, deadline ms), with member ids replaced by labels.
    fn timers(&self, labels: &[(&str, &str)]) -> Vec<(String, u64)> {
        let mut timers: Vec<(String, u64)> = self
            .coordinator
            .timers()
            .into_iter()
            .map(|(mut name, at)| {
                for (id, label) in labels {
                    name = name.replace(id, label);
                }
                (name, at.as_millis())
            })
            .collect();
        // Ties by label (the coordinator breaks them by the real ids).
        timers.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        timers
    }

    /// The harness's own record of armed timers agrees with what the coordinator reports
    /// (apart from session checks armed before their real deadline).
    fn assert_timers_consistent(&self) {
        let reported: BTreeMap<String, SimTime> = self.coordinator.timers().into_iter().collect();
        let armed: BTreeMap<String, SimTime> = self
            .timers
            .iter()
            .map(|(k, &(at, _))| (k.name(), at))
            .collect();
        assert_eq!(
            reported.keys().collect::<Vec<_>>(),
            armed.keys().collect::<Vec<_>>()
        );
        for (name, at) in &armed {
            assert!(*at <= reported[name], "{name} armed after its deadline");
        }
    }
}

fn join_request(member_id: &str, instance: Option<&str>, protocols: &[&str]) -> Request {
    let metadata = Subscription {
        topics: vec!["orders".into()],
        owned: Vec::new(),
        previous_assignment: Vec::new(),
        generation: None,
        assigned_generation: None,
        user_data: None,
        rack_id: None,
    };
    Request::JoinGroup(JoinGroupRequest {
        version: crate::messages::JOIN_GROUP_VERSION,
        member_id: member_id.to_string(),
        group_instance_id: instance.map(str::to_string),
        client_id: "consumer-grp".into(),
        protocol_type: "consumer".into(),
        protocols: protocols
            .iter()
            .map(|p| JoinProtocol {
                name: p.to_string(),
                metadata: metadata.clone(),
            })
            .collect(),
        rebalance_timeout_ms: REBALANCE_MS,
        session_timeout_ms: SESSION_MS,
        reason: JoinReason::New,
    })
}

fn join(member_id: &str) -> Request {
    join_request(member_id, None, &["range"])
}

fn heartbeat(member_id: &str, generation: i32) -> Request {
    Request::Heartbeat(HeartbeatRequest {
        member_id: member_id.to_string(),
        generation,
        group_instance_id: None,
    })
}

fn sync(
    member_id: &str,
    generation: i32,
    assignments: Option<Vec<(String, Vec<usize>)>>,
) -> Request {
    Request::SyncGroup(SyncGroupRequest {
        member_id: member_id.to_string(),
        generation,
        group_instance_id: None,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignments,
    })
}

fn commit(member_id: &str, generation: i32, partition: usize, offset: u64) -> Request {
    Request::OffsetCommit(OffsetCommitRequest {
        member_id: member_id.to_string(),
        generation,
        offsets: vec![(partition, offset)],
    })
}

fn error_of(r: &Response) -> ErrorCode {
    match r {
        Response::JoinGroup(r) => r.error,
        Response::SyncGroup(r) => r.error,
        Response::Heartbeat(r) => r.error,
        Response::OffsetCommit(r) => r.error,
        Response::LeaveGroup(r) => r.error,
        Response::OffsetFetch(_) | Response::FindCoordinator(_) => ErrorCode::None,
        Response::ConsumerGroupHeartbeat(r) => r.error,
        Response::Failed(r) => r.error,
    }
}

fn member_id_of(r: &Response) -> String {
    match r {
        Response::JoinGroup(r) => r.member_id.clone(),
        other => panic!("not a JoinGroup response: {other:?}"),
    }
}

/// A dynamic member's two-step join (MEMBER_ID_REQUIRED, then the join with its id) at `t` and
/// `t + 5`; returns the id the coordinator made.
fn join_dynamic(h: &mut Harness, t: u64, member: usize) -> String {
    let first = h.ask(t, member, join(""));
    assert_eq!(error_of(&first), ErrorCode::MemberIdRequired);
    let id = member_id_of(&first);
    assert!(id.starts_with("consumer-grp-"), "{id}");
    let sent = h.request(t + 5, member, join(&id));
    assert!(sent.is_empty(), "the join is parked: {sent:?}");
    id
}

/// c01: A, B and C join an Empty group 100 ms apart. The first join arms `join` at the initial
/// delay (3000 ms); when it fires, members were added meanwhile, so it is re-armed for another
/// delay; the join phase completes at 6005 with generation 1 and A as leader.
fn form_group(h: &mut Harness) -> [String; 3] {
    let a = join_dynamic(h, 0, 0);
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
    let b = join_dynamic(h, 100, 1);
    let c = join_dynamic(h, 200, 2);
    let labels = [(a.as_str(), "A"), (b.as_str(), "B"), (c.as_str(), "C")];
    assert_eq!(
        h.timers(&labels),
        [
            ("join".to_string(), 3005),
            ("heartbeat:A".to_string(), 300_005),
            ("heartbeat:B".to_string(), 300_105),
            ("heartbeat:C".to_string(), 300_205),
        ]
    );
    h.advance(3005);
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
    assert_eq!(h.timers(&labels)[0], ("join".to_string(), 6005));
    let before = h.sent.len();
    h.advance(6005);
    assert_eq!(h.state(), ClassicGroupState::CompletingRebalance);
    assert_eq!(h.coordinator.generation(), 1);
    assert_eq!(h.classic().leader(), Some(a.as_str()));
    assert_eq!(h.classic().protocol(), Some("range"));
    let responses = &h.sent[before..];
    assert_eq!(responses.len(), 3);
    for (to, r) in responses {
        let Response::JoinGroup(JoinGroupResponse {
            error,
            generation,
            leader,
            members,
            ..
        }) = r
        else {
            panic!("{r:?}")
        };
        assert_eq!(
            (*error, *generation, leader.as_str()),
            (ErrorCode::None, 1, a.as_str())
        );
        // Only the leader gets the member list.
        assert_eq!(members.len(), if to.member == 0 { 3 } else { 0 });
    }
    let mut timers = h.timers(&labels);
    timers.sort();
    assert_eq!(
        timers,
        [
            ("heartbeat:A".to_string(), 16_005),
            ("heartbeat:B".to_string(), 16_005),
            ("heartbeat:C".to_string(), 16_005),
            ("sync".to_string(), 36_005),
        ]
    );
    h.assert_timers_consistent();
    [a, b, c]
}

#[test]
fn the_initial_delay_is_extended_while_members_keep_joining() {
    let mut h = Harness::new();
    form_group(&mut h);
    assert!(h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::JoinCompleted { generation: 1, .. })));
}

#[test]
fn a_single_member_waits_out_one_initial_delay() {
    let mut h = Harness::new();
    join_dynamic(&mut h, 0, 0);
    // Nobody joined during the delay: the timer is not extended.
    h.advance(3004);
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
    h.advance(3005);
    assert_eq!(h.state(), ClassicGroupState::CompletingRebalance);
}

fn assignments(ids: &[String; 3]) -> Option<Vec<(String, Vec<usize>)>> {
    Some(vec![
        (ids[0].clone(), vec![0, 1]),
        (ids[1].clone(), vec![2, 3]),
        (ids[2].clone(), vec![4, 5]),
    ])
}

/// c06: B stops heartbeating after its heartbeat at 9005. Its session expires 10 s after its
/// last heartbeat; the group prepares a rebalance with the rebalance timeout as join timer, the
/// others learn of it from REBALANCE_IN_PROGRESS, and the join phase completes as soon as both
/// have rejoined.
#[test]
fn an_expired_session_removes_the_member_and_starts_a_rebalance() {
    let mut h = Harness::new();
    let ids = form_group(&mut h);
    let [a, b, c] = ids.clone();
    let labels = [(a.as_str(), "A"), (b.as_str(), "B"), (c.as_str(), "C")];
    assert_eq!(
        error_of(&h.ask(6100, 0, sync(&a, 1, assignments(&ids)))),
        ErrorCode::None
    );
    assert_eq!(h.state(), ClassicGroupState::Stable);
    h.request(6110, 1, sync(&b, 1, None));
    h.request(6120, 2, sync(&c, 1, None));
    // Everyone synced: the sync timer is gone.
    assert!(h.timers(&labels).iter().all(|(n, _)| n != "sync"));
    for t in [9000, 12_000, 15_000, 18_000] {
        assert_eq!(error_of(&h.ask(t, 0, heartbeat(&a, 1))), ErrorCode::None);
        if t == 9000 {
            // B heartbeats once more, then falls silent.
            assert_eq!(
                error_of(&h.ask(t + 5, 1, heartbeat(&b, 1))),
                ErrorCode::None
            );
        }
        assert_eq!(
            error_of(&h.ask(t + 10, 2, heartbeat(&c, 1))),
            ErrorCode::None
        );
    }
    assert_eq!(h.timers(&labels)[0], ("heartbeat:B".to_string(), 19_005));
    h.assert_timers_consistent();
    h.advance(19_004);
    assert_eq!(h.state(), ClassicGroupState::Stable);
    h.advance(19_005);
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
    assert_eq!(h.coordinator.members().len(), 2);
    assert!(h.facts.contains(&Fact::MemberRemoved {
        member: 1,
        member_id: b.clone()
    }));
    assert!(h.facts.contains(&Fact::RebalanceStarted {
        generation: 2,
        trigger: Trigger::MemberExpired,
        member: Some(1),
    }));
    assert_eq!(
        h.timers(&labels),
        [
            ("heartbeat:A".to_string(), 28_000),
            ("heartbeat:C".to_string(), 28_010),
            ("join".to_string(), 49_005),
        ]
    );
    assert_eq!(
        error_of(&h.ask(21_000, 0, heartbeat(&a, 1))),
        ErrorCode::RebalanceInProgress
    );
    assert!(h.request(21_010, 0, join(&a)).is_empty());
    assert_eq!(
        error_of(&h.ask(21_020, 2, heartbeat(&c, 1))),
        ErrorCode::RebalanceInProgress
    );
    let sent = h.request(21_030, 2, join(&c));
    assert_eq!(sent.len(), 2, "both parked joins answered: {sent:?}");
    assert_eq!(h.state(), ClassicGroupState::CompletingRebalance);
    assert_eq!(h.coordinator.generation(), 2);
    assert_eq!(
        h.timers(&labels),
        [
            ("heartbeat:A".to_string(), 31_030),
            ("heartbeat:C".to_string(), 31_030),
            ("sync".to_string(), 51_030),
        ]
    );
    // The removed member's heartbeat is refused.
    assert_eq!(
        error_of(&h.ask(21_040, 1, heartbeat(&b, 1))),
        ErrorCode::UnknownMemberId
    );
}

/// Client `i` joins at `i` × 100 ms as static member `pod` (range): what it was sent, and
/// the member id it was added under (`pod-` and a UUID).
fn join_static(h: &mut Harness, i: usize, pod: &str) -> (Vec<(ClientRef, Response)>, String) {
    let sent = h.request(i as u64 * 100, i, join_request("", Some(pod), &["range"]));
    let prefix = format!("{pod}-");
    let members = h.coordinator.members();
    let id = members.iter().find(|m| m.member_id.starts_with(&prefix));
    (
        sent,
        id.expect("added under instance-uuid").member_id.clone(),
    )
}

/// c10: static members (group.instance.id) join without MEMBER_ID_REQUIRED. A restarted one
/// (empty member id, same instance id) in a Stable group takes over its entry under a new id:
/// no rebalance, the current generation, its stored assignment at SyncGroup; only a replaced
/// leader is told to skip the assignment (KIP-345, KIP-814).
#[test]
fn a_static_member_restart_in_a_stable_group_keeps_its_assignment() {
    let mut h = Harness::new();
    let mut ids = Vec::new();
    for (i, pod) in ["pod-a", "pod-b", "pod-c"].into_iter().enumerate() {
        let (sent, id) = join_static(&mut h, i, pod);
        assert!(
            sent.is_empty(),
            "a static member is never told MEMBER_ID_REQUIRED"
        );
        ids.push(id);
    }
    h.advance(3000);
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
    h.advance(6000);
    assert_eq!(h.coordinator.generation(), 1);
    let ids: [String; 3] = ids.try_into().unwrap();
    h.request(6100, 0, sync(&ids[0], 1, assignments(&ids)));
    h.request(6110, 1, sync(&ids[1], 1, None));
    h.request(6120, 2, sync(&ids[2], 1, None));
    assert_eq!(h.state(), ClassicGroupState::Stable);
    let facts_before = h.facts.len();

    let restarted = h.ask(10_000, 1, join_request("", Some("pod-b"), &["range"]));
    let Response::JoinGroup(JoinGroupResponse {
        error,
        member_id: new_b,
        generation,
        leader,
        members,
        skip_assignment,
        ..
    }) = restarted
    else {
        panic!()
    };
    assert_eq!(error, ErrorCode::None);
    assert_ne!(new_b, ids[1]);
    assert!(new_b.starts_with("pod-b-"));
    assert_eq!((generation, leader.as_str()), (1, ids[0].as_str()));
    assert!(members.is_empty() && !skip_assignment);
    assert_eq!(h.state(), ClassicGroupState::Stable);
    let new_facts = &h.facts[facts_before..];
    assert!(new_facts.contains(&Fact::MemberReplaced {
        member: 1,
        member_id: new_b.clone()
    }));
    assert!(
        !new_facts
            .iter()
            .any(|f| matches!(f, Fact::RebalanceStarted { .. })),
        "no rebalance: {new_facts:?}"
    );
    let timers = h.timers(&[(new_b.as_str(), "B~2"), (ids[1].as_str(), "B")]);
    assert!(timers.contains(&("heartbeat:B~2".to_string(), 20_000)));
    // Kafka leaves the old id's timer to fire and do nothing; here it is cancelled.
    assert!(!timers.iter().any(|(n, _)| n == "heartbeat:B"));
    let Response::SyncGroup(SyncGroupResponse {
        error, assignment, ..
    }) = h.ask(10_100, 1, sync(&new_b, 1, None))
    else {
        panic!()
    };
    assert_eq!((error, assignment), (ErrorCode::None, Some(vec![2, 3])));

    // The leader restarting is told to skip the assignment and gets the member list.
    let Response::JoinGroup(JoinGroupResponse {
        member_id: new_a,
        skip_assignment,
        members,
        leader,
        ..
    }) = h.ask(11_000, 0, join_request("", Some("pod-a"), &["range"]))
    else {
        panic!()
    };
    assert!(skip_assignment);
    assert_eq!(leader, new_a);
    assert_eq!(members.len(), 3);
    assert_eq!(h.state(), ClassicGroupState::Stable);
}

/// `ClassicGroup.selectProtocol`: the candidates are the assignors every member lists; each
/// member votes for its first candidate; the most votes win.
#[test]
fn the_protocol_vote_takes_the_candidate_most_members_prefer() {
    let mut h = Harness::new();
    let lists: [&[&str]; 3] = [
        &["roundrobin", "range", "sticky"],
        &["range", "roundrobin"],
        &["sticky", "range", "roundrobin"],
    ];
    for (i, protocols) in lists.into_iter().enumerate() {
        let first = h.ask(i as u64 * 10, i, join_request("", None, protocols));
        let id = member_id_of(&first);
        h.request(i as u64 * 10 + 5, i, join_request(&id, None, protocols));
    }
    // Members joined during the initial delay: it is extended once, to 6005.
    h.advance(6005);
    assert_eq!(h.state(), ClassicGroupState::CompletingRebalance);
    // sticky is not listed by the second member, so it is no candidate: the third votes range.
    assert_eq!(h.classic().protocol(), Some("range"));
}

#[test]
fn a_member_with_no_protocol_in_common_is_refused() {
    let mut h = Harness::new();
    let id = join_dynamic(&mut h, 0, 0);
    let refused = h.ask(10, 1, join_request("", None, &["cooperative-sticky"]));
    assert_eq!(error_of(&refused), ErrorCode::InconsistentGroupProtocol);
    // The group goes on with the first member alone.
    h.advance(3005);
    assert_eq!(h.state(), ClassicGroupState::CompletingRebalance);
    assert_eq!(h.coordinator.members().len(), 1);
    assert_eq!(h.coordinator.members()[0].member_id, id);
}

#[test]
fn a_pending_member_that_never_joins_expires_after_its_session() {
    let mut h = Harness::new();
    let first = h.ask(0, 0, join(""));
    let id = member_id_of(&first);
    assert_eq!(h.classic().pending_members(), vec![id.clone()]);
    assert_eq!(
        h.timers(&[(id.as_str(), "A")]),
        [("heartbeat:A".to_string(), SESSION_MS)]
    );
    h.advance(SESSION_MS);
    assert!(h.classic().pending_members().is_empty());
    assert!(h.coordinator.timers().is_empty());
    assert_eq!(h.state(), ClassicGroupState::Empty);
}

#[test]
fn committed_offsets_are_kept_and_reported_as_facts() {
    let mut h = Harness::new();
    let ids = form_group(&mut h);
    h.request(6100, 0, sync(&ids[0], 1, assignments(&ids)));
    let commit = |offset| commit(&ids[0], 1, 0, offset);
    assert_eq!(error_of(&h.ask(6200, 0, commit(10))), ErrorCode::None);
    assert_eq!(error_of(&h.ask(6300, 0, commit(7))), ErrorCode::None);
    assert_eq!(h.offsets.committed(0), Some(7));
    assert!(h.facts.contains(&Fact::OffsetCommitted {
        member: 0,
        partition: 0,
        offset: 7
    }));
    let Response::OffsetFetch(fetched) = h.ask(
        6400,
        1,
        Request::OffsetFetch(OffsetFetchRequest {
            partitions: vec![0, 1],
        }),
    ) else {
        panic!()
    };
    assert_eq!(fetched.committed, vec![(0, Some(7)), (1, None)]);
}

/// `completeClassicGroupJoin` removes only the dynamic members that did not rejoin: a static
/// one stays in the group (its session and a pending SyncGroup still run) but the group moves
/// on to a new generation without it, which fences its commits (ILLEGAL_GENERATION): the
/// `MissedRejoin` fact says so, and ends its ownership for the checker (seed 2050).
#[test]
fn a_static_member_that_does_not_rejoin_stays_but_misses_the_generation() {
    let mut h = Harness::new();
    let mut ids = Vec::new();
    for (i, pod) in ["pod-a", "pod-b"].into_iter().enumerate() {
        ids.push(join_static(&mut h, i, pod).1);
    }
    h.advance(9000);
    assert_eq!(h.coordinator.generation(), 1);
    let plan = vec![(ids[0].clone(), vec![0, 1]), (ids[1].clone(), vec![2, 3])];
    h.request(9100, 0, sync(&ids[0], 1, Some(plan)));
    h.request(9110, 1, sync(&ids[1], 1, None));
    assert_eq!(h.state(), ClassicGroupState::Stable);
    // pod-a rejoins (a rebalance); pod-b only heartbeats (stuck in a batch, say), so its
    // session holds through the join phase but it never rejoins.
    h.request(9200, 0, join_request(&ids[0], Some("pod-a"), &["range"]));
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
    let facts_before = h.facts.len();
    let end = 9200 + REBALANCE_MS;
    for t in (12_000..end).step_by(3000) {
        h.request(t, 1, heartbeat(&ids[1], 1));
    }
    h.advance(end);
    assert_eq!(h.coordinator.generation(), 2);
    assert_eq!(h.coordinator.members().len(), 2, "the static member stays");
    let new_facts = &h.facts[facts_before..];
    assert!(new_facts.contains(&Fact::MissedRejoin {
        member: 1,
        member_id: ids[1].clone(),
        generation: 2,
    }));
    assert!(!new_facts
        .iter()
        .any(|f| matches!(f, Fact::MissedRejoin { member: 0, .. })));
}

/// The group's creation is written as Kafka's empty record (`newEmptyGroupMetadataRecord`: no
/// members), so a coordinator that loads it before the first rebalance completes has an Empty
/// group; after a rebalance it loads the group Stable at that generation with its members, each
/// session counted from the load (GMM `replay` and `onLoaded`).
#[test]
fn a_loaded_group_is_what_its_last_record_says() {
    let mut h = Harness::new();
    h.ask(0, 0, join(""));
    let Some(GroupRecord::GroupMetadata(created)) = h.offsets.group_record().cloned() else {
        panic!("the creation is written");
    };
    assert_eq!((created.generation, created.members.len()), (0, 0));
    assert_eq!(created.protocol_type.as_deref(), Some(""));
    let record = h.offsets.group_record().cloned();
    let mut out = Out::new(false);
    h.coordinator.load(ms(10), record.as_ref(), &mut out);
    assert_eq!(h.state(), ClassicGroupState::Empty);

    // Completing a rebalance (the leader's SyncGroup) writes the group as it stands; a
    // rebalance in progress is forgotten.
    let mut h = Harness::new();
    let ids = form_group(&mut h);
    let generation = h.coordinator.generation();
    h.ask(6010, 0, sync(&ids[0], generation, assignments(&ids)));
    assert_eq!(h.state(), ClassicGroupState::Stable);
    let record = h.offsets.group_record().cloned();
    h.timers.clear();
    let mut out = Out::new(false);
    h.coordinator.load(ms(60_000), record.as_ref(), &mut out);
    h.now = ms(60_000);
    h.apply(out);
    assert_eq!(h.state(), ClassicGroupState::Stable);
    assert_eq!(h.coordinator.generation(), generation);
    let loaded = h.coordinator.members();
    for id in &ids {
        let m = loaded.iter().find(|m| &m.member_id == id).expect("loaded");
        let (at, _) = h.timers[&CoordTimer::heartbeat(id)];
        assert_eq!(
            at,
            ms(60_000 + m.session_timeout_ms),
            "{id}'s session from the load"
        );
        assert!(m.assignment.is_some(), "{id} keeps its stored assignment");
    }
}

// ---- The online migration (migration.rs) ----

/// A coordinator that may convert its classic group: "orders" (6 partitions) as a consumer
/// group would see it, under `policy`.
fn migrating(policy: crate::scenario::MigrationPolicy) -> Harness {
    let config = crate::group::consumer::ConsumerGroupConfig {
        migration_policy: policy,
        ..Default::default()
    };
    with_consumer_support(config, vec![topic("orders", 7, 6, 0)])
}

/// A harness whose coordinator (as `Harness::new`'s) has consumer-group support over `topics`.
fn with_consumer_support(
    config: crate::group::consumer::ConsumerGroupConfig,
    topics: Vec<ConsumerTopic>,
) -> Harness {
    let mut h = Harness::new();
    h.coordinator = Coordinator::new(
        CoordinatorConfig::with_initial_delay(3000),
        Stream::derive(1, "member-ids"),
    )
    .with_consumer_support(config, topics);
    h
}

/// A topic as a consumer group knows it: its name, an id of 16 `id` bytes, its partitions and
/// where they begin.
fn topic(name: &str, id: u8, partitions: u32, first: usize) -> ConsumerTopic {
    ConsumerTopic {
        name: name.into(),
        id: crate::java::Uuid::from_bytes([id; 16]),
        partitions,
        first,
    }
}

/// A consumer-group coordinator assigning at every epoch bump.
fn assigning_at_once(topics: Vec<ConsumerTopic>) -> Harness {
    let config = crate::group::consumer::ConsumerGroupConfig {
        assignment_interval_ms: 0,
        ..Default::default()
    };
    with_consumer_support(config, topics)
}

/// A classic group of A, B and C, Stable at generation 1, each with two partitions.
fn stable_classic_group(h: &mut Harness) -> [String; 3] {
    let ids = form_group(h);
    let [a, b, c] = ids.clone();
    assert_eq!(
        error_of(&h.ask(6100, 0, sync(&a, 1, assignments(&ids)))),
        ErrorCode::None
    );
    h.request(6110, 1, sync(&b, 1, None));
    h.request(6120, 2, sync(&c, 1, None));
    assert_eq!(h.state(), ClassicGroupState::Stable);
    [a, b, c]
}

/// A consumer-protocol member's leave heartbeat: epoch -1, or -2 for a static member (its
/// `instance`), which keeps its assignment for the instance.
fn consumer_leave(member_id: &str, instance: Option<&str>) -> Request {
    use crate::messages::{LEAVE_EPOCH, STATIC_LEAVE_EPOCH};
    let epoch = if instance.is_some() {
        STATIC_LEAVE_EPOCH
    } else {
        LEAVE_EPOCH
    };
    let instance = instance.map(str::to_string);
    ConsumerGroupHeartbeatRequest::leave(member_id.to_string(), epoch, instance).into()
}

fn consumer_join(member_id: &str) -> Request {
    consumer_heartbeat(member_id, 0, Some(&["orders"]), Some(Vec::new()))
}

/// `getOrMaybeCreateConsumerGroup` -> `validateOnlineUpgrade` -> `convertToConsumerGroup`: a
/// consumer-protocol member joining a live classic group converts it; the classic members are
/// carried over at generation 1 with their assignments (`ConsumerGroup.fromClassicGroup`), the
/// join bumps the epoch to 2, and each classic member's next Heartbeat is answered
/// REBALANCE_IN_PROGRESS (`classicGroupHeartbeatToConsumerGroup`: its epoch is behind). Its
/// JoinGroup is answered at once with its member epoch as the generation and no leader
/// (`classicGroupJoinToConsumerGroup`).
#[test]
fn a_consumer_member_joining_a_stable_classic_group_converts_it() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Bidirectional);
    let [a, _, _] = stable_classic_group(&mut h);
    let r = h.ask(7000, 3, consumer_join("d"));
    assert_eq!(error_of(&r), ErrorCode::None);
    let Some(Fact::GroupConverted {
        to_consumer: true,
        by: Some(3),
        replaced: false,
        epoch: 1,
        members,
        assignments,
    }) = h
        .facts
        .iter()
        .find(|f| matches!(f, Fact::GroupConverted { .. }))
    else {
        panic!("no conversion: {:?}", h.facts)
    };
    // Each member as the consumer group records it: the leader's assignment for it.
    let mut recorded: Vec<(usize, Vec<usize>)> =
        members.iter().copied().zip(assignments.clone()).collect();
    recorded.sort();
    assert_eq!(
        recorded,
        [(0, vec![0, 1]), (1, vec![2, 3]), (2, vec![4, 5])]
    );
    // The classic group's timers are gone; consumer-group session timers replace them.
    let names: Vec<String> = h.timers.keys().map(CoordTimer::name).collect();
    assert!(
        !names
            .iter()
            .any(|n| n == "sync" || n.starts_with("heartbeat:")),
        "{names:?}"
    );
    assert_eq!(
        error_of(&h.ask(8000, 0, heartbeat(&a, 1))),
        ErrorCode::RebalanceInProgress
    );
    // A's rejoin, still owning its two partitions: answered at once, no leader.
    let mut rejoin = join(&a);
    if let Request::JoinGroup(JoinGroupRequest { protocols, .. }) = &mut rejoin {
        protocols[0].metadata.owned = vec![0, 1];
    }
    let Response::JoinGroup(JoinGroupResponse {
        error,
        generation,
        leader,
        protocol_name,
        ..
    }) = h.ask(8010, 0, rejoin)
    else {
        panic!()
    };
    assert_eq!(error, ErrorCode::None);
    assert!(leader.is_empty());
    assert_eq!(protocol_name.as_deref(), Some("range"));
    // Its SyncGroup at that generation gets its current assignment.
    let r = h.ask(8020, 0, sync(&a, generation, None));
    assert_eq!(error_of(&r), ErrorCode::None, "{r:?}");
}

/// `validateOnlineUpgrade` with the upgrade disabled: GROUP_ID_NOT_FOUND, and the group stays
/// classic; an empty classic group is replaced whatever the policy
/// (`maybeDeleteEmptyClassicGroup`).
#[test]
fn a_policy_without_upgrade_refuses_the_consumer_member_with_group_id_not_found() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Downgrade);
    stable_classic_group(&mut h);
    let r = h.ask(7000, 3, consumer_join("d"));
    assert_eq!(error_of(&r), ErrorCode::GroupIdNotFound);
    assert_eq!(h.state(), ClassicGroupState::Stable);
    assert!(!h
        .facts
        .iter()
        .any(|f| matches!(f, Fact::GroupConverted { .. })));
    let mut empty = migrating(MigrationPolicy::Disabled);
    assert_eq!(
        error_of(&empty.ask(0, 0, consumer_join("d"))),
        ErrorCode::None
    );
}

/// `consumerGroupFenceMember` -> `validateOnlineDowngradeWithFencedMembers` ->
/// `convertToClassicGroup`: the last consumer-protocol member leaving a group of classic
/// members converts it back, Stable at the group epoch, and a rebalance begins; with a policy
/// that does not downgrade it stays a consumer group.
#[test]
fn the_last_consumer_member_leaving_converts_the_group_back_to_classic() {
    use crate::scenario::MigrationPolicy;
    for (policy, back) in [
        (MigrationPolicy::Bidirectional, true),
        (MigrationPolicy::Upgrade, false),
    ] {
        let mut h = migrating(policy);
        stable_classic_group(&mut h);
        let Response::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse {
            member_epoch, ..
        }) = h.ask(7000, 3, consumer_join("d"))
        else {
            panic!()
        };
        let leave = consumer_leave("d", None);
        assert!(member_epoch > 0);
        assert_eq!(error_of(&h.ask(7500, 3, leave)), ErrorCode::None);
        let converted_back = h.facts.iter().any(|f| {
            matches!(
                f,
                Fact::GroupConverted {
                    to_consumer: false,
                    by: Some(3),
                    ..
                }
            )
        });
        assert_eq!(converted_back, back, "{policy:?}");
        if back {
            assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
            assert_eq!(h.coordinator.members().len(), 3);
        }
    }
}

/// A coordinator fail-over after a migration loads the group as it became, not as the log had
/// it before. Upgraded: the consumer group comes back as it was, and the classic record written
/// before the upgrade (Kafka tombstones it at the conversion) is not loaded beside it.
/// Downgraded: the conversion writes the classic group (`createClassicGroupRecords`), so the
/// new coordinator loads it with its members and their target assignments.
#[test]
fn a_fail_over_after_a_migration_loads_the_group_as_it_became() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Bidirectional);
    stable_classic_group(&mut h);
    let Response::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse { member_epoch, .. }) =
        h.ask(7000, 3, consumer_join("d"))
    else {
        panic!()
    };
    assert!(member_epoch > 0);
    let before = h.offsets.group_record().cloned();
    let fail_over = |h: &mut Harness, at_ms: u64| {
        h.coordinator.unload();
        h.timers.clear();
        let record = h.offsets.group_record().cloned();
        let mut out = Out::new(false);
        h.coordinator.load(ms(at_ms), record.as_ref(), &mut out);
        h.now = ms(at_ms);
        h.apply(out);
    };
    fail_over(&mut h, 7100);
    assert!(h.coordinator.consumer_group().is_some(), "still upgraded");
    assert!(
        h.coordinator.members().is_empty(),
        "no classic group beside it"
    );
    let names: Vec<String> = h.timers.keys().map(CoordTimer::name).collect();
    assert!(
        names.iter().all(|n| n.starts_with("session-timeout:")),
        "only the consumer group's sessions: {names:?}"
    );

    // The last consumer-protocol member leaves: the group is classic again and written so.
    assert_eq!(
        error_of(&h.ask(7500, 3, consumer_leave("d", None))),
        ErrorCode::None
    );
    let generation = h.coordinator.generation();
    let Some(GroupRecord::GroupMetadata(written)) = h.offsets.group_record().cloned() else {
        panic!("the downgrade writes the classic group")
    };
    assert_ne!(Some(GroupRecord::GroupMetadata(written.clone())), before);
    assert_eq!(written.generation, generation);
    assert_eq!(written.members.len(), 3);
    assert!(written.members.iter().all(|m| m.assignment.is_some()));
    fail_over(&mut h, 7600);
    assert_eq!(h.state(), ClassicGroupState::Stable);
    assert_eq!(h.coordinator.generation(), generation);
    assert_eq!(h.coordinator.members().len(), 3);
}

/// `getOrMaybeSubscribeStaticConsumerGroupMember` checks that a static instance was released
/// (`throwIfInstanceIdIsUnreleased`) only when both the joining process and the holder speak
/// the consumer protocol. A static classic member's new process, upgraded to
/// `group.protocol=consumer` in a rolling bounce, takes over the instance at once though the
/// old process never left: the group converts, the new member id replaces the classic one and
/// keeps its assignment. The takeover bumps nothing itself, but the converted group has no
/// subscription metadata (`fromClassicGroup`), so its heartbeat finds it changed: the epoch goes
/// from the generation (1) to 2.
#[test]
fn an_upgraded_process_takes_over_a_static_classic_members_instance_without_a_release() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Bidirectional);
    let ids = pod_b_upgraded(&mut h);
    assert_eq!(h.coordinator.generation(), 2, "the metadata's bump");
    assert!(h.facts.iter().any(|f| matches!(
        f,
        Fact::GroupConverted {
            to_consumer: true,
            ..
        }
    )));
    // The classic process's entry is gone: its next Heartbeat is not a member's.
    assert_eq!(
        error_of(&h.ask(7100, 1, heartbeat(&ids[1], 1))),
        ErrorCode::UnknownMemberId
    );
}

/// Static classic members pod-a, pod-b and pod-c (clients 0-2), Stable at generation 1; then
/// pod-b's new process (client 3, member "d") upgraded to the consumer protocol takes over
/// its instance at 7 s, with pod-b's partitions. Returns the classic member ids.
fn pod_b_upgraded(h: &mut Harness) -> [String; 3] {
    let mut ids = Vec::new();
    for (i, pod) in ["pod-a", "pod-b", "pod-c"].into_iter().enumerate() {
        ids.push(join_static(h, i, pod).1);
    }
    h.advance(3000);
    h.advance(6000);
    let ids: [String; 3] = ids.try_into().unwrap();
    h.request(6100, 0, sync(&ids[0], 1, assignments(&ids)));
    h.request(6110, 1, sync(&ids[1], 1, None));
    h.request(6120, 2, sync(&ids[2], 1, None));
    assert_eq!(h.state(), ClassicGroupState::Stable);
    let mut upgraded = consumer_join("d");
    if let Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest { instance_id, .. }) =
        &mut upgraded
    {
        *instance_id = Some("pod-b".into());
    }
    let answer = h.ask(7000, 3, upgraded);
    assert_eq!(error_of(&answer), ErrorCode::None, "{answer:?}");
    let (epoch, assignment) = epoch_and_assignment(&answer);
    assert!(epoch > 0);
    assert_eq!(assignment, Some(vec![2, 3]), "pod-b's partitions");
    ids
}

fn converted_to_classic(h: &Harness) -> Option<&Fact> {
    h.facts.iter().find(|f| {
        matches!(
            f,
            Fact::GroupConverted {
                to_consumer: false,
                ..
            }
        )
    })
}

/// `consumerGroupHeartbeat` builds the member with `setClassicMemberMetadata(null)`: the
/// process that took over a classic member's static entry speaks the consumer protocol. So
/// when another consumer-protocol member (e) leaves, the group still has one (d) and stays a
/// consumer group; taking d for a classic member, the model converted it, and d's next
/// heartbeat was refused GROUP_ID_NOT_FOUND.
#[test]
fn a_process_that_took_over_a_classic_members_instance_is_a_consumer_protocol_member() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Bidirectional);
    pod_b_upgraded(&mut h);
    let (e_epoch, _) = epoch_and_assignment(&h.ask(7200, 4, consumer_join("e")));
    assert!(e_epoch > 0);
    let leave = consumer_leave("e", None);
    assert_eq!(error_of(&h.ask(7300, 4, leave)), ErrorCode::None);
    assert_eq!(converted_to_classic(&h), None);
    assert!(
        h.coordinator.consumer_group().is_some(),
        "still a consumer group"
    );
}

/// Step 4 of `classicGroupJoinToConsumerGroup`: a static member's new process on the classic
/// protocol takes over the entry of the last consumer-protocol member (no release needed
/// when either speaks classic), and under a policy with downgrade the group becomes classic
/// at once (`validateOnlineDowngradeWithReplacedMemberId`, `convertToClassicGroup` with the
/// joining member): Stable at the group epoch, the joining member in the replaced one's place
/// with its assignment, no rebalance. Its SyncGroup at the generation it was given is
/// answered with pod-b's partitions. Without downgrade the group stays a consumer group and
/// bridges it.
#[test]
fn a_classic_process_taking_over_the_last_consumer_members_instance_converts_without_a_rebalance() {
    use crate::scenario::MigrationPolicy;
    for (policy, back) in [
        (MigrationPolicy::Bidirectional, true),
        (MigrationPolicy::Upgrade, false),
    ] {
        let mut h = migrating(policy);
        pod_b_upgraded(&mut h);
        let answer = h.ask(8000, 4, join_request("", Some("pod-b"), &["range"]));
        assert_eq!(error_of(&answer), ErrorCode::None, "{answer:?}");
        let Response::JoinGroup(JoinGroupResponse {
            member_id,
            generation,
            ..
        }) = &answer
        else {
            panic!("{answer:?}")
        };
        match converted_to_classic(&h) {
            Some(Fact::GroupConverted {
                by: Some(4),
                replaced: true,
                epoch,
                members,
                ..
            }) => {
                assert!(back, "{policy:?}");
                assert_eq!(*epoch, *generation);
                assert_eq!(members.len(), 3);
            }
            None => assert!(!back, "{policy:?}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.coordinator.consumer_group().is_none(), back);
        if back {
            assert_eq!(h.state(), ClassicGroupState::Stable, "no rebalance");
            assert_eq!(h.coordinator.generation(), *generation);
            let ids: Vec<String> = h
                .coordinator
                .members()
                .into_iter()
                .map(|m| m.member_id)
                .collect();
            assert!(ids.contains(member_id), "{ids:?}");
        }
        let synced = h.ask(8100, 4, sync(member_id, *generation, None));
        let Response::SyncGroup(SyncGroupResponse {
            error, assignment, ..
        }) = synced
        else {
            panic!("{synced:?}")
        };
        assert_eq!(error, ErrorCode::None, "{policy:?}");
        assert_eq!(
            assignment,
            Some(vec![2, 3]),
            "pod-b's partitions ({policy:?})"
        );
    }
}

// ---- The consumer protocol's reconciliation ----

/// A consumer-group coordinator over "orders" (partition 0) and "audit" (partition 1), assigning
/// at every epoch bump.
fn two_topic_consumer_group() -> Harness {
    assigning_at_once(vec![topic("orders", 7, 1, 0), topic("audit", 8, 1, 1)])
}

fn consumer_heartbeat(
    member_id: &str,
    member_epoch: i32,
    topics: Option<&[&str]>,
    owned: Option<Vec<usize>>,
) -> Request {
    Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
        member_id: member_id.to_string(),
        member_epoch,
        instance_id: None,
        rebalance_timeout_ms: if member_epoch == 0 {
            REBALANCE_MS as i32
        } else {
            -1
        },
        subscribed_topic_names: topics.map(|t| t.iter().map(|s| s.to_string()).collect()),
        server_assignor: None,
        owned,
    })
}

/// (member epoch, assignment if sent) of a ConsumerGroupHeartbeat answer.
fn epoch_and_assignment(r: &Response) -> (i32, Option<Vec<usize>>) {
    match r {
        Response::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse {
            error: ErrorCode::None,
            member_epoch,
            assignment,
            ..
        }) => (*member_epoch, assignment.clone()),
        other => panic!("not a successful heartbeat answer: {other:?}"),
    }
}

/// `CurrentAssignmentBuilder.updateCurrentAssignment`: a member that drops a topic while a
/// partition of it is already pending revocation keeps that partition held until its heartbeat
/// no longer reports it; only then does the partition move on (handing it over at the
/// subscription change gave it two owners: fuzz seeds 28606 and 56070).
#[test]
fn a_partition_pending_revocation_stays_held_when_its_owner_drops_the_topic() {
    let both: &[&str] = &["orders", "audit"];
    let mut h = two_topic_consumer_group();
    let (a_epoch, assignment) =
        epoch_and_assignment(&h.ask(10, 0, consumer_heartbeat("a", 0, Some(both), Some(vec![]))));
    assert_eq!(assignment, Some(vec![0, 1]));
    let (b_epoch, _) =
        epoch_and_assignment(&h.ask(20, 1, consumer_heartbeat("b", 0, Some(both), Some(vec![]))));
    assert!(b_epoch > a_epoch);
    // a must give one partition to b: it stays at its epoch until it has revoked it.
    let (epoch, kept) = epoch_and_assignment(&h.ask(
        30,
        0,
        consumer_heartbeat("a", a_epoch, None, Some(vec![0, 1])),
    ));
    let kept = kept.expect("a smaller assignment");
    assert_eq!((epoch, kept.len()), (a_epoch, 1));
    let revoking = 1 - kept[0];
    let kept_topic = ["orders", "audit"][kept[0]];
    // a drops the topic of the partition it is revoking, still owning it.
    let dropping = consumer_heartbeat("a", a_epoch, Some(&[kept_topic]), Some(vec![0, 1]));
    h.ask(40, 0, dropping);
    let (_, b_assignment) =
        epoch_and_assignment(&h.ask(50, 1, consumer_heartbeat("b", b_epoch, None, Some(vec![]))));
    assert!(
        !b_assignment.unwrap_or_default().contains(&revoking),
        "handed to b while a still owns it"
    );
    // a reports it revoked: the partition is released, and b gets it.
    h.ask(
        60,
        0,
        consumer_heartbeat("a", a_epoch, None, Some(kept.clone())),
    );
    let (_, b_assignment) =
        epoch_and_assignment(&h.ask(70, 1, consumer_heartbeat("b", b_epoch, None, Some(vec![]))));
    assert_eq!(b_assignment, Some(vec![revoking]));
}

/// KIP-1251 (`ConsumerGroup.validateOffsetCommit` with assignment epochs): a member asked to
/// revoke at an epoch it reached without giving anything up commits what it is revoking at the
/// epoch before, sent before the answer that moved it on arrived. The commit is written: the
/// partitions are still held, pending revocation, since that epoch. A partition assigned after
/// the commit's epoch, or one it does not hold, is STALE_MEMBER_EPOCH, as is an epoch ahead of
/// the member's. The model had refused the first (fuzz seed 339: a commit after a batch, racing
/// the epoch bump), and the next owner reprocessed what had been committed nowhere.
#[test]
fn a_lagging_commit_of_partitions_pending_revocation_is_written() {
    let mut h = assigning_at_once(vec![topic("orders", 7, 3, 0), topic("audit", 8, 1, 3)]);
    let all = vec![0, 1, 2];
    let (e1, a) = epoch_and_assignment(&h.ask(
        10,
        0,
        consumer_heartbeat("a", 0, Some(&["orders"]), Some(vec![])),
    ));
    assert_eq!(a, Some(all.clone()));
    // c joins for `audit` alone: a new epoch that takes nothing from a, which moves on to it
    // with the partitions it had, still assigned at e1.
    h.ask(
        20,
        2,
        consumer_heartbeat("c", 0, Some(&["audit"]), Some(vec![])),
    );
    let (e2, unchanged) =
        epoch_and_assignment(&h.ask(30, 0, consumer_heartbeat("a", e1, None, Some(all.clone()))));
    assert_eq!((e2, unchanged), (e1 + 1, None));
    // b joins for `orders`: a must give one partition up, and stays at e2 until it has.
    h.ask(
        40,
        1,
        consumer_heartbeat("b", 0, Some(&["orders"]), Some(vec![])),
    );
    let (epoch, kept) =
        epoch_and_assignment(&h.ask(50, 0, consumer_heartbeat("a", e2, None, Some(all.clone()))));
    let kept = kept.expect("a smaller assignment");
    assert_eq!((epoch, kept.len()), (e2, 2));
    let revoking = *all.iter().find(|p| !kept.contains(p)).unwrap();
    let commit = |epoch: i32, partition: usize| commit("a", epoch, partition, 5);
    // Sent at e1, before the answer that moved a on arrived.
    assert_eq!(
        error_of(&h.ask(60, 0, commit(e1, revoking))),
        ErrorCode::None
    );
    assert_eq!(
        error_of(&h.ask(61, 0, commit(e1, kept[0]))),
        ErrorCode::None
    );
    assert_eq!(h.offsets.committed(revoking), Some(5));
    // `audit`-0 (global 3) is c's; e2 + 1 is ahead of a; e1 - 1 is before a held anything.
    for (epoch, partition) in [(e1, 3), (e2 + 1, kept[0]), (e1 - 1, revoking)] {
        assert_eq!(
            error_of(&h.ask(70, 0, commit(epoch, partition))),
            ErrorCode::StaleMemberEpoch,
            "epoch {epoch}, partition {partition}"
        );
    }
}
/// A ConsumerGroupHeartbeat of a static member (`group.instance.id` = "pod-1").
fn static_heartbeat(member_id: &str, member_epoch: i32, owned: Option<Vec<usize>>) -> Request {
    let mut request = consumer_heartbeat(
        member_id,
        member_epoch,
        (member_epoch == 0).then_some(&["orders", "audit"][..]),
        owned,
    );
    if let Request::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest { instance_id, .. }) =
        &mut request
    {
        *instance_id = Some("pod-1".into());
    }
    request
}

/// `getOrMaybeSubscribeStaticConsumerGroupMember`: a new process (epoch 0) may take over a
/// static member's instance id only once the holder released it with a leave (epoch -2),
/// else UNRELEASED_INSTANCE_ID (`throwIfInstanceIdIsUnreleased`); the old process, still
/// heartbeating at its epoch after the takeover, is FENCED_INSTANCE_ID
/// (`throwIfInstanceIdIsFenced`).
#[test]
fn a_static_instance_is_taken_over_only_once_released_and_the_old_process_is_fenced() {
    let mut h = two_topic_consumer_group();
    let (epoch, _) = epoch_and_assignment(&h.ask(10, 0, static_heartbeat("a", 0, Some(vec![]))));
    assert_eq!(
        error_of(&h.ask(20, 1, static_heartbeat("b", 0, Some(vec![])))),
        ErrorCode::UnreleasedInstanceId
    );
    // a leaves as a static member does: epoch -2 keeps its assignment for the instance.
    h.ask(30, 0, static_heartbeat("a", -2, None));
    let (b_epoch, _) = epoch_and_assignment(&h.ask(40, 1, static_heartbeat("b", 0, Some(vec![]))));
    assert!(b_epoch > 0);
    assert_eq!(
        error_of(&h.ask(50, 0, static_heartbeat("a", epoch, Some(vec![0, 1])))),
        ErrorCode::FencedInstanceId
    );
}

/// Kafka's own path to a stuck partition, which `cgsim fuzz --migration` stays clear of: a
/// static member's classic process converts the group back
/// (`validateOnlineDowngradeWithReplacedMemberId`) while it still reconciles. A dynamic
/// classic member (e) joined, was given a target it cannot have yet (every partition still
/// held), and synced with less; the consumer-protocol holder (d) closed as a static member.
/// The takeover converts the group: Stable, each member's classic assignment its target
/// (`ClassicGroup.fromConsumerGroup`), no rebalance. e's assignment now holds a partition it
/// was never sent, and its Heartbeat is answered NONE: only another member's rejoin would
/// rebalance the group and send it (here the classic member that still holds it is a
/// generation behind; when nobody is, as in the fuzz case that met it, the partition stays
/// unowned).
#[test]
fn a_downgrade_by_takeover_while_reconciling_leaves_a_bridged_members_target_unsent() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Bidirectional);
    pod_b_upgraded(&mut h);
    let e = member_id_of(&h.ask(8200, 4, join("")));
    let Response::JoinGroup(JoinGroupResponse { generation, .. }) = h.ask(8210, 4, join(&e)) else {
        panic!("no JoinGroup answer")
    };
    let Response::SyncGroup(SyncGroupResponse {
        assignment: Some(sent),
        ..
    }) = h.ask(8220, 4, sync(&e, generation, None))
    else {
        panic!("no SyncGroup answer")
    };
    let static_leave = consumer_leave("d", Some("pod-b"));
    assert_eq!(error_of(&h.ask(8300, 3, static_leave)), ErrorCode::None);
    let takeover = h.ask(9000, 5, join_request("", Some("pod-b"), &["range"]));
    assert_eq!(error_of(&takeover), ErrorCode::None, "{takeover:?}");
    assert!(h.coordinator.consumer_group().is_none(), "classic again");
    assert_eq!(h.state(), ClassicGroupState::Stable, "no rebalance");
    let kept = h
        .coordinator
        .members()
        .into_iter()
        .find(|m| m.member_id == e)
        .and_then(|m| m.assignment)
        .unwrap_or_default();
    assert!(
        kept.len() > sent.len() && sent.iter().all(|p| kept.contains(p)),
        "e was sent {sent:?}, holds {kept:?} in the classic group"
    );
    let told = h.ask(9100, 4, heartbeat(&e, h.coordinator.generation()));
    assert_eq!(error_of(&told), ErrorCode::None);
}

/// The other path of Kafka's own that `cgsim fuzz --migration` mostly stays clear of (the
/// checker names the double ownership it makes: `check::UPGRADE_BEFORE_SYNC`): a classic group
/// whose rebalance went from CompletingRebalance back to PreparingRebalance has every member's
/// assignment reset to empty (`resetAndPropagateAssignmentWithError`), and a consumer-protocol
/// member's join converts it then: the classic members are carried over owning nothing
/// (`fromClassicGroup` reads those assignments), so the joining member is given a partition at
/// once, though the classic members still hold what generation 1 gave them (a cooperative one
/// processes it until it rejoins and learns otherwise).
#[test]
fn a_conversion_after_a_reset_rebalance_gives_the_joining_member_partitions_still_held() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Bidirectional);
    let [a, b, c] = stable_classic_group(&mut h);
    // e joins: a rebalance, which a, b and c join; generation 2 waits for the leader's sync.
    join_dynamic(&mut h, 6500, 3);
    for (i, id) in [&a, &b, &c].into_iter().enumerate() {
        h.request(6600 + i as u64, i, join(id));
    }
    assert_eq!(h.state(), ClassicGroupState::CompletingRebalance);
    assert_eq!(h.coordinator.generation(), 2);
    // f joins before the sync: back to PreparingRebalance, every assignment reset.
    join_dynamic(&mut h, 6700, 4);
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
    assert!(h
        .coordinator
        .members()
        .iter()
        .all(|m| m.assignment.as_ref().is_none_or(Vec::is_empty)));
    let answer = h.ask(6800, 5, consumer_join("d"));
    assert_eq!(error_of(&answer), ErrorCode::None, "{answer:?}");
    let (_, assignment) = epoch_and_assignment(&answer);
    let given = assignment.unwrap_or_default();
    assert!(
        !given.is_empty(),
        "d is given at once what generation 1's members still hold"
    );
}

/// KAFKA-20273: when a classic takeover converts the group back while the target assignment
/// is stale (behind the group epoch: here e's join bumped it 100 ms after the last target,
/// inside `group.consumer.assignment.interval.ms`), the classic group rebalances at once
/// instead of staying Stable with an assignment nobody computed for it.
#[test]
fn a_classic_takeover_converting_the_group_with_a_stale_target_rebalances() {
    use crate::scenario::MigrationPolicy;
    let mut h = migrating(MigrationPolicy::Bidirectional);
    pod_b_upgraded(&mut h);
    let e = member_id_of(&h.ask(7100, 4, join("")));
    assert_eq!(error_of(&h.ask(7110, 4, join(&e))), ErrorCode::None);
    assert_eq!(h.coordinator.generation(), 3, "e's join bumped the epoch");
    let takeover = h.ask(7200, 5, join_request("", Some("pod-b"), &["range"]));
    assert_eq!(error_of(&takeover), ErrorCode::None, "{takeover:?}");
    assert!(h.coordinator.consumer_group().is_none(), "classic again");
    assert_eq!(h.state(), ClassicGroupState::PreparingRebalance);
}
