//! Renderers of a run's outcome (`metrics::outcome`, the JSON keys of DESIGN.md): the
//! purpose-built text report that snapshots review, compare's tables, the SVG timeline, the
//! Chrome trace, and the `kafka-consumer-groups --describe` tables. Nothing here feeds back into a run.

mod chrome_trace;
pub mod compare;
mod describe;
pub mod history_view;
mod text;
mod timeline;

pub use chrome_trace::{render_chrome_trace, ChromeTraceOptions};
pub use describe::{render_describe, ToolOutput};
pub use text::render_text;
pub use timeline::{render_timeline, TimelineOptions, MIN_WIDTH};

pub use crate::metrics::outcome::*;
