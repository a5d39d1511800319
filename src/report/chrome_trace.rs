//! The run as a Chrome trace (`cgsim run ... --chrome-trace out.json`), in the Trace Event
//! Format that Perfetto (ui.perfetto.dev) and chrome://tracing open. Timestamps are simulated
//! microseconds.
//!
//! - Process 1, "group": the coordinator's thread with a slice per rebalance (its join and sync
//!   phases nested inside), the formation and an instant per protocol migration; counters for
//!   the total lag and the number of unavailable partitions.
//! - Process 2, "members": a thread per member with its pauses as slices, instants for starts,
//!   closes, crashes, stalls and the coordinator's removal, stalls, restores and the time a dead
//!   or cut-off member still owned its partitions to the coordinator (until its session
//!   expired) as async slices, and a counter of the partitions it owns and processes.
//!
//! Every counter starts at the window's start with its value there, so a windowed trace has
//! every member's track even where nothing changes.
//! - Process 3, "partitions": a thread per partition whose slices say who owns and processes it
//!   (or that it is unavailable).
//!
//! One event per line, fields in a fixed order: the same run gives the same bytes.

use super::history_view::{value_at, View};
use super::Report;
use crate::history::{Mark, RunMarks};
use serde_json::{json, Value};

const GROUP: u64 = 1;
const MEMBERS: u64 = 2;
const PARTITIONS: u64 = 3;

#[derive(Clone, Debug, Default)]
pub struct ChromeTraceOptions {
    /// `(start_ms, end_ms)`: keep only what overlaps this window (clipped to it); the whole run
    /// when `None`.
    pub window_ms: Option<(u64, u64)>,
}

struct Out {
    events: Vec<Value>,
    t0: u64,
    t1: u64,
}

impl Out {
    fn meta(&mut self, pid: u64, tid: u64, name: &str, args: Value) {
        self.events.push(json!({
            "ph": "M", "name": name, "ts": 0, "pid": pid, "tid": tid, "args": args,
        }));
    }

    /// A complete slice, clipped to the window; nothing when outside it.
    fn slice(
        &mut self,
        (pid, tid): (u64, u64),
        cat: &str,
        name: &str,
        start: u64,
        end: u64,
        args: Value,
    ) {
        if end < self.t0 || start > self.t1 {
            return;
        }
        let (s, e) = (start.max(self.t0), end.min(self.t1));
        self.events.push(json!({
            "ph": "X", "cat": cat, "name": name, "ts": s, "dur": e.saturating_sub(s),
            "pid": pid, "tid": tid, "args": args,
        }));
    }

    fn instant(&mut self, pid: u64, tid: u64, cat: &str, name: &str, at: u64) {
        if at < self.t0 || at > self.t1 {
            return;
        }
        self.events.push(json!({
            "ph": "i", "cat": cat, "name": name, "ts": at, "s": "t", "pid": pid, "tid": tid,
        }));
    }

    /// An instant with arguments.
    fn instant_with(
        &mut self,
        (pid, tid): (u64, u64),
        cat: &str,
        name: &str,
        at: u64,
        args: Value,
    ) {
        if at < self.t0 || at > self.t1 {
            return;
        }
        self.events.push(json!({
            "ph": "i", "cat": cat, "name": name, "ts": at, "s": "t", "pid": pid, "tid": tid,
            "args": args,
        }));
    }

    fn counter(&mut self, pid: u64, name: &str, at: u64, args: Value) {
        if at < self.t0 || at > self.t1 {
            return;
        }
        self.events.push(json!({
            "ph": "C", "name": name, "ts": at, "pid": pid, "tid": 0, "args": args,
        }));
    }

    /// An async slice (its own track in the viewer), clipped to the window.
    fn async_slice(
        &mut self,
        (pid, tid): (u64, u64),
        cat: &str,
        name: &str,
        id: &str,
        start: u64,
        end: u64,
    ) {
        if end < self.t0 || start > self.t1 {
            return;
        }
        for (ph, ts) in [("b", start.max(self.t0)), ("e", end.min(self.t1))] {
            self.events.push(json!({
                "ph": ph, "cat": cat, "name": name, "id": id, "ts": ts, "pid": pid, "tid": tid,
            }));
        }
    }
}

/// Renders the trace; see the module documentation.
pub fn render_chrome_trace(
    history: &RunMarks,
    report: &Report,
    options: &ChromeTraceOptions,
) -> String {
    let run_end = report.duration_ms.saturating_mul(1000);
    let view = View::new(history, run_end);
    let (t0, t1) = options.window_ms.map_or((0, view.end_us), |(a, b)| {
        (a.saturating_mul(1000), b.saturating_mul(1000))
    });
    let mut out = Out {
        events: Vec::new(),
        t0,
        t1,
    };

    out.meta(
        GROUP,
        0,
        "process_name",
        json!({"name": format!("group {}", report.scenario)}),
    );
    out.meta(GROUP, 0, "process_sort_index", json!({"sort_index": 1}));
    out.meta(GROUP, 1, "thread_name", json!({"name": "coordinator"}));
    out.meta(MEMBERS, 0, "process_name", json!({"name": "members"}));
    out.meta(MEMBERS, 0, "process_sort_index", json!({"sort_index": 2}));
    for (m, name) in history.member_names.iter().enumerate() {
        let tid = m as u64 + 1;
        out.meta(MEMBERS, tid, "thread_name", json!({"name": name}));
        out.meta(MEMBERS, tid, "thread_sort_index", json!({"sort_index": m}));
    }
    out.meta(PARTITIONS, 0, "process_name", json!({"name": "partitions"}));
    out.meta(
        PARTITIONS,
        0,
        "process_sort_index",
        json!({"sort_index": 3}),
    );
    for (p, name) in history.partition_names.iter().enumerate() {
        let tid = p as u64 + 1;
        out.meta(PARTITIONS, tid, "thread_name", json!({"name": name}));
        out.meta(
            PARTITIONS,
            tid,
            "thread_sort_index",
            json!({"sort_index": p}),
        );
    }

    // The coordinator: formation and rebalances, phases nested.
    if let Some(f) = &report.formation {
        out.slice(
            (GROUP, 1),
            "rebalance",
            &format!("formation g{}", f.generation),
            f.start_ms * 1000,
            f.end_ms * 1000,
            json!({"generation": f.generation, "duration_ms": f.duration_ms}),
        );
    }
    for r in &report.rebalances.list {
        let (start, end) = (r.start_ms * 1000, r.end_ms * 1000);
        out.slice(
            (GROUP, 1),
            "rebalance",
            &format!("rebalance g{}", r.generation),
            start,
            end,
            json!({
                "generation": r.generation,
                "trigger": r.trigger,
                "member": r.member,
                "duration_ms": r.duration_ms,
                "join_ms": r.join_ms,
                "sync_ms": r.sync_ms,
                "detect_ms": r.detect_ms,
                "lag_peak": r.window.lag_peak,
            }),
        );
        match r.join_ms {
            Some(join_ms) => {
                let join_end = (start + join_ms * 1000).min(end);
                out.slice((GROUP, 1), "rebalance", "join", start, join_end, json!({}));
                out.slice((GROUP, 1), "rebalance", "sync", join_end, end, json!({}));
            }
            // KIP-848: one reconciliation, no join or sync phase.
            None => out.slice((GROUP, 1), "rebalance", "reconcile", start, end, json!({})),
        }
    }
    // The online migration: each conversion of the group between the protocols.
    for m in &report.migrations {
        let from = if m.to == "consumer" {
            "classic"
        } else {
            "consumer"
        };
        out.instant_with(
            (GROUP, 1),
            "migration",
            &format!("{from} -> {}", m.to),
            m.at_ms * 1000,
            json!({"by": m.by, "epoch": m.epoch, "members": m.members}),
        );
    }
    // Counters start at the window's start with the value they have there (a window in
    // which a counter does not change still shows its track), then sample every change.
    let series = &report.lag.series;
    let before = series.partition_point(|s| s.0 * 1000 <= t0);
    if let Some(&(_, lag)) = before.checked_sub(1).map(|i| &series[i]) {
        out.counter(GROUP, "total lag", t0, json!({"records": lag}));
    }
    for &(at_ms, lag) in &series[before..] {
        out.counter(GROUP, "total lag", at_ms * 1000, json!({"records": lag}));
    }
    let unavailable = |at: u64| json!({"partitions": value_at(&view.unavailable_count, at)});
    out.counter(GROUP, "unavailable partitions", t0, unavailable(t0));
    for &(at, _) in view.unavailable_count.iter().filter(|s| s.0 > t0) {
        out.counter(GROUP, "unavailable partitions", at, unavailable(at));
    }

    // Members.
    for m in 0..history.member_names.len() {
        let tid = m as u64 + 1;
        let name = &history.member_names[m];
        for &(a, b) in &view.pauses[m] {
            out.slice((MEMBERS, tid), "pause", "paused", a, b, json!({}));
        }
        for (i, &(a, b)) in view.stalls[m].iter().enumerate() {
            out.async_slice(
                (MEMBERS, tid),
                "stall",
                &format!("{name} stalled"),
                &format!("stall-{m}-{i}"),
                a,
                b,
            );
        }
        // Owned and processed counts, one counter sample per change of either.
        let mut changes: Vec<u64> = view.owned_count[m]
            .iter()
            .chain(&view.processing_count[m])
            .map(|s| s.0)
            .collect();
        changes.retain(|&at| at > t0);
        changes.insert(0, t0);
        changes.sort_unstable();
        changes.dedup();
        for at in changes {
            out.counter(
                MEMBERS,
                &format!("{name} partitions"),
                at,
                json!({
                    "owned": value_at(&view.owned_count[m], at),
                    "processing": value_at(&view.processing_count[m], at),
                }),
            );
        }
        // Dead or cut off, and still a member owning its partitions to the coordinator.
        for (i, held) in view.held[m].iter().enumerate() {
            out.async_slice(
                (MEMBERS, tid),
                "held",
                &format!("{name} {}: owner until its session expires", held.cause),
                &format!("held-{m}-{i}"),
                held.start_us,
                held.end_us,
            );
        }
    }
    for e in &view.events {
        out.instant(MEMBERS, e.member as u64 + 1, "member", e.event, e.at_us);
    }
    for (i, s) in view.restores.iter().enumerate() {
        out.async_slice(
            (MEMBERS, s.member as u64 + 1),
            "restore",
            &format!("restore {}", history.partition_names[s.partition]),
            &format!("restore-{i}"),
            s.start_us,
            s.end_us,
        );
    }

    // Partitions: consecutive slices of who owns and who processes each.
    let np = history.partition_names.len();
    let mut owner: Vec<Option<usize>> = vec![None; np];
    let mut active: Vec<Option<usize>> = vec![None; np];
    let mut unavailable = vec![false; np];
    let mut open: Vec<Option<(u64, String)>> = vec![None; np];
    let mut formed = false;
    let state = |o: Option<usize>, a: Option<usize>, u: bool| -> Option<String> {
        let name = |m: usize| history.member_names[m].as_str();
        match (o, a) {
            (Some(o), Some(a)) if o == a => Some(name(o).to_string()),
            (Some(o), Some(a)) => Some(format!("{} (owner {})", name(a), name(o))),
            (Some(o), None) => Some(format!("{} (not processing)", name(o))),
            (None, Some(a)) => Some(format!("{} (no owner)", name(a))),
            (None, None) if u => Some("unavailable".to_string()),
            (None, None) => None,
        }
    };
    for &(at, ref mark) in &history.marks {
        let p = match *mark {
            Mark::Owner { partition, member } if partition < np => {
                owner[partition] = member.filter(|&m| m < history.member_names.len());
                partition
            }
            Mark::Processing { partition, member } if partition < np => {
                active[partition] = member.filter(|&m| m < history.member_names.len());
                unavailable[partition] = formed && member.is_none();
                partition
            }
            Mark::Stable { .. } => {
                formed = true;
                continue;
            }
            _ => continue,
        };
        let next = state(owner[p], active[p], unavailable[p]);
        if open[p].as_ref().map(|o| &o.1) == next.as_ref() {
            continue;
        }
        if let Some((since, name)) = open[p].take() {
            if at > since {
                out.slice(
                    (PARTITIONS, p as u64 + 1),
                    "partition",
                    &name,
                    since,
                    at,
                    json!({}),
                );
            }
        }
        open[p] = next.map(|s| (at, s));
    }
    for (p, o) in open.into_iter().enumerate() {
        if let Some((since, name)) = o {
            out.slice(
                (PARTITIONS, p as u64 + 1),
                "partition",
                &name,
                since,
                view.end_us,
                json!({}),
            );
        }
    }

    let other = json!({
        "scenario": report.scenario,
        "variant": report.variant,
        "seed": report.seed,
        "digest": report.digest,
        "duration_ms": report.duration_ms,
    });
    let mut s = String::from("{\"traceEvents\":[\n");
    let lines: Vec<String> = out.events.iter().map(|e| e.to_string()).collect();
    s.push_str(&lines.join(",\n"));
    s.push_str(&format!(
        "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{other}\n}}\n"
    ));
    s
}
