//! The panels under the lanes: how many partitions are unavailable, and the total lag, each on
//! a scale chosen for what the report calls out. A stop-the-world pause of a few ms over a run
//! of minutes is narrower than a pixel: its unavailable partitions are drawn [`MIN_WIDTH`] wide
//! and marked as widened. The lag axis goes up to the highest lag after the group's start-up
//! (the rebalance windows' peaks included, each marked), so that the backlog of the first join
//! does not flatten every later rebalance: what is above the axis is clipped, and marked.

use super::{
    escape, lag_in_window, max_in, n, panel_frame, step_area, widened_attrs, Marks, Scale, C_LAG,
    C_REVOKE, C_UNAVAILABLE, MIN_WIDTH, PANEL,
};
use crate::metrics::outcome::Report;
use crate::report::history_view::View;

/// The unavailable partitions: the count over time, and each stretch with any unavailable that
/// is narrower than [`MIN_WIDTH`] drawn that wide at its highest count, marked as widened.
pub(super) fn unavailable(o: &mut String, view: &View, scale: &Scale, top: f64, marks: &mut Marks) {
    let (t0, t1) = (scale.t0, scale.t1);
    let most = max_in(&view.unavailable_count, t0, t1);
    panel_frame(
        o,
        "unavailable",
        top,
        &format!("unavailable partitions (max {most})"),
        &most.to_string(),
    );
    let k = (PANEL - 4.0) / most.max(1) as f64;
    let base = top + PANEL;
    o.push_str(&format!(
        "<polygon class=\"unavailable\" points=\"{}\" fill=\"{C_UNAVAILABLE}\" fill-opacity=\"0.8\"/>\n",
        step_area(&view.unavailable_count, scale, base, k)
    ));
    // Stretches with at least one partition unavailable.
    let mut stretches: Vec<(u64, u64)> = Vec::new();
    let mut open: Option<u64> = None;
    for &(at, count) in &view.unavailable_count {
        match (count > 0, open) {
            (true, None) => open = Some(at),
            (false, Some(since)) => {
                stretches.push((since, at));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(since) = open {
        stretches.push((since, view.end_us));
    }
    for (a, b) in stretches {
        let Some(span) = scale.callout(a, b) else {
            continue;
        };
        if !span.widened {
            continue;
        }
        marks.widened = true;
        let peak = max_in(&view.unavailable_count, a.max(t0), b.min(t1));
        o.push_str(&format!(
            "<rect class=\"unavailable-stretch min-width\" data-ms=\"{}\" data-partitions=\"{peak}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_UNAVAILABLE}\"{}><title>up to {peak} partition(s) unavailable for {} ms (drawn wider)</title></rect>\n",
            super::ms3(b - a),
            n(span.x),
            n(base - peak as f64 * k),
            n(span.w),
            n(peak as f64 * k),
            widened_attrs(),
            super::ms3(b - a)
        ));
    }
    o.push_str("</g>\n");
}

/// The end of the group's start-up: the first lag sample after formation that no longer falls
/// (the backlog of the first join drained); 0 without a formation.
fn startup_end_ms(report: &Report) -> u64 {
    let Some(f) = &report.formation else {
        return 0;
    };
    let s = &report.lag.series;
    let mut i = s.partition_point(|p| p.0 <= f.end_ms);
    if i >= s.len() {
        return f.end_ms;
    }
    while i + 1 < s.len() && s[i + 1].1 < s[i].1 {
        i += 1;
    }
    s[i].0
}

/// The total lag, on an axis up to the highest lag after start-up in the window (each
/// rebalance window's peak marked); higher start-up lag is clipped at the axis and marked.
pub(super) fn lag(o: &mut String, report: &Report, scale: &Scale, top: f64, marks: &mut Marks) {
    let (w0, w1) = (scale.t0 / 1000, scale.t1 / 1000);
    let series = &report.lag.series;
    let lag = lag_in_window(series, w0, w1);
    let highest = lag.iter().map(|p| p.1).fold(0.0, f64::max);
    let startup_end = startup_end_ms(report);
    // Each rebalance's window: from its start until the next one starts (or the run ends); its
    // peak is the first sample of the window at the peak's value.
    let rebalances = &report.rebalances.list;
    let mut peaks: Vec<(u64, u64, i32)> = Vec::new();
    for (i, r) in rebalances.iter().enumerate() {
        let end = rebalances
            .get(i + 1)
            .map_or(report.duration_ms, |next| next.start_ms);
        let from = series.partition_point(|s| s.0 < r.start_ms);
        let at = series[from..]
            .iter()
            .take_while(|s| s.0 <= end)
            .find(|s| s.1 == r.window.lag_peak)
            .map(|s| s.0);
        if let Some(at) = at.filter(|at| (w0..=w1).contains(at)) {
            peaks.push((at, r.window.lag_peak, r.generation));
        }
    }
    let after_startup = lag
        .iter()
        .filter(|p| p.0 >= startup_end)
        .map(|p| p.1)
        .chain(peaks.iter().map(|p| p.1 as f64))
        .fold(0.0, f64::max);
    let axis = if after_startup > 0.0 {
        after_startup.round()
    } else {
        highest.round()
    };
    let clipped = highest > axis + 0.5;
    let label = if clipped {
        format!(
            "total lag, records (axis to {}, the highest after start-up; start-up up to {} clipped)",
            axis as u64,
            highest.round() as u64
        )
    } else {
        format!("total lag, records (max {})", axis as u64)
    };
    panel_frame(o, "lag", top, &label, &(axis as u64).to_string());
    let k = (PANEL - 4.0) / axis.max(1.0);
    let base = top + PANEL;
    if !lag.is_empty() {
        let pts: Vec<String> = lag
            .iter()
            .map(|&(t, v)| {
                format!(
                    "{},{}",
                    n(scale.x(t.saturating_mul(1000))),
                    n(base - v.min(axis) * k)
                )
            })
            .collect();
        o.push_str(&format!(
            "<polyline class=\"lag\" points=\"{}\" fill=\"none\" stroke=\"{C_LAG}\" stroke-width=\"1.5\"/>\n",
            pts.join(" ")
        ));
    }
    if clipped {
        marks.clipped = true;
        // Each run of samples above the axis (first, last, highest): a red bar on the panel's
        // top edge.
        let mut runs: Vec<(u64, u64, f64)> = Vec::new();
        let mut in_run = false;
        for &(t, v) in &lag {
            if v <= axis + 0.5 {
                in_run = false;
            } else if let Some(run) = runs.last_mut().filter(|_| in_run) {
                run.1 = t;
                run.2 = run.2.max(v);
            } else {
                runs.push((t, t, v));
                in_run = true;
            }
        }
        for (a, b, v) in runs {
            let x0 = scale.x(a * 1000);
            let w = (scale.x(b * 1000) - x0).max(MIN_WIDTH);
            let x0 = x0.min(scale.right() - w);
            o.push_str(&format!(
                "<line class=\"clipped\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{C_REVOKE}\" stroke-width=\"3\"><title>lag up to {} records here, above the axis (clipped)</title></line>\n",
                n(x0),
                n(x0 + w),
                v.round() as u64,
                y = n(top + 1.5)
            ));
        }
    }
    for (at, peak, generation) in peaks {
        let v = peak as f64;
        o.push_str(&format!(
            "<circle class=\"lag-peak\" data-generation=\"{generation}\" data-peak=\"{peak}\" cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"#ffffff\" stroke=\"{C_LAG}\" stroke-width=\"1.2\"><title>{}</title></circle>\n",
            n(scale.x(at * 1000)),
            n(base - v.min(axis) * k),
            escape(&format!("g{generation}: lag peak {peak} records in its window"))
        ));
    }
    o.push_str("</g>\n");
}
