//! `cgsim lab [--port N] [--scenarios DIR] [--run-timeout-ms N]`: serves the lab on 127.0.0.1
//! until interrupted. The first line on stdout names the address (with `--port 0`, the port the
//! system picked), so scripts and tests can read it.

use cgsim::lab::{Config, Lab};
use std::process::ExitCode;

pub fn run(port: u16, config: Config) -> ExitCode {
    // The rebalance view lists the scenarios of this folder: an empty list is said at start,
    // not left for the page to show as nothing.
    let dir = cgsim::lab::scenarios::ScenarioDir::new(&config.scenarios);
    if dir.list().is_empty() {
        let full = std::path::absolute(&config.scenarios).unwrap_or(config.scenarios.clone());
        eprintln!(
            "lab: no scenarios found in {} (the rebalance view lists its *.toml files): \
             start the lab in a clone of cgsim, or give --scenarios DIR",
            full.display()
        );
    }
    let lab = match Lab::bind(port, config) {
        Ok(lab) => lab,
        Err(e) => {
            eprintln!("lab: {e} (--port 0 picks a free port)");
            return super::bad_input();
        }
    };
    if !super::write_stdout(&format!("lab: listening on {}\n", lab.url())) {
        return ExitCode::SUCCESS;
    }
    lab.serve();
    ExitCode::SUCCESS
}
