//! What the timeline labels above its lanes: the group's formation, every rebalance (its
//! generation, trigger and length) and every conversion between the classic and the consumer
//! protocol (the online migration), placed by [`super::labels`] so that none overlaps another.
//! A burst of rebalances too close to tell apart at this zoom gets one label naming them all.

use super::labels::{Band, Label, Placed};
use super::{escape, n, Scale, C_MIGRATION, WIDTH};
use crate::metrics::outcome::Report;

/// Font size of the labels, and the height of a row of them.
pub const SIZE: f64 = 10.0;
pub const PITCH: f64 = 14.0;
/// A label's box is this high, its text's baseline this far below the box's top.
pub const BOX_H: f64 = 12.0;
const BASELINE: f64 = 9.5;
/// Rebalances starting within this many pixels of the previous one form a burst; a burst of
/// [`BURST`] or more gets one label.
const BURST_PX: f64 = 12.0;
const BURST: usize = 4;

const C_REBALANCE_TEXT: &str = "#54278f";
const C_FORMATION_TEXT: &str = "#6a51a3";

/// A label above the lanes, and what it is about (the SVG's `data-` attributes).
pub struct HeaderLabel {
    pub label: Label,
    kind: &'static str,
    /// `data-generations`: the generations it names (rebalances), space-separated.
    generations: String,
    title: String,
    color: &'static str,
}

/// A length in ms as a label says it: ms below 10 s, else seconds with one decimal.
pub fn length(ms: u64) -> String {
    if ms < 10_000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// The labels for what is visible in `[w0, w1]` ms.
pub fn labels(report: &Report, scale: &Scale, w0: u64, w1: u64) -> Vec<HeaderLabel> {
    let mut out = Vec::new();
    let visible = |a: u64, b: u64| b >= w0 && a <= w1;
    if let Some(f) = report
        .formation
        .as_ref()
        .filter(|f| visible(f.start_ms, f.end_ms))
    {
        out.push(HeaderLabel {
            label: Label {
                anchor_x: scale.x(f.start_ms.max(w0) * 1000),
                texts: vec![
                    format!("formation g{} · {}", f.generation, length(f.duration_ms)),
                    format!("formation g{}", f.generation),
                    "formation".to_string(),
                ],
                keep_long: false,
            },
            kind: "formation",
            generations: f.generation.to_string(),
            title: format!(
                "formation: the group's first join until it was Stable at generation {} ({} ms)",
                f.generation, f.duration_ms
            ),
            color: C_FORMATION_TEXT,
        });
    }
    // Rebalances in order, bursts folded.
    let shown: Vec<_> = report
        .rebalances
        .list
        .iter()
        .filter(|r| visible(r.start_ms, r.end_ms))
        .collect();
    let mut i = 0;
    while i < shown.len() {
        let mut j = i + 1;
        while j < shown.len()
            && scale.x(shown[j].start_ms * 1000) - scale.x(shown[j - 1].start_ms * 1000) < BURST_PX
        {
            j += 1;
        }
        let burst = &shown[i..if j - i >= BURST { j } else { i + 1 }];
        let first = burst[0];
        let anchor_x = scale.x(first.start_ms.max(w0) * 1000);
        let generations = burst
            .iter()
            .map(|r| r.generation.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        if burst.len() == 1 {
            let who = first
                .member
                .as_deref()
                .map(|m| format!(" {m}"))
                .unwrap_or_default();
            out.push(HeaderLabel {
                label: Label {
                    anchor_x,
                    texts: vec![
                        format!(
                            "g{} {}{who} · {}",
                            first.generation,
                            first.trigger,
                            length(first.duration_ms)
                        ),
                        format!("g{} {}{who}", first.generation, first.trigger),
                        format!("g{}", first.generation),
                    ],
                    keep_long: false,
                },
                kind: "rebalance",
                generations,
                title: format!(
                    "generation {}: {}{who}, {} ms from PreparingRebalance to Stable",
                    first.generation, first.trigger, first.duration_ms
                ),
                color: C_REBALANCE_TEXT,
            });
        } else {
            let last = burst[burst.len() - 1];
            let span = last.end_ms - first.start_ms;
            out.push(HeaderLabel {
                label: Label {
                    anchor_x,
                    texts: vec![
                        format!(
                            "g{}–g{}: {} rebalances in {}",
                            first.generation,
                            last.generation,
                            burst.len(),
                            length(span)
                        ),
                        format!("g{}–g{}", first.generation, last.generation),
                    ],
                    keep_long: false,
                },
                kind: "rebalance",
                generations,
                title: format!(
                    "generations {} to {}: {} rebalances from {} ms to {} ms",
                    first.generation,
                    last.generation,
                    burst.len(),
                    first.start_ms,
                    last.end_ms
                ),
                color: C_REBALANCE_TEXT,
            });
        }
        i += burst.len();
    }
    for m in report
        .migrations
        .iter()
        .filter(|m| visible(m.at_ms, m.at_ms))
    {
        let (from, why) = (m.from(), m.why());
        let by = m.by.as_deref().unwrap_or("-");
        out.push(HeaderLabel {
            label: Label {
                anchor_x: scale.x(m.at_ms * 1000),
                texts: vec![
                    format!("{from} → {} ({by} {why})", m.to),
                    format!("→ {}", m.to),
                ],
                keep_long: true,
            },
            kind: "migration",
            generations: String::new(),
            title: format!(
                "migration: {from} -> {} at {} ms ({by} {why}; epoch {}), carried over: {}",
                m.to,
                m.at_ms,
                m.epoch,
                m.members.join(" ")
            ),
            color: C_MIGRATION,
        });
    }
    out
}

/// The band the header labels go in.
pub fn band() -> Band {
    Band {
        x_min: 8.0,
        x_max: WIDTH - 8.0,
        size: SIZE,
        rows_for_long: 3,
    }
}

/// The top of a row's boxes, rows counted up from the lanes' top edge.
fn row_top(lanes_top: f64, row: usize) -> f64 {
    lanes_top - 6.0 - BOX_H - row as f64 * PITCH
}

/// The lanes' top edge that leaves room for `rows` rows of labels under the title lines.
pub fn lanes_top(rows: usize) -> f64 {
    (50.0 + rows as f64 * PITCH).max(82.0)
}

/// Writes the placed labels: each a group with its leader line (if it needs one), its box and
/// its text.
pub fn render(o: &mut String, labels: &[HeaderLabel], placed: &[Placed], lanes_top: f64) {
    o.push_str("<g class=\"labels\" font-size=\"10\">\n");
    for p in placed {
        let l = &labels[p.index];
        let top = row_top(lanes_top, p.row);
        o.push_str(&format!("<g class=\"label\" data-kind=\"{}\"", l.kind));
        if !l.generations.is_empty() {
            o.push_str(&format!(" data-generations=\"{}\"", l.generations));
        }
        o.push_str(&format!("><title>{}</title>\n", escape(&l.title)));
        if p.needs_leader() {
            o.push_str(&format!(
                "<line class=\"leader\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"0.75\"/>\n",
                n(lanes_top - 4.0),
                n(top + BOX_H),
                l.color,
                x = n(p.anchor_x)
            ));
        }
        o.push_str(&format!(
            "<rect class=\"label-box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>\n",
            n(p.x),
            n(top),
            n(p.w),
            n(BOX_H)
        ));
        let class = if l.kind == "migration" {
            " class=\"migration-label\""
        } else {
            ""
        };
        o.push_str(&format!(
            "<text{class} x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n</g>\n",
            n(p.x + super::labels::PAD),
            n(top + BASELINE),
            l.color,
            escape(&p.text)
        ));
    }
    o.push_str("</g>\n");
}
