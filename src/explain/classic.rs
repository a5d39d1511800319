//! A classic-protocol rebalance as a chain: what put the group in PreparingRebalance, how each
//! member learned of it and when it rejoined, what the join phase waited for, the sync, and
//! what members revoked or lost.

use super::{at, ms_between, Clause, Ctx, Rebalance, Wait};
use crate::facts::RejoinCause;
use crate::history::rebalances::{Event, Joiner, Record, Story};
use crate::messages::Trigger;
use crate::sim::SimTime;
use std::collections::BTreeMap;

pub(super) fn tell(ctx: &Ctx, r: &Record, story: &Story) -> Rebalance {
    let all = &story.records;
    let mut causes = vec![cause(ctx, r, all)];
    if let (Trigger::PollTimeout, Some(m), Some((t, Event::PollTimeout { last_poll }))) =
        (r.trigger, r.member, r.cause)
    {
        if let Some(c) = stalled(ctx, story, m, last_poll, t) {
            causes.push(c);
        }
    }
    // Who rejoined and how they had learned of it, the trigger member's own join aside when
    // that join is what began the rebalance.
    let own_join = matches!(
        r.trigger,
        Trigger::MemberJoined | Trigger::SubscriptionChanged | Trigger::MetadataChanged
    );
    let others: Vec<&Joiner> = r
        .joined
        .iter()
        .filter(|j| !(own_join && Some(j.member) == r.member && j.first_sent <= r.start))
        .collect();
    let mut by_how: BTreeMap<&'static str, Vec<&Joiner>> = BTreeMap::new();
    for j in &others {
        by_how.entry(how(j)).or_default().push(j);
    }
    // In the order they began rejoining.
    let mut groups: Vec<(&'static str, Vec<&Joiner>)> = by_how.into_iter().collect();
    groups.sort_by_key(|(_, js)| js.iter().map(|j| j.first_sent).min());
    for (kind, js) in &groups {
        causes.push(rejoined(ctx, kind, js));
    }
    let eager: Vec<&Joiner> = r.joined.iter().filter(|j| j.revoked_before > 0).collect();
    if !eager.is_empty() {
        let members: Vec<usize> = eager.iter().map(|j| j.member).collect();
        let counts = counts(eager.iter().map(|j| j.revoked_before));
        causes.push(Clause {
            at_ms: eager.iter().map(|j| j.first_sent).min().unwrap_or(r.start).as_millis(),
            kind: "revoked_before_rejoin",
            members: ctx.names_vec(&members),
            text: format!(
                "before rejoining, {} revoked everything {} owned ({counts}, onPartitionsRevoked in onJoinPrepare) and stopped processing until the new assignment",
                ctx.names_of(&members),
                if members.len() == 1 { "it" } else { "they" },
            ),
        });
    }
    for &(m, t) in &r.removed {
        causes.push(Clause {
            at_ms: t.as_millis(),
            kind: "removed",
            members: vec![ctx.name(m)],
            text: format!(
                "the coordinator removed {} from the group at {}",
                ctx.name(m),
                at(t)
            ),
        });
    }
    let mut waited_for = None;
    if let Some(done) = r.join_completed {
        let last = r.joined.iter().max_by_key(|j| (j.last_sent, j.member));
        let mut text = format!(
            "the join phase completed at {} ({} ms after it began)",
            at(done),
            ms_between(r.start, done)
        );
        match last {
            Some(j) if !r.removed.is_empty() => text.push_str(&format!(
                ", when the rebalance timeout ran out for the members that had not rejoined; {} had rejoined last",
                ctx.name(j.member)
            )),
            Some(j) if r.formation && ms_between(j.last_sent, done) >= 100 => {
                text.push_str(&format!(
                    ", {} ms after the last JoinGroup ({}'s): group.initial.rebalance.delay.ms held it open for more members",
                    ms_between(j.last_sent, done),
                    ctx.name(j.member)
                ))
            }
            Some(j) if r.joined.len() > 1 => text.push_str(&format!(
                " when the last of them, {}, rejoined",
                ctx.name(j.member)
            )),
            _ => {}
        }
        causes.push(Clause {
            at_ms: done.as_millis(),
            kind: "join_completed",
            members: last.map(|j| vec![ctx.name(j.member)]).unwrap_or_default(),
            text,
        });
        // A forming group waits for its initial delay, not for a member.
        let held = r.formation && last.is_some_and(|j| ms_between(j.last_sent, done) >= 100);
        if let Some(j) = last.filter(|_| r.joined.len() > 1 && r.removed.is_empty() && !held) {
            let (clause, wait) = waited(ctx, r, j);
            causes.push(clause);
            waited_for = Some(wait);
        }
    }
    for &(m, t, error) in &r.failed {
        causes.push(Clause {
            at_ms: t.as_millis(),
            kind: "failed",
            members: vec![ctx.name(m)],
            text: format!(
                "{}'s answer at {} was {}: that attempt failed",
                ctx.name(m),
                at(t),
                error.name()
            ),
        });
    }
    if let (Some(done), Some(stable)) = (r.join_completed, r.stable) {
        causes.push(Clause {
            at_ms: stable.as_millis(),
            kind: "stable",
            members: Vec::new(),
            text: format!(
                "the leader's SyncGroup made the group Stable at {} ({} ms of sync)",
                at(stable),
                ms_between(done, stable)
            ),
        });
    }
    if !r.revoked.is_empty() {
        let members: Vec<usize> = r.revoked.keys().copied().collect();
        let follow_up = all
            .iter()
            .find(|n| n.generation > r.generation && n.trigger == Trigger::FollowUp)
            .filter(|n| n.generation == r.generation + 1);
        let first = r.revoked.values().map(|&(t, _)| t).min().unwrap_or(r.start);
        let counts = counts(r.revoked.values().map(|&(_, n)| n));
        let text = format!(
            "after the SyncGroup {} revoked only what the assignment moved ({counts}, onPartitionsRevoked) and kept processing the rest{}",
            ctx.names_of(&members),
            match follow_up {
                Some(n) => format!(
                    "; having revoked, they rejoined at once: the follow-up, generation {}",
                    n.generation
                ),
                None => String::new(),
            }
        );
        causes.push(Clause {
            at_ms: first.as_millis(),
            kind: "revoked_after_sync",
            members: ctx.names_vec(&members),
            text,
        });
    }
    for (&m, &(t, n)) in &r.lost {
        causes.push(super::lost(ctx, m, t, n, "its membership was gone"));
    }
    if let Some(g) = r.superseded_by {
        causes.push(superseded(r, g));
    }
    Rebalance::of(ctx, r, waited_for, causes)
}

pub(super) fn superseded(r: &Record, g: i32) -> Clause {
    Clause {
        at_ms: r.start.as_millis(),
        kind: "superseded",
        members: Vec::new(),
        text: format!("it never completed: generation {g} began before the group was Stable"),
    }
}

/// `1 partition each` / `6 partitions each` / `5, 6 and 7 partitions`.
fn counts(ns: impl Iterator<Item = usize>) -> String {
    let ns: Vec<usize> = ns.collect();
    super::same_counts(&ns).unwrap_or_else(|| {
        let words: Vec<String> = ns.iter().map(usize::to_string).collect();
        format!(
            "{} partitions",
            super::list_names(&words).replace("..", " to ")
        )
    })
}

/// How a joiner had learned it must (re)join, as a tag.
fn how(j: &Joiner) -> &'static str {
    match j.why {
        Some((_, Event::Started)) => "started",
        Some((_, Event::Rejoin(RejoinCause::HeartbeatRebalance))) => "heartbeat_rebalance",
        Some((_, Event::Rejoin(RejoinCause::HeartbeatError(_)))) => "heartbeat_error",
        Some((_, Event::Rejoin(RejoinCause::CommitRebalance))) => "commit_rebalance",
        Some((_, Event::Rejoin(RejoinCause::CommitError(_)))) => "commit_error",
        Some((_, Event::Rejoin(RejoinCause::FollowUp))) => "follow_up",
        Some((_, Event::Rejoin(RejoinCause::Subscription))) => "subscription",
        Some((_, Event::Rejoin(RejoinCause::Metadata))) => "metadata",
        Some((_, Event::PollTimeout { .. })) => "poll_timeout",
        Some((_, Event::TimedOut { .. })) => "request_timed_out",
        _ => "rejoined",
    }
}

/// `at 60.020 s` or `between 60.020 s and 60.108 s`.
fn span(times: impl Iterator<Item = SimTime>) -> String {
    let ts: Vec<SimTime> = times.collect();
    let (lo, hi) = (
        ts.iter().min().copied().unwrap_or(SimTime::ZERO),
        ts.iter().max().copied().unwrap_or(SimTime::ZERO),
    );
    if at(lo) == at(hi) {
        format!("at {}", at(lo))
    } else {
        format!("between {} and {}", at(lo), at(hi))
    }
}

fn rejoined(ctx: &Ctx, kind: &'static str, js: &[&Joiner]) -> Clause {
    let members: Vec<usize> = js.iter().map(|j| j.member).collect();
    let names = ctx.names_of(&members);
    let one = js.len() == 1;
    let learned = span(js.iter().filter_map(|j| j.why.map(|(t, _)| t)));
    let sent = span(js.iter().map(|j| j.first_sent));
    let text = match kind {
        "heartbeat_rebalance" => format!(
            "{names} learned of it from {} next heartbeat answer{} (REBALANCE_IN_PROGRESS, read on the heartbeat thread's pass {learned}) and rejoined at {} next poll ({sent})",
            if one { "its" } else { "their" },
            if one { "" } else { "s" },
            if one { "its" } else { "their" },
        ),
        "follow_up" => format!(
            "{names}, having revoked partitions, rejoined at once ({sent})"
        ),
        "started" => format!("{names} started and joined as new member{} ({sent})", if one { "" } else { "s" }),
        "poll_timeout" => format!(
            "{names}, out of the group since {} poll timeout, rejoined as {} at {} next poll ({sent})",
            if one { "its" } else { "their" },
            if one { "a new member" } else { "new members" },
            if one { "its" } else { "their" },
        ),
        "heartbeat_error" | "commit_error" => {
            let errors: Vec<&str> = js
                .iter()
                .filter_map(|j| match j.why {
                    Some((_, Event::Rejoin(
                        RejoinCause::HeartbeatError(e) | RejoinCause::CommitError(e),
                    ))) => Some(e.name()),
                    _ => None,
                })
                .collect();
            format!(
                "{names} lost {} membership ({} answer said {}, {learned}) and rejoined ({sent})",
                if one { "its" } else { "their" },
                if kind == "commit_error" { "an OffsetCommit" } else { "a heartbeat" },
                errors.first().copied().unwrap_or("an error"),
            )
        }
        "commit_rebalance" => format!(
            "{names} learned of it from {} OffsetCommit answer{} (REBALANCE_IN_PROGRESS, {learned}) and rejoined at {} next poll ({sent})",
            if one { "an" } else { "their" },
            if one { "" } else { "s" },
            if one { "its" } else { "their" },
        ),
        "subscription" => format!("{names} changed subscription and rejoined ({sent})"),
        "metadata" => format!("{names} saw partition counts change and rejoined ({sent})"),
        _ => format!("{names} rejoined ({sent})"),
    };
    Clause {
        at_ms: js
            .iter()
            .map(|j| j.first_sent)
            .min()
            .unwrap_or(SimTime::ZERO)
            .as_millis(),
        kind,
        members: ctx.names_vec(&members),
        text,
    }
}

/// The member the join phase waited for last, and why it came last.
fn waited(ctx: &Ctx, r: &Record, j: &Joiner) -> (Clause, Wait) {
    let name = ctx.name(j.member);
    let ms = ms_between(r.start, j.last_sent);
    let (because, why) = match j.why {
        Some((t, Event::Rejoin(RejoinCause::HeartbeatRebalance))) => {
            let heard = ms_between(r.start, t);
            let poll = ms_between(t, j.first_sent);
            let owned_nothing = j.owned_at_start == 0;
            let what = if r.trigger == Trigger::FollowUp {
                "the follow-up"
            } else {
                "it"
            };
            let mut why = if owned_nothing && r.trigger == Trigger::FollowUp {
                format!(
                    "which owned nothing, so had nothing to revoke and no reason to rejoin, and heard of {what} only from its own next heartbeat, {heard} ms after it began"
                )
            } else {
                format!(
                    "which heard of {what} only from its next heartbeat, {heard} ms after it began"
                )
            };
            if poll >= 100 {
                why.push_str(&format!(
                    ", and rejoined at its next poll {poll} ms after that"
                ));
            }
            ("heartbeat", why)
        }
        Some((t, Event::Rejoin(RejoinCause::FollowUp))) => (
            "revocation",
            format!(
                "which revoked its partitions and asked to rejoin at {}",
                at(t)
            ),
        ),
        Some((t, Event::Started)) => ("start", format!("which started at {}", at(t))),
        Some((t, Event::PollTimeout { .. })) => (
            "poll",
            format!(
                "which had left on a poll timeout at {} and rejoined at its next poll",
                at(t)
            ),
        ),
        Some((t, Event::TimedOut { request, .. })) => (
            "request_timeout",
            format!(
                "whose {} had timed out at {} and which rejoined after finding the coordinator again",
                request.name(),
                at(t)
            ),
        ),
        _ => ("rejoin", "its JoinGroup came last".to_string()),
    };
    let poll_gap = j.why.map_or(0, |(t, _)| ms_between(t, j.first_sent));
    let because = if because == "heartbeat" && poll_gap > ms_between(r.start, j.first_sent) / 2 {
        "poll"
    } else {
        because
    };
    (
        Clause {
            at_ms: j.last_sent.as_millis(),
            kind: "waited_for",
            members: vec![name.clone()],
            text: format!("the join phase waited {ms} ms for {name}, {why}"),
        },
        Wait {
            member: name,
            ms,
            because,
        },
    )
}

/// The first clause: what put the group in PreparingRebalance.
fn cause(ctx: &Ctx, r: &Record, all: &[Record]) -> Clause {
    let who = r
        .member
        .map(|m| ctx.name(m))
        .unwrap_or_else(|| "a member".into());
    let start = at(r.start);
    let members = r.member.map(|m| vec![ctx.name(m)]).unwrap_or_default();
    let settings = r.member.and_then(|m| ctx.settings(m));
    let (kind, text) = match (r.trigger, r.cause) {
        (Trigger::MemberJoined, Some((t, Event::Started))) => (
            "started",
            format!("{who} started at {}; its JoinGroup put the group in PreparingRebalance at {start}", at(t)),
        ),
        (Trigger::MemberJoined, Some((t, Event::PollTimeout { .. }))) => (
            "rejoined_as_new",
            format!("{who}, out of the group since its poll timeout at {}, rejoined as a new member: its JoinGroup put the group in PreparingRebalance at {start}", at(t)),
        ),
        (Trigger::MemberJoined, Some((t, Event::Rejoin(RejoinCause::HeartbeatError(e))))) => (
            "rejoined_as_new",
            format!("{who} lost its membership ({} on a heartbeat at {}) and rejoined as a new member: its JoinGroup put the group in PreparingRebalance at {start}", e.name(), at(t)),
        ),
        (Trigger::MemberJoined, Some((t, Event::Rejoin(RejoinCause::CommitError(e))))) => (
            "rejoined_as_new",
            format!("{who} lost its membership ({} on an OffsetCommit at {}) and rejoined as a new member: its JoinGroup put the group in PreparingRebalance at {start}", e.name(), at(t)),
        ),
        (Trigger::MemberJoined, Some((t, Event::TimedOut { request, waited_ms }))) => (
            "request_timed_out",
            format!("{who}'s {} had no answer from the coordinator for {waited_ms} ms (its request timeout): at {} its client closed the connection, and {who} found the coordinator again and rejoined; its JoinGroup carried new metadata (its subscription names the generation it was given) and put the group in PreparingRebalance at {start}", request.name(), at(t)),
        ),
        (Trigger::MemberJoined, _) => (
            "joined",
            format!("{who}'s JoinGroup put the group in PreparingRebalance at {start}"),
        ),
        (Trigger::MemberLeft, Some((t, Event::Closed))) => (
            "closed",
            format!("{who} closed at {}; its LeaveGroup put the group in PreparingRebalance at {start}", at(t)),
        ),
        (Trigger::MemberLeft, _) => (
            "left",
            format!("{who}'s LeaveGroup put the group in PreparingRebalance at {start}"),
        ),
        (Trigger::PollTimeout, Some((t, Event::PollTimeout { last_poll }))) => (
            "poll_timeout",
            format!(
                "{who}'s poll loop had not called poll() since {} ({} ms, past its max.poll.interval.ms of {} ms): its heartbeat thread sent LeaveGroup at {}, which put the group in PreparingRebalance at {start}",
                at(last_poll),
                ms_between(last_poll, t),
                settings.map_or(0, |s| s.max_poll_interval_ms),
                at(t),
            ),
        ),
        (Trigger::PollTimeout, _) => (
            "poll_timeout",
            format!("{who} left on a poll timeout; the group went to PreparingRebalance at {start}"),
        ),
        (Trigger::MemberExpired, Some((t, Event::Crashed { owned }))) => (
            "crashed",
            format!(
                "{who} crashed at {} owning {owned} partition{}; the coordinator noticed only when its session expired at {start} (session.timeout.ms {} ms, {} ms after the crash)",
                at(t),
                if owned == 1 { "" } else { "s" },
                settings.map_or(0, |s| s.session_timeout_ms),
                ms_between(t, r.start),
            ),
        ),
        (Trigger::MemberExpired, _) => (
            "session_expired",
            format!(
                "{who}'s session expired at {start}: no heartbeat of it reached the coordinator for session.timeout.ms ({} ms)",
                settings.map_or(0, |s| s.session_timeout_ms)
            ),
        ),
        (Trigger::FollowUp, _) => {
            let previous = all.iter().rev().find(|p| p.generation < r.generation);
            (
                "follow_up",
                format!(
                    "{who} had revoked partitions after generation {}'s SyncGroup and rejoined at once: the cooperative follow-up, which hands those partitions to their new owners, began at {start}",
                    previous.map_or(r.generation - 1, |p| p.generation)
                ),
            )
        }
        (Trigger::SubscriptionChanged, _) => (
            "subscription_changed",
            format!("{who}'s subscription changed; its JoinGroup put the group in PreparingRebalance at {start}"),
        ),
        (Trigger::MetadataChanged, Some((t, _))) => (
            "metadata_changed",
            format!("{who}, the leader, saw partition counts change at {}; its rejoin put the group in PreparingRebalance at {start}", at(t)),
        ),
        (Trigger::MetadataChanged, None) => (
            "metadata_changed",
            format!("partition counts changed; the group went to PreparingRebalance at {start}"),
        ),
        (Trigger::MemberRestarted, _) => (
            "member_restarted",
            format!("{who} restarted with changed settings (a static member); the group went to PreparingRebalance at {start}"),
        ),
    };
    let text = if r.formation {
        format!("the group formed: {text}")
    } else {
        text
    };
    Clause {
        at_ms: r.cause.map_or(r.start, |(t, _)| t).as_millis(),
        kind,
        members,
        text,
    }
}

/// A stall (timeline) that held the member's poll loop between its last poll and the timeout.
pub(super) fn stalled(
    ctx: &Ctx,
    story: &Story,
    m: usize,
    last_poll: SimTime,
    timeout: SimTime,
) -> Option<Clause> {
    let &(from, until) = story
        .stalls
        .get(&m)?
        .iter()
        .find(|&&(from, until)| from >= last_poll && from <= timeout && until > timeout)?;
    Some(Clause {
        at_ms: from.as_millis(),
        kind: "stalled",
        members: vec![ctx.name(m)],
        text: format!(
            "what held it: a stall from {} until {} kept its poll loop inside one batch",
            at(from),
            at(until)
        ),
    })
}
