//! A KIP-848 rebalance in its own terms: what bumped the group epoch, who had to revoke what
//! (learning it from the answer to its own next heartbeat), who was given what once it was
//! released, and when each member reconciled and acknowledged. There is no group-wide join
//! phase: the members that keep their partitions never stop.

use super::{at, ms_between, Clause, Ctx, Rebalance, Wait};
use crate::history::rebalances::{Event, Record};
use crate::messages::Trigger;
use crate::sim::SimTime;
use std::collections::BTreeSet;

pub(super) fn tell(ctx: &Ctx, r: &Record) -> Rebalance {
    let mut causes = vec![cause(ctx, r)];
    let mut revokers = Vec::new();
    let mut gainers = Vec::new();
    for (&m, sent) in &r.sent {
        let before: BTreeSet<usize> = r
            .assigned_before
            .get(&m)
            .map(|v| v.iter().copied().collect())
            .unwrap_or_default();
        let Some((_, last)) = sent.last() else {
            continue;
        };
        let last: BTreeSet<usize> = last.iter().copied().collect();
        let lose = before.difference(&last).count();
        let gain: BTreeSet<usize> = last.difference(&before).copied().collect();
        let first = sent[0].0;
        if lose > 0 {
            revokers.push((m, first, lose));
        }
        if !gain.is_empty() {
            // When the coordinator first sent any of the new partitions.
            let given = sent
                .iter()
                .find(|(_, a)| a.iter().any(|p| gain.contains(p)))
                .map_or(first, |&(t, _)| t);
            gainers.push((m, given, gain.len()));
        }
    }
    let acks = |ms: &[usize]| -> String {
        let times: Vec<SimTime> = ms
            .iter()
            .filter_map(|m| r.acknowledged.get(m))
            .copied()
            .collect();
        if times.is_empty() {
            "had not acknowledged by the run's end".to_string()
        } else {
            format!("acknowledged {}", span(&times))
        }
    };
    if !revokers.is_empty() {
        let ms: Vec<usize> = revokers.iter().map(|&(m, _, _)| m).collect();
        let told: Vec<SimTime> = revokers.iter().map(|&(_, t, _)| t).collect();
        let revoked: Vec<SimTime> = ms
            .iter()
            .filter_map(|m| r.revoked.get(m).map(|&(t, _)| t))
            .collect();
        let times = |of: &std::collections::BTreeMap<usize, SimTime>| -> Vec<SimTime> {
            ms.iter().filter_map(|m| of.get(m)).copied().collect()
        };
        let (queued, assigned) = (times(&r.revoke_queued), times(&r.assign_ran));
        let one = ms.len() == 1;
        let it_them = if one && revokers[0].2 == 1 {
            "it"
        } else {
            "them"
        };
        // The client's steps (AbstractMembershipManager): the answer only records the target,
        // the application thread's poll event reconciles and queues the revocation, the
        // callback runs at a later poll, the assignment (even empty) at the poll after.
        let steps = if queued.is_empty() {
            format!(
                "{} revoked {it_them} (onPartitionsRevoked{})",
                if one { "it" } else { "they" },
                if revoked.is_empty() {
                    String::new()
                } else {
                    format!(", {}", span(&revoked))
                },
            )
        } else {
            format!(
                "{} poll loop reconciled ({}: onPartitionsRevoked queued for a later poll), revoked {it_them} (onPartitionsRevoked{}), then ran onPartitionsAssigned{}",
                if one { "its" } else { "their" },
                span(&queued),
                if revoked.is_empty() { String::new() } else { format!(", {}", span(&revoked)) },
                if assigned.is_empty() { String::new() } else { format!(" ({})", span(&assigned)) },
            )
        };
        causes.push(Clause {
            at_ms: told.iter().min().copied().unwrap_or(r.start).as_millis(),
            kind: "had_to_revoke",
            members: ctx.names_vec(&ms),
            text: format!(
                "{} had to revoke {}: the answer to {} next heartbeat ({}) took {it_them} away; {steps} and {}",
                ctx.names_of(&ms),
                counts(revokers.iter().map(|&(_, _, n)| n)),
                if one { "its" } else { "their" },
                span(&told),
                acks(&ms),
            ),
        });
    }
    if !gainers.is_empty() {
        let ms: Vec<usize> = gainers.iter().map(|&(m, _, _)| m).collect();
        let given: Vec<SimTime> = gainers.iter().map(|&(_, t, _)| t).collect();
        // Released first: the new partitions came only after some revoker acknowledged.
        let first_given = given.iter().min().copied().unwrap_or(r.start);
        let released = revokers
            .iter()
            .filter(|&&(m, _, _)| r.acknowledged.get(&m).is_some_and(|&a| a <= first_given))
            .map(|&(m, _, _)| m)
            .collect::<Vec<_>>();
        let one = ms.len() == 1;
        causes.push(Clause {
            at_ms: first_given.as_millis(),
            kind: "given",
            members: ctx.names_vec(&ms),
            text: format!(
                "{} {} given {} ({}){}, assigned {} (onPartitionsAssigned) and {}",
                ctx.names_of(&ms),
                if one { "was" } else { "were" },
                counts(gainers.iter().map(|&(_, _, n)| n)),
                span(&given),
                if released.is_empty() {
                    String::new()
                } else {
                    format!(" once {} had released them", ctx.names_of(&released))
                },
                if one && gainers[0].2 == 1 {
                    "it"
                } else {
                    "them"
                },
                acks(&ms),
            ),
        });
    }
    let changed: BTreeSet<usize> = r.sent.keys().copied().collect();
    let kept: Vec<usize> = r
        .owned_at_start
        .iter()
        .filter(|&(m, &n)| n > 0 && !revokers.iter().any(|&(x, _, _)| x == *m))
        .map(|(&m, _)| m)
        .collect();
    if !kept.is_empty() && !r.formation {
        causes.push(Clause {
            at_ms: r.start.as_millis(),
            kind: "kept_processing",
            members: ctx.names_vec(&kept),
            text: format!(
                "{} revoked nothing and never stopped processing: KIP-848 has no group-wide barrier",
                ctx.names_of(&kept)
            ),
        });
    }
    for (&m, &(t, n)) in &r.lost {
        causes.push(super::lost(ctx, m, t, n, "fenced or stale"));
    }
    let mut waited_for = None;
    if let Some(stable) = r.stable {
        let last = r
            .acknowledged
            .iter()
            .filter(|(m, _)| changed.contains(m))
            .max_by_key(|&(m, &t)| (t, *m));
        let mut text = format!(
            "every member had reconciled to the target at {} ({} ms after the bump)",
            at(stable),
            ms_between(r.start, stable)
        );
        if let Some((&m, &t)) = last {
            let name = ctx.name(m);
            let told = r
                .sent
                .get(&m)
                .and_then(|s| s.first())
                .map_or(r.start, |&(t, _)| t);
            let gained = gainers.iter().find(|&&(x, _, _)| x == m);
            // The latest release (a revoker's acknowledgement) before its new partitions came.
            let release = gained.and_then(|&(_, given, _)| {
                revokers
                    .iter()
                    .filter_map(|&(x, _, _)| r.acknowledged.get(&x).copied())
                    .filter(|&a| a <= given)
                    .max()
                    .map(|a| (a, given))
            });
            let (because, why) = match release {
                Some((a, given)) if ms_between(a, given) >= 1000 => (
                    "heartbeat",
                    format!(
                        "whose new partitions were released at {} but reached it only in the answer to its next heartbeat, at {} ({} ms after the bump)",
                        at(a),
                        at(given),
                        ms_between(r.start, given)
                    ),
                ),
                Some((a, _)) => (
                    "release",
                    format!(
                        "whose new partitions could be handed over only once their previous owners had released them, at {}",
                        at(a)
                    ),
                ),
                None => (
                    "heartbeat",
                    format!(
                        "which learned of its new assignment only from the answer to its next heartbeat, {} ms after the bump",
                        ms_between(r.start, told)
                    ),
                ),
            };
            text.push_str(&format!("; it waited longest for {name}, {why}"));
            waited_for = Some(Wait {
                member: name,
                ms: ms_between(r.start, t),
                because,
            });
        }
        causes.push(Clause {
            at_ms: stable.as_millis(),
            kind: "reconciled",
            members: last.map(|(&m, _)| vec![ctx.name(m)]).unwrap_or_default(),
            text,
        });
    }
    if let Some(g) = r.superseded_by {
        causes.push(Clause {
            at_ms: r.start.as_millis(),
            kind: "superseded",
            members: Vec::new(),
            text: format!(
                "its members had not all acknowledged when the group epoch was bumped again, to {g}"
            ),
        });
    }
    Rebalance::of(ctx, r, waited_for, causes)
}

fn span(ts: &[SimTime]) -> String {
    let lo = ts.iter().min().copied().unwrap_or(SimTime::ZERO);
    let hi = ts.iter().max().copied().unwrap_or(SimTime::ZERO);
    if at(lo) == at(hi) {
        format!("at {}", at(lo))
    } else {
        format!("{} to {}", at(lo), at(hi))
    }
}

fn counts(ns: impl Iterator<Item = usize>) -> String {
    let ns: Vec<usize> = ns.collect();
    super::same_counts(&ns)
        .unwrap_or_else(|| format!("{} partitions in all", ns.iter().sum::<usize>()))
}

fn cause(ctx: &Ctx, r: &Record) -> Clause {
    let who = r
        .member
        .map(|m| ctx.name(m))
        .unwrap_or_else(|| "a member".into());
    let bump = format!(
        "bumped the group epoch to {} at {}",
        r.generation,
        at(r.start)
    );
    let settings = r.member.and_then(|m| ctx.settings(m));
    let (kind, text) = match (r.trigger, r.cause) {
        (Trigger::MemberJoined, Some((t, Event::Started))) => (
            "started",
            format!("{who} started at {}; its first heartbeat (member epoch 0) joined the group and {bump}", at(t)),
        ),
        (Trigger::MemberJoined, Some((t, Event::PollTimeout { .. }))) => (
            "rejoined_as_new",
            format!("{who}, out of the group since its poll timeout at {}, rejoined with member epoch 0, which {bump}", at(t)),
        ),
        (Trigger::MemberJoined, _) => ("joined", format!("{who}'s heartbeat with member epoch 0 joined the group and {bump}")),
        (Trigger::MemberLeft, Some((t, Event::Closed))) => (
            "closed",
            format!("{who} closed at {}; its leave heartbeat (member epoch -1) {bump}", at(t)),
        ),
        (Trigger::MemberLeft, Some((t, Event::PollTimeout { last_poll }))) => (
            "poll_timeout",
            format!(
                "{who}'s poll loop had not called poll() since {} ({} ms, past its max.poll.interval.ms of {} ms): at {} it left the group (member epoch -1), which {bump}",
                at(last_poll),
                ms_between(last_poll, t),
                settings.map_or(0, |s| s.max_poll_interval_ms),
                at(t)
            ),
        ),
        (Trigger::MemberLeft, _) => ("left", format!("{who} left the group, which {bump}")),
        (Trigger::MemberExpired, Some((t, Event::Crashed { owned }))) => (
            "crashed",
            format!(
                "{who} crashed at {} owning {owned} partition{}; the coordinator fenced it when its session expired ({} ms later), which {bump}",
                at(t),
                if owned == 1 { "" } else { "s" },
                ms_between(t, r.start)
            ),
        ),
        (Trigger::MemberExpired, _) => ("fenced", format!("the coordinator fenced {who} (session expired or rebalance timeout), which {bump}")),
        (Trigger::SubscriptionChanged, _) => ("subscription_changed", format!("{who}'s subscription changed, which {bump}")),
        (Trigger::MetadataChanged, _) => ("metadata_changed", format!("the topics' partitions changed, which {bump}")),
        (t, _) => ("other", format!("{} ({who}) {bump}", t.name())),
    };
    Clause {
        at_ms: r.cause.map_or(r.start, |(t, _)| t).as_millis(),
        kind,
        members: r.member.map(|m| vec![ctx.name(m)]).unwrap_or_default(),
        text: if r.formation {
            format!("the group formed: {text}")
        } else {
            text
        },
    }
}
