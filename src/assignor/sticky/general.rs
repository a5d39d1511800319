//! `GeneralAssignmentBuilder` behaviour (subscriptions differ; ALGORITHMS.md 4.4), with the same
//! decision sequence as Kafka but incremental bookkeeping.
//!
//! Kafka re-checks `isBalanced()` (a scan of every partition) before each partition it looks at,
//! and scans the sorted member set for a target; that is what makes it take seconds on 500
//! members. Here the check is kept up to date per move: `isBalanced()` is false exactly when the
//! count spread is above one and some topic has a holder with at least two more partitions than
//! one of its subscribers that is not yet full (`count != maxAssignmentSize`), so each topic keeps
//! count histograms of its subscribers, its not-full subscribers and its holders, and the number
//! of topics in that state is tracked.

use super::{AssignError, Members, RackInfo, Space, Validated, NONE};
use crate::assignor::{GroupSpec, MemberPartitions, TopicPartition, NEVER_RETURNS};
use crate::java::{bucket_index, string_hash};
use std::collections::{BTreeSet, HashMap};

pub(super) fn assign(
    group: &GroupSpec,
    space: &Space,
    members: &Members,
    validated: &Validated,
    claims: &[&[TopicPartition]],
    racks: &RackInfo,
) -> Result<MemberPartitions, AssignError> {
    let n = group.members.len();
    let nt = space.topics.len();
    let total = space.total;

    // topic2AllPotentialConsumers / consumer2AllPotentialTopics over the assigned topics.
    let mut topic_pos = vec![NONE; group.topics.len()];
    for (ti, &(t, _)) in space.topics.iter().enumerate() {
        topic_pos[t as usize] = ti as u32;
    }
    let mut mtopics: Vec<Vec<u32>> = Vec::with_capacity(n);
    let mut subs: Vec<Vec<u32>> = vec![Vec::new(); nt];
    let mut max_size = vec![0u64; n];
    for (m, member) in group.members.iter().enumerate() {
        let list: Vec<u32> = member
            .topics
            .iter()
            .map(|&t| topic_pos[t as usize])
            .filter(|&ti| ti != NONE)
            .collect();
        for &ti in &list {
            subs[ti as usize].push(m as u32);
            max_size[m] += u64::from(space.topics[ti as usize].1);
        }
        mtopics.push(list);
    }
    for s in &mut subs {
        s.sort_unstable_by_key(|&m| members.rank[m as usize]);
    }
    let mut part_ti = vec![0u32; total];
    for ti in 0..nt {
        let start = space.topic_start[ti] as usize;
        let len = space.topics[ti].1 as usize;
        part_ti[start..start + len].fill(ti as u32);
    }

    // TopicComparator: fewer potential consumers first, then topic name.
    let mut topic_order: Vec<usize> = (0..nt).collect();
    topic_order.sort_by_key(|&ti| (subs[ti].len(), ti));
    let mut sorted_all: Vec<u32> = Vec::with_capacity(total);
    for &ti in &topic_order {
        let start = space.topic_start[ti];
        sorted_all.extend(start..start + space.topics[ti].1);
    }

    // prevAssignment: claims of members below the highest generation (or without one when some
    // member has one); for each partition the highest such generation, first met on ties.
    let mut prev_owner: Vec<u32> = Vec::new();
    if validated.any_claims {
        prev_owner = vec![NONE; total];
        let mut prev_gen = vec![0i32; total];
        let max_gen = validated.max_generation;
        for &m in &members.hash_order {
            let gen = match group.members[m].generation {
                Some(g) if g < max_gen => g,
                None if max_gen > -1 => -1,
                _ => continue,
            };
            for &tp in claims[m] {
                let Some(g) = space.dense(tp) else { continue };
                let g = g as usize;
                if prev_owner[g] == NONE || gen > prev_gen[g] {
                    prev_owner[g] = m as u32;
                    prev_gen[g] = gen;
                }
            }
        }
    }

    // assignOwnedPartitions: keep validated claims on topics the member still subscribes to
    // (and, rack-aware, with a replica in its rack).
    let mut owner = vec![NONE; total];
    let mut count = vec![0u32; n];
    let mut revocation_required = false;
    for (m, list) in validated.owned.iter().enumerate() {
        for &tp in list {
            let g = space.dense(tp).expect("claims are in the space");
            if mtopics[m].binary_search(&part_ti[g as usize]).is_ok() && !racks.mismatch(m, g) {
                owner[g as usize] = m as u32;
                count[m] += 1;
            } else {
                revocation_required = true;
            }
        }
    }
    let initializing = count.iter().all(|&c| c == 0);
    let mut unassigned: Vec<u32> = sorted_all
        .iter()
        .copied()
        .filter(|&g| owner[g as usize] == NONE)
        .collect();

    // maybeAssign, rack-aware first when on: each partition to the first member in a replica's
    // rack (or without a rack), then what is left to anyone.
    if racks.active() {
        let left = maybe_assign(
            &unassigned,
            &part_ti,
            &subs,
            members,
            &mut owner,
            &mut count,
            |m, g| !racks.mismatch(m as usize, g),
        );
        maybe_assign(
            &left,
            &part_ti,
            &subs,
            members,
            &mut owner,
            &mut count,
            |_, _| true,
        );
    } else {
        maybe_assign(
            &unassigned,
            &part_ti,
            &subs,
            members,
            &mut owner,
            &mut count,
            |_, _| true,
        );
    }

    // Fixed topics (fewer than two potential consumers) and fixed members (already at their
    // maximum and holding nothing another member could take) are set aside.
    let topic_fixed: Vec<bool> = (0..nt).map(|ti| subs[ti].len() < 2).collect();
    let mut holds_movable = vec![false; n];
    for (g, &o) in owner.iter().enumerate() {
        if o != NONE && !topic_fixed[part_ti[g] as usize] {
            holds_movable[o as usize] = true;
        }
    }
    let fixed: Vec<bool> = (0..n)
        .map(|m| u64::from(count[m]) >= max_size[m] && !holds_movable[m])
        .collect();
    sorted_all.retain(|&g| !topic_fixed[part_ti[g as usize] as usize]);
    unassigned.retain(|&g| !topic_fixed[part_ti[g as usize] as usize]);

    let snapshot = owner.clone();
    let mut b = Balancer::new(BalancerInput {
        part_ti: &part_ti,
        mtopics: &mtopics,
        subs: &subs,
        max_size: &max_size,
        fixed: &fixed,
        prev_owner: &prev_owner,
        topic_hash: space
            .topics
            .iter()
            .map(|&(t, _)| string_hash(&group.topic(t).name))
            .collect(),
        topic_start: &space.topic_start,
        owner,
        count,
    });
    let before = b.balance_score();
    if !revocation_required {
        b.perform_reassignments(&unassigned)?;
    }
    let performed = b.perform_reassignments(&sorted_all)?;
    let mut owner = b.owner;
    if !initializing && performed && b_score(&b.count, &fixed) >= before {
        owner = snapshot;
    }

    // Dense order is (topic, partition) order, so the lists come out sorted.
    let mut target: MemberPartitions = vec![Vec::new(); n];
    for (ti, &(topic, len)) in space.topics.iter().enumerate() {
        let start = space.topic_start[ti] as usize;
        for p in 0..len as usize {
            let o = owner[start + p];
            if o != NONE {
                target[o as usize].push(TopicPartition::new(topic, p as i32));
            }
        }
    }
    Ok(target)
}

/// `maybeAssign`: each unassigned partition to the first member in (count, member id) order
/// that subscribes to its topic and that `may_take` it; returns the partitions nobody took.
/// Partitions of one topic are consecutive, and only that topic's subscribers change count
/// meanwhile, so one ordered set per run suffices.
fn maybe_assign(
    unassigned: &[u32],
    part_ti: &[u32],
    subs: &[Vec<u32>],
    members: &Members,
    owner: &mut [u32],
    count: &mut [u32],
    may_take: impl Fn(u32, u32) -> bool,
) -> Vec<u32> {
    let mut left = Vec::new();
    let mut i = 0;
    while i < unassigned.len() {
        let ti = part_ti[unassigned[i] as usize] as usize;
        let mut j = i;
        while j < unassigned.len() && part_ti[unassigned[j] as usize] as usize == ti {
            j += 1;
        }
        if subs[ti].is_empty() {
            left.extend_from_slice(&unassigned[i..j]);
        } else {
            let mut set: BTreeSet<(u32, u32, u32)> = subs[ti]
                .iter()
                .map(|&m| (count[m as usize], members.rank[m as usize], m))
                .collect();
            for &g in &unassigned[i..j] {
                let Some(&(c, r, m)) = set.iter().find(|&&(_, _, m)| may_take(m, g)) else {
                    left.push(g);
                    continue;
                };
                set.remove(&(c, r, m));
                owner[g as usize] = m;
                count[m as usize] = c + 1;
                set.insert((c + 1, r, m));
            }
        }
        i = j;
    }
    left
}

/// `getBalanceScore`: the sum over member pairs of the count difference, over the members taking
/// part in reassignment.
fn b_score(count: &[u32], fixed: &[bool]) -> i64 {
    let mut counts: Vec<i64> = count
        .iter()
        .zip(fixed)
        .filter(|(_, &f)| !f)
        .map(|(&c, _)| i64::from(c))
        .collect();
    counts.sort_unstable();
    let n = counts.len() as i64;
    counts
        .iter()
        .enumerate()
        .map(|(i, &c)| c * (2 * i as i64 - n + 1))
        .sum()
}

/// Multiset of small counts with its minimum and maximum; values change by one at a time, so
/// the bounds move cheaply.
#[derive(Default, Clone)]
struct Hist {
    cnt: Vec<u32>,
    n: u32,
    min: u32,
    max: u32,
}

impl Hist {
    fn insert(&mut self, v: u32) {
        let vi = v as usize;
        if vi >= self.cnt.len() {
            self.cnt.resize(vi + 1, 0);
        }
        self.cnt[vi] += 1;
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
    }

    fn remove(&mut self, v: u32) {
        self.cnt[v as usize] -= 1;
        self.n -= 1;
        if self.n == 0 || self.cnt[v as usize] > 0 {
            return;
        }
        if v == self.min {
            while self.cnt[self.min as usize] == 0 {
                self.min += 1;
            }
        }
        if v == self.max {
            while self.cnt[self.max as usize] == 0 {
                self.max -= 1;
            }
        }
    }

    /// Insert first so a bound never scans past the new value.
    fn replace(&mut self, old: u32, new: u32) {
        self.insert(new);
        self.remove(old);
    }
}

/// A `HashSet<TopicPartition>` of `PartitionMovements`, kept in Java iteration order: bucket at
/// the current capacity, then insertion sequence.
struct MoveSet {
    cap: usize,
    entries: HashMap<u32, (i32, u64)>,
    order: BTreeSet<(usize, u64, u32)>,
}

impl MoveSet {
    fn new() -> MoveSet {
        MoveSet {
            cap: 16,
            entries: HashMap::new(),
            order: BTreeSet::new(),
        }
    }

    fn insert(&mut self, g: u32, hash: i32, seq: u64) {
        self.entries.insert(g, (hash, seq));
        self.order.insert((bucket_index(hash, self.cap), seq, g));
        if self.entries.len() > (self.cap as f32 * 0.75f32) as usize {
            self.cap *= 2;
            let cap = self.cap;
            self.order = self
                .entries
                .iter()
                .map(|(&g, &(h, s))| (bucket_index(h, cap), s, g))
                .collect();
        }
    }

    fn remove(&mut self, g: u32) {
        if let Some((h, s)) = self.entries.remove(&g) {
            self.order.remove(&(bucket_index(h, self.cap), s, g));
        }
    }

    fn first(&self) -> u32 {
        self.order.first().expect("non-empty movement set").2
    }
}

/// `PartitionMovements`: where each moved partition came from, and per topic which partitions
/// moved between which pair of members, so a move back uses a partition that came the other way.
#[derive(Default)]
struct Movements {
    record: HashMap<u32, (u32, u32)>,
    by_topic: HashMap<u32, HashMap<(u32, u32), MoveSet>>,
    seq: u64,
}

impl Movements {
    fn remove_record(&mut self, g: u32, ti: u32) -> (u32, u32) {
        let pair = self.record.remove(&g).expect("recorded movement");
        let topic = self.by_topic.get_mut(&ti).expect("topic movements");
        let set = topic.get_mut(&pair).expect("pair movements");
        set.remove(g);
        if set.entries.is_empty() {
            topic.remove(&pair);
        }
        if topic.is_empty() {
            self.by_topic.remove(&ti);
        }
        pair
    }

    fn add_record(&mut self, g: u32, ti: u32, hash: i32, pair: (u32, u32)) {
        self.record.insert(g, pair);
        self.seq += 1;
        self.by_topic
            .entry(ti)
            .or_default()
            .entry(pair)
            .or_insert_with(MoveSet::new)
            .insert(g, hash, self.seq);
    }

    fn move_partition(&mut self, g: u32, ti: u32, hash: i32, old: u32, new: u32) {
        if self.record.contains_key(&g) {
            let (src, _) = self.remove_record(g, ti);
            if src != new {
                self.add_record(g, ti, hash, (src, new));
            }
        } else {
            self.add_record(g, ti, hash, (old, new));
        }
    }

    /// `getTheActualPartitionToBeMoved`.
    fn actual(&self, g: u32, ti: u32, old: u32, new: u32) -> u32 {
        let Some(topic) = self.by_topic.get(&ti) else {
            return g;
        };
        let old = self.record.get(&g).map_or(old, |&(src, _)| src);
        topic.get(&(new, old)).map_or(g, MoveSet::first)
    }
}

/// The state one pass of `performReassignments` starts from ([`Balancer::pass_start`]).
#[derive(PartialEq, Eq)]
struct PassStart {
    owner: Vec<u32>,
    moves: Vec<MoveSetStart>,
}

/// One movement set at a pass's start: its topic, (from, to) members, and Java iteration order.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct MoveSetStart {
    topic: u32,
    pair: (u32, u32),
    cap: usize,
    order: Vec<u32>,
}

struct BalancerInput<'a> {
    part_ti: &'a [u32],
    mtopics: &'a [Vec<u32>],
    subs: &'a [Vec<u32>],
    max_size: &'a [u64],
    fixed: &'a [bool],
    prev_owner: &'a [u32],
    topic_hash: Vec<i32>,
    topic_start: &'a [u32],
    owner: Vec<u32>,
    count: Vec<u32>,
}

struct Balancer<'a> {
    part_ti: &'a [u32],
    mtopics: &'a [Vec<u32>],
    subs: &'a [Vec<u32>],
    max_size: &'a [u64],
    fixed: &'a [bool],
    prev_owner: &'a [u32],
    topic_hash: Vec<i32>,
    topic_start: &'a [u32],
    owner: Vec<u32>,
    count: Vec<u32>,
    /// Counts of the members taking part.
    global: Hist,
    /// Per topic: counts of its subscribers, of those not yet full, and of its holders.
    all: Vec<Hist>,
    open: Vec<Hist>,
    holders: Vec<Hist>,
    /// Per member, partitions held of each of its topics (parallel to `mtopics`), and of topics
    /// it does not subscribe to (only a move back to a previous owner makes those).
    held: Vec<Vec<u32>>,
    foreign: Vec<Vec<(u32, u32)>>,
    violating: Vec<bool>,
    n_violating: usize,
    moves: Movements,
}

impl<'a> Balancer<'a> {
    fn new(input: BalancerInput<'a>) -> Balancer<'a> {
        let n = input.count.len();
        let nt = input.subs.len();
        let mut b = Balancer {
            part_ti: input.part_ti,
            mtopics: input.mtopics,
            subs: input.subs,
            max_size: input.max_size,
            fixed: input.fixed,
            prev_owner: input.prev_owner,
            topic_hash: input.topic_hash,
            topic_start: input.topic_start,
            owner: input.owner,
            count: input.count,
            global: Hist::default(),
            all: vec![Hist::default(); nt],
            open: vec![Hist::default(); nt],
            holders: vec![Hist::default(); nt],
            held: input.mtopics.iter().map(|t| vec![0; t.len()]).collect(),
            foreign: vec![Vec::new(); n],
            violating: vec![false; nt],
            n_violating: 0,
            moves: Movements::default(),
        };
        for (g, &o) in b.owner.iter().enumerate() {
            if o == NONE || b.fixed[o as usize] {
                continue;
            }
            let ti = b.part_ti[g];
            let j = b.mtopics[o as usize]
                .binary_search(&ti)
                .expect("initial owners subscribe to their partitions' topics");
            b.held[o as usize][j] += 1;
        }
        for m in 0..n {
            if b.fixed[m] {
                continue;
            }
            let c = b.count[m];
            b.global.insert(c);
            for (j, &ti) in b.mtopics[m].iter().enumerate() {
                let ti = ti as usize;
                b.all[ti].insert(c);
                if u64::from(c) != b.max_size[m] {
                    b.open[ti].insert(c);
                }
                if b.held[m][j] > 0 {
                    b.holders[ti].insert(c);
                }
            }
        }
        for ti in 0..nt {
            b.recheck(ti);
        }
        b
    }

    fn recheck(&mut self, ti: usize) {
        let h = &self.holders[ti];
        let o = &self.open[ti];
        let v = h.n > 0 && o.n > 0 && h.max >= o.min + 2;
        if v != self.violating[ti] {
            self.violating[ti] = v;
            if v {
                self.n_violating += 1;
            } else {
                self.n_violating -= 1;
            }
        }
    }

    /// `isBalanced()`.
    fn is_balanced(&self) -> bool {
        let fast =
            self.global.n == 0 || self.global.max <= self.global.min + 1 || self.n_violating == 0;
        #[cfg(test)]
        assert_eq!(fast, self.naive_is_balanced(), "incremental isBalanced");
        fast
    }

    /// Kafka's `isBalanced()` as written: a scan of every partition a not-full member could
    /// take. Tests check the incremental answer against it at every call.
    #[cfg(test)]
    fn naive_is_balanced(&self) -> bool {
        let active: Vec<usize> = (0..self.count.len()).filter(|&m| !self.fixed[m]).collect();
        let Some(min) = active.iter().map(|&m| self.count[m]).min() else {
            return true;
        };
        let max = active.iter().map(|&m| self.count[m]).max().unwrap_or(min);
        if min + 1 >= max {
            return true;
        }
        let total = self.part_ti.len() as u32;
        for &c in &active {
            if u64::from(self.count[c]) == self.max_size[c] {
                continue;
            }
            for &ti in &self.mtopics[c] {
                let start = self.topic_start[ti as usize];
                let end = self
                    .topic_start
                    .get(ti as usize + 1)
                    .copied()
                    .unwrap_or(total);
                for g in start..end {
                    let o = self.owner[g as usize];
                    if o != c as u32
                        && o != NONE
                        && !self.fixed[o as usize]
                        && self.count[c] + 1 < self.count[o as usize]
                    {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn balance_score(&self) -> i64 {
        b_score(&self.count, self.fixed)
    }

    /// `performReassignments`: returns whether anything moved.
    ///
    /// Kafka's loop repeats its passes until one moves nothing, and on some inputs that never
    /// happens: a partition goes back to a previous owner that does not subscribe to its topic,
    /// the balance rule sends it on, `getTheActualPartitionToBeMoved` swaps in another
    /// partition, and two members pass that one back and forth forever (the leader spins in
    /// `assign()`; librdkafka's port had the same, confluentinc/librdkafka#4783). Each pass is
    /// a function of the state it starts from, so a pass that starts from a state seen before
    /// will never end the loop: Brent's cycle search compares each pass's start with one saved
    /// start, exactly, and says so instead of spinning.
    fn perform_reassignments(&mut self, partitions: &[u32]) -> Result<bool, AssignError> {
        let mut performed = false;
        let mut saved: Option<PassStart> = None;
        let (mut power, mut since_saved) = (1u32, 0u32);
        for pass in 0u64.. {
            // Nearly every run settles within two passes; the search starts after them.
            if pass >= 2 {
                let start = self.pass_start();
                if saved.as_ref() == Some(&start) {
                    return Err(AssignError(format!(
                        "sticky: performReassignments never settles (pass {pass} starts where an \
                         earlier one did): {NEVER_RETURNS}"
                    )));
                }
                since_saved += 1;
                if since_saved == power {
                    saved = Some(start);
                    power *= 2;
                    since_saved = 0;
                }
            }
            let mut modified = false;
            for &g in partitions {
                if self.is_balanced() {
                    break;
                }
                let c = self.owner[g as usize];
                if c == NONE {
                    return Err(AssignError(
                        "sticky: a partition has no owner during reassignment".into(),
                    ));
                }
                let cc = self.count[c as usize];
                if let Some(&prev) = self.prev_owner.get(g as usize) {
                    if prev != NONE {
                        if self.fixed[prev as usize] {
                            return Err(AssignError(
                                "sticky: the previous owner of a partition takes no part in \
                                 reassignment (Kafka throws NullPointerException)"
                                    .into(),
                            ));
                        }
                        if cc > self.count[prev as usize] + 1 {
                            self.reassign(g, prev);
                            performed = true;
                            modified = true;
                            continue;
                        }
                    }
                }
                let ti = self.part_ti[g as usize] as usize;
                let all = &self.all[ti];
                #[cfg(test)]
                {
                    let naive = self.subs[ti]
                        .iter()
                        .filter(|&&m| !self.fixed[m as usize])
                        .map(|&m| self.count[m as usize])
                        .min();
                    assert_eq!(naive, (all.n > 0).then_some(all.min), "subscriber minimum");
                }
                if all.n > 0 && cc > all.min + 1 {
                    let min = all.min;
                    let target = *self.subs[ti]
                        .iter()
                        .find(|&&m| !self.fixed[m as usize] && self.count[m as usize] == min)
                        .expect("a subscriber at the minimum count");
                    self.reassign(g, target);
                    performed = true;
                    modified = true;
                }
            }
            if !modified {
                return Ok(performed);
            }
        }
        unreachable!("the passes run until one moves nothing or a start repeats")
    }

    /// What the next pass depends on: every owner, and each movement set with its Java
    /// iteration order (capacity, then the partitions in order: later insertions go after
    /// these in their bucket, and a resize keeps their order within a bucket).
    fn pass_start(&self) -> PassStart {
        let mut moves = Vec::new();
        for (&topic, pairs) in &self.moves.by_topic {
            for (&pair, set) in pairs {
                moves.push(MoveSetStart {
                    topic,
                    pair,
                    cap: set.cap,
                    order: set.order.iter().map(|&(_, _, g)| g).collect(),
                });
            }
        }
        moves.sort_unstable();
        PassStart {
            owner: self.owner.clone(),
            moves,
        }
    }

    fn reassign(&mut self, g: u32, new: u32) {
        let ti = self.part_ti[g as usize];
        let old = self.owner[g as usize];
        let moved = self.moves.actual(g, ti, old, new);
        let from = self.owner[moved as usize];
        let partition = (moved - self.topic_start[ti as usize]) as i32;
        // TopicPartition.hashCode(): 31 * (31 + partition) + topic.hashCode().
        let hash = 31i32
            .wrapping_mul(31i32.wrapping_add(partition))
            .wrapping_add(self.topic_hash[ti as usize]);
        self.moves.move_partition(moved, ti, hash, from, new);
        self.transfer(moved, from, new);
    }

    fn transfer(&mut self, g: u32, from: u32, to: u32) {
        let ti = self.part_ti[g as usize];
        self.owner[g as usize] = to;
        if self.change_held(from, ti, false) {
            self.holders[ti as usize].remove(self.count[from as usize]);
        }
        if self.change_held(to, ti, true) {
            self.holders[ti as usize].insert(self.count[to as usize]);
        }
        self.bump(from, false);
        self.bump(to, true);
        self.recheck(ti as usize);
    }

    /// Changes how many partitions of `ti` member `m` holds; true when it starts or stops being
    /// a holder.
    fn change_held(&mut self, m: u32, ti: u32, up: bool) -> bool {
        let m = m as usize;
        let slot = match self.mtopics[m].binary_search(&ti) {
            Ok(j) => &mut self.held[m][j],
            Err(_) => {
                let f = &mut self.foreign[m];
                let k = match f.iter().position(|&(t, _)| t == ti) {
                    Some(k) => k,
                    None => {
                        f.push((ti, 0));
                        f.len() - 1
                    }
                };
                let before = f[k].1;
                f[k].1 = if up { before + 1 } else { before - 1 };
                if f[k].1 == 0 {
                    f.swap_remove(k);
                }
                return if up { before == 0 } else { before == 1 };
            }
        };
        let before = *slot;
        *slot = if up { before + 1 } else { before - 1 };
        if up {
            before == 0
        } else {
            before == 1
        }
    }

    fn bump(&mut self, m: u32, up: bool) {
        let m = m as usize;
        let old = self.count[m];
        let new = if up { old + 1 } else { old - 1 };
        self.count[m] = new;
        self.global.replace(old, new);
        let full = self.max_size[m];
        for j in 0..self.mtopics[m].len() {
            let ti = self.mtopics[m][j] as usize;
            self.all[ti].replace(old, new);
            match (u64::from(old) != full, u64::from(new) != full) {
                (true, true) => self.open[ti].replace(old, new),
                (true, false) => self.open[ti].remove(old),
                (false, true) => self.open[ti].insert(new),
                (false, false) => {}
            }
            if self.held[m][j] > 0 {
                self.holders[ti].replace(old, new);
            }
            self.recheck(ti);
        }
        for k in 0..self.foreign[m].len() {
            let ti = self.foreign[m][k].0 as usize;
            self.holders[ti].replace(old, new);
            self.recheck(ti);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::java::{topic_partition_hash, JavaHash, JavaHashSet};

    #[derive(Clone, PartialEq, Eq, Hash)]
    struct Tp(i32);

    impl JavaHash for Tp {
        fn java_hash(&self) -> i32 {
            topic_partition_hash("orders", self.0)
        }
    }

    /// A movement set iterates first what a `java.util.HashSet<TopicPartition>` would, through
    /// growth, removals and re-insertions.
    #[test]
    fn move_set_first_follows_java_hash_set() {
        let mut ours = MoveSet::new();
        let mut java = JavaHashSet::new(crate::java::Capacity::Default);
        let mut seq = 0;
        let ops: Vec<(bool, i32)> = (0..200)
            .map(|i| ((i * 7919) % 5 != 0, (i * 104_729) % 61))
            .collect();
        for (insert, p) in ops {
            let tp = Tp(p);
            if insert {
                if java.insert(tp.clone()) {
                    seq += 1;
                    ours.insert(p as u32, tp.java_hash(), seq);
                }
            } else if java.remove(&tp) {
                ours.remove(p as u32);
            }
            if let Some(first) = java.iter().next() {
                assert_eq!(ours.first(), first.0 as u32);
            }
        }
    }
}
