//! Input files read within bounds, before they are parsed (issue 85): a path that is not a
//! regular file (a FIFO, which would block until a writer came, a device such as `/dev/zero`,
//! which never ends, a directory) is refused before it is opened, and a file is read only up to
//! a size limit, named in the error and raised for a whole process by `--max-input-bytes`.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

/// A scenario file's size limit unless `--max-input-bytes` sets one: a scenario of the largest
/// group the limits allow is far smaller.
pub const SCENARIO_BYTES: u64 = 16 << 20;

/// `cgsim assign`'s input limit unless `--max-input-bytes` sets one: the largest benchmark
/// input (2,000 members on 10,000 partitions with their previous assignments) is 9.5 MB.
pub const ASSIGN_BYTES: u64 = 64 << 20;

/// What `--max-input-bytes` set for this process.
static MAX_INPUT_BYTES: OnceLock<u64> = OnceLock::new();

/// `--max-input-bytes N`: every input of this process may be up to `n` bytes.
pub fn set_max_input_bytes(n: u64) {
    let _ = MAX_INPUT_BYTES.set(n);
}

/// The limit in force: `--max-input-bytes`, or `default`.
pub fn max_input_bytes(default: u64) -> u64 {
    MAX_INPUT_BYTES.get().copied().unwrap_or(default)
}

/// Why an input was refused, in words.
pub fn over_limit(limit: u64) -> String {
    format!("larger than the input limit of {limit} bytes (raise it with --max-input-bytes)")
}

/// Refuses what is not a regular file, from its metadata alone (opening a FIFO blocks); a
/// regular file's metadata.
pub fn check_regular_file(path: &Path) -> Result<std::fs::Metadata, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.is_file() {
        Ok(meta)
    } else if meta.is_dir() {
        Err("is a directory, not a file".into())
    } else {
        Err("not a regular file (a FIFO, a socket or a device): give a file".into())
    }
}

/// The text of the regular file at `path`, of at most the limit in force (`default` unless
/// `--max-input-bytes` sets one).
pub fn read_text(path: &Path, default: u64) -> Result<String, String> {
    let limit = max_input_bytes(default);
    if check_regular_file(path)?.len() > limit {
        return Err(over_limit(limit));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    // A file growing while it is read stops at the limit too.
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(over_limit(limit));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!("not UTF-8 text (an invalid byte at offset {at})")
    })
}
