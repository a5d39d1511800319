//! Whether the timeline holds with one entry more, by the loader's own rules (`resolve.rs`,
//! `lifecycle.rs`): what the lab asks before it offers a fault at an instant, and how it says
//! why one cannot be added, naming the entry it conflicts with.

use super::lifecycle::{check_brokers, check_lifecycle, Conflict};
use super::resolve::resolve_entry;
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
        let mut topics = self.topics.clone();
        let action = resolve_entry(entry, &self.members, &mut topics, self.cluster.brokers)?;
        let pos = self.timeline.partition_point(|e| e.at_ms <= entry.at_ms);
        let mut timeline = self.timeline.clone();
        timeline.insert(
            pos,
            TimelineEvent {
                at_ms: entry.at_ms,
                action,
            },
        );
        let conflict = check_lifecycle(&timeline, &self.members)
            .and_then(|()| check_brokers(&timeline, self.cluster.brokers));
        let Err(c) = conflict else {
            return Ok(());
        };
        // The plan's entry for an event of the merged timeline.
        let planned = |k: usize| &self.plan[if k < pos { k } else { k - 1 }];
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
        Err(match c {
            Conflict {
                event,
                earlier: Some(new),
                ..
            } if event != pos && new == pos => {
                let e = &timeline[event];
                format!(
                    "{} cannot {} {} at {} ms after it",
                    source(planned(event)),
                    verb(&e.action),
                    subject(&e.action),
                    e.at_ms
                )
            }
            Conflict {
                event,
                earlier: Some(k),
                ..
            } if event == pos => {
                let before = &timeline[k];
                format!(
                    "{} is {} at {} ms: {} {} it at {} ms",
                    subject(&before.action),
                    state_after(before),
                    entry.at_ms,
                    source(planned(k)),
                    done(&before.action),
                    before.at_ms
                )
            }
            Conflict { event, message, .. } if event == pos => {
                message.trim_start_matches("timeline: ").to_string()
            }
            Conflict { event, message, .. } => format!(
                "{} no longer holds with it: {}",
                source(planned(event)),
                message.trim_start_matches("timeline: ")
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
