//! The assignor benchmark inputs of `benches/data/`, read as the benchmark reads them (shared
//! by `benches/assignors.rs` and `examples/assign_repeat.rs`).

use cgsim::assignor::json::{parse_case, AssignCase};
use flate2::read::GzDecoder;
use std::io::Read;

pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/data");

/// Input `stem` (a file name without `.jsonl.gz`) for `assignor`; `None` if the assignor does
/// not take it.
pub fn load(stem: &str, assignor: &str) -> Option<AssignCase> {
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(format!("{DATA}/{stem}.jsonl.gz")).expect("input file"))
        .read_to_string(&mut text)
        .expect("gzip");
    let mut value: serde_json::Value = serde_json::from_str(text.trim()).expect("input JSON");
    value["assignor"] = serde_json::Value::String(assignor.to_string());
    parse_case(&value.to_string()).ok()
}
