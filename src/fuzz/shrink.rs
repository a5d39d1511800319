//! `--shrink`: the smallest case that still breaks the same property. Greedy, in passes: try
//! each smaller candidate in turn (the whole fault plan gone, half of it, one entry or a stop
//! with its restart, a member, a topic, a partition, stalls and times halved), keep the first
//! that still fails with the same property, start again from it; stop when none does or the
//! budget of runs is spent. A candidate that no longer loads (a restart left without its stop)
//! is just one that does not fail.

use super::case::{Action, Case};
use super::runner::{run_case_with, Failure};
use crate::scenario::LoadOptions;

pub struct Shrunk {
    pub case: Case,
    pub failure: Failure,
    /// Runs the shrinking took.
    pub runs: u64,
}

/// Shrinks `case`, which fails with `failure`, within `budget` runs.
pub fn shrink(case: &Case, failure: &Failure, budget: u64) -> Shrunk {
    shrink_with(case, failure, budget, &LoadOptions::default())
}

/// [`shrink`], each candidate run under `options` (`cgsim fuzz --variant`, `--set`).
pub fn shrink_with(case: &Case, failure: &Failure, budget: u64, options: &LoadOptions) -> Shrunk {
    let mut best = Shrunk {
        case: case.clone(),
        failure: failure.clone(),
        runs: 0,
    };
    'passes: loop {
        for candidate in candidates(&best.case) {
            if best.runs >= budget {
                break 'passes;
            }
            best.runs += 1;
            if let Some(f) = run_case_with(&candidate, options).failure {
                if f.property == failure.property {
                    best.case = candidate;
                    best.failure = f;
                    continue 'passes;
                }
            }
        }
        break;
    }
    best
}

/// Every candidate one step smaller than `case`, the biggest cuts first.
pub fn candidates(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let n = case.timeline.len();
    let with_timeline = |keep: &dyn Fn(usize) -> bool| {
        let mut c = case.clone();
        c.timeline = case
            .timeline
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(_, e)| e.clone())
            .collect();
        c
    };
    // Fault-plan entries: all, each half, each entry with the restart that follows its stop,
    // each entry alone.
    if n > 0 {
        out.push(with_timeline(&|_| false));
    }
    if n > 1 {
        out.push(with_timeline(&|i| i >= n / 2));
        out.push(with_timeline(&|i| i < n / 2));
    }
    for i in 0..n {
        if let Some(j) = paired_restart(case, i) {
            out.push(with_timeline(&|k| k != i && k != j));
        }
    }
    for i in 0..n {
        out.push(with_timeline(&|k| k != i));
    }
    // Members, with their entries.
    if case.members.len() > 1 {
        for m in &case.members {
            let mut c = case.clone();
            c.members.retain(|x| x.name != m.name);
            c.timeline
                .retain(|e| e.action.member() != Some(m.name.as_str()));
            out.push(c);
        }
    }
    // Topics, out of every subscription and entry.
    if case.topics.len() > 1 {
        for t in &case.topics {
            let mut c = case.clone();
            c.topics.retain(|x| x.name != t.name);
            let mut empty = false;
            for m in &mut c.members {
                if let Some(list) = &mut m.topics {
                    list.retain(|x| *x != t.name);
                    empty |= list.is_empty();
                }
            }
            c.timeline.retain_mut(|e| match &mut e.action {
                Action::AddPartitions { topic, .. } => *topic != t.name,
                Action::Subscribe { topics, .. } => {
                    topics.retain(|x| *x != t.name);
                    !topics.is_empty()
                }
                _ => true,
            });
            if !empty {
                out.push(c);
            }
        }
    }
    // One partition fewer (and fewer added).
    for (i, t) in case.topics.iter().enumerate() {
        if t.partitions > 1 {
            let mut c = case.clone();
            c.topics[i].partitions -= 1;
            for e in &mut c.timeline {
                if let Action::AddPartitions { topic, partitions } = &mut e.action {
                    if *topic == t.name {
                        *partitions -= 1;
                    }
                }
            }
            out.push(c);
        }
    }
    // Shorter: each stall halved, the whole plan earlier, every gap halved.
    for i in 0..n {
        if let Action::Stall { duration_ms, .. } = case.timeline[i].action {
            if duration_ms >= 1_000 {
                let mut c = case.clone();
                if let Action::Stall { duration_ms: d, .. } = &mut c.timeline[i].action {
                    *d = duration_ms / 2;
                }
                out.push(c);
            }
        }
    }
    if let Some(first) = case
        .timeline
        .first()
        .map(|e| e.at_ms)
        .filter(|&t| t > 1_000)
    {
        let mut c = case.clone();
        for e in &mut c.timeline {
            e.at_ms -= first - 1_000;
        }
        out.push(c);
    }
    if n > 1 {
        let mut c = case.clone();
        let first = case.timeline[0].at_ms;
        for e in &mut c.timeline {
            e.at_ms = first + (e.at_ms - first) / 2;
        }
        if c != *case {
            out.push(c);
        }
    }
    out
}

/// The restart that brings back the member entry `i` stops, if `i` is a stop.
fn paired_restart(case: &Case, i: usize) -> Option<usize> {
    let e = &case.timeline[i];
    if !matches!(e.action, Action::Leave { .. } | Action::Crash { .. }) {
        return None;
    }
    let member = e.action.member()?;
    (i + 1..case.timeline.len()).find(
        |&j| matches!(&case.timeline[j].action, Action::Restart { member: m, .. } if m == member),
    )
}

/// How big a case is, in words: fault-plan entries, members, partitions.
pub fn size(case: &Case) -> String {
    let partitions: u32 = case.topics.iter().map(|t| t.partitions).sum();
    format!(
        "{} fault-plan entries, {} members, {} topics, {} partitions",
        case.timeline.len(),
        case.members.len(),
        case.topics.len(),
        partitions
    )
}
