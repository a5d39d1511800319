//! `cgsim explain`: why each rebalance happened and what it waited for, as a short chain of
//! causes in plain words, told from the group's history (`crate::history::rebalances`, one walk
//! over the run's facts) and nothing else: every clause names what a fact recorded, so a chain
//! can be wrong only where a model is. `classic.rs` tells JoinGroup/SyncGroup rebalances, `consumer.rs` KIP-848's epoch bumps,
//! `loops.rs` names rebalance loops, `settle.rs` a run that never settled, `render.rs` prints
//! it all as text (the JSON is these types).

mod classic;
mod consumer;
mod loops;
mod render;
mod settle;

pub use render::render_text;

use crate::history::rebalances as story;
use crate::history::GroupHistory;
use crate::report::Report;
use crate::scenario::{Protocol, Scenario};
use crate::sim::SimTime;
use serde::Serialize;

/// Everything `cgsim explain` says about one run.
#[derive(Serialize, Debug, Clone)]
pub struct Explanation {
    pub scenario: String,
    pub seed: u64,
    pub variant: String,
    /// `classic` or `consumer` (KIP-848).
    pub protocol: &'static str,
    pub rebalances: Vec<Rebalance>,
    /// Where a reader would expect a rebalance and the group had none, and why, in order.
    pub non_events: Vec<NonEvent>,
    /// Rebalance loops: the same members rejoining again and again, with the cause.
    pub loops: Vec<Loop>,
    pub settled: Settled,
}

/// One rebalance (a classic generation, or a KIP-848 group epoch bump).
#[derive(Serialize, Debug, Clone)]
pub struct Rebalance {
    pub generation: i32,
    /// The group's first generation (formation), not counted in the report's rebalances.
    pub formation: bool,
    /// The report's trigger name (`member_joined`, `follow_up`, ...).
    pub trigger: &'static str,
    pub member: Option<String>,
    pub start_ms: u64,
    /// When the group was Stable again (KIP-848: every member acknowledged); `None` if it
    /// never was (superseded, or still running at the end).
    pub end_ms: Option<u64>,
    /// The member the rebalance waited for last, and how long.
    pub waited_for: Option<Wait>,
    /// The chain of causes, in order.
    pub causes: Vec<Clause>,
}

impl Rebalance {
    /// The rebalance recorded as `r`, with its chain of causes and the member it waited for
    /// last (the same for both protocols).
    fn of(ctx: &Ctx, r: &story::Record, waited_for: Option<Wait>, causes: Vec<Clause>) -> Self {
        Rebalance {
            generation: r.generation,
            formation: r.formation,
            trigger: r.trigger.name(),
            member: r.member.map(|m| ctx.name(m)),
            start_ms: r.start.as_millis(),
            end_ms: r.stable.map(SimTime::as_millis),
            waited_for,
            causes,
        }
    }
}

/// A rebalance that did not happen: when, whose, and why not.
#[derive(Serialize, Debug, Clone)]
pub struct NonEvent {
    pub at_ms: u64,
    pub member: String,
    pub reason: String,
}

/// One link of a chain: what happened, when, to whom, in words.
#[derive(Serialize, Debug, Clone)]
pub struct Clause {
    pub at_ms: u64,
    /// A stable tag for scripts (`started`, `heartbeat_rebalance`, `join_completed`, ...).
    pub kind: &'static str,
    pub members: Vec<String>,
    pub text: String,
}

/// Who a rebalance waited for last.
#[derive(Serialize, Debug, Clone)]
pub struct Wait {
    pub member: String,
    /// From the rebalance's start to when that member did its part (rejoined, acknowledged).
    pub ms: u64,
    /// Why it came last, as a tag (`heartbeat`, `poll`, `rebalance_timeout`, ...).
    pub because: &'static str,
}

/// A rebalance loop.
#[derive(Serialize, Debug, Clone)]
pub struct Loop {
    /// The member that starts the loop's rebalances.
    pub member: String,
    /// The others that rejoined in most of them.
    pub rejoining: Vec<String>,
    /// `poll_timeout`, `session_expiry`, `fatal_error`, ...
    pub cause: &'static str,
    pub first_generation: i32,
    pub last_generation: i32,
    /// Rebalances in the loop.
    pub rebalances: usize,
    /// The median time between the loop's rebalances.
    pub every_ms: u64,
    /// Still going when the run ended.
    pub at_end: bool,
    pub text: String,
}

/// Whether the group settled, and if not, what kept it from settling.
#[derive(Serialize, Debug, Clone)]
pub struct Settled {
    pub settled: bool,
    /// The settle bound was reached before the run ended (the checker looked).
    pub checked: bool,
    pub text: String,
}

/// Names and settings the chains speak of.
pub(crate) struct Ctx<'a> {
    pub scenario: &'a Scenario,
    pub names: Vec<String>,
}

impl Ctx<'_> {
    fn name(&self, m: usize) -> String {
        self.names
            .get(m)
            .cloned()
            .unwrap_or_else(|| format!("member {m}"))
    }

    /// `c1..c4` for a consecutive run of numbered names, else `c1, c3 and c5`.
    fn names_of(&self, members: &[usize]) -> String {
        let mut ms = members.to_vec();
        ms.sort_unstable();
        ms.dedup();
        let names: Vec<String> = ms.iter().map(|&m| self.name(m)).collect();
        list_names(&names)
    }

    fn names_vec(&self, members: &[usize]) -> Vec<String> {
        let mut ms = members.to_vec();
        ms.sort_unstable();
        ms.dedup();
        ms.iter().map(|&m| self.name(m)).collect()
    }

    fn settings(&self, m: usize) -> Option<&crate::scenario::ClientSettings> {
        self.scenario.members.get(m).map(|s| &s.settings)
    }
}

/// `c1..c4` when the names are one prefix with consecutive numbers (three or more), else a
/// list in words.
pub(crate) fn list_names(names: &[String]) -> String {
    fn split(n: &str) -> Option<(&str, u64)> {
        let digits = n.len() - n.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, number) = n.split_at(n.len() - digits);
        Some((prefix, number.parse().ok()?))
    }
    if names.len() >= 3 {
        let parts: Option<Vec<(&str, u64)>> = names.iter().map(|n| split(n)).collect();
        if let Some(parts) = parts {
            let run = parts
                .windows(2)
                .all(|w| w[0].0 == w[1].0 && w[1].1 == w[0].1 + 1);
            if run {
                return format!("{}..{}", names[0], names[names.len() - 1]);
            }
        }
    }
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `1 partition each` / `6 partitions each` when every count is the same (one count or
/// several), else `None` for the caller's own wording of mixed counts.
fn same_counts(ns: &[usize]) -> Option<String> {
    let plural = |n: usize| if n == 1 { "partition" } else { "partitions" };
    match ns {
        [n] => Some(format!("{n} {}", plural(*n))),
        [n, rest @ ..] if rest.iter().all(|m| m == n) => Some(format!("{n} {} each", plural(*n))),
        _ => None,
    }
}

/// Member `m` found `n` partitions lost at `t` (onPartitionsLost), and why it had no
/// membership any more (`why`, in the protocol's own words).
fn lost(ctx: &Ctx, m: usize, t: SimTime, n: usize, why: &str) -> Clause {
    Clause {
        at_ms: t.as_millis(),
        kind: "lost",
        members: vec![ctx.name(m)],
        text: format!(
            "{} found {n} partition{} lost at {} (onPartitionsLost: {why})",
            ctx.name(m),
            if n == 1 { "" } else { "s" },
            at(t)
        ),
    }
}

/// `60.014 s`: a moment of simulated time.
fn at(t: SimTime) -> String {
    let us = t.as_micros();
    format!("{}.{:03} s", us / 1_000_000, (us / 1000) % 1000)
}

/// From `a` to `b` in whole milliseconds (0 if `b` is earlier).
fn ms_between(a: SimTime, b: SimTime) -> u64 {
    b.as_millis().saturating_sub(a.as_millis())
}

/// Explains a run: `history` is the run's group history (`RunOptions::record_history`),
/// `report` its report (for the settle checker's verdict).
pub fn explain(scenario: &Scenario, history: &GroupHistory, report: &Report) -> Explanation {
    let ctx = Ctx {
        scenario,
        names: scenario.members.iter().map(|m| m.name.clone()).collect(),
    };
    let story = history.rebalances();
    let consumer = scenario.group.protocol == Protocol::Consumer;
    let rebalances: Vec<Rebalance> = story
        .records
        .iter()
        .map(|r| {
            if consumer {
                consumer::tell(&ctx, r)
            } else {
                classic::tell(&ctx, r, story)
            }
        })
        .collect();
    let mut non_events: Vec<NonEvent> = story
        .takeovers
        .iter()
        .filter_map(|t| non_event(&ctx, t))
        .collect();
    non_events.extend(
        story
            .quiet_stalls
            .iter()
            .map(|&(m, from, until)| quiet_stall(&ctx, m, from, until)),
    );
    non_events.extend(
        story
            .quiet_cuts
            .iter()
            .map(|&(m, from, until)| quiet_cut(&ctx, m, from, until)),
    );
    // In time order; at one instant, in the order told above (a stable sort).
    non_events.sort_by_key(|n| n.at_ms);
    let loops = loops::find(&ctx, story);
    let settled = settle::verdict(&ctx, story, &loops, report);
    Explanation {
        scenario: scenario.name.clone(),
        seed: scenario.seed,
        variant: scenario.variant.clone(),
        protocol: if consumer { "consumer" } else { "classic" },
        rebalances,
        non_events,
        loops,
        settled,
    }
}

/// A stall of member `m`'s poll loop that ended before `max.poll.interval.ms`: its heartbeat
/// thread kept its session and its next poll came in time, so it never left the group.
fn quiet_stall(ctx: &Ctx, m: usize, from: SimTime, until: SimTime) -> NonEvent {
    let name = ctx.name(m);
    let limit = ctx.settings(m).map_or(0, |s| s.max_poll_interval_ms);
    NonEvent {
        at_ms: from.as_millis(),
        member: name.clone(),
        reason: format!(
            "{name}'s poll loop was stuck in one batch from {} to {} ({} ms), within \
             max.poll.interval.ms ({limit} ms): its heartbeat thread kept its session alive \
             and its next poll came in time, so it never left the group and nothing \
             rebalanced (its partitions waited for it)",
            at(from),
            at(until),
            ms_between(from, until)
        ),
    }
}

/// The setting that bounds a member's session, by its protocol's name: the client's under the
/// classic protocol, the broker's group setting under KIP-848.
fn session_setting(spec: &crate::scenario::MemberSpec) -> &'static str {
    match spec.protocol {
        Protocol::Consumer => "group.consumer.session.timeout.ms",
        Protocol::Classic => "session.timeout.ms",
    }
}

/// A cut of member `m` from the coordinator that its session outlasted: the coordinator never
/// noticed it, so nothing rebalanced.
fn quiet_cut(ctx: &Ctx, m: usize, from: SimTime, until: SimTime) -> NonEvent {
    let name = ctx.name(m);
    let spec = ctx.scenario.members.get(m);
    let setting = spec.map_or("session.timeout.ms", session_setting);
    let session = spec.map_or(0, |s| s.settings.session_timeout_ms);
    NonEvent {
        at_ms: from.as_millis(),
        member: name.clone(),
        reason: format!(
            "{name} could not reach the coordinator from {} to {} ({} ms), within {setting} \
             ({session} ms): its heartbeats got through again before its session expired, so \
             the coordinator never removed it and nothing rebalanced",
            at(from),
            at(until),
            ms_between(from, until)
        ),
    }
}

/// A static member's takeover of its entry with no rebalance, told (KIP-345); `None` for a
/// dynamic member's (a restart within its old session, which the coordinator counts as a new
/// member and rebalances for once it joins).
fn non_event(ctx: &Ctx, t: &story::Takeover) -> Option<NonEvent> {
    let spec = ctx.scenario.members.get(t.member)?;
    let instance = spec.group_instance_id.as_deref()?;
    let name = ctx.name(t.member);
    let setting = session_setting(spec);
    let leave = if spec.protocol == Protocol::Consumer {
        "leaving with member epoch -2, which keeps a static member's entry and assignment"
    } else {
        "without a LeaveGroup, as a static member closes"
    };
    let mut how = String::new();
    match t.down {
        Some((down, story::Down::Closed)) => {
            how.push_str(&format!("{name} closed at {} {leave}", at(down)));
        }
        Some((down, story::Down::Crashed)) => {
            how.push_str(&format!("{name} crashed at {}", at(down)));
        }
        None => how.push_str(&name),
    }
    if let Some(started) = t.restarted {
        if t.down.is_some() {
            how.push(',');
        }
        how.push_str(&format!(" restarted at {}", at(started)));
    }
    let within = match t.down {
        Some((down, _)) => format!(
            ", {} ms after it went down, within {setting} ({} ms)",
            ms_between(down, t.at),
            spec.settings.session_timeout_ms
        ),
        None => String::new(),
    };
    Some(NonEvent {
        at_ms: t.at.as_millis(),
        member: name,
        reason: format!(
            "{how} and took its entry over as {instance} at {}{within}: no rebalance, as \
             KIP-345 intends (it goes on with its old assignment)",
            at(t.at)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::list_names;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_run_together_only_when_consecutive() {
        assert_eq!(list_names(&names(&["c1", "c2", "c3", "c4"])), "c1..c4");
        assert_eq!(list_names(&names(&["c1", "c3", "c4"])), "c1, c3 and c4");
        assert_eq!(list_names(&names(&["c1", "c2"])), "c1 and c2");
        assert_eq!(list_names(&names(&["a", "b", "c"])), "a, b and c");
        assert_eq!(list_names(&names(&["pod"])), "pod");
    }
}
