//! Whether the timeline holds with one entry more, by the loader's own rules (`resolve.rs`,
//! `lifecycle.rs`): what the lab asks before it offers a fault at an instant, and how it says
//! why one cannot be added, naming the entry it conflicts with.

use super::lifecycle::{check_brokers, check_lifecycle};
use super::resolve::{expand, join_times, resolve_entry};
use super::{Action, Entry, Planned};
use crate::scenario::{BrokerRef, Scenario, TimelineAction, TimelineEvent};

impl Scenario {
    /// `Ok` when the timeline with `entry` added after the entries at its time (where the lab
    /// appends its faults) still holds; else why not, in words that name the entry of the plan
    /// it conflicts with (`source` says how to name one). A restart's `set` is not read here,
    /// and a join is only checked to name a new member (a rolling bounce written before it may
    /// still reach the new member: the loader is the judge of a join).
    pub fn admits(&self, entry: &Entry, source: &dyn Fn(&Planned) -> String) -> Result<(), String> {
        if entry.at_ms >= self.duration_ms {
            return Err(format!(
                "at {} ms is not before the run's end ({} ms)",
                entry.at_ms, self.duration_ms
            ));
        }
        if let Action::Join { member } = &entry.action {
            // A new member, started by the join: nothing before it to conflict with.
            if self.members.iter().any(|m| &m.name == member) {
                return Err(format!(
                    "{member:?} is a member already (a join adds a new member; restart brings back one that left or crashed)"
                ));
            }
            return Ok(());
        }
        // The timeline with the entry's events among its own, each event with the plan entry
        // it comes from (`None`: the added entry's).
        let mut topics = self.topics.clone();
        let mut merged: Vec<(Option<usize>, TimelineEvent)> = (self.timeline.iter().cloned())
            .enumerate()
            .map(|(i, e)| (Some(i), e))
            .collect();
        let joins = join_times(self.plan.iter().map(|p| &p.entry));
        for (_, e) in expand(entry.clone(), &self.members, &joins, self.duration_ms)? {
            let action = resolve_entry(&e, &self.members, &mut topics, self.cluster.brokers)?;
            let pos = merged.partition_point(|(_, x)| x.at_ms <= e.at_ms);
            merged.insert(
                pos,
                (
                    None,
                    TimelineEvent {
                        at_ms: e.at_ms,
                        action,
                    },
                ),
            );
        }
        let (origin, timeline): (Vec<Option<usize>>, Vec<TimelineEvent>) =
            merged.into_iter().unzip();
        let conflict = check_lifecycle(&timeline, &self.members)
            .and_then(|()| check_brokers(&timeline, self.cluster.brokers));
        let Err(c) = conflict else {
            return Ok(());
        };
        let subject = |a: &TimelineAction| match a {
            TimelineAction::BrokerCrash {
                broker: BrokerRef::Id(b),
                ..
            }
            | TimelineAction::BrokerRestart { broker: b } => format!("broker {b}"),
            a => a
                .member()
                .map_or_else(|| "it".to_string(), |m| self.members[m].name.clone()),
        };
        let e = &timeline[c.event];
        let message = c.message.trim_start_matches("timeline: ");
        Err(match (origin[c.event], c.earlier.map(|k| (k, origin[k]))) {
            // The added entry changed what a later entry of the file found.
            (Some(p), Some((_, None))) => format!(
                "{} cannot {} {} at {} ms after it",
                source(&self.plan[p]),
                verb(&e.action),
                subject(&e.action),
                e.at_ms
            ),
            // The added entry finds what an earlier entry of the file left.
            (None, Some((k, Some(p)))) => {
                let before = &timeline[k];
                format!(
                    "{} is {} at {} ms: {} {} it at {} ms",
                    subject(&before.action),
                    state_after(before),
                    e.at_ms,
                    source(&self.plan[p]),
                    done(&before.action),
                    before.at_ms
                )
            }
            (None, _) => message.to_string(),
            (Some(p), _) => format!(
                "{} no longer holds with it: {message}",
                source(&self.plan[p])
            ),
        })
    }
}

/// How the lab names an entry of the file: by its line, a rolling bounce as one.
pub fn source(p: &Planned) -> String {
    format!("the {} (line {})", p.written_as.replace('_', " "), p.line)
}

fn verb(a: &TimelineAction) -> &'static str {
    match a {
        TimelineAction::Join { .. } => "start",
        TimelineAction::Leave { .. } => "stop",
        TimelineAction::Crash { .. } | TimelineAction::BrokerCrash { .. } => "crash",
        TimelineAction::Restart { .. } | TimelineAction::BrokerRestart { .. } => "restart",
        TimelineAction::Stall { .. } => "stall",
        TimelineAction::Subscribe { .. } => "resubscribe",
        _ => "change",
    }
}

fn done(a: &TimelineAction) -> &'static str {
    match a {
        TimelineAction::Join { .. } => "started",
        TimelineAction::Leave { .. } => "stopped",
        TimelineAction::Crash { .. } | TimelineAction::BrokerCrash { .. } => "crashed",
        TimelineAction::Restart { .. } | TimelineAction::BrokerRestart { .. } => "restarted",
        TimelineAction::Stall { .. } => "stalled",
        _ => "changed",
    }
}

/// The state an event leaves its member or broker in.
fn state_after(e: &TimelineEvent) -> String {
    match e.action {
        TimelineAction::Leave { .. } | TimelineAction::Crash { .. } => "not running".into(),
        TimelineAction::BrokerCrash { .. } => "down".into(),
        TimelineAction::Stall { duration_ms, .. } => {
            format!("stalled until {} ms", e.at_ms + duration_ms)
        }
        _ => "running".into(),
    }
}
