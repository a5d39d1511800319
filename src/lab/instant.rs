//! A run at one instant, for the rebalance view's scrubber: who owns and who processes each
//! partition, each member's process and its place in the group protocol, the coordinator's
//! state; and the run's lanes (every partition's owners over time, each member's life), which
//! the page draws on one time axis. Everything here is read from the run's histories: the marks
//! the SVG timeline and the Perfetto trace are drawn from (so the three agree), and the group's
//! history (`crate::history`: each member and the coordinator at any instant); the page only
//! draws it.
//!
//! "At T ms" is the end of that millisecond: every event the report times at T or before (the
//! report floors microseconds to milliseconds) has happened. So at a rebalance's `end_ms` the
//! group is Stable and the new owners hold their partitions.

use super::runs::LabRun;
use crate::facts::RejoinCause;
use crate::history::Mark;
use crate::scenario::Protocol;
use crate::sim::SimTime;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct StateAt {
    pub at_ms: u64,
    pub coordinator: CoordinatorAt,
    /// The rebalance under way at the instant (the formation included), as the report lists it.
    pub rebalance: Option<RebalanceAt>,
    pub members: Vec<MemberAt>,
    pub partitions: Vec<PartitionAt>,
    pub brokers: Vec<BrokerAt>,
}

/// The coordinator's side, in Kafka's words.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorAt {
    /// The group's protocol now (`classic` or `consumer`; the online migration converts it).
    pub protocol: &'static str,
    /// Classic: `Dead` (no group yet), `Empty`, `PreparingRebalance`, `CompletingRebalance`,
    /// `Stable`. Consumer: `Empty`, `Assigning`, `Reconciling`, `Stable`
    /// (`ConsumerGroup.maybeUpdateGroupState`).
    pub state: &'static str,
    /// Classic: the generation; consumer: the group epoch.
    pub generation: Option<i32>,
    /// Consumer: the target assignment's epoch.
    pub target_epoch: Option<i32>,
    /// The broker hosting the coordinator (`None`: its broker died and none took over yet).
    pub broker: Option<u32>,
    /// A new coordinator still loading the group from `__consumer_offsets`.
    pub loading: bool,
    /// Classic: the member the last JoinGroup answers made the leader.
    pub leader: Option<String>,
    /// The members in the coordinator's group, by scenario order.
    pub members: Vec<String>,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct RebalanceAt {
    pub generation: i32,
    /// The report's trigger (`formation` for the group's forming).
    pub trigger: String,
    pub member: Option<String>,
    pub start_ms: u64,
    pub end_ms: u64,
    /// `join` or `sync` (classic), `reconcile` (consumer), `formation`.
    pub phase: &'static str,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct MemberAt {
    pub name: String,
    /// Its Kafka member id now (none before the coordinator added it).
    pub member_id: Option<String>,
    /// `not started`, `running`, `stalled`, `closing`, `closed`, `crashed`.
    pub process: &'static str,
    pub stalled_until_ms: Option<u64>,
    /// The member's protocol now (`classic` or `consumer`).
    pub protocol: &'static str,
    /// Where its consumer is in the group protocol, by the client's `MemberState` names:
    /// classic `UNJOINED`, `PREPARING_REBALANCE` (JoinGroup sent), `COMPLETING_REBALANCE`
    /// (SyncGroup sent), `STABLE`, from its JoinGroup and SyncGroup steps; consumer
    /// `UNSUBSCRIBED`, then every state its membership manager moves to (`JOINING`,
    /// `RECONCILING`, `ACKNOWLEDGING`, `STABLE`, `FENCED`, `STALE`, `LEAVING`). None while no
    /// process runs.
    pub state: Option<&'static str>,
    /// Classic: the generation of its process's last SyncGroup; consumer: its member epoch, as
    /// the coordinator has it.
    pub generation: Option<i32>,
    /// Whether the coordinator has it in the group.
    pub in_group: bool,
    /// Classic: it must rejoin, and why (until it sends its JoinGroup).
    pub rejoin: Option<&'static str>,
    /// What it owns (DESIGN.md "What counts") and what it processes.
    pub owned: Vec<String>,
    pub processing: Vec<String>,
    /// Alive and owning or having had work, it processes nothing (a rebalance's pause).
    pub paused: bool,
    /// A fatal error it hit (the application exits).
    pub error: Option<&'static str>,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct PartitionAt {
    pub name: String,
    pub owner: Option<String>,
    pub processed_by: Option<String>,
    /// See [`PartitionState`].
    pub state: &'static str,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct BrokerAt {
    pub id: u32,
    pub up: bool,
    pub coordinator: bool,
}

/// A partition's state, from its owner and processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionState {
    /// Owned and processed by its owner.
    Processing,
    /// Owned, not processed (its owner revoking, restoring, stalled, or paused).
    Stopped,
    /// Processed by a member that does not own it (Kafka's zombie).
    Zombie,
    /// Nobody owns or processes it, after the group formed: it stands still.
    Unavailable,
    /// Nobody owns it yet: the group has not formed.
    Unassigned,
}

impl PartitionState {
    pub fn of(owner: Option<usize>, processor: Option<usize>, formed: bool) -> PartitionState {
        match (owner, processor) {
            (Some(o), Some(p)) if o == p => PartitionState::Processing,
            (_, Some(_)) => PartitionState::Zombie,
            (Some(_), None) => PartitionState::Stopped,
            (None, None) if formed => PartitionState::Unavailable,
            (None, None) => PartitionState::Unassigned,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PartitionState::Processing => "processing",
            PartitionState::Stopped => "stopped",
            PartitionState::Zombie => "zombie",
            PartitionState::Unavailable => "unavailable",
            PartitionState::Unassigned => "unassigned",
        }
    }
}

/// Microseconds up to which events count at `at_ms` (the end of that millisecond).
fn bound_us(at_ms: u64) -> u64 {
    at_ms.saturating_mul(1000).saturating_add(999)
}

/// Each partition's owner and processor after the marks up to `bound`, and whether the group
/// had formed (been Stable once).
fn owners(run: &LabRun, bound: u64) -> (Vec<Option<usize>>, Vec<Option<usize>>, bool) {
    let h = &run.history;
    let (np, nm) = (h.partition_names.len(), h.member_names.len());
    let mut owner = vec![None; np];
    let mut active = vec![None; np];
    let mut formed = false;
    for (_, mark) in h.marks.iter().take_while(|(at, _)| *at <= bound) {
        match *mark {
            Mark::Owner { partition, member } if partition < np => {
                owner[partition] = member.filter(|&m| m < nm);
            }
            Mark::Processing { partition, member } if partition < np => {
                active[partition] = member.filter(|&m| m < nm);
            }
            Mark::Stable { .. } => formed = true,
            _ => {}
        }
    }
    (owner, active, formed)
}

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Classic => "classic",
        Protocol::Consumer => "consumer",
    }
}

fn rejoin_cause(cause: RejoinCause) -> &'static str {
    match cause {
        RejoinCause::HeartbeatRebalance => "a heartbeat said REBALANCE_IN_PROGRESS",
        RejoinCause::HeartbeatError(_) => "a heartbeat answer ended its membership",
        RejoinCause::CommitRebalance => "a commit answer said REBALANCE_IN_PROGRESS",
        RejoinCause::CommitError(_) => "a commit answer ended its membership",
        RejoinCause::FollowUp => "it revoked partitions: the cooperative follow-up",
        RejoinCause::Subscription => "its subscription changed",
        RejoinCause::Metadata => "partition counts changed",
    }
}

/// The run at `at_ms`.
pub fn state_at(run: &LabRun, at_ms: u64) -> StateAt {
    let view = &run.view;
    let bound = bound_us(at_ms);
    let names = &run.history.member_names;
    let nm = names.len();
    let report = &run.report;

    // The coordinator and each member, from the group's history: the group by its type, each
    // member by its membership's state type (`ClassicMemberState`, `ConsumerMemberState`).
    let t = SimTime::from_micros(bound);
    let coordinator_state = run.group.coordinator_at(t);
    let replay = run.group.consumer_group_at(t);
    let group_protocol = coordinator_state.protocol;
    let consumer_group = group_protocol == Protocol::Consumer && replay.exists();
    let mut epochs: Vec<Option<i32>> = vec![None; nm];
    let mut in_consumer_group: BTreeSet<usize> = BTreeSet::new();
    for (member, epoch, _, _) in replay.members() {
        if let Some(m) = member.filter(|&m| m < nm) {
            epochs[m] = Some(epoch);
            in_consumer_group.insert(m);
        }
    }
    let in_group = if consumer_group {
        // A mixed group keeps its classic members in the consumer group's map too.
        &in_consumer_group
    } else {
        &coordinator_state.classic_members
    };
    let (group_epoch, target_epoch) = replay.epochs();
    let coordinator = CoordinatorAt {
        protocol: protocol_name(group_protocol),
        state: if consumer_group {
            replay.state()
        } else {
            coordinator_state.classic_state.name()
        },
        generation: if consumer_group {
            Some(group_epoch)
        } else {
            coordinator_state.generation
        },
        target_epoch: consumer_group.then_some(target_epoch),
        broker: coordinator_state.broker,
        loading: coordinator_state.loading,
        leader: if consumer_group {
            None
        } else {
            coordinator_state.leader.map(|m| names[m].clone())
        },
        members: in_group.iter().map(|&m| names[m].clone()).collect(),
    };

    let (owner, active, formed) = owners(run, bound);
    let pnames = &run.history.partition_names;
    let partitions: Vec<PartitionAt> = (0..pnames.len())
        .map(|p| PartitionAt {
            name: pnames[p].clone(),
            owner: owner[p].map(|m| names[m].clone()),
            processed_by: active[p].map(|m| names[m].clone()),
            state: PartitionState::of(owner[p], active[p], formed).name(),
        })
        .collect();
    let within = |spans: &[(u64, u64)]| spans.iter().any(|&(a, b)| a <= bound && bound < b);
    let members: Vec<MemberAt> = (0..nm)
        .map(|m| {
            let protocol = run.group.protocol_at(m, t);
            let list = |of: &[Option<usize>]| -> Vec<String> {
                (0..pnames.len())
                    .filter(|&p| of[p] == Some(m))
                    .map(|p| pnames[p].clone())
                    .collect()
            };
            let member = run.group.member_at(m, t);
            MemberAt {
                name: names[m].clone(),
                member_id: member.member_id.clone(),
                process: member.process.name(),
                stalled_until_ms: member.stalled_until.map(SimTime::as_millis),
                protocol: protocol_name(protocol),
                state: member.membership,
                generation: match protocol {
                    Protocol::Classic => member.synced_generation,
                    Protocol::Consumer => epochs[m],
                },
                in_group: in_group.contains(&m),
                rejoin: member.rejoin.map(rejoin_cause),
                owned: list(&owner),
                processing: list(&active),
                paused: view.pauses.get(m).is_some_and(|p| within(p)),
                error: member.error,
            }
        })
        .collect();

    // The rebalance under way: start_ms <= at < end_ms (at end_ms the group is Stable).
    let rebalance = report
        .rebalances
        .list
        .iter()
        .find(|r| r.start_ms <= at_ms && at_ms < r.end_ms)
        .map(|r| RebalanceAt {
            generation: r.generation,
            trigger: r.trigger.clone(),
            member: r.member.clone(),
            start_ms: r.start_ms,
            end_ms: r.end_ms,
            phase: match r.join_ms {
                Some(join) if at_ms < r.start_ms + join => "join",
                Some(_) => "sync",
                None => "reconcile",
            },
        })
        .or_else(|| {
            let f = report.formation.as_ref()?;
            (f.start_ms <= at_ms && at_ms < f.end_ms).then(|| RebalanceAt {
                generation: f.generation,
                trigger: "formation".into(),
                member: None,
                start_ms: f.start_ms,
                end_ms: f.end_ms,
                phase: "formation",
            })
        });

    let mut up = vec![true; run.scenario.cluster.brokers as usize];
    for e in report.brokers.iter().filter(|e| e.at_ms <= at_ms) {
        if let Some(b) = e.broker.filter(|&b| (b as usize) < up.len()) {
            match e.event {
                "crash" => up[b as usize] = false,
                "restart" => up[b as usize] = true,
                _ => {}
            }
        }
    }
    let brokers = up
        .iter()
        .enumerate()
        .map(|(b, &up)| BrokerAt {
            id: b as u32,
            up,
            coordinator: coordinator.broker == Some(b as u32),
        })
        .collect();

    StateAt {
        at_ms,
        coordinator,
        rebalance,
        members,
        partitions,
        brokers,
    }
}

/// The run drawn over time: per partition its owner's segments, per member its life.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Lanes {
    pub end_us: u64,
    pub members: Vec<MemberLane>,
    pub partitions: Vec<PartitionLane>,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct MemberLane {
    pub name: String,
    /// `[start_us, end_us]` spans.
    pub alive: Vec<(u64, u64)>,
    pub paused: Vec<(u64, u64)>,
    pub stalled: Vec<(u64, u64)>,
    /// `[at_us, event]`: `start`, `close`, `crash`, `stall_begin`, `stall_end`.
    pub events: Vec<(u64, &'static str)>,
}

/// `[start_us, end_us, member, state]`: the member is the owner (the processor for a zombie),
/// null for an unavailable partition.
pub type Segment = (u64, u64, Option<usize>, &'static str);

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct PartitionLane {
    pub name: String,
    /// Its segments in time order; unassigned spans are left out.
    pub segments: Vec<Segment>,
}

/// The lanes of a run.
pub fn lanes(run: &LabRun) -> Lanes {
    let view = &run.view;
    let h = &run.history;
    let (np, nm) = (h.partition_names.len(), h.member_names.len());
    let mut owner: Vec<Option<usize>> = vec![None; np];
    let mut active: Vec<Option<usize>> = vec![None; np];
    let mut formed = false;
    type Open = Option<(u64, Option<usize>, PartitionState)>;
    let mut open: Vec<Open> = vec![None; np];
    let mut segments: Vec<Vec<Segment>> = vec![Vec::new(); np];
    let close = |seg: &mut Vec<_>, o: Open, at: u64| {
        if let Some((since, m, s)) = o {
            if at > since && s != PartitionState::Unassigned {
                seg.push((since, at, m, s.name()));
            }
        }
    };
    let now = |owner: Option<usize>, active: Option<usize>, formed: bool| {
        let s = PartitionState::of(owner, active, formed);
        let m = match s {
            PartitionState::Zombie => active,
            _ => owner,
        };
        (m, s)
    };
    for &(at, ref mark) in &h.marks {
        let touched: Vec<usize> = match *mark {
            Mark::Owner { partition, member } if partition < np => {
                owner[partition] = member.filter(|&m| m < nm);
                vec![partition]
            }
            Mark::Processing { partition, member } if partition < np => {
                active[partition] = member.filter(|&m| m < nm);
                vec![partition]
            }
            Mark::Stable { .. } if !formed => {
                formed = true;
                (0..np).collect()
            }
            _ => continue,
        };
        for p in touched {
            let (m, s) = now(owner[p], active[p], formed);
            if open[p].is_some_and(|(_, om, os)| om == m && os == s) {
                continue;
            }
            close(&mut segments[p], open[p].take(), at);
            open[p] = Some((at, m, s));
        }
    }
    for p in 0..np {
        close(&mut segments[p], open[p].take(), view.end_us);
    }
    let members = (0..nm)
        .map(|m| MemberLane {
            name: h.member_names[m].clone(),
            alive: view.alive[m].clone(),
            paused: view.pauses[m].clone(),
            stalled: view.stalls[m].clone(),
            events: view
                .events
                .iter()
                .filter(|e| e.member == m)
                .map(|e| (e.at_us, e.event))
                .collect(),
        })
        .collect();
    Lanes {
        end_us: view.end_us,
        members,
        partitions: (0..np)
            .map(|p| PartitionLane {
                name: h.partition_names[p].clone(),
                segments: std::mem::take(&mut segments[p]),
            })
            .collect(),
    }
}
