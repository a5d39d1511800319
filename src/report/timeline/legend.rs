//! The timeline's legend: a swatch and a name per thing drawn, in lines that wrap inside the
//! frame. Entries for what a picture may lack (a migration, a member held until its session
//! expired, zombie batches, widened intervals, clipped lag) appear only when it has them.

use super::labels::text_width;
use super::{
    n, Marks, C_ABSENT, C_MIGRATION, C_OWNED, C_PAUSE, C_PROCESSING, C_REBALANCE, C_RESTORE,
    C_REVOKE, C_ZOMBIE, MIN_WIDTH, WIDTH,
};

enum Swatch {
    Fill(&'static str),
    Line(&'static str),
    Dashed(&'static str),
    /// An outline only: what a widened interval is marked with.
    Widened,
    Zombie,
    None,
}

const PITCH: f64 = 16.0;
const SIZE: f64 = 10.0;

fn entries(marks: &Marks) -> Vec<(String, Swatch)> {
    let mut items = vec![
        ("processing".to_string(), Swatch::Fill(C_PROCESSING)),
        ("owned, not processing".to_string(), Swatch::Fill(C_OWNED)),
        ("restoring state".to_string(), Swatch::Fill(C_RESTORE)),
        ("member paused".to_string(), Swatch::Fill(C_PAUSE)),
        (
            "rebalance (darker: sync; lighter: formation)".to_string(),
            Swatch::Fill(C_REBALANCE),
        ),
        ("revoked".to_string(), Swatch::Line(C_REVOKE)),
        ("not running".to_string(), Swatch::Fill(C_ABSENT)),
        ("stalled".to_string(), Swatch::Fill("url(#stall)")),
    ];
    if marks.held {
        items.push((
            "dead or cut off: still the owner to the coordinator until its session expires"
                .to_string(),
            Swatch::Fill("url(#held)"),
        ));
    }
    if marks.zombie {
        items.push((
            "zombie batch (processed after the coordinator removed it)".to_string(),
            Swatch::Zombie,
        ));
    }
    if marks.widened {
        items.push((
            format!("shorter than {MIN_WIDTH:.0} px: drawn {MIN_WIDTH:.0} px wide"),
            Swatch::Widened,
        ));
    }
    if marks.clipped {
        items.push((
            "lag above the axis (clipped)".to_string(),
            Swatch::Line(C_REVOKE),
        ));
    }
    if marks.migration {
        items.push((
            "the group converted between the classic and the consumer protocol".to_string(),
            Swatch::Dashed(C_MIGRATION),
        ));
    }
    items.push((
        "▶ start  ■ close  ✕ crash  ▼ stall".to_string(),
        Swatch::None,
    ));
    items
}

/// Lines the legend takes.
pub(super) fn lines(marks: &Marks) -> usize {
    layout(marks).iter().map(|e| e.2).max().map_or(1, |l| l + 1)
}

/// Each entry's x and line.
fn layout(marks: &Marks) -> Vec<(f64, f64, usize)> {
    let mut out = Vec::new();
    let (mut x, mut line) = (12.0, 0);
    for (text, swatch) in entries(marks) {
        let lead = if matches!(swatch, Swatch::None) {
            0.0
        } else {
            14.0
        };
        let w = lead + text_width(&text, SIZE);
        if x > 12.0 && x + w > WIDTH - 12.0 {
            x = 12.0;
            line += 1;
        }
        out.push((x, w, line));
        x += w + 16.0;
    }
    out
}

/// Writes the legend with its first line's baseline at `y`.
pub(super) fn render(o: &mut String, marks: &Marks, y: f64) {
    o.push_str("<g class=\"legend\" font-size=\"10\">\n");
    for ((text, swatch), (x, _, line)) in entries(marks).into_iter().zip(layout(marks)) {
        let y = y + line as f64 * PITCH;
        let top = n(y - 9.0);
        match swatch {
            Swatch::Fill(color) => o.push_str(&format!(
                "<rect x=\"{}\" y=\"{top}\" width=\"10\" height=\"10\" fill=\"{color}\" stroke=\"#999\" stroke-width=\"0.5\"/>\n",
                n(x)
            )),
            Swatch::Line(color) => o.push_str(&format!(
                "<line x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"2\"/>\n",
                n(y + 1.0),
                x = n(x + 5.0)
            )),
            Swatch::Dashed(color) => o.push_str(&format!(
                "<line x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"/>\n",
                n(y + 2.0),
                x = n(x + 5.0)
            )),
            Swatch::Widened => o.push_str(&format!(
                "<rect x=\"{}\" y=\"{top}\" width=\"{}\" height=\"10\" fill=\"{C_PAUSE}\"{}/>\n",
                n(x + 3.5),
                n(MIN_WIDTH),
                super::widened_attrs()
            )),
            Swatch::Zombie => o.push_str(&format!(
                "<rect x=\"{}\" y=\"{top}\" width=\"2\" height=\"10\" fill=\"{C_ZOMBIE}\"/>\n",
                n(x + 4.0)
            )),
            Swatch::None => {}
        }
        let lead = if text.starts_with('▶') { 0.0 } else { 14.0 };
        o.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{}</text>\n",
            n(x + lead),
            n(y),
            super::escape(&text)
        ));
    }
    o.push_str("</g>\n");
}
