//! `flushcheck variants`: every registered variant (the catalogue's and a
//! `main_with` caller's) with its lineage, kind and twin.

use std::process::ExitCode;

use crate::protocol::Variant;

/// Arguments of `flushcheck variants`.
#[derive(clap::Args, Debug)]
pub struct VariantsArgs {
    /// Print a JSON array of {name, lineage, kind, twin, updated_tree, summary}.
    #[arg(long)]
    json: bool,
}

fn lineage(v: &Variant) -> String {
    match v.updated_tree {
        Some(_) => format!("{} (updated tree)", v.family.name()),
        None => v.family.name().to_string(),
    }
}

/// Print the registry, one line per variant.
pub fn variants(a: &VariantsArgs, registry: &[Variant]) -> Result<ExitCode, String> {
    if a.json {
        let rows: Vec<serde_json::Value> = registry
            .iter()
            .map(|v| {
                serde_json::json!({
                    "name": v.name,
                    "lineage": v.family.name(),
                    "kind": v.kind.name(),
                    "twin": v.twin,
                    "updated_tree": v.updated_tree.is_some(),
                    "summary": v.summary,
                })
            })
            .collect();
        super::args::print_doc("variants", &rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    let w = registry.iter().map(|v| v.name.len()).max().unwrap_or(4);
    println!(
        "{:<w$}  {:<27}  {:<9}  {:<w$}  summary",
        "name", "lineage", "kind", "twin"
    );
    for v in registry {
        println!(
            "{:<w$}  {:<27}  {:<9}  {:<w$}  {}",
            v.name,
            lineage(v),
            v.kind.name(),
            v.twin.as_deref().unwrap_or("-"),
            v.summary
        );
    }
    Ok(ExitCode::SUCCESS)
}
