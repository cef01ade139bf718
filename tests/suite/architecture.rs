//! The house as docs/model.md section 2 draws it, checked from the source:
//! the folders stand on floors and every import runs down; no files import
//! each other in a circle; no file under model/ is over 600 lines; nothing
//! outside the catalogue decides by a variant's name or spells a backend's.
//!
//! `cargo test --release --test suite architecture -- --nocapture` prints
//! the folder graph and the floors (docs/model.md quotes it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::imports::{circles, folder_edges, Crate};

/// The floors, bottom (0) to top: a folder may import only folders on
/// lower floors. `lib` (model/lib.rs) re-exports and is not on a floor.
const FLOORS: &[(&str, usize)] = &[
    ("config", 0),
    ("vocab", 0),
    ("explore", 1),
    ("kernel", 1),
    ("observe", 1),
    ("protocol", 2),
    ("report", 2),
    ("check", 3),
    ("oracle", 3),
    ("drive", 4),
    ("measure", 4),
    ("guest", 4),
    ("publish", 5),
    ("cli", 6),
];

fn model() -> Crate {
    Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("model"))
}

fn floor_of(f: &str) -> usize {
    FLOORS
        .iter()
        .find(|(n, _)| *n == f)
        .map(|(_, k)| *k)
        .unwrap_or_else(|| panic!("folder {f} is on no floor: add it to FLOORS and docs/model.md"))
}

#[test]
fn every_import_runs_down_a_floor() {
    let c = model();
    let edges = folder_edges(&c.edges());
    let mut by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in &edges {
        by.entry(a.clone()).or_default().insert(b.clone());
    }
    println!("floor  folder    imports");
    let mut rows: Vec<(usize, &str)> = FLOORS.iter().map(|(n, k)| (*k, *n)).collect();
    rows.sort_by(|a, b| b.cmp(a));
    for (k, f) in rows {
        let to: Vec<&str> = by
            .get(f)
            .map(|s| s.iter().map(String::as_str).collect())
            .unwrap_or_default();
        println!("{k:>5}  {f:<9} {}", to.join(", "));
    }
    let up: Vec<String> = edges
        .iter()
        .filter(|(a, b)| floor_of(a) <= floor_of(b))
        .map(|(a, b)| format!("{a} (floor {}) -> {b} (floor {})", floor_of(a), floor_of(b)))
        .collect();
    assert!(up.is_empty(), "imports running up or sideways: {up:#?}");
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let c = model();
    let found: Vec<Vec<String>> = circles(&c.edges())
        .into_iter()
        .map(|comp| comp.iter().map(|m| c.files[m].clone()).collect())
        .collect();
    assert!(found.is_empty(), "circles of files: {found:#?}");
}

#[test]
fn the_vocabulary_imports_only_the_configuration() {
    let c = model();
    for (a, b) in folder_edges(&c.edges()) {
        if a == "vocab" {
            assert_eq!(b, "config", "vocab imports {b}");
        }
        if a == "kernel" || a == "observe" {
            assert_ne!(b, "explore", "{a} imports the search");
        }
    }
}

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).expect("readable") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p
                .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .expect("in the crate")
                .to_string_lossy()
                .into_owned();
            out.push((rel, std::fs::read_to_string(&p).expect("source")));
        }
    }
}

#[test]
fn no_file_under_model_is_over_600_lines() {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("model"),
        &mut files,
    );
    let long: Vec<String> = files
        .iter()
        .filter(|(_, s)| s.lines().count() > 600)
        .map(|(f, s)| format!("{f}: {} lines", s.lines().count()))
        .collect();
    assert!(long.is_empty(), "{long:#?}");
}

/// The string literals of a source, comments left out.
fn literals(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut parts = code.split('"');
        parts.next();
        while let (Some(lit), _) = (parts.next(), parts.next()) {
            out.push(lit.to_string());
        }
    }
    out
}

/// A variant's name or a backend's as a whole string literal is a decision
/// made by name: outside the catalogue (model/protocol/), variants are
/// told apart by their facts and backends by `BackendName`.
#[test]
fn nothing_outside_the_catalogue_decides_by_a_name() {
    let variants: BTreeSet<String> = memcg_flush_model::protocol::catalogue::with_bounds()
        .into_iter()
        .map(|v| v.name)
        .collect();
    let backends: BTreeSet<String> = memcg_flush_model::vocab::BackendName::ALL
        .iter()
        .map(|b| b.name().to_string())
        .collect();
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("model"),
        &mut files,
    );
    let mut found = Vec::new();
    for (f, src) in &files {
        for lit in literals(src) {
            let catalogue = f.starts_with("model/protocol/");
            if variants.contains(&lit) && !catalogue {
                found.push(format!("{f}: variant name {lit:?}"));
            }
            if backends.contains(&lit) && f != "model/vocab/backend.rs" {
                found.push(format!("{f}: backend name {lit:?}"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}
