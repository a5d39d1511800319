//! The timeline in order: a member acts only in the state its action needs (only a running
//! member leaves, crashes, stalls or subscribes; only a stopped one restarts; a join starts it
//! once), and a broker named by id crashes only while it runs and restarts only while it is
//! down. A check names the earliest offending event by its index in the timeline (which is in
//! time order), for the caller to name the entry's line, and the event that left the member or
//! the broker in the state it had then, for the lab to say what an added fault conflicts with.

use crate::scenario::{BrokerRef, MemberSpec, TimelineAction, TimelineEvent};

/// An event that cannot happen where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The offending event's index.
    pub event: usize,
    /// The event that left its member or broker in the state it had then (`None`: the state
    /// it started in).
    pub earlier: Option<usize>,
    /// What is wrong, in words (the loader's message).
    pub message: String,
}

/// Broker faults must make sense in order: a broker named by id crashes only while it runs and
/// restarts only while it is down. A crash of `"coordinator"` stops whichever broker hosts the
/// coordinator then (the run decides; a restart of it names its id).
pub fn check_brokers(timeline: &[TimelineEvent], brokers: u32) -> Result<(), Conflict> {
    // The event that last crashed or restarted each broker (a crash: it is down).
    let mut last: Vec<Option<usize>> = vec![None; brokers as usize];
    let down = |last: &[Option<usize>], b: u32| {
        last[b as usize]
            .is_some_and(|k| matches!(timeline[k].action, TimelineAction::BrokerCrash { .. }))
    };
    // Some broker was stopped as "coordinator": a restart of any id may be its.
    let mut unnamed_down = None;
    for (i, e) in timeline.iter().enumerate() {
        match e.action {
            TimelineAction::BrokerCrash {
                broker: BrokerRef::Id(b),
                ..
            } => {
                if down(&last, b) {
                    return Err(Conflict {
                        event: i,
                        earlier: last[b as usize],
                        message: format!(
                            "timeline: broker {b} cannot crash at {} ms (it is down since an earlier broker_crash; broker_restart it first)",
                            e.at_ms
                        ),
                    });
                }
                last[b as usize] = Some(i);
            }
            TimelineAction::BrokerCrash {
                broker: BrokerRef::Coordinator,
                ..
            } => unnamed_down = Some(i),
            TimelineAction::BrokerRestart { broker: b } => {
                if !down(&last, b) && unnamed_down.is_none() {
                    return Err(Conflict {
                        event: i,
                        earlier: last[b as usize],
                        message: format!(
                            "timeline: broker {b} cannot restart at {} ms (it is running: no broker_crash stopped it)",
                            e.at_ms
                        ),
                    });
                }
                last[b as usize] = Some(i);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Each member's actions must make sense in order: a running member can leave, crash, stall or
/// subscribe; only a stopped one can restart; a stall starts after the member's previous stall
/// has ended (a stall holds the batch in progress, so one inside another would end after both:
/// overlapping stalls are refused rather than given an end nobody wrote).
pub fn check_lifecycle(timeline: &[TimelineEvent], members: &[MemberSpec]) -> Result<(), Conflict> {
    let mut started: Vec<bool> = members.iter().map(|m| m.start_ms == Some(0)).collect();
    let mut running = started.clone();
    // The event that last started or stopped each member, and its stall still on.
    let mut last: Vec<Option<usize>> = vec![None; members.len()];
    let mut stall: Vec<Option<usize>> = vec![None; members.len()];
    // A member whose entry sets a later start_ms (and that no `join` starts) runs from then.
    let self_start = crate::scenario::self_starts(timeline, members);
    for (at, e) in timeline.iter().enumerate() {
        let Some(i) = e.action.member() else {
            continue;
        };
        if self_start[i].is_some_and(|t| t <= e.at_ms) && !started[i] {
            started[i] = true;
            running[i] = true;
        }
        if let (TimelineAction::Stall { .. }, Some(k)) = (&e.action, stall[i]) {
            let until = timeline[k].at_ms + timeline[k].action.duration_ms();
            if e.at_ms < until && running[i] {
                return Err(Conflict {
                    event: at,
                    earlier: Some(k),
                    message: format!(
                        "timeline: member {:?} cannot stall at {} ms (its stall until {until} ms \
                         is still on; overlapping stalls of one member are not supported)",
                        members[i].name, e.at_ms
                    ),
                });
            }
        }
        stall[i] = match e.action {
            TimelineAction::Stall { .. } => Some(at),
            TimelineAction::Leave { .. }
            | TimelineAction::Crash { .. }
            | TimelineAction::Restart { .. } => None,
            _ => stall[i],
        };
        let (ok, verb) = match e.action {
            TimelineAction::Join { .. } => (!started[i], "join"),
            TimelineAction::Leave { .. } => (running[i], "leave"),
            TimelineAction::Crash { .. } => (running[i], "crash"),
            TimelineAction::Stall { .. } => (running[i], "stall"),
            TimelineAction::Subscribe { .. } => (running[i], "subscribe"),
            TimelineAction::Restart { .. } => (started[i] && !running[i], "restart"),
            // Not a member's action (`member()` is `None`): never reached.
            TimelineAction::AddPartitions { .. }
            | TimelineAction::BrokerCrash { .. }
            | TimelineAction::BrokerRestart { .. }
            | TimelineAction::NetworkPartition { .. }
            | TimelineAction::LatencySpike { .. } => (true, "act"),
        };
        if !ok {
            return Err(Conflict {
                event: at,
                earlier: last[i],
                message: format!(
                    "timeline: member {:?} cannot {verb} at {} ms (it is {})",
                    members[i].name,
                    e.at_ms,
                    if running[i] { "running" } else { "not running" }
                ),
            });
        }
        let was_running = running[i];
        running[i] = !matches!(
            e.action,
            TimelineAction::Leave { .. } | TimelineAction::Crash { .. }
        );
        if !started[i] || was_running != running[i] {
            last[i] = Some(at);
        }
        started[i] = true;
    }
    Ok(())
}
