//! The name of the running program, for the commands it prints: an
//! extension binary (`cli::main_with`) prints its own name, which knows
//! its variants, not `flushcheck`, which does not.

use std::sync::OnceLock;

static PROGRAM: OnceLock<String> = OnceLock::new();

/// Name this process's program `name` (the first call wins).
pub fn set_program(name: &str) {
    let _ = PROGRAM.set(name.to_string());
}

/// The program name printed commands begin with (default `flushcheck`).
pub fn program() -> &'static str {
    PROGRAM.get().map_or("flushcheck", String::as_str)
}

/// The file name of the running executable (argv\[0\]), if it has one.
pub fn from_argv0() -> Option<String> {
    let arg = std::env::args_os().next()?;
    let name = std::path::Path::new(&arg).file_name()?.to_str()?;
    Some(name.to_string())
}
