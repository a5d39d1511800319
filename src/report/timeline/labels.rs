//! Label placement for the SVG timeline: labels that never overlap and stay inside the frame.
//!
//! Each label starts at its anchor (the moment it names; near the right edge it is moved left
//! to stay inside) and offers texts from the longest to the shortest. Labels are placed from the
//! rightmost to the leftmost in rows, row 0 nearest the plot: each takes the longest text that
//! fits in one of the first [`Band::rows_for_long`] rows (the lowest such row), else its
//! shortest in the lowest row where it fits, however high. A label in a higher row (or moved left) has a leader line straight down from
//! its box to its anchor; no box is placed across a leader, and a label goes only where its own
//! leader runs clear of the boxes below it (labels within a pixel share one leader). Placing
//! right to left makes a burst of labels a staircase rising to the left, each leader clear.
//! Widths are estimated from Liberation Sans' (Arial's) advance widths, which is what Chromium
//! draws "Helvetica, Arial" with on Linux; the browser test checks the estimate against the
//! rendered text.

/// Horizontal room between two labels in a row.
pub const GAP: f64 = 4.0;
/// Padding inside a label's box, left and right of its text.
pub const PAD: f64 = 2.0;

/// Advance widths of Arial (Liberation Sans) in thousandths of the font size; characters not
/// listed count as a full em, which errs wide.
fn advance(c: char) -> u32 {
    match c {
        ' ' | '!' | ',' | '.' | '/' | ':' | ';' | 'I' | '[' | '\\' | ']' | 'f' | 't' | '·' => 278,
        'i' | 'j' | 'l' | '\'' => 222,
        '"' => 355,
        '#'
        | '$'
        | '0'..='9'
        | '_'
        | 'a'
        | 'b'
        | 'd'
        | 'e'
        | 'g'
        | 'h'
        | 'n'
        | 'o'
        | 'p'
        | 'q'
        | 'u'
        | 'L'
        | '–' => 556,
        '%' => 889,
        '&' => 667,
        '(' | ')' | '-' | 'r' | '`' => 333,
        '*' => 389,
        '+' | '<' | '=' | '>' | '~' | '×' => 584,
        '?' => 556,
        '@' => 1015,
        'A' | 'B' | 'E' | 'K' | 'P' | 'S' | 'V' | 'X' | 'Y' => 667,
        'C' | 'D' | 'H' | 'N' | 'R' | 'U' => 722,
        'F' | 'T' | 'Z' => 611,
        'G' | 'O' | 'Q' => 778,
        'J' | 'c' | 'k' | 's' | 'v' | 'x' | 'y' | 'z' => 500,
        'M' | 'm' => 833,
        'W' => 944,
        'w' => 722,
        '{' | '}' => 334,
        '|' => 260,
        '^' => 469,
        _ => 1000,
    }
}

/// The width of `text` drawn at `size` px, as estimated from the advance widths.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().map(advance).sum::<u32>() as f64 * size / 1000.0
}

/// A label to place: where it wants to start, and its texts, longest first.
#[derive(Clone, Debug)]
pub struct Label {
    pub anchor_x: f64,
    pub texts: Vec<String>,
    /// Its longest text may go in any row, however high, before a shorter one is tried (what
    /// a short text would not say: a protocol migration's direction and cause).
    pub keep_long: bool,
}

/// Where labels may go: between `x_min` and `x_max`, in rows of the given font size.
#[derive(Clone, Copy, Debug)]
pub struct Band {
    pub x_min: f64,
    pub x_max: f64,
    pub size: f64,
    /// Rows where the longest text is tried before the shortest is.
    pub rows_for_long: usize,
}

/// A placed label: its text, its box (`x`, width `w`) and row, and its anchor.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    pub index: usize,
    pub text: String,
    pub x: f64,
    pub w: f64,
    pub row: usize,
    pub anchor_x: f64,
}

impl Placed {
    /// Away from its anchor (in a higher row, or moved left at the right edge): it needs a
    /// leader line down to it.
    pub fn needs_leader(&self) -> bool {
        self.row > 0 || self.x < self.anchor_x - 0.05
    }
}

/// Leaders closer than this share one line (they are drawn on the same pixel).
const SAME_X: f64 = 0.75;

/// Whether `x` falls on the box `(a, b)` (with half a pixel either side).
fn covers((a, b): (f64, f64), x: f64) -> bool {
    x >= a - 0.5 && x <= b + 0.5
}

/// Places `labels` in `band`; returns one [`Placed`] per label (in the labels' order) and the
/// number of rows used.
pub fn place(labels: &[Label], band: &Band) -> (Vec<Placed>, usize) {
    let mut order: Vec<usize> = (0..labels.len()).collect();
    // Right to left; ties in the callers' order (a stable sort), so the result is deterministic.
    order.sort_by(|&a, &b| labels[b].anchor_x.total_cmp(&labels[a].anchor_x));
    // Per row, its boxes with their anchors.
    let mut rows: Vec<Vec<(f64, f64, f64)>> = Vec::new();
    let mut placed: Vec<Option<Placed>> = vec![None; labels.len()];
    // Each leader: its x and the row it comes down from.
    let mut leaders: Vec<(f64, usize)> = Vec::new();
    for i in order {
        let label = &labels[i];
        let anchor = label.anchor_x.clamp(band.x_min, band.x_max);
        let widths: Vec<f64> = label
            .texts
            .iter()
            .map(|t| text_width(t, band.size) + 2.0 * PAD)
            .collect();
        // Where a box of width `w` would go in `row`, if it can.
        let fits = |rows: &Vec<Vec<(f64, f64, f64)>>, row: usize, w: f64, strict: bool| {
            let x = anchor.min(band.x_max - w).max(band.x_min);
            let boxes = rows.get(row).map_or(&[][..], |r| &r[..]);
            if boxes
                .iter()
                .any(|&(a, b, _)| x < b + GAP && a < x + w + GAP)
            {
                return None;
            }
            // Across a leader coming down from a higher row (one at this anchor is shared).
            if leaders
                .iter()
                .any(|&(lx, lr)| lr > row && covers((x, x + w), lx) && (lx - anchor).abs() > SAME_X)
            {
                return None;
            }
            // Its own leader runs down through the rows below.
            let leader = row > 0 || x < anchor - 0.05;
            if strict
                && leader
                && rows[..row.min(rows.len())]
                    .iter()
                    .flatten()
                    .any(|&(a, b, other)| covers((a, b), anchor) && (other - anchor).abs() > SAME_X)
            {
                return None;
            }
            Some(x)
        };
        let last = widths.len() - 1;
        let mut choice = None;
        let long_rows = if label.keep_long {
            rows.len() + 1
        } else {
            band.rows_for_long.max(1)
        };
        let tries = [(0, long_rows)]
            .into_iter()
            .chain((1..=last).map(|t| (t, band.rows_for_long.max(1))))
            .chain([(last, rows.len() + 1)]);
        'search: for (t, limit) in tries {
            for row in 0..limit {
                if let Some(x) = fits(&rows, row, widths[t], true) {
                    choice = Some((t, row, x));
                    break 'search;
                }
            }
        }
        // Nowhere with a clear leader (a box moved in from the right edge covers this anchor):
        // a row of its own above the others, its leader passing behind the box.
        let (t, row, x) = choice.unwrap_or_else(|| {
            let row = rows.len();
            (
                last,
                row,
                fits(&rows, row, widths[last], false).unwrap_or(band.x_min),
            )
        });
        while rows.len() <= row {
            rows.push(Vec::new());
        }
        rows[row].push((x, x + widths[t], anchor));
        let p = Placed {
            index: i,
            text: label.texts[t].clone(),
            x,
            w: widths[t],
            row,
            anchor_x: anchor,
        };
        if p.needs_leader() {
            leaders.push((anchor, row));
        }
        placed[i] = Some(p);
    }
    let used = rows.len();
    (placed.into_iter().flatten().collect(), used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band() -> Band {
        Band {
            x_min: 0.0,
            x_max: 300.0,
            size: 10.0,
            rows_for_long: 3,
        }
    }

    fn label(x: f64, texts: &[&str]) -> Label {
        Label {
            anchor_x: x,
            texts: texts.iter().map(|t| t.to_string()).collect(),
            keep_long: false,
        }
    }

    fn overlaps(a: &Placed, b: &Placed) -> bool {
        a.row == b.row && a.x < b.x + b.w && b.x < a.x + a.w
    }

    #[test]
    fn widths_follow_arial() {
        // "g2" = 556 + 556 thousandths of an em.
        assert!((text_width("g2", 10.0) - 11.12).abs() < 1e-9);
        assert!(text_width("m", 10.0) > text_width("i", 10.0));
    }

    #[test]
    fn back_to_back_labels_stack_and_never_overlap() {
        let labels: Vec<Label> = (0..6)
            .map(|i| label(100.0 + i as f64, &["g2 member_joined c5", "g2"]))
            .collect();
        let (placed, rows) = place(&labels, &band());
        assert_eq!(placed.len(), 6);
        for (i, a) in placed.iter().enumerate() {
            assert!(a.x >= 0.0 && a.x + a.w <= 300.0, "{a:?}");
            for b in &placed[i + 1..] {
                assert!(!overlaps(a, b), "{a:?} {b:?}");
            }
        }
        assert!(rows >= 2);
        // The last keeps its place and its long text; the others rise to the left.
        assert_eq!(placed[5].row, 0);
        assert_eq!(placed[5].x, 105.0);
        assert_eq!(placed[5].text, "g2 member_joined c5");
        for (a, b) in placed.iter().zip(&placed[1..]) {
            assert!(a.row > b.row, "{a:?} {b:?}");
        }
    }

    #[test]
    fn labels_at_the_right_edge_stay_inside() {
        let (placed, _) = place(&[label(299.0, &["a long label at the end"])], &band());
        assert!(placed[0].x + placed[0].w <= 300.0);
        assert!(placed[0].needs_leader());
    }

    #[test]
    fn no_label_sits_across_a_leader() {
        let labels: Vec<Label> = (0..12)
            .map(|i| label(50.0 + 7.0 * i as f64, &["generation 12 joined", "g12"]))
            .collect();
        let (placed, _) = place(&labels, &band());
        for p in placed.iter().filter(|p| p.needs_leader()) {
            for q in &placed {
                if q.row < p.row && (q.anchor_x - p.anchor_x).abs() > SAME_X {
                    assert!(
                        !(p.anchor_x >= q.x - 0.5 && p.anchor_x <= q.x + q.w + 0.5),
                        "{q:?} is across the leader of {p:?}"
                    );
                }
            }
        }
    }
}
