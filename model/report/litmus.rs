//! LKMM litmus export (being ported).

use crate::observe::record::Step;

/// The litmus test for `steps`, or why none is exported.
pub fn export(_name: &str, _steps: &[Step]) -> Result<String, String> {
    Err("litmus export: being ported".into())
}
