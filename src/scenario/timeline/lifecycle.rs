//! The timeline in order: a member acts only in the state its action needs (only a running
//! member leaves, crashes, stalls or subscribes; only a stopped one restarts; a join starts it
//! once), and a broker named by id crashes only while it runs and restarts only while it is
//! down. Each check names the earliest offending event by its index in the timeline (which is
//! in time order), for the caller to name the entry's line.

use crate::scenario::{BrokerRef, MemberSpec, TimelineAction, TimelineEvent};

/// Broker faults must make sense in order: a broker named by id crashes only while it runs and
/// restarts only while it is down. A crash of `"coordinator"` stops whichever broker hosts the
/// coordinator then (the run decides; a restart of it names its id). The error names the
/// earliest offending event by its index in `timeline` (in time order).
pub fn check_brokers(timeline: &[TimelineEvent], brokers: u32) -> Result<(), (usize, String)> {
    let mut down = vec![false; brokers as usize];
    // Some broker was stopped as "coordinator": a restart of any id may be its.
    let mut unnamed_down = false;
    for (i, e) in timeline.iter().enumerate() {
        match e.action {
            TimelineAction::BrokerCrash {
                broker: BrokerRef::Id(b),
                ..
            } => {
                if down[b as usize] {
                    return Err((
                        i,
                        format!(
                            "timeline: broker {b} cannot crash at {} ms (it is down since an earlier broker_crash; broker_restart it first)",
                            e.at_ms
                        ),
                    ));
                }
                down[b as usize] = true;
            }
            TimelineAction::BrokerCrash {
                broker: BrokerRef::Coordinator,
                ..
            } => unnamed_down = true,
            TimelineAction::BrokerRestart { broker: b } => {
                if !down[b as usize] && !unnamed_down {
                    return Err((
                        i,
                        format!(
                            "timeline: broker {b} cannot restart at {} ms (it is running: no broker_crash stopped it)",
                            e.at_ms
                        ),
                    ));
                }
                down[b as usize] = false;
            }
            _ => {}
        }
    }
    Ok(())
}

pub fn check_lifecycle(
    timeline: &[TimelineEvent],
    members: &[MemberSpec],
) -> Result<(), (usize, String)> {
    let mut started: Vec<bool> = members.iter().map(|m| m.start_ms == Some(0)).collect();
    let mut running = started.clone();
    // A member whose entry sets a later start_ms (and that no `join` starts) runs from then.
    let self_start = crate::scenario::self_starts(timeline, members);
    let mut stalled_until: Vec<Option<u64>> = vec![None; members.len()];
    for (at, e) in timeline.iter().enumerate() {
        let Some(i) = e.action.member() else {
            continue;
        };
        if self_start[i].is_some_and(|t| t <= e.at_ms) && !started[i] {
            started[i] = true;
            running[i] = true;
        }
        if let (TimelineAction::Stall { .. }, Some(until)) = (&e.action, stalled_until[i]) {
            if e.at_ms < until && running[i] {
                return Err((
                    at,
                    format!(
                        "timeline: member {:?} cannot stall at {} ms (its stall until {until} ms \
                         is still on; overlapping stalls of one member are not supported)",
                        members[i].name, e.at_ms
                    ),
                ));
            }
        }
        stalled_until[i] = match e.action {
            TimelineAction::Stall { duration_ms, .. } => Some(e.at_ms + duration_ms),
            TimelineAction::Leave { .. }
            | TimelineAction::Crash { .. }
            | TimelineAction::Restart { .. } => None,
            _ => stalled_until[i],
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
            return Err((
                at,
                format!(
                    "timeline: member {:?} cannot {verb} at {} ms (it is {})",
                    members[i].name,
                    e.at_ms,
                    if running[i] { "running" } else { "not running" }
                ),
            ));
        }
        running[i] = !matches!(
            e.action,
            TimelineAction::Leave { .. } | TimelineAction::Crash { .. }
        );
        started[i] = true;
    }
    Ok(())
}
