//! What `cgsim sweep` and `cgsim merge` print after the runs, one function for both.

use super::objective::{self, Objective};
use super::{summary, Plan, Record};

/// What `sweep` and `merge` print after the runs: the summary, then with an objective the
/// ranking and the recommendation. From the records alone, so both print the same bytes.
pub fn summary_text(plan: &Plan, records: &[Record], objective: Option<Objective>) -> String {
    let mut text = summary::render(plan, records);
    if let Some(o) = objective {
        text.push('\n');
        text.push_str(&objective::render(plan, records, o));
    }
    text
}
