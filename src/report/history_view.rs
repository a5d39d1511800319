//! A run's [`RunMarks`] folded into intervals, the shared input of the pictures (the SVG timeline and
//! the Chrome trace): who owned and who processed each partition when, each member's life,
//! stalls and pauses, restores, and the rebalance phases. One pass over the marks, in order;
//! everything still open when the run ends is closed at its end.

use crate::history::{Mark, RunMarks};

/// `member` owned (or processed, or restored) `partition` from `start_us` until `end_us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub member: usize,
    pub partition: usize,
    pub start_us: u64,
    pub end_us: u64,
}

/// A rebalance as the coordinator saw it: PreparingRebalance at `start_us`, the join phase done
/// at `join_us`, Stable at `end_us` (`stable` false: superseded by the next one, or the run
/// ended first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    pub generation: i32,
    pub start_us: u64,
    pub join_us: Option<u64>,
    pub end_us: u64,
    pub stable: bool,
}

/// A member's process event (`start`, `close`, `crash`, `stall_begin`, `stall_end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberEvent {
    pub at_us: u64,
    pub member: usize,
    pub event: &'static str,
}

/// A member the coordinator went on counting as a member, the owner of `partitions`
/// partitions, while it could not reach it: from its crash or network cut (`cause`: `crash`,
/// `cut_off`) until the coordinator removed its entry (its session expired; `ended`:
/// `removed`), a static member's new process replaced it (`replaced`), the cut healed first
/// (`reachable`), or the run ended (`run_end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub start_us: u64,
    pub end_us: u64,
    pub cause: &'static str,
    pub ended: &'static str,
    pub partitions: usize,
}

/// A step function: the value holds from each point's time until the next point's.
pub type Steps = Vec<(u64, usize)>;

#[derive(Clone, Debug, Default)]
pub struct View {
    pub end_us: u64,
    pub owned: Vec<Seg>,
    pub processing: Vec<Seg>,
    pub restores: Vec<Seg>,
    /// `(at_us, member, partition)`: the member stopped owning the partition while alive.
    pub revocations: Vec<(u64, usize, usize)>,
    /// Per partition: `(start_us, end_us)` while it was not processed after the group formed.
    pub unavailable: Vec<Vec<(u64, u64)>>,
    /// How many partitions were unavailable, over time.
    pub unavailable_count: Steps,
    /// Per member: partitions owned and partitions processed, over time.
    pub owned_count: Vec<Steps>,
    pub processing_count: Vec<Steps>,
    /// Per member: from `start` until `close` or `crash`.
    pub alive: Vec<Vec<(u64, u64)>>,
    pub stalls: Vec<Vec<(u64, u64)>>,
    /// Per member: alive, it had been processing, and now processes nothing.
    pub pauses: Vec<Vec<(u64, u64)>>,
    /// Per member: dead or cut off, and still counted by the coordinator ([`Held`]).
    pub held: Vec<Vec<Held>>,
    pub events: Vec<MemberEvent>,
    pub phases: Vec<Phase>,
}

fn push_step(steps: &mut Steps, at: u64, value: usize) {
    match steps.last_mut() {
        Some(last) if last.0 == at => last.1 = value,
        Some(last) if last.1 == value => {}
        _ => steps.push((at, value)),
    }
}

impl View {
    /// Folds the history; `end_us` closes what is still open (the run's end).
    pub fn new(history: &RunMarks, end_us: u64) -> View {
        let nm = history.member_names.len();
        let np = history.partition_names.len();
        let mut v = View {
            end_us,
            unavailable: vec![Vec::new(); np],
            owned_count: vec![vec![(0, 0)]; nm],
            processing_count: vec![vec![(0, 0)]; nm],
            alive: vec![Vec::new(); nm],
            stalls: vec![Vec::new(); nm],
            pauses: vec![Vec::new(); nm],
            held: vec![Vec::new(); nm],
            unavailable_count: vec![(0, 0)],
            ..View::default()
        };
        let mut owner: Vec<Option<(usize, u64)>> = vec![None; np];
        let mut active: Vec<Option<(usize, u64)>> = vec![None; np];
        let mut unavailable_since: Vec<Option<u64>> = vec![None; np];
        let mut unavailable_now = 0usize;
        let mut owned_n = vec![0usize; nm];
        let mut proc_n = vec![0usize; nm];
        let mut alive_since: Vec<Option<u64>> = vec![None; nm];
        let mut stall_since: Vec<Option<u64>> = vec![None; nm];
        let mut pause_since: Vec<Option<u64>> = vec![None; nm];
        let mut had_work = vec![false; nm];
        // Per member: (since, cause, cut's end, partitions owned) while unreachable.
        type Open = (u64, &'static str, Option<u64>, usize);
        let mut held_since: Vec<Option<Open>> = vec![None; nm];
        let close_held = |held: &mut Vec<Held>, open: Open, at: u64, ended: &'static str| {
            let (since, cause, until, partitions) = open;
            // A cut that healed before the coordinator did anything ended then.
            let (end, ended) = match until {
                Some(u) if u < at => (u, "reachable"),
                _ => (at, ended),
            };
            held.push(Held {
                start_us: since,
                end_us: end.max(since),
                cause,
                ended,
                partitions,
            });
        };
        let mut formed = false;
        for &(at, ref mark) in &history.marks {
            match *mark {
                Mark::Owner { partition, member } if partition < np => {
                    if let Some((m, since)) = owner[partition].take() {
                        v.owned.push(Seg {
                            member: m,
                            partition,
                            start_us: since,
                            end_us: at,
                        });
                        owned_n[m] -= 1;
                        push_step(&mut v.owned_count[m], at, owned_n[m]);
                        if member != Some(m) && alive_since[m].is_some() {
                            v.revocations.push((at, m, partition));
                        }
                    }
                    if let Some(m) = member.filter(|&m| m < nm) {
                        owner[partition] = Some((m, at));
                        owned_n[m] += 1;
                        push_step(&mut v.owned_count[m], at, owned_n[m]);
                    }
                }
                Mark::Processing { partition, member } if partition < np => {
                    if let Some((m, since)) = active[partition].take() {
                        v.processing.push(Seg {
                            member: m,
                            partition,
                            start_us: since,
                            end_us: at,
                        });
                        proc_n[m] -= 1;
                        push_step(&mut v.processing_count[m], at, proc_n[m]);
                        if proc_n[m] == 0 && had_work[m] && alive_since[m].is_some() {
                            pause_since[m].get_or_insert(at);
                        }
                    }
                    match member.filter(|&m| m < nm) {
                        Some(m) => {
                            active[partition] = Some((m, at));
                            proc_n[m] += 1;
                            had_work[m] = true;
                            push_step(&mut v.processing_count[m], at, proc_n[m]);
                            if let Some(since) = pause_since[m].take() {
                                v.pauses[m].push((since, at));
                            }
                            if let Some(since) = unavailable_since[partition].take() {
                                v.unavailable[partition].push((since, at));
                                unavailable_now -= 1;
                                push_step(&mut v.unavailable_count, at, unavailable_now);
                            }
                        }
                        None => {
                            if formed && unavailable_since[partition].is_none() {
                                unavailable_since[partition] = Some(at);
                                unavailable_now += 1;
                                push_step(&mut v.unavailable_count, at, unavailable_now);
                            }
                        }
                    }
                }
                Mark::Member { member, event } if member < nm => {
                    v.events.push(MemberEvent {
                        at_us: at,
                        member,
                        event,
                    });
                    match event {
                        "removed" | "replaced" => {
                            if let Some(open) = held_since[member].take() {
                                close_held(&mut v.held[member], open, at, event);
                            }
                        }
                        "start" => {
                            alive_since[member].get_or_insert(at);
                        }
                        "close" | "crash" => {
                            if event == "crash" {
                                if let Some(since) = stall_since[member].take() {
                                    v.stalls[member].push((since, at));
                                }
                            }
                            if let Some(since) = alive_since[member].take() {
                                v.alive[member].push((since, at));
                            }
                            if let Some(since) = pause_since[member].take() {
                                v.pauses[member].push((since, at));
                            }
                            had_work[member] = false;
                        }
                        "stall_begin" => {
                            stall_since[member].get_or_insert(at);
                        }
                        "stall_end" => {
                            if let Some(since) = stall_since[member].take() {
                                v.stalls[member].push((since, at));
                            }
                        }
                        _ => {}
                    }
                }
                Mark::Unreachable {
                    member,
                    cause,
                    until_us,
                } if member < nm => {
                    if let Some(open) = held_since[member].take() {
                        close_held(&mut v.held[member], open, at, "reachable");
                    }
                    held_since[member] = Some((at, cause, until_us, owned_n[member]));
                }
                Mark::Restore {
                    member,
                    partition,
                    until_us,
                } if member < nm && partition < np => v.restores.push(Seg {
                    member,
                    partition,
                    start_us: at,
                    end_us: until_us.max(at),
                }),
                Mark::RebalanceStart { generation } => {
                    if let Some(last) = v.phases.last_mut().filter(|p| !p.stable) {
                        last.end_us = at;
                    }
                    v.phases.push(Phase {
                        generation,
                        start_us: at,
                        join_us: None,
                        end_us: end_us.max(at),
                        stable: false,
                    });
                }
                Mark::JoinComplete { generation } => {
                    if let Some(last) = v.phases.last_mut().filter(|p| !p.stable) {
                        last.generation = generation;
                        last.join_us = Some(at);
                    }
                }
                Mark::Stable { generation } => {
                    formed = true;
                    if let Some(last) = v.phases.last_mut().filter(|p| !p.stable) {
                        last.generation = generation;
                        last.end_us = at;
                        last.stable = true;
                    }
                }
                _ => {}
            }
        }
        let end = end_us.max(history.marks.last().map_or(0, |m| m.0));
        v.end_us = end;
        for (p, o) in owner.iter().enumerate() {
            if let Some((m, since)) = *o {
                v.owned.push(Seg {
                    member: m,
                    partition: p,
                    start_us: since,
                    end_us: end,
                });
            }
        }
        for (p, a) in active.iter().enumerate() {
            if let Some((m, since)) = *a {
                v.processing.push(Seg {
                    member: m,
                    partition: p,
                    start_us: since,
                    end_us: end,
                });
            }
        }
        for (p, u) in unavailable_since.iter().enumerate() {
            if let Some(since) = *u {
                v.unavailable[p].push((since, end));
            }
        }
        for m in 0..nm {
            if let Some(since) = alive_since[m] {
                v.alive[m].push((since, end));
            }
            if let Some(since) = stall_since[m] {
                v.stalls[m].push((since, end));
            }
            if let Some(since) = pause_since[m] {
                v.pauses[m].push((since, end));
            }
            if let Some(open) = held_since[m].take() {
                close_held(&mut v.held[m], open, end, "run_end");
            }
        }
        let key = |s: &Seg| (s.member, s.partition, s.start_us, s.end_us);
        v.owned.sort_by_key(key);
        v.processing.sort_by_key(key);
        v.restores.sort_by_key(key);
        v
    }
}

/// The value of a step function at `at`.
pub fn value_at(steps: &[(u64, usize)], at: u64) -> usize {
    match steps.partition_point(|s| s.0 <= at) {
        0 => 0,
        i => steps[i - 1].1,
    }
}
