//! The explanation as text: per rebalance a heading and its chain, one clause a line.

use super::Explanation;
use std::fmt::Write;

pub fn render_text(e: &Explanation) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scenario {}  seed {}  variant {}  protocol {}",
        e.scenario, e.seed, e.variant, e.protocol
    );
    let word = if e.protocol == "consumer" {
        "group epoch"
    } else {
        "generation"
    };
    // The rebalances that did not happen go where they fall among those that did.
    let mut non_events = e.non_events.iter().peekable();
    for r in &e.rebalances {
        while let Some(n) = non_events.next_if(|n| n.at_ms < r.start_ms) {
            let _ = writeln!(out, "no rebalance at {} ms: {}", n.at_ms, n.reason);
        }
        let _ = write!(
            out,
            "{word} {}{}  {}{}  {} ms",
            r.generation,
            if r.formation { " (formation)" } else { "" },
            r.trigger,
            r.member
                .as_ref()
                .map(|m| format!(" {m}"))
                .unwrap_or_default(),
            r.start_ms
        );
        match r.end_ms {
            Some(end) => {
                let _ = write!(out, " -> {end} ms ({} ms)", end - r.start_ms);
            }
            None => out.push_str(" -> never Stable"),
        }
        if let Some(w) = &r.waited_for {
            let _ = write!(out, "  waited for {} {} ms ({})", w.member, w.ms, w.because);
        }
        out.push('\n');
        for c in &r.causes {
            let _ = writeln!(out, "  - {}", c.text);
        }
    }
    for n in non_events {
        let _ = writeln!(out, "no rebalance at {} ms: {}", n.at_ms, n.reason);
    }
    if e.loops.is_empty() {
        out.push_str("loops: none\n");
    }
    for l in &e.loops {
        let _ = writeln!(out, "{}", l.text);
    }
    let _ = writeln!(out, "settled: {}", e.settled.text);
    out
}
