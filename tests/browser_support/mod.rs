//! Headless Chromium for the browser tests (the lab's and the timeline's): found only when
//! `CGSIM_BROWSER_TESTS=1` (CI sets it; then a missing browser fails the test), run with a
//! fresh profile and its background traffic off (the machine's network is closed).
//! `CGSIM_CHROMIUM` names another browser binary than `/usr/bin/chromium`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser, or `None` (the test says it was skipped) without `CGSIM_BROWSER_TESTS=1`.
pub fn chromium(test: &str) -> Option<PathBuf> {
    if std::env::var("CGSIM_BROWSER_TESTS").as_deref() != Ok("1") {
        eprintln!("{test}: skipped (set CGSIM_BROWSER_TESTS=1 to drive headless Chromium)");
        return None;
    }
    let path = PathBuf::from(
        std::env::var("CGSIM_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
    );
    assert!(
        path.exists(),
        "CGSIM_BROWSER_TESTS=1 but there is no browser at {} (apt-get install chromium)",
        path.display()
    );
    Some(path)
}

/// A new empty directory of this process, named after `prefix`.
pub fn tempdir(prefix: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the browser on `url` with `extra` flags (what to write, the virtual time budget) and
/// gives back its standard output.
pub fn browser(bin: &Path, extra: &[&str], url: &str) -> Vec<u8> {
    let profile = tempdir("cgsim-chromium-profile");
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.status.success(),
        "chromium failed on {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
