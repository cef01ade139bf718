//! Which release's names a variant's trace speaks
//! ([`crate::observe::listing::Dialect`]): decided here, in the catalogue's
//! folder, from the variant's name (a release number, or a proposal made
//! on the newest lineage).

use crate::observe::listing::{self, Dialect};

/// The dialect of the release variant `name` models.
pub fn dialect_of(name: &str) -> Dialect {
    let base = name
        .strip_prefix("mutant-")
        .unwrap_or(name)
        .trim_start_matches('v');
    if name.starts_with("scaled-2026") || base.starts_with("6.17") || base.starts_with("7.") {
        listing::V6_17
    } else if base.starts_with("6.8") {
        listing::V6_8
    } else {
        listing::OLDER
    }
}
