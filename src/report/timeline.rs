//! The SVG timeline of a run (`cgsim run ... --timeline out.svg`): one lane per member over
//! simulated time with the partitions it owns and processes, revocations, pauses, restores,
//! starts, closes, crashes and stalls; rebalance windows shaded and labelled with their
//! generation; below, the number of unavailable partitions and the total lag.
//!
//! Few partitions per member (at most [`MAX_ROWS`] at once) and few members (at most
//! [`MAX_LANES`]): a thin row per partition the member owned in the window. Otherwise each lane folds its
//! partitions into a count (owned, light; processed, dark). The SVG is written by hand (the
//! `svg` crate does not escape quotes in attribute values): every name is escaped, every number
//! has a fixed precision, so the same run gives the same bytes.

use super::history_view::{value_at, Seg, View};
use super::Report;
use crate::metrics::{History, Migration};

/// At most this many partitions owned at once by one member (and twice as many rows, every
/// partition it owned in the window); more and every lane folds into counts.
pub const MAX_ROWS: usize = 16;
/// At most this many lanes drawn with a row per partition; more and every lane folds.
pub const MAX_LANES: usize = 12;

#[derive(Clone, Debug, Default)]
pub struct TimelineOptions {
    /// `(start_ms, end_ms)` of simulated time to show; the whole run when `None`.
    pub window_ms: Option<(u64, u64)>,
}

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 130.0;
const RIGHT: f64 = 24.0;
const ROW: f64 = 10.0;
const PANEL: f64 = 70.0;

const C_OWNED: &str = "#c6dbef";
const C_PROCESSING: &str = "#2c6fb0";
const C_RESTORE: &str = "#f28e2b";
const C_PAUSE: &str = "#fbb4a5";
const C_REVOKE: &str = "#c0221f";
const C_REBALANCE: &str = "#9e9ac8";
const C_UNAVAILABLE: &str = "#d6604d";
const C_LAG: &str = "#555555";
const C_ABSENT: &str = "#e4e4e4";
const C_MIGRATION: &str = "#1b7837";

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 does not allow.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with one decimal.
fn n(x: f64) -> String {
    format!("{:.1}", x + 0.0)
}

fn shorten(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// Simulated time in seconds with `decimals` decimals.
fn seconds(ms: u64, decimals: usize) -> String {
    format!("{:.*}", decimals, ms as f64 / 1000.0)
}

struct Scale {
    t0: u64,
    t1: u64,
    plot_w: f64,
}

impl Scale {
    fn x(&self, t_us: u64) -> f64 {
        let t = t_us.clamp(self.t0, self.t1);
        LEFT + (t - self.t0) as f64 / (self.t1 - self.t0) as f64 * self.plot_w
    }

    /// The visible part of `[start, end)`, as x and width (at least `min_w` wide).
    fn span(&self, start: u64, end: u64, min_w: f64) -> Option<(f64, f64)> {
        if end < self.t0 || start > self.t1 || (end == start && min_w <= 0.0) {
            return None;
        }
        if end <= self.t0 && start < end {
            return None;
        }
        let x0 = self.x(start);
        let x1 = self.x(end);
        let w = (x1 - x0).max(min_w);
        Some((x0.min(LEFT + self.plot_w - w), w))
    }
}

/// Tick spacing in ms (1, 2 or 5 times a power of ten) for about ten ticks over `span_ms`.
fn tick_step(span_ms: u64) -> u64 {
    let raw = (span_ms / 10).max(1);
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if p * m >= raw {
                return p * m;
            }
        }
        p *= 10;
    }
}

fn decimals_for(step_ms: u64) -> usize {
    match step_ms {
        s if s % 1000 == 0 => 0,
        s if s % 100 == 0 => 1,
        s if s % 10 == 0 => 2,
        _ => 3,
    }
}

/// A step function as a closed area polygon over `[base - value * k]`.
fn step_area(steps: &[(u64, usize)], scale: &Scale, base: f64, k: f64) -> String {
    let mut pts = Vec::new();
    let mut v = value_at(steps, scale.t0);
    pts.push((scale.x(scale.t0), base));
    pts.push((scale.x(scale.t0), base - v as f64 * k));
    for &(at, value) in steps {
        if at <= scale.t0 || at > scale.t1 {
            continue;
        }
        let x = scale.x(at);
        pts.push((x, base - v as f64 * k));
        pts.push((x, base - value as f64 * k));
        v = value;
    }
    let xe = scale.x(scale.t1);
    pts.push((xe, base - v as f64 * k));
    pts.push((xe, base));
    pts.iter()
        .map(|(x, y)| format!("{},{}", n(*x), n(*y)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn max_in(steps: &[(u64, usize)], t0: u64, t1: u64) -> usize {
    let mut m = value_at(steps, t0);
    for &(at, v) in steps {
        if at > t0 && at <= t1 {
            m = m.max(v);
        }
    }
    m
}

/// Renders the timeline; see the module documentation.
pub fn render_timeline(history: &History, report: &Report, options: &TimelineOptions) -> String {
    let run_end_us = report.duration_ms.saturating_mul(1000);
    let view = View::new(history, run_end_us);
    let (w0, w1) = options.window_ms.unwrap_or((0, report.duration_ms));
    let t0 = w0.saturating_mul(1000);
    let t1 = w1.saturating_mul(1000).max(t0 + 1);
    let scale = Scale {
        t0,
        t1,
        plot_w: WIDTH - LEFT - RIGHT,
    };
    let nm = history.member_names.len();
    let in_window = |s: &Seg| s.end_us >= t0 && s.start_us <= t1;

    // Rows per member: every partition it owned, processed or restored in the window.
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); nm];
    for s in view
        .owned
        .iter()
        .chain(&view.processing)
        .chain(&view.restores)
    {
        if in_window(s) && s.end_us > s.start_us.max(t0) || (s.start_us >= t0 && s.start_us <= t1) {
            rows[s.member].push(s.partition);
        }
    }
    for r in &mut rows {
        r.sort_unstable();
        r.dedup();
    }
    let most_owned = (0..nm)
        .map(|m| {
            max_in(&view.owned_count[m], t0, t1).max(max_in(&view.processing_count[m], t0, t1))
        })
        .max()
        .unwrap_or(0);
    let folded =
        nm > MAX_LANES || most_owned > MAX_ROWS || rows.iter().any(|r| r.len() > 2 * MAX_ROWS);
    let fold_h = if nm > 30 { 14.0 } else { 26.0 };
    let lane_h: Vec<f64> = rows
        .iter()
        .map(|r| {
            if folded {
                fold_h
            } else {
                8.0 + r.len().max(1) as f64 * ROW
            }
        })
        .collect();
    let max_owned = most_owned.max(1);

    // The online migration's conversions get a line of labels of their own above the
    // rebalances'.
    let migrations: Vec<&Migration> = report
        .migrations
        .iter()
        .filter(|m| (w0..=w1).contains(&m.at_ms))
        .collect();
    let lanes_top = if migrations.is_empty() { 82.0 } else { 96.0 };
    let lanes_h: f64 = lane_h.iter().map(|h| h + 2.0).sum();
    let brokers = BrokerLanes::of(report, run_end_us);
    let brokers_top = lanes_top + lanes_h + 26.0;
    let unavail_top = brokers_top + brokers.height();
    let lag_top = unavail_top + PANEL + 26.0;
    let axis_y = lag_top + PANEL;
    let legend_y = axis_y + 40.0;
    // A second legend line for the migration mark.
    let height = legend_y + if migrations.is_empty() { 24.0 } else { 40.0 };

    let mut o = String::new();
    o.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n",
        w = n(WIDTH),
        h = n(height)
    ));
    let title = format!(
        "{} — {} (seed {})",
        report.scenario, report.variant, report.seed
    );
    o.push_str(&format!("<title>{}</title>\n", escape(&title)));
    o.push_str(
        "<defs><pattern id=\"stall\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"#e6a117\" fill-opacity=\"0.55\"/></pattern></defs>\n",
    );
    o.push_str(&format!(
        "<rect class=\"background\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
        n(WIDTH),
        n(height)
    ));
    o.push_str(&format!(
        "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
        escape(&title)
    ));
    let span_ms = (t1 - t0) / 1000;
    let step = tick_step(span_ms.max(1));
    let dec = decimals_for(step);
    let window_text = format!(
        "{} s to {} s of {} s simulated · {} member(s), {} partition(s){}",
        seconds(t0 / 1000, dec.max(1)),
        seconds(t1 / 1000, dec.max(1)),
        seconds(report.duration_ms, 1),
        nm,
        history.partition_names.len(),
        if folded {
            " · lanes fold partitions into counts"
        } else {
            ""
        }
    );
    o.push_str(&format!(
        "<text x=\"12\" y=\"40\" fill=\"#444\">{}</text>\n",
        escape(&window_text)
    ));

    // Time grid.
    let grid_bottom = axis_y;
    let mut tick = w0.div_ceil(step) * step;
    o.push_str("<g class=\"axis\" stroke=\"#dddddd\" stroke-width=\"1\">\n");
    let mut ticks = Vec::new();
    while tick <= w1 {
        let x = scale.x(tick * 1000);
        o.push_str(&format!(
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>\n",
            n(lanes_top - 4.0),
            n(grid_bottom),
            x = n(x)
        ));
        ticks.push((x, tick));
        tick += step;
    }
    o.push_str("</g>\n<g class=\"ticks\" fill=\"#444\" text-anchor=\"middle\" font-size=\"10\">\n");
    for (x, t) in &ticks {
        o.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{} s</text>\n",
            n(*x),
            n(axis_y + 14.0),
            seconds(*t, dec)
        ));
    }
    o.push_str(&format!(
        "<text x=\"{}\" y=\"{}\">simulated time</text>\n</g>\n",
        n(LEFT + scale.plot_w / 2.0),
        n(axis_y + 28.0)
    ));

    // Rebalance windows, behind everything, across every panel.
    o.push_str("<g class=\"rebalances\">\n");
    if let Some(f) = &report.formation {
        if let Some((x, w)) = scale.span(f.start_ms * 1000, f.end_ms * 1000, 2.0) {
            o.push_str(&format!(
                "<rect class=\"formation\" data-generation=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_REBALANCE}\" fill-opacity=\"0.18\"><title>formation: generation {} ({} ms)</title></rect>\n",
                f.generation,
                n(x),
                n(lanes_top - 4.0),
                n(w),
                n(grid_bottom - lanes_top + 4.0),
                f.generation,
                f.duration_ms
            ));
        }
    }
    let mut label_ends = [f64::MIN; 2];
    for r in &report.rebalances.list {
        let Some((x, w)) = scale.span(r.start_ms * 1000, r.end_ms * 1000, 2.0) else {
            continue;
        };
        let who = r
            .member
            .as_deref()
            .map(|m| format!(" {m}"))
            .unwrap_or_default();
        o.push_str(&format!(
            "<rect class=\"rebalance\" data-generation=\"{g}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_REBALANCE}\" fill-opacity=\"0.28\"><title>generation {g}: {}{} ({} ms: join {} ms, sync {} ms)</title></rect>\n",
            n(x),
            n(lanes_top - 4.0),
            n(w),
            n(grid_bottom - lanes_top + 4.0),
            escape(&r.trigger),
            escape(&who),
            r.duration_ms,
            r.join_ms.map_or("-".to_string(), |v| v.to_string()),
            r.sync_ms.map_or("-".to_string(), |v| v.to_string()),
            g = r.generation,
        ));
        // The sync phase (CompletingRebalance), darker.
        // KIP-848 has no sync phase: nothing darker is drawn.
        let sync_start = (r.start_ms + r.join_ms.unwrap_or(r.duration_ms)) * 1000;
        if let Some((sx, sw)) = scale.span(sync_start, r.end_ms * 1000, 0.0) {
            if sw >= 1.0 {
                o.push_str(&format!(
                    "<rect class=\"sync\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_REBALANCE}\" fill-opacity=\"0.25\"/>\n",
                    n(sx),
                    n(lanes_top - 4.0),
                    n(sw),
                    n(grid_bottom - lanes_top + 4.0)
                ));
            }
        }
        // The label goes on the first of two lines where it fits, long or short.
        let long = format!("g{} {}{}", r.generation, r.trigger, who);
        let short = format!("g{}", r.generation);
        'placed: for label in [long, short] {
            let lw = label.chars().count() as f64 * 6.2;
            let lx = x.min(WIDTH - lw);
            for (line, end) in label_ends.iter_mut().enumerate() {
                if lx >= *end + 4.0 {
                    o.push_str(&format!(
                        "<text class=\"generation\" x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#54278f\">{}</text>\n",
                        n(lx),
                        n(lanes_top - 8.0 - 11.0 * line as f64),
                        escape(&label)
                    ));
                    *end = lx + lw;
                    break 'placed;
                }
            }
        }
    }
    o.push_str("</g>\n");

    // Lanes.
    let mut y = lanes_top;
    for m in 0..nm {
        let h = lane_h[m];
        let name = &history.member_names[m];
        o.push_str(&format!(
            "<g class=\"lane\" data-member=\"{}\">\n",
            escape(name)
        ));
        o.push_str(&format!(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#bbbbbb\"/>\n",
            n(8.0),
            n(y + h + 1.0),
            n(WIDTH - RIGHT),
            n(y + h + 1.0)
        ));
        // Not running: before its start, after its close or crash.
        let mut cursor = t0;
        for &(a, b) in view.alive[m].iter().chain([(t1, t1)].iter()) {
            if a > cursor {
                if let Some((x, w)) = scale.span(cursor, a.min(t1), 0.0) {
                    o.push_str(&format!(
                        "<rect class=\"absent\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_ABSENT}\"/>\n",
                        n(x), n(y), n(w), n(h)
                    ));
                }
            }
            cursor = cursor.max(b);
        }
        for &(a, b) in &view.pauses[m] {
            if let Some((x, w)) = scale.span(a, b, 1.0) {
                o.push_str(&format!(
                    "<rect class=\"pause\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_PAUSE}\"><title>{}: paused {} ms</title></rect>\n",
                    n(x), n(y), n(w), n(h), escape(name), seconds(b - a, 3)
                ));
            }
        }
        for &(a, b) in &view.stalls[m] {
            if let Some((x, w)) = scale.span(a, b, 1.0) {
                o.push_str(&format!(
                    "<rect class=\"stall\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#stall)\"/>\n",
                    n(x), n(y), n(w), n(h)
                ));
            }
        }
        // Hover text for a member in a rack: its zone and the records it read across zones.
        let rack_note = report
            .members
            .iter()
            .find(|r| &r.name == name)
            .and_then(|r| {
                let rack = r.client_rack.as_deref()?;
                Some(match r.cross_rack_fetched {
                    Some(n) => format!("{name} in {rack}: {n} records fetched from another rack"),
                    None => format!("{name} in {rack}"),
                })
            });
        o.push_str(&format!(
            "<text class=\"member\" x=\"10\" y=\"{}\" font-size=\"12\" font-weight=\"bold\">{}{}</text>\n",
            n(y + 13.0),
            escape(&shorten(name, 12)),
            rack_note.map_or(String::new(), |t| format!("<title>{}</title>", escape(&t)))
        ));
        if folded {
            let base = y + h;
            let k = (h - 3.0) / max_owned as f64;
            o.push_str(&format!(
                "<polygon class=\"owned\" points=\"{}\" fill=\"{C_OWNED}\"/>\n",
                step_area(&view.owned_count[m], &scale, base, k)
            ));
            o.push_str(&format!(
                "<polygon class=\"processing\" points=\"{}\" fill=\"{C_PROCESSING}\" fill-opacity=\"0.85\"/>\n",
                step_area(&view.processing_count[m], &scale, base, k)
            ));
            if h >= 20.0 {
                o.push_str(&format!(
                    "<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"#444\" text-anchor=\"end\">{} → {}</text>\n",
                    n(LEFT - 6.0),
                    n(y + h - 3.0),
                    value_at(&view.owned_count[m], t0),
                    value_at(&view.owned_count[m], t1)
                ));
            }
            for s in view.restores.iter().filter(|s| s.member == m) {
                if let Some((x, w)) = scale.span(s.start_us, s.end_us, 1.0) {
                    o.push_str(&format!(
                        "<rect class=\"restore\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"3\" fill=\"{C_RESTORE}\"/>\n",
                        n(x), n(y + h - 3.0), n(w)
                    ));
                }
            }
            let mut last_x = f64::MIN;
            for &(at, _, _) in view.revocations.iter().filter(|r| r.1 == m) {
                if at < t0 || at > t1 {
                    continue;
                }
                let x = scale.x(at);
                if x - last_x >= 1.0 {
                    o.push_str(&format!(
                        "<line class=\"revoke\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{C_REVOKE}\" stroke-width=\"1.5\"/>\n",
                        n(y),
                        n(y + 5.0),
                        x = n(x)
                    ));
                    last_x = x;
                }
            }
        } else {
            for (i, &p) in rows[m].iter().enumerate() {
                let ry = y + 4.0 + i as f64 * ROW;
                o.push_str(&format!(
                    "<g class=\"row\" data-partition=\"{}\">\n<text x=\"{}\" y=\"{}\" font-size=\"8\" fill=\"#555\" text-anchor=\"end\">{}</text>\n",
                    escape(&history.partition_names[p]),
                    n(LEFT - 4.0),
                    n(ry + 7.5),
                    escape(&shorten(&history.partition_names[p], 16))
                ));
                let segs = |list: &[Seg]| -> Vec<(f64, f64)> {
                    list.iter()
                        .filter(|s| s.member == m && s.partition == p)
                        .filter_map(|s| scale.span(s.start_us, s.end_us, 0.0))
                        .filter(|&(_, w)| w > 0.0)
                        .collect()
                };
                for (x, w) in segs(&view.owned) {
                    o.push_str(&format!(
                        "<rect class=\"owned\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_OWNED}\"/>\n",
                        n(x), n(ry), n(w), n(ROW - 1.0)
                    ));
                }
                for (x, w) in segs(&view.processing) {
                    o.push_str(&format!(
                        "<rect class=\"processing\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_PROCESSING}\"/>\n",
                        n(x), n(ry + 1.5), n(w), n(ROW - 4.0)
                    ));
                }
                for s in view
                    .restores
                    .iter()
                    .filter(|s| s.member == m && s.partition == p)
                {
                    if let Some((x, w)) = scale.span(s.start_us, s.end_us, 1.0) {
                        o.push_str(&format!(
                            "<rect class=\"restore\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_RESTORE}\"/>\n",
                            n(x), n(ry + 1.5), n(w), n(ROW - 4.0)
                        ));
                    }
                }
                for &(at, _, _) in view
                    .revocations
                    .iter()
                    .filter(|r| r.1 == m && r.2 == p && r.0 >= t0 && r.0 <= t1)
                {
                    o.push_str(&format!(
                        "<line class=\"revoke\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{C_REVOKE}\" stroke-width=\"2\"/>\n",
                        n(ry - 0.5),
                        n(ry + ROW - 0.5),
                        x = n(scale.x(at))
                    ));
                }
                o.push_str("</g>\n");
            }
        }
        // Markers on the lane's top edge.
        for e in view.events.iter().filter(|e| e.member == m) {
            if e.at_us < t0 || e.at_us > t1 {
                continue;
            }
            let x = scale.x(e.at_us);
            let my = y + 5.0;
            let (tag, shape) = match e.event {
                "start" => (
                    "path",
                    format!(
                        "class=\"start\" d=\"M{} {}L{} {}L{} {}Z\" fill=\"#2ca02c\"",
                        n(x),
                        n(my - 5.0),
                        n(x + 7.0),
                        n(my),
                        n(x),
                        n(my + 5.0)
                    ),
                ),
                "close" => (
                    "rect",
                    format!(
                        "class=\"close\" x=\"{}\" y=\"{}\" width=\"8\" height=\"8\" fill=\"#555555\"",
                        n(x - 4.0),
                        n(my - 4.0)
                    ),
                ),
                "crash" => (
                    "path",
                    format!(
                        "class=\"crash\" d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#d62728\" stroke-width=\"3\"",
                        n(x - 5.0),
                        n(my - 5.0),
                        n(x + 5.0),
                        n(my + 5.0),
                        n(x - 5.0),
                        n(my + 5.0),
                        n(x + 5.0),
                        n(my - 5.0)
                    ),
                ),
                "stall_begin" | "stall_end" => (
                    "path",
                    format!(
                        "class=\"{}\" d=\"M{} {}L{} {}L{} {}Z\" fill=\"#e6a117\"",
                        e.event.replace('_', "-"),
                        n(x - 5.0),
                        n(my - 5.0),
                        n(x + 5.0),
                        n(my - 5.0),
                        n(x),
                        n(my + 3.0)
                    ),
                ),
                _ => continue,
            };
            o.push_str(&format!(
                "<{tag} {shape}><title>{} {} at {} s</title></{tag}>\n",
                escape(name),
                e.event,
                seconds(e.at_us / 1000, 3)
            ));
        }
        o.push_str("</g>\n");
        y += h + 2.0;
    }

    brokers.render(&mut o, &scale, brokers_top);

    // Panel: unavailable partitions.
    let unavail_max = max_in(&view.unavailable_count, t0, t1);
    panel_frame(
        &mut o,
        "unavailable",
        unavail_top,
        &format!("unavailable partitions (max {unavail_max})"),
        &unavail_max.to_string(),
    );
    let k = (PANEL - 4.0) / unavail_max.max(1) as f64;
    o.push_str(&format!(
        "<polygon class=\"unavailable\" points=\"{}\" fill=\"{C_UNAVAILABLE}\" fill-opacity=\"0.8\"/>\n",
        step_area(&view.unavailable_count, &scale, unavail_top + PANEL, k)
    ));
    o.push_str("</g>\n");

    // Panel: total lag.
    let lag = lag_in_window(&report.lag.series, t0 / 1000, t1 / 1000);
    let lag_max = lag.iter().map(|p| p.1).fold(0.0, f64::max);
    panel_frame(
        &mut o,
        "lag",
        lag_top,
        &format!("total lag, records (max {})", lag_max.round() as u64),
        &(lag_max.round() as u64).to_string(),
    );
    if !lag.is_empty() {
        let k = (PANEL - 4.0) / lag_max.max(1.0);
        let pts: Vec<String> = lag
            .iter()
            .map(|&(t, v)| {
                format!(
                    "{},{}",
                    n(scale.x(t.saturating_mul(1000))),
                    n(lag_top + PANEL - v * k)
                )
            })
            .collect();
        o.push_str(&format!(
            "<polyline class=\"lag\" points=\"{}\" fill=\"none\" stroke=\"{C_LAG}\" stroke-width=\"1.5\"/>\n",
            pts.join(" ")
        ));
    }
    o.push_str("</g>\n");

    render_migrations(&mut o, &migrations, &scale, lanes_top, axis_y);

    // Legend.
    let items: [(&str, &str, &str); 8] = [
        ("processing", C_PROCESSING, "rect"),
        ("owned, not processing", C_OWNED, "rect"),
        ("restoring state", C_RESTORE, "rect"),
        ("member paused", C_PAUSE, "rect"),
        ("rebalance (darker: sync)", C_REBALANCE, "rect"),
        ("revoked", C_REVOKE, "line"),
        ("not running", C_ABSENT, "rect"),
        ("stalled", "url(#stall)", "rect"),
    ];
    o.push_str("<g class=\"legend\" font-size=\"10\">\n");
    let mut lx = 12.0;
    for (label, color, kind) in items {
        if kind == "line" {
            o.push_str(&format!(
                "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"2\"/>\n",
                n(legend_y - 9.0),
                n(legend_y + 1.0),
                x = n(lx + 5.0)
            ));
        } else {
            o.push_str(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{color}\" stroke=\"#999\" stroke-width=\"0.5\"/>\n",
                n(lx),
                n(legend_y - 9.0)
            ));
        }
        o.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{label}</text>\n",
            n(lx + 14.0),
            n(legend_y)
        ));
        lx += 14.0 + label.chars().count() as f64 * 5.6 + 16.0;
    }
    o.push_str(&format!(
        "<text x=\"{}\" y=\"{}\">▶ start  ■ close  ✕ crash  ▼ stall</text>\n",
        n(lx),
        n(legend_y)
    ));
    if !migrations.is_empty() {
        let y = legend_y + 16.0;
        o.push_str(&format!(
            "<line x1=\"17.0\" y1=\"{}\" x2=\"17.0\" y2=\"{}\" stroke=\"{C_MIGRATION}\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"/>\n<text x=\"26.0\" y=\"{}\">the group converted between the classic and the consumer protocol (migration)</text>\n",
            n(y - 10.0),
            n(y + 2.0),
            n(y)
        ));
    }
    o.push_str("</g>\n</svg>\n");
    o
}

/// Each conversion of the group between the classic and the consumer protocol (the online
/// migration, KIP-848): a dashed line across the lanes and panels, labelled on its own line
/// above the rebalances' labels with the direction and the member whose join (to consumer) or
/// departure (to classic) converted the group.
fn render_migrations(
    o: &mut String,
    migrations: &[&Migration],
    scale: &Scale,
    top: f64,
    bottom: f64,
) {
    if migrations.is_empty() {
        return;
    }
    o.push_str("<g class=\"migrations\">\n");
    let label_y = top - 8.0 - 22.0;
    let mut label_end = f64::MIN;
    for m in migrations {
        let (from, why) = match m.to {
            "consumer" => ("classic", "joined"),
            _ => ("consumer", "left"),
        };
        let by = m.by.as_deref().unwrap_or("-");
        let x = scale.x(m.at_ms * 1000);
        let label = format!("{from} → {} ({by} {why})", m.to);
        let title = format!(
            "migration: {from} -> {} at {} ms ({by} {why}; epoch {}), carried over: {}",
            m.to,
            m.at_ms,
            m.epoch,
            m.members.join(" ")
        );
        o.push_str(&format!(
            "<g class=\"migration\" data-to=\"{}\" data-at-ms=\"{}\"><title>{}</title>\n",
            m.to,
            m.at_ms,
            escape(&title)
        ));
        o.push_str(&format!(
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{C_MIGRATION}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n",
            n(top - 4.0),
            n(bottom),
            x = n(x)
        ));
        // Labels left to right: one that would run into the previous moves right of it.
        let lw = label.chars().count() as f64 * 6.2;
        let lx = (x + 3.0).max(label_end + 6.0).min(WIDTH - RIGHT - lw);
        label_end = lx + lw;
        o.push_str(&format!(
            "<text class=\"migration-label\" x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"{C_MIGRATION}\">{}</text>\n</g>\n",
            n(lx),
            n(label_y),
            escape(&label)
        ));
    }
    o.push_str("</g>\n");
}

fn panel_frame(o: &mut String, class: &str, top: f64, label: &str, max: &str) {
    o.push_str(&format!("<g class=\"panel\" data-panel=\"{class}\">\n"));
    for (y, text) in [(top + 8.0, max), (top + PANEL, "0")] {
        o.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"9\" fill=\"#555\" text-anchor=\"end\">{}</text>\n",
            n(LEFT - 4.0),
            n(y),
            escape(text)
        ));
    }
    o.push_str(&format!(
        "<text x=\"10\" y=\"{}\" font-weight=\"bold\">{}</text>\n",
        n(top - 6.0),
        escape(label)
    ));
    o.push_str(&format!(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#bbbbbb\"/>\n",
        n(LEFT),
        n(top),
        n(WIDTH - LEFT - RIGHT),
        n(PANEL)
    ));
}

/// The lag samples inside `[t0_ms, t1_ms]`, with the values at both ends interpolated.
fn lag_in_window(series: &[(u64, u64)], t0: u64, t1: u64) -> Vec<(u64, f64)> {
    let at = |t: u64| -> Option<f64> {
        let i = series.partition_point(|s| s.0 <= t);
        match (i.checked_sub(1).map(|j| series[j]), series.get(i)) {
            (Some(a), Some(b)) if b.0 > a.0 => {
                let f = (t - a.0) as f64 / (b.0 - a.0) as f64;
                Some(a.1 as f64 + (b.1 as f64 - a.1 as f64) * f)
            }
            (Some(a), _) => Some(a.1 as f64),
            (None, Some(b)) => Some(b.1 as f64),
            (None, None) => None,
        }
    };
    let mut out = Vec::new();
    if let Some(v) = at(t0) {
        out.push((t0, v));
    }
    out.extend(
        series
            .iter()
            .filter(|s| s.0 > t0 && s.0 < t1)
            .map(|&(t, v)| (t, v as f64)),
    );
    if let Some(v) = at(t1) {
        out.push((t1, v));
    }
    out
}

/// Broker lanes, drawn when brokers failed or the coordinator moved: each broker's down time
/// (crash to restart) and where the group's coordinator lived (from its load until it failed
/// or moved), with the moment it had none.
struct BrokerLanes {
    /// Per broker id: down intervals (µs).
    down: Vec<Vec<(u64, u64)>>,
    /// Per broker id: intervals it hosted the loaded coordinator (µs).
    home: Vec<Vec<(u64, u64)>>,
    /// (at µs, text) of each coordinator event.
    marks: Vec<(u64, usize, String)>,
}

impl BrokerLanes {
    fn of(report: &Report, end_us: u64) -> BrokerLanes {
        let ids = report
            .brokers
            .iter()
            .filter_map(|e| e.broker)
            .chain(report.coordinator.iter().filter_map(|c| c.broker));
        let count = ids.max().map_or(0, |b| b as usize + 1);
        let mut lanes = BrokerLanes {
            down: vec![Vec::new(); count],
            home: vec![Vec::new(); count],
            marks: Vec::new(),
        };
        let mut open: Vec<Option<u64>> = vec![None; count];
        for e in &report.brokers {
            let (Some(b), at) = (e.broker.map(|b| b as usize), e.at_ms * 1000) else {
                continue;
            };
            match e.event {
                "crash" => open[b] = Some(at),
                "restart" => {
                    if let Some(from) = open[b].take() {
                        lanes.down[b].push((from, at));
                    }
                }
                _ => {}
            }
        }
        for (b, from) in open.into_iter().enumerate() {
            if let Some(from) = from {
                lanes.down[b].push((from, end_us));
            }
        }
        // The coordinator's home: from the run's start on the broker the first event names
        // (it failed there, or moved off it), then from each load.
        let mut home: Option<(usize, u64)> = report
            .coordinator
            .first()
            .filter(|c| c.event == "failed")
            .and_then(|c| c.broker)
            .map(|b| (b as usize, 0));
        for c in &report.coordinator {
            let at = c.at_ms * 1000;
            if let Some((b, from)) = home.take() {
                if c.event != "loaded" {
                    lanes.home[b].push((from, at));
                } else {
                    home = Some((b, from));
                }
            }
            if let (Some(b), "loaded") = (c.broker, c.event) {
                home = Some((b as usize, at));
            }
            if let Some(b) = c.broker {
                lanes
                    .marks
                    .push((at, b as usize, format!("coordinator {}", c.event)));
            }
        }
        if let Some((b, from)) = home {
            lanes.home[b].push((from, end_us));
        }
        lanes
    }

    fn height(&self) -> f64 {
        if self.down.is_empty() {
            0.0
        } else {
            16.0 + self.down.len() as f64 * 14.0 + 26.0
        }
    }

    fn render(&self, o: &mut String, scale: &Scale, top: f64) {
        if self.down.is_empty() {
            return;
        }
        o.push_str("<g class=\"brokers\">\n");
        o.push_str(&format!(
            "<text x=\"8\" y=\"{}\" font-weight=\"bold\">brokers</text>\n",
            n(top + 10.0)
        ));
        for b in 0..self.down.len() {
            let y = top + 16.0 + b as f64 * 14.0;
            o.push_str(&format!(
                "<text x=\"8\" y=\"{}\" fill=\"#444\">broker-{b}</text>\n",
                n(y + 10.0)
            ));
            for &(a, z) in &self.home[b] {
                if let Some((x, w)) = scale.span(a, z, 1.0) {
                    o.push_str(&format!(
                        "<rect class=\"coordinator-home\" data-broker=\"{b}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"{C_PROCESSING}\" fill-opacity=\"0.35\"><title>broker-{b} hosts the group's coordinator</title></rect>\n",
                        n(x), n(y + 1.0), n(w)
                    ));
                }
            }
            for &(a, z) in &self.down[b] {
                if let Some((x, w)) = scale.span(a, z, 2.0) {
                    o.push_str(&format!(
                        "<rect class=\"broker-down\" data-broker=\"{b}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"{C_REVOKE}\" fill-opacity=\"0.8\"><title>broker-{b} down {} s</title></rect>\n",
                        n(x), n(y + 1.0), n(w), seconds((z - a) / 1000, 1)
                    ));
                }
            }
        }
        for (at, b, text) in &self.marks {
            let y = top + 16.0 + *b as f64 * 14.0;
            let x = scale.x(*at);
            if (LEFT..=WIDTH - RIGHT).contains(&x) {
                o.push_str(&format!(
                    "<line class=\"coordinator-mark\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#222\"><title>{}</title></line>\n",
                    n(y),
                    n(y + 12.0),
                    escape(text),
                    x = n(x)
                ));
            }
        }
        o.push_str("</g>\n");
    }
}
