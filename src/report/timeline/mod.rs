//! The SVG timeline of a run (`cgsim run ... --timeline out.svg`): one lane per member over
//! simulated time with the partitions it owns and processes, revocations, pauses, restores,
//! starts, closes, crashes and stalls, the time a dead or cut-off member still owned its
//! partitions to the coordinator (until its session expired) and its zombie batches; the
//! formation and rebalance windows shaded and labelled (`header.rs`, placed by `labels.rs` so
//! that no label overlaps another), protocol migrations marked; broker lanes (`brokers.rs`);
//! below, the number of unavailable partitions and the total lag (`panels.rs`); the legend
//! (`legend.rs`).
//!
//! The picture must tell the story at any zoom: an interval the report calls out (a pause, a
//! stall, a restore, a rebalance, unavailable partitions) narrower than [`MIN_WIDTH`] pixels is
//! drawn that wide and marked as widened (a dashed outline, class `min-width`, its true length
//! in `data-ms` and its hover text), never passed off as longer.
//!
//! Few partitions per member (at most [`MAX_ROWS`] at once) and few members (at most
//! [`MAX_LANES`]): a thin row per partition the member owned in the window. Otherwise each lane folds its
//! partitions into a count (owned, light; processed, dark). The SVG is written by hand (the
//! `svg` crate does not escape quotes in attribute values): every name is escaped, every number
//! has a fixed precision, so the same run gives the same bytes.

mod brokers;
mod header;
pub mod labels;
mod legend;
mod panels;

use super::history_view::{value_at, Held, Seg, View};
use super::Report;
use crate::history::RunMarks;
use brokers::BrokerLanes;

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
const C_ZOMBIE: &str = "#6a3d9a";
const C_HELD_TEXT: &str = "#8b1a1a";

/// The narrowest a called-out interval is drawn, in pixels (wider than it is when shorter, and
/// marked so).
pub const MIN_WIDTH: f64 = 4.0;

/// What a picture has, for its legend.
#[derive(Clone, Copy, Debug, Default)]
struct Marks {
    widened: bool,
    clipped: bool,
    held: bool,
    zombie: bool,
    migration: bool,
}

/// The mark of a widened interval: a dashed dark outline.
fn widened_attrs() -> &'static str {
    " stroke=\"#222222\" stroke-width=\"0.75\" stroke-dasharray=\"1.5 1\""
}

/// A length in µs as ms with three decimals (for `data-ms` and hover texts).
fn ms3(us: u64) -> String {
    format!("{}.{:03}", us / 1000, us % 1000)
}

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

/// Where an interval is drawn: `x`, width `w`, and whether it is widened to [`MIN_WIDTH`].
#[derive(Clone, Copy, Debug)]
struct Callout {
    x: f64,
    w: f64,
    widened: bool,
}

impl Callout {
    /// The attributes that go with it: the class suffix and the widened mark.
    fn class(&self, class: &str) -> String {
        if self.widened {
            format!("{class} min-width")
        } else {
            class.to_string()
        }
    }

    fn mark(&self) -> &'static str {
        if self.widened {
            widened_attrs()
        } else {
            ""
        }
    }
}

impl Scale {
    fn right(&self) -> f64 {
        LEFT + self.plot_w
    }

    /// The visible part of `[start, end)` (µs) as a called-out interval: at least
    /// [`MIN_WIDTH`] wide, marked as widened when it is narrower. `None` when it is empty or
    /// outside the window.
    fn callout(&self, start: u64, end: u64) -> Option<Callout> {
        if end <= start || end <= self.t0 || start >= self.t1 {
            return None;
        }
        let x0 = self.x(start);
        let w = self.x(end) - x0;
        Some(if w < MIN_WIDTH {
            Callout {
                x: x0.min(self.right() - MIN_WIDTH),
                w: MIN_WIDTH,
                widened: true,
            }
        } else {
            Callout {
                x: x0,
                w,
                widened: false,
            }
        })
    }

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
pub fn render_timeline(history: &RunMarks, report: &Report, options: &TimelineOptions) -> String {
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

    // The labels above the lanes decide where the lanes begin.
    let header_labels = header::labels(report, &scale, w0, w1);
    let (placed, label_rows) = labels::place(
        &header_labels
            .iter()
            .map(|h| h.label.clone())
            .collect::<Vec<_>>(),
        &header::band(),
    );
    let lanes_top = header::lanes_top(label_rows);
    let lanes_h: f64 = lane_h.iter().map(|h| h + 2.0).sum();
    let brokers = BrokerLanes::of(report, run_end_us);
    let brokers_top = lanes_top + lanes_h + 26.0;
    let unavail_top = brokers_top + brokers.height();
    let lag_top = unavail_top + PANEL + 26.0;
    let axis_y = lag_top + PANEL;
    let grid_top = lanes_top - 4.0;
    let mut marks = Marks::default();

    // Everything under the title, written first: the legend's entries (and so the height)
    // depend on what was drawn.
    let mut o = String::new();
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
    let mut tick = w0.div_ceil(step) * step;
    o.push_str("<g class=\"axis\" stroke=\"#dddddd\" stroke-width=\"1\">\n");
    let mut ticks = Vec::new();
    while tick <= w1 {
        let x = scale.x(tick * 1000);
        o.push_str(&format!(
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>\n",
            n(grid_top),
            n(axis_y),
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

    // The formation and the rebalance windows, behind everything, across every panel.
    o.push_str("<g class=\"rebalances\">\n");
    let full_height = |o: &mut String, class: &str, c: &Callout, attrs: &str, opacity: &str| {
        o.push_str(&format!(
            "<rect class=\"{}\"{attrs} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_REBALANCE}\" fill-opacity=\"{opacity}\"{}>",
            c.class(class),
            n(c.x),
            n(grid_top),
            n(c.w),
            n(axis_y - grid_top),
            c.mark()
        ));
    };
    if let Some(f) = &report.formation {
        if let Some(c) = scale.callout(f.start_ms * 1000, f.end_ms * 1000) {
            marks.widened |= c.widened;
            full_height(
                &mut o,
                "formation",
                &c,
                &format!(
                    " data-generation=\"{}\" data-ms=\"{}\"",
                    f.generation, f.duration_ms
                ),
                "0.18",
            );
            o.push_str(&format!(
                "<title>formation: generation {} ({} ms)</title></rect>\n",
                f.generation, f.duration_ms
            ));
        }
    }
    for r in &report.rebalances.list {
        let Some(c) = scale.callout(r.start_ms * 1000, r.end_ms * 1000) else {
            continue;
        };
        marks.widened |= c.widened;
        let who = r
            .member
            .as_deref()
            .map(|m| format!(" {m}"))
            .unwrap_or_default();
        full_height(
            &mut o,
            "rebalance",
            &c,
            &format!(
                " data-generation=\"{}\" data-ms=\"{}\"",
                r.generation, r.duration_ms
            ),
            "0.28",
        );
        o.push_str(&format!(
            "<title>generation {}: {}{} ({} ms: join {} ms, sync {} ms)</title></rect>\n",
            r.generation,
            escape(&r.trigger),
            escape(&who),
            r.duration_ms,
            r.join_ms.map_or("-".to_string(), |v| v.to_string()),
            r.sync_ms.map_or("-".to_string(), |v| v.to_string()),
        ));
        // The sync phase (CompletingRebalance), darker, where it is a pixel wide or more.
        // KIP-848 has no sync phase: nothing darker is drawn.
        let sync_start = (r.start_ms + r.join_ms.unwrap_or(r.duration_ms)) * 1000;
        if let Some((sx, sw)) = scale.span(sync_start, r.end_ms * 1000, 0.0) {
            if sw >= 1.0 {
                o.push_str(&format!(
                    "<rect class=\"sync\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_REBALANCE}\" fill-opacity=\"0.25\"/>\n",
                    n(sx),
                    n(grid_top),
                    n(sw),
                    n(axis_y - grid_top)
                ));
            }
        }
    }
    o.push_str("</g>\n");
    header::render(&mut o, &header_labels, &placed, lanes_top);

    // Lanes.
    let lanes = Lanes {
        history,
        report,
        view: &view,
        scale: &scale,
        rows: &rows,
        folded,
        max_owned: most_owned.max(1),
    };
    let mut y = lanes_top;
    for (m, &h) in lane_h.iter().enumerate() {
        lanes.render(&mut o, m, y, h, &mut marks);
        y += h + 2.0;
    }

    brokers.render(&mut o, &scale, brokers_top);
    panels::unavailable(&mut o, &view, &scale, unavail_top, &mut marks);
    panels::lag(&mut o, report, &scale, lag_top, &mut marks);

    // Each conversion between the protocols (the online migration, KIP-848): a dashed line
    // across the lanes and panels, over them; its label is with the others above.
    let migrations: Vec<_> = report
        .migrations
        .iter()
        .filter(|m| (w0..=w1).contains(&m.at_ms))
        .collect();
    if !migrations.is_empty() {
        marks.migration = true;
        o.push_str("<g class=\"migrations\">\n");
        for m in migrations {
            o.push_str(&format!(
                "<g class=\"migration\" data-to=\"{}\" data-at-ms=\"{}\"><line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{C_MIGRATION}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/></g>\n",
                m.to,
                m.at_ms,
                n(grid_top),
                n(axis_y),
                x = n(scale.x(m.at_ms * 1000))
            ));
        }
        o.push_str("</g>\n");
    }

    let legend_y = axis_y + 40.0;
    legend::render(&mut o, &marks, legend_y);
    let height = legend_y + 8.0 + 16.0 * legend::lines(&marks) as f64;

    let mut svg = String::new();
    svg.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n",
        w = n(WIDTH),
        h = n(height)
    ));
    let title = format!(
        "{} — {} (seed {})",
        report.scenario, report.variant, report.seed
    );
    svg.push_str(&format!("<title>{}</title>\n", escape(&title)));
    svg.push_str(
        "<defs><pattern id=\"stall\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"#e6a117\" fill-opacity=\"0.55\"/></pattern>",
    );
    svg.push_str(&format!(
        "<pattern id=\"held\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(-45)\"><rect width=\"2\" height=\"6\" fill=\"{C_REVOKE}\" fill-opacity=\"0.5\"/></pattern></defs>\n"
    ));
    svg.push_str(&format!(
        "<rect class=\"background\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
        n(WIDTH),
        n(height)
    ));
    svg.push_str(&format!(
        "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
        escape(&title)
    ));
    svg.push_str(&o);
    svg.push_str("</svg>\n");
    svg
}

/// What every lane is drawn from.
struct Lanes<'a> {
    history: &'a RunMarks,
    report: &'a Report,
    view: &'a View,
    scale: &'a Scale,
    rows: &'a [Vec<usize>],
    folded: bool,
    max_owned: usize,
}

impl Lanes<'_> {
    /// Member `m`'s lane, `h` high from `y`.
    fn render(&self, o: &mut String, m: usize, y: f64, h: f64, marks: &mut Marks) {
        let (view, scale) = (self.view, self.scale);
        let (t0, t1) = (scale.t0, scale.t1);
        let name = &self.history.member_names[m];
        // Widened intervals go over the rows, where they cannot be hidden.
        let mut over = String::new();
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
            if let Some(c) = scale.callout(a, b) {
                marks.widened |= c.widened;
                let out = if c.widened { &mut over } else { &mut *o };
                out.push_str(&format!(
                    "<rect class=\"{}\" data-ms=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_PAUSE}\"{}><title>{}: paused {} ms</title></rect>\n",
                    c.class("pause"), ms3(b - a), n(c.x), n(y), n(c.w), n(h), c.mark(), escape(name), ms3(b - a)
                ));
            }
        }
        for &(a, b) in &view.stalls[m] {
            if let Some(c) = scale.callout(a, b) {
                marks.widened |= c.widened;
                let out = if c.widened { &mut over } else { &mut *o };
                out.push_str(&format!(
                    "<rect class=\"{}\" data-ms=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#stall)\"{}><title>{}: stalled {} ms</title></rect>\n",
                    c.class("stall"), ms3(b - a), n(c.x), n(y), n(c.w), n(h), c.mark(), escape(name), ms3(b - a)
                ));
            }
        }
        // Hover text for a member in a rack: its zone and the records it read across zones.
        let rack_note = self
            .report
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
        if self.folded {
            self.folded_rows(o, &mut over, m, y, h, marks);
        } else {
            self.partition_rows(o, &mut over, m, y, marks);
        }
        self.held(&mut over, m, y, h, marks);
        o.push_str(&over);
        // Zombie batches and the markers on top of everything.
        let rows = &self.rows[m];
        if self.folded {
            self.zombies(o, m, |_| Some((y + h - 8.0, 7.0)), marks);
        } else {
            self.zombies(
                o,
                m,
                |p| {
                    rows.iter()
                        .position(|&r| r == p)
                        .map(|i| (y + 4.0 + i as f64 * ROW, ROW - 1.0))
                },
                marks,
            );
        }
        self.markers(o, m, y);
        o.push_str("</g>\n");
    }

    /// A folded lane: partitions owned (light) and processed (dark) as counts.
    fn folded_rows(
        &self,
        o: &mut String,
        over: &mut String,
        m: usize,
        y: f64,
        h: f64,
        marks: &mut Marks,
    ) {
        let (view, scale) = (self.view, self.scale);
        let (t0, t1) = (scale.t0, scale.t1);
        let base = y + h;
        let k = (h - 3.0) / self.max_owned as f64;
        o.push_str(&format!(
            "<polygon class=\"owned\" points=\"{}\" fill=\"{C_OWNED}\"/>\n",
            step_area(&view.owned_count[m], scale, base, k)
        ));
        o.push_str(&format!(
            "<polygon class=\"processing\" points=\"{}\" fill=\"{C_PROCESSING}\" fill-opacity=\"0.85\"/>\n",
            step_area(&view.processing_count[m], scale, base, k)
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
            if let Some(c) = scale.callout(s.start_us, s.end_us) {
                marks.widened |= c.widened;
                let out = if c.widened { &mut *over } else { &mut *o };
                out.push_str(&format!(
                    "<rect class=\"{}\" data-ms=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"3\" fill=\"{C_RESTORE}\"{}/>\n",
                    c.class("restore"), ms3(s.end_us - s.start_us), n(c.x), n(y + h - 3.0), n(c.w), c.mark()
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
    }

    /// A lane with a row per partition.
    fn partition_rows(
        &self,
        o: &mut String,
        over: &mut String,
        m: usize,
        y: f64,
        marks: &mut Marks,
    ) {
        let (view, scale) = (self.view, self.scale);
        let (t0, t1) = (scale.t0, scale.t1);
        let names = &self.history.partition_names;
        for (i, &p) in self.rows[m].iter().enumerate() {
            let ry = y + 4.0 + i as f64 * ROW;
            o.push_str(&format!(
                "<g class=\"row\" data-partition=\"{}\">\n<text x=\"{}\" y=\"{}\" font-size=\"8\" fill=\"#555\" text-anchor=\"end\">{}</text>\n",
                escape(&names[p]),
                n(LEFT - 4.0),
                n(ry + 7.5),
                escape(&shorten(&names[p], 16))
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
                if let Some(c) = scale.callout(s.start_us, s.end_us) {
                    marks.widened |= c.widened;
                    let out = if c.widened { &mut *over } else { &mut *o };
                    out.push_str(&format!(
                        "<rect class=\"{}\" data-ms=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{C_RESTORE}\"{}/>\n",
                        c.class("restore"), ms3(s.end_us - s.start_us), n(c.x), n(ry + 1.5), n(c.w), n(ROW - 4.0), c.mark()
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

    /// Zombie batches (Kafka's zombie: a member the coordinator removed finishing a batch of a
    /// partition it no longer owns): a tick at each batch's end, one per pixel and row;
    /// `row_of` gives a partition's row (top, height).
    fn zombies(
        &self,
        o: &mut String,
        m: usize,
        row_of: impl Fn(usize) -> Option<(f64, f64)>,
        marks: &mut Marks,
    ) {
        let (scale, names) = (self.scale, &self.history.partition_names);
        let name = &self.history.member_names[m];
        // A long zombie runs hundreds of batches: one tick per pixel and row.
        let mut seen: std::collections::BTreeSet<(i64, usize)> = Default::default();
        for z in self
            .report
            .invariants
            .zombie_processing
            .iter()
            .filter(|z| &z.member == name)
        {
            let at = z.at_ms * 1000;
            if at < scale.t0 || at > scale.t1 {
                continue;
            }
            let Some(p) = names.iter().position(|p| p == &z.partition) else {
                continue;
            };
            let Some((top, h)) = row_of(p) else {
                continue;
            };
            let x = scale.x(at);
            if !seen.insert((x.round() as i64, p)) {
                continue;
            }
            marks.zombie = true;
            o.push_str(&format!(
                "<rect class=\"zombie\" data-partition=\"{}\" x=\"{}\" y=\"{}\" width=\"2\" height=\"{}\" fill=\"{C_ZOMBIE}\"><title>zombie batch: {} processed {} records of {} at {} s (owner {})</title></rect>\n",
                escape(&z.partition),
                n(x - 1.0),
                n(top),
                n(h),
                escape(name),
                z.records,
                escape(&z.partition),
                seconds(z.at_ms, 3),
                escape(z.owner.as_deref().unwrap_or("none"))
            ));
        }
    }

    /// The time a dead or cut-off member still counted, to the coordinator, as the owner of its
    /// partitions (until its session expired): hatched over the lane, with a label.
    fn held(&self, o: &mut String, m: usize, y: f64, h: f64, marks: &mut Marks) {
        let scale = self.scale;
        let name = &self.history.member_names[m];
        let mut labels_wanted = Vec::new();
        let mut spans = Vec::new();
        for held in &self.view.held[m] {
            let Some(c) = scale.callout(held.start_us, held.end_us) else {
                continue;
            };
            marks.held = true;
            marks.widened |= c.widened;
            let (long, title) = held_text(name, held);
            o.push_str(&format!(
                "<rect class=\"{}\" data-cause=\"{}\" data-ended=\"{}\" data-ms=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#held)\" stroke=\"{C_REVOKE}\" stroke-width=\"1\"><title>{}</title></rect>\n",
                c.class("held"),
                held.cause,
                held.ended,
                ms3(held.end_us - held.start_us),
                n(c.x),
                n(y + 0.5),
                n(c.w),
                n(h - 1.0),
                escape(&title)
            ));
            labels_wanted.push(labels::Label {
                anchor_x: c.x + 2.0,
                texts: vec![
                    long,
                    format!(
                        "owner to the coordinator for {}",
                        header::length((held.end_us - held.start_us) / 1000)
                    ),
                    header::length((held.end_us - held.start_us) / 1000),
                ],
                keep_long: false,
            });
            spans.push(title);
        }
        if labels_wanted.is_empty() {
            return;
        }
        // Labels inside the lane, top down; one that finds no room in it is left to the
        // band's hover text.
        let band = labels::Band {
            x_min: LEFT + 2.0,
            x_max: scale.right() - 2.0,
            size: header::SIZE,
            rows_for_long: 1,
        };
        // Below the markers on the lane's top edge when the lane is tall enough.
        let first = if h >= 11.0 + header::BOX_H + 1.0 {
            y + 11.0
        } else {
            y + 1.0
        };
        let room = (((y + h - first) / header::PITCH).floor() as usize).max(1);
        let (placed, _) = labels::place(&labels_wanted, &band);
        for p in placed.iter().filter(|p| p.row < room) {
            let top = first + p.row as f64 * header::PITCH;
            o.push_str(&format!(
                "<g class=\"label\" data-kind=\"held\"><title>{}</title>\n<rect class=\"label-box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>\n<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"{C_HELD_TEXT}\">{}</text>\n</g>\n",
                escape(&spans[p.index]),
                n(p.x),
                n(top),
                n(p.w),
                n(header::BOX_H),
                n(p.x + labels::PAD),
                n(top + 9.5),
                escape(&p.text)
            ));
        }
    }

    /// Markers on the lane's top edge: start, close, crash, stall.
    fn markers(&self, o: &mut String, m: usize, y: f64) {
        let scale = self.scale;
        let name = &self.history.member_names[m];
        for e in self.view.events.iter().filter(|e| e.member == m) {
            if e.at_us < scale.t0 || e.at_us > scale.t1 {
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
    }
}

/// A held interval's label (its longest form) and hover text.
fn held_text(name: &str, held: &Held) -> (String, String) {
    let length = header::length((held.end_us - held.start_us) / 1000);
    let what = match held.cause {
        "crash" => "crashed",
        _ => "cut off from the coordinator",
    };
    let partitions = match held.partitions {
        1 => "its partition".to_string(),
        p => format!("its {p} partitions"),
    };
    let (until, label) = match held.ended {
        "removed" => (
            format!("until its session expired, {length} later"),
            format!("{what}: the owner to the coordinator until its session expired ({length})"),
        ),
        "replaced" => (
            format!("until its new process took its place, {length} later"),
            format!("{what}: the owner to the coordinator until its new process ({length})"),
        ),
        "reachable" => (
            format!("for {length}, reachable again before its session expired"),
            format!("{what} for {length}: back before its session expired"),
        ),
        _ => (
            format!("for {length}, until the run ended"),
            format!("{what}: the owner to the coordinator until the run ended ({length})"),
        ),
    };
    let title = format!(
        "{name} {what} at {} s: the coordinator still counted it as a member owning {partitions} {until}",
        seconds(held.start_us / 1000, 3)
    );
    (label, title)
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
