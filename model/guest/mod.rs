//! The VM harness: Debian's kernels booted under qemu with the probe
//! (`probe/`, a static binary) as `/init` (docs/real-kernels.md).
//!
//! A run finds the kernels in a cache directory ([`cache`]), builds the
//! probe ([`probe`]), writes one initramfs ([`cpio`]) with the probe, the
//! plan (which scenarios) and the scenario file this binary judges with (so
//! that the guest runs exactly the scenarios the oracle predicts), boots
//! each kernel at each vCPU count ([`qemu`]), and reads the console back
//! into an [`Observation`](crate::oracle::Observation) for the oracle ([`console`]). Nothing here
//! judges: [`crate::oracle::judge()`] does.

pub mod cache;
pub mod console;
pub mod cpio;
pub mod probe;
pub mod qemu;

use std::path::{Path, PathBuf};

pub use cache::Kernel;
pub use console::Console;
pub use qemu::{Accel, Boot, Booted};

use crate::oracle::spec::SCENARIOS_JSON;

/// The plan the probe reads from `/plan.json`: the scenarios to run, by
/// name (empty: all).
pub fn plan_json(names: &[String]) -> String {
    serde_json::json!({ "scenarios": names }).to_string()
}

/// An initramfs on disk, removed when dropped.
#[derive(Debug)]
pub struct Initrd {
    /// Its path (in the temporary directory).
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
}

impl Initrd {
    /// The initramfs of the probe at `probe` running `names` (empty: all)
    /// from the scenario file compiled into this binary.
    pub fn create(
        probe: &Path,
        names: &[String],
        reproducer: Option<&Path>,
    ) -> Result<Initrd, String> {
        let bin = std::fs::read(probe).map_err(|e| format!("{}: {e}", probe.display()))?;
        let repro = reproducer
            .map(|r| std::fs::read(r).map_err(|e| format!("{}: {e}", r.display())))
            .transpose()?;
        let archive = cpio::initrd_with(
            &bin,
            &plan_json(names),
            Some(SCENARIOS_JSON),
            repro.as_deref(),
        );
        let path =
            std::env::temp_dir().join(format!("flushcheck-{}-initrd.cpio", std::process::id()));
        std::fs::write(&path, &archive).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Initrd {
            path,
            bytes: archive.len(),
        })
    }
}

impl Drop for Initrd {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
