//! Whether the group settled: the settle checker's verdict (from the report), told with the
//! rebalance that was still running and any loop still going.

use super::{at, Ctx, Loop, Settled};
use crate::history::rebalances::Story;
use crate::report::Report;

pub(super) fn verdict(ctx: &Ctx, story: &Story, loops: &[Loop], report: &Report) -> Settled {
    let inv = &report.invariants;
    let not_settled = inv.violations.iter().find(|v| v.kind == "not_settled");
    let open = story.records.last().filter(|r| r.stable.is_none());
    let open_text = open.map(|r| {
        let joined: Vec<usize> = r.joined.iter().map(|j| j.member).collect();
        let mut t = format!(
            "generation {}'s rebalance ({}{}) had been running since {}",
            r.generation,
            r.trigger.name(),
            r.member
                .map(|m| format!(" by {}", ctx.name(m)))
                .unwrap_or_default(),
            at(r.start)
        );
        if !joined.is_empty() && r.join_completed.is_none() {
            t.push_str(&format!(" ({} had rejoined)", ctx.names_of(&joined)));
        }
        t
    });
    let looping = loops.iter().find(|l| l.at_end);
    if let Some(v) = not_settled {
        let mut text = format!("the group never settled: {}", v.detail);
        if let Some(l) = looping {
            text.push_str(&format!(
                "; {}'s rebalance loop kept it from settling",
                l.member
            ));
        }
        if let Some(o) = open_text {
            text.push_str(&format!("; at the run's end {o}"));
        }
        return Settled {
            settled: false,
            checked: true,
            text,
        };
    }
    if !inv.settle_checked {
        let mut text = format!(
            "not checked: the run ended at {} ms, before the settle bound",
            report.duration_ms
        );
        if let Some(o) = open_text {
            text.push_str(&format!("; at its end {o}"));
        }
        return Settled {
            settled: open.is_none(),
            checked: false,
            text,
        };
    }
    let last = story
        .records
        .iter()
        .rev()
        .find_map(|r| r.stable.map(|t| (r.generation, t)));
    Settled {
        settled: true,
        checked: true,
        text: match last {
            Some((g, t)) => format!(
                "the group settled: Stable at generation {g} from {} to the end",
                at(t)
            ),
            None => "the group settled".to_string(),
        },
    }
}
