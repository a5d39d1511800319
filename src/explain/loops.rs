//! Rebalance loops: one member starting rebalance after rebalance (leaving on a poll timeout
//! and rejoining, expiring and coming back), the rest of the group rejoining each time.

use super::{at, Ctx, Loop};
use crate::history::rebalances::{Event, Story};
use crate::messages::Trigger;
use std::collections::BTreeMap;

/// A member that starts this many rebalances (two round trips of leave and rejoin) is in a
/// loop.
const LOOP_AT: usize = 4;

pub(super) fn find(ctx: &Ctx, story: &Story) -> Vec<Loop> {
    let mut by_member: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, r) in story.records.iter().enumerate() {
        if r.formation || r.trigger == Trigger::FollowUp {
            continue;
        }
        if let Some(m) = r.member {
            by_member.entry(m).or_default().push(i);
        }
    }
    let end = ctx.scenario.duration_ms;
    let mut loops = Vec::new();
    for (m, idx) in by_member {
        if idx.len() < LOOP_AT {
            continue;
        }
        let records: Vec<_> = idx.iter().map(|&i| &story.records[i]).collect();
        let starts: Vec<u64> = records.iter().map(|r| r.start.as_millis()).collect();
        let mut gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_unstable();
        let every_ms = gaps.get(gaps.len() / 2).copied().unwrap_or(0);
        let last = records.last().expect("at least LOOP_AT");
        let later = story
            .records
            .iter()
            .any(|r| r.start > last.start && r.member != Some(m) && r.trigger != Trigger::FollowUp);
        let at_end = !later && last.start.as_millis() + 2 * every_ms.max(1) >= end;
        let name = ctx.name(m);
        // Others that rejoined in most of the loop's rebalances.
        let mut rejoins: BTreeMap<usize, usize> = BTreeMap::new();
        for r in &records {
            for j in &r.joined {
                if j.member != m {
                    *rejoins.entry(j.member).or_default() += 1;
                }
            }
        }
        let others: Vec<usize> = rejoins
            .iter()
            .filter(|&(_, &n)| 2 * n >= records.len())
            .map(|(&o, _)| o)
            .collect();
        let timeouts = story.poll_timeouts.get(&m).map_or(0, Vec::len);
        let expiries = records
            .iter()
            .filter(|r| r.trigger == Trigger::MemberExpired)
            .count();
        let requests_timed_out = story
            .request_timeouts
            .get(&m)
            .map_or(&[][..], Vec::as_slice);
        let (cause, why) = if timeouts >= 2 {
            ("poll_timeout", poll_timeout_cause(ctx, story, m, timeouts))
        } else if requests_timed_out.len() >= 2 {
            let (_, request, waited_ms) = requests_timed_out[0];
            (
                "request_timeout",
                format!(
                    "{name}'s {} timed out {} times ({waited_ms} ms each, its request timeout, with no answer from the coordinator; a SyncGroup waits for the leader's) and it rejoined each time with new metadata",
                    request.name(),
                    requests_timed_out.len()
                ),
            )
        } else if expiries >= 2 {
            (
                "session_expiry",
                format!("{name}'s session expired {expiries} times and it came back each time"),
            )
        } else if records
            .iter()
            .any(|r| matches!(r.cause, Some((_, Event::Fatal { .. }))))
        {
            ("fatal_error", format!("{name} kept failing"))
        } else {
            (
                "rejoins",
                format!("{name} kept leaving and rejoining the group"),
            )
        };
        let mut text = format!(
            "rebalance loop: {name} started {} rebalances (generations {} to {}, one every {} ms or so): {why}",
            records.len(),
            records[0].generation,
            last.generation,
            every_ms
        );
        if !others.is_empty() {
            text.push_str(&format!(
                "; {} rejoined each time too",
                ctx.names_of(&others)
            ));
        }
        if at_end {
            text.push_str("; it was still going when the run ended");
        }
        loops.push(Loop {
            member: name,
            rejoining: ctx.names_vec(&others),
            cause,
            first_generation: records[0].generation,
            last_generation: last.generation,
            rebalances: records.len(),
            every_ms,
            at_end,
            text,
        });
    }
    loops
}

/// Why a member keeps timing out: the batch it was in when the timeout fired, as its end says.
fn poll_timeout_cause(ctx: &Ctx, story: &Story, m: usize, timeouts: usize) -> String {
    let name = ctx.name(m);
    let limit = ctx.settings(m).map_or(0, |s| s.max_poll_interval_ms);
    let rejoined = if ctx.scenario.group.protocol == crate::scenario::Protocol::Consumer {
        "rejoined with member epoch 0"
    } else {
        "rejoined as a new member"
    };
    let mut text = format!(
        "{name} left on a poll timeout {timeouts} times (max.poll.interval.ms {limit} ms) and {rejoined} at its next poll each time"
    );
    let first = story.poll_timeouts.get(&m).and_then(|t| t.first()).copied();
    let batch = first.and_then(|(timeout, last_poll)| {
        story
            .batch_after_timeout
            .get(&m)?
            .iter()
            .find(|&&(t, _)| t >= timeout)
            .map(|&(t, n)| (last_poll, t, n))
    });
    if let Some((from, to, n)) = batch {
        text.push_str(&format!(
            ": its batches are too slow, the one in progress at the first timeout ({n} records, polled at {}) ended only at {}, {} ms after the poll, so each time it is given partitions its first batch outlasts max.poll.interval.ms",
            at(from),
            at(to),
            super::ms_between(from, to)
        ));
    }
    text
}
