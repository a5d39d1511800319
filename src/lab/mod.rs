//! `cgsim lab`: a local page on 127.0.0.1 that shows who reads which partition under every
//! assignor, and rebalances side by side over time (eager, cooperative, consumer) with a
//! scrubber and faults added from the page; and the small JSON API behind both. The pages only
//! render what the API returns; the API runs the same library code as `cgsim assign`,
//! `cgsim assign --table` and `cgsim run`.
//!
//! Files: `api` turns a request's query or body into JSON for the assignment table (pure,
//! unit-tested); `rebalance` does it for the rebalance view, over `scenarios` (the folder, read
//! by name), `faults` (faults added in the page, as timeline entries), `runs` (bounded runs,
//! kept), `instant` (a run at an instant, and its lanes) and `limits`; `server` is the HTTP side
//! (tiny_http: routing, the Host check, bounded bodies); `assets/` the pages, compiled in.

pub mod api;
pub mod faults;
pub mod instant;
pub mod limits;
pub mod rebalance;
pub mod runs;
pub mod scenarios;
pub mod server;

pub use server::{Config, Lab};
