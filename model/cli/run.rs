//! `flushcheck __run SPEC`: one exploration in a worker process.

use std::process::ExitCode;

use crate::check::{run::run, RunSpec};
use crate::explore::quiet_panics;
use crate::protocol::Variant;

/// Run the spec given as JSON and print its result as JSON.
pub fn run_spec(spec: &str, registry: &[Variant]) -> ExitCode {
    quiet_panics();
    let result = serde_json::from_str::<RunSpec>(spec)
        .map_err(|e| format!("bad run spec: {e}"))
        .and_then(|s| run(&s, registry))
        .and_then(|r| serde_json::to_string(&r).map_err(|e| e.to_string()));
    match result {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("flushcheck: error: {e}");
            ExitCode::from(2)
        }
    }
}
