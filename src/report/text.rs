//! The text report: stable order, no host paths or timings, the figures a reviewer reads in a
//! snapshot diff ("cooperative now revokes 5 instead of 4 on scale-out").

use super::Report;
use std::fmt::Write;

pub fn render_text(r: &Report) -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "scenario {}  seed {}  variant {}",
        r.scenario, r.seed, r.variant
    );
    let _ = writeln!(w, "digest   {}  events {}", r.digest, r.events);
    let _ = writeln!(w, "members");
    for m in &r.members {
        let _ = writeln!(
            w,
            "  {:<8} {:<11} [{}]  {}{}",
            m.name,
            m.protocol,
            m.assignors.join(", "),
            m.member_id,
            m.client_rack
                .as_ref()
                .map_or(String::new(), |r| format!("  rack {r}"))
        );
        for r in &m.restarted_with {
            let _ = writeln!(
                w,
                "  {:<8} {:<11} [{}]  from its restart at {} ms",
                "",
                r.protocol,
                r.assignors.join(", "),
                r.at_ms
            );
        }
    }
    // A member that stopped on a fatal error changes everything below: say it first.
    if !r.errors.is_empty() {
        let _ = writeln!(
            w,
            "errors: {} (a member stopped on a fatal error)",
            r.errors.len()
        );
        for e in &r.errors {
            let _ = writeln!(w, "  {e}");
        }
    }
    for n in &r.notices {
        let _ = writeln!(w, "notice: {n}");
    }
    // The online migration: each conversion of the group between the protocols.
    for m in &r.migrations {
        let (from, why) = (m.from(), m.why());
        let _ = writeln!(
            w,
            "migration: {from} -> {} at {} ms ({} {why}; epoch {}), carried over: {}",
            m.to,
            m.at_ms,
            m.by.as_deref().unwrap_or("-"),
            m.epoch,
            m.members.join(" ")
        );
    }
    match &r.formation {
        Some(f) => {
            let _ = writeln!(
                w,
                "formation: generation {} stable at {} ms ({} ms from the first join)",
                f.generation, f.end_ms, f.duration_ms
            );
        }
        None => {
            let _ = writeln!(w, "formation: never stable");
        }
    }
    let _ = writeln!(w, "rebalances after formation: {}", r.rebalances.count);
    for e in &r.rebalances.list {
        let _ = writeln!(
            w,
            "  gen {:>3}  {:<20} {:<6} start {:>7} ms  end {:>7} ms  took {:>6} ms ({})  detect {} ms{}",
            e.generation,
            e.trigger,
            e.member.as_deref().unwrap_or("-"),
            e.start_ms,
            e.end_ms,
            e.duration_ms,
            match (e.join_ms, e.sync_ms) {
                (Some(j), Some(s)) => format!("join {j} + sync {s}"),
                _ => "reconciled".to_string(),
            },
            e.detect_ms,
            if e.follow_up_ms > 0 { format!("  follow-up +{} ms", e.follow_up_ms) } else { String::new() }
        );
        let win = &e.window;
        let _ = writeln!(
            w,
            "           lag before {} peak {} catch-up {}",
            win.lag_before,
            win.lag_peak,
            win.catch_up_ms
                .map_or("never".to_string(), |c| format!("{c} ms"))
        );
        let m = &win.join_misses;
        let misses =
            m.not_co_located + m.no_price_yet + m.out_of_order + m.restoring + m.state_empty;
        if misses > 0 {
            let _ = writeln!(
                w,
                "           join misses: not co-located {}, no price yet {}, out of order {}, restoring {}, state empty {}",
                m.not_co_located, m.no_price_yet, m.out_of_order, m.restoring, m.state_empty
            );
        }
        if win.restores > 0 {
            let _ = writeln!(
                w,
                "           restores {} (standby takeovers {}), {} records, {} ms",
                win.restores, win.standby_takeovers, win.restored_records, win.restore_ms
            );
        }
    }
    let _ = writeln!(
        w,
        "revocations: {} (by staying members {})",
        r.revocations.total, r.revocations.by_staying_members
    );
    for (m, n) in natural_order(&r.revocations.per_member) {
        let _ = writeln!(w, "  {m:<8} {n}");
    }
    let _ = writeln!(
        w,
        "lost: {} (owned by crashed members {})",
        r.lost.total, r.lost.by_crash
    );
    let _ = writeln!(w, "moved: {} (minimum {})", r.moved.total, r.moved.minimum);
    let s = &r.pauses.stop_the_world_ms;
    let _ = writeln!(
        w,
        "stop-the-world ms: total {} p50 {} p99 {} max {}",
        s.total, s.p50, s.p99, s.max
    );
    for (m, v) in natural_order(&s.per) {
        let _ = writeln!(w, "  {m:<8} {v}");
    }
    let u = &r.pauses.unavailable_ms;
    let _ = writeln!(
        w,
        "partition unavailable ms: total {} p50 {} p99 {} max per partition (sum) {}{}{}",
        u.total,
        u.p50,
        u.p99,
        u.max,
        u.longest.as_ref().map_or(String::new(), |o| format!(
            "; longest outage: {}, {} ms (from {} ms)",
            o.partition,
            thousands(o.ms),
            o.start_ms
        )),
        if u.open_at_end.is_empty() {
            String::new()
        } else {
            format!(" (open at end: {})", u.open_at_end.join(" "))
        }
    );
    // By cause, when brokers or the network failed (otherwise it is the members' doing).
    if !r.brokers.is_empty() || !r.coordinator.is_empty() || u.by_cause.network > 0 {
        let parts: Vec<String> = u
            .by_cause
            .parts()
            .iter()
            .filter(|(_, ms)| *ms > 0)
            .map(|(c, ms)| format!("{} {ms}", c.name()))
            .collect();
        let _ = writeln!(w, "  by cause: {}", parts.join(", "));
    }
    for c in &r.coordinator {
        let broker = c
            .broker
            .map_or("none".to_string(), |b| format!("broker-{b}"));
        let _ = writeln!(w, "coordinator {} at {} ms: {broker}", c.event, c.at_ms);
    }
    let u = &r.pauses.unowned_ms;
    let _ = writeln!(
        w,
        "partition unowned ms: total {} p50 {} p99 {} max {}{}",
        u.total,
        u.p50,
        u.p99,
        u.max,
        if u.open_at_end.is_empty() {
            String::new()
        } else {
            format!(" (open at end: {})", u.open_at_end.join(" "))
        }
    );
    let j = &r.join;
    if j.notifications > 0 {
        let m = &j.misses;
        let _ = writeln!(
            w,
            "join: {} notifications, {} local hits; misses: not co-located {}, no price yet {}, out of order {}, restoring {}, state empty {}; latency ms p50 {} p99 {}",
            j.notifications,
            j.local_hits,
            m.not_co_located,
            m.no_price_yet,
            m.out_of_order,
            m.restoring,
            m.state_empty,
            j.latency_ms.p50,
            j.latency_ms.p99
        );
    }
    let rc = &r.recovery;
    if rc.restores > 0 {
        let _ = writeln!(
            w,
            "recovery: {} restores (standby takeovers {}), {} records replayed, {} ms restoring",
            rc.restores, rc.standby_takeovers, rc.restored_records, rc.restore_ms
        );
    }
    let rec = &r.records;
    if rec.written != rec.produced || rec.dropped > 0 {
        let _ = writeln!(
            w,
            "records written {} (appends: a broadcast record counts once per partition), dropped by the stream partitioner {}",
            rec.written, rec.dropped
        );
    }
    let _ = writeln!(
        w,
        "records: produced {} processed {} twice {} skipped by offset reset {} unconsumed at end {} never processed {}",
        rec.produced, rec.processed, rec.processed_twice, rec.skipped_by_offset_reset, rec.unconsumed_at_end, rec.never_processed
    );
    if let Some(crossed) = rec.cross_rack_fetched {
        let _ = writeln!(w, "cross-rack fetched: {crossed} records");
        for m in &r.members {
            if let (Some(n), Some(rack)) = (m.cross_rack_fetched.filter(|&n| n > 0), &m.client_rack)
            {
                let _ = writeln!(w, "  {:<8} {n} (in {rack})", m.name);
            }
        }
    }
    for b in &r.co_partitioning {
        let _ = writeln!(
            w,
            "co-partitioning broken at {} ms: [{}] have {:?} partitions; unmatched indexes {:?}",
            b.at_ms,
            b.topics.join(" "),
            b.partition_counts,
            b.unmatched_indexes
        );
    }
    let _ = writeln!(w, "final assignment");
    for (m, parts) in natural_order(&r.final_assignment) {
        let _ = writeln!(w, "  {m:<8} {}", parts.join(" "));
    }
    let inv = &r.invariants;
    let _ = writeln!(
        w,
        "invariants: {} violation(s), {} zombie batch(es), settle checked {}",
        inv.violations.len(),
        inv.zombie_processing.len(),
        inv.settle_checked
    );
    if !inv.settle_checked {
        let _ = writeln!(
            w,
            "  settle not checked: the run ends at {} ms, before the settle window ends at {} ms \
             (the last fault's end + {} ms: the rebalance timeout(s), session timeout and two \
             heartbeat intervals it has to settle in, then a quiet session timeout); \
             duration_ms = {} checks it",
            r.duration_ms, inv.settle_window_end_ms, inv.settle_bound_ms, inv.settle_window_end_ms
        );
    }
    for v in &inv.violations {
        let _ = writeln!(w, "  VIOLATION {} at {} ms: {}", v.kind, v.at_ms, v.detail);
    }
    // A long zombie (a member cut off from its coordinator) runs hundreds of batches: the
    // first ones here, every one in the JSON report.
    const ZOMBIE_LINES: usize = 20;
    for z in inv.zombie_processing.iter().take(ZOMBIE_LINES) {
        let _ = writeln!(
            w,
            "  zombie {} processed {} records of {} at {} ms (owner {})",
            z.member,
            z.records,
            z.partition,
            z.at_ms,
            z.owner.as_deref().unwrap_or("none")
        );
    }
    if inv.zombie_processing.len() > ZOMBIE_LINES {
        let records: u64 = inv.zombie_processing.iter().map(|z| z.records).sum();
        let _ = writeln!(
            w,
            "  ... {} more zombie batch(es); {records} records in all (the JSON report lists each)",
            inv.zombie_processing.len() - ZOMBIE_LINES
        );
    }
    o
}

/// `3021` as `3,021`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A per-member map in natural order (c1, c2, ..., c10), as the `members` list is, not as text
/// sorts (c1, c10, c2): the JSON report keeps its maps' sorted keys.
fn natural_order<V>(map: &std::collections::BTreeMap<String, V>) -> Vec<(&String, &V)> {
    let mut entries: Vec<(&String, &V)> = map.iter().collect();
    entries.sort_by(|(a, _), (b, _)| natural_cmp(a, b));
    entries
}

/// Compares names by their runs of digits as numbers and the rest as text.
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, x), (db, y)) in ca.iter().zip(&cb) {
        let order = if *da && *db {
            let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            x.len().cmp(&y.len()).then_with(|| x.cmp(y))
        } else {
            x.cmp(y)
        };
        if order.is_ne() {
            return order;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod natural_tests {
    use super::natural_cmp;

    #[test]
    fn thousands_are_grouped() {
        use super::thousands;
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(3021), "3,021");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn members_sort_by_their_numbers() {
        let mut names = vec!["c10", "c2", "c1", "c11", "b", "c01", "pod-3", "pod-12"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            ["b", "c01", "c1", "c2", "c10", "c11", "pod-3", "pod-12"]
        );
    }
}
