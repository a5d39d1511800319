//! `cgsim lab`: a local page on 127.0.0.1 that shows who reads which partition under every
//! assignor, and the small JSON API behind it. The page only renders what the API returns; the
//! API runs the same library code as `cgsim assign` and `cgsim assign --table`.
//!
//! Files: `api` turns a request's query or body into JSON (pure, unit-tested), `server` is the
//! HTTP side (tiny_http: routing, the Host check, bounded bodies), `assets/` the page, compiled
//! in.

pub mod api;
pub mod server;

pub use server::Lab;
