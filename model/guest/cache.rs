//! The kernels a run can boot: the `vmlinuz-*` images that
//! `probe/fetch-kernels.sh DIR` unpacks into `DIR/img/boot` from Debian's
//! packages, each named by its release's major.minor (6.1.0-57-amd64 is
//! kernel `6.1`), the name the docs and the oracle's lineages use.

use std::path::{Path, PathBuf};

/// One bootable kernel image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Its short name (`6.1`, `6.12`), or its release where two images
    /// share a major.minor.
    pub name: String,
    /// Its release, as `uname -r` prints it (`6.12.107+deb12-amd64`).
    pub release: String,
    /// The image.
    pub vmlinuz: PathBuf,
}

/// A release's major.minor (`6.1.0-57-amd64` is `6.1`), if it starts with
/// two numbers.
pub fn short_name(release: &str) -> Option<String> {
    let mut it = release.split(['.', '-', '+']);
    let major = it.next().filter(|s| is_number(s))?;
    let minor = it.next().filter(|s| is_number(s))?;
    Some(format!("{major}.{minor}"))
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The numbers a release starts with, for sorting (6.1 before 6.12).
pub fn version_key(release: &str) -> Vec<u64> {
    release
        .split(['.', '-', '+'])
        .map_while(|s| s.parse().ok())
        .collect()
}

/// The kernels in `cache` (`cache/img/boot/vmlinuz-*`), oldest first; an
/// error, naming the script that fetches them, if there are none.
pub fn find(cache: &Path) -> Result<Vec<Kernel>, String> {
    let boot = cache.join("img").join("boot");
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&boot)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let release = name.strip_prefix("vmlinuz-")?.to_string();
                    Some((release, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    if found.is_empty() {
        return Err(format!(
            "no kernels in {} (no img/boot/vmlinuz-*): fetch them with \
             `probe/fetch-kernels.sh {}` (needs apt-get and dpkg)",
            cache.display(),
            cache.display()
        ));
    }
    found.sort_by(|a, b| {
        version_key(&a.0)
            .cmp(&version_key(&b.0))
            .then(a.0.cmp(&b.0))
    });
    let shorts: Vec<Option<String>> = found.iter().map(|(r, _)| short_name(r)).collect();
    Ok(found
        .iter()
        .zip(&shorts)
        .map(|((release, path), short)| {
            let unique = short
                .as_ref()
                .filter(|s| shorts.iter().filter(|t| t.as_ref() == Some(s)).count() == 1);
            Kernel {
                name: unique.cloned().unwrap_or_else(|| release.clone()),
                release: release.clone(),
                vmlinuz: path.clone(),
            }
        })
        .collect())
}

/// The kernels of `all` that `names` names (by short name or release), in
/// the order of `all`; every kernel if `names` is empty.
pub fn select(all: &[Kernel], names: &[String]) -> Result<Vec<Kernel>, String> {
    for n in names {
        if !all.iter().any(|k| &k.name == n || &k.release == n) {
            let known: Vec<&str> = all.iter().map(|k| k.name.as_str()).collect();
            return Err(format!(
                "unknown kernel {n:?}: expected one of {}",
                known.join(", ")
            ));
        }
    }
    Ok(all
        .iter()
        .filter(|k| names.is_empty() || names.iter().any(|n| n == &k.name || n == &k.release))
        .cloned()
        .collect())
}

/// The short names of a named set of kernels (`ci`, `all`), as
/// `probe/fetch-kernels.sh --set` fetches them.
pub fn set_names(set: &str) -> Option<&'static [&'static str]> {
    match set {
        "ci" => Some(&["6.1", "6.12", "6.16", "7.3"]),
        "all" => Some(&[
            "6.1", "6.12", "6.16", "6.17", "6.18", "6.19", "7.0", "7.1", "7.2", "7.3",
        ]),
        _ => None,
    }
}

/// The kernels of set `set` in `all` (the newest release of each short
/// name); an error naming the missing ones and the command that fetches
/// them.
pub fn select_set(all: &[Kernel], set: &str) -> Result<Vec<Kernel>, String> {
    let names = set_names(set).ok_or_else(|| format!("unknown set {set:?}: expected ci or all"))?;
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for n in names {
        match all
            .iter()
            .filter(|k| short_name(&k.release).as_deref() == Some(*n))
            .max_by_key(|k| version_key(&k.release))
        {
            Some(k) => out.push(k.clone()),
            None => missing.push(*n),
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "the {set} set needs {} which the cache lacks: fetch them with \
             `probe/fetch-kernels.sh --set {set} DIR`",
            missing.join(", ")
        ));
    }
    Ok(out)
}
