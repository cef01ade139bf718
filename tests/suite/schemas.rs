//! Every `--json` output is a document (`{"version", "kind", "flushcheck",
//! "data"}`) that validates against its schema in docs/schemas/KIND.json;
//! the tests that read a command's JSON read it through [`data`], which
//! validates it, and the outputs no other test reads are run here.
//!
//! The validator below implements the keywords the schemas use (`$ref` to
//! `#/$defs/`, `type`, `const`, `enum`, `properties`, `required`, `items`,
//! `prefixItems`, `anyOf`) and refuses any other that constrains, so that a
//! schema never passes by a keyword it ignores. A crate (jsonschema 0.61)
//! would add 49 crates to the test build, num and a second regex engine
//! among them, for seven keywords.

use serde_json::Value;

use crate::common;

/// The schema of `kind`.
fn schema(kind: &str) -> Value {
    let path = format!("{}/docs/schemas/{kind}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The data of `text`, a `--json` document of `kind`, after checking it
/// against its schema; panics naming the first place that does not fit.
pub fn data(text: &str, kind: &str) -> Value {
    let doc: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    let s = schema(kind);
    if let Err(e) = check(&doc, &s, &s, "$") {
        panic!("the {kind} document does not fit docs/schemas/{kind}.json: {e}");
    }
    doc["data"].clone()
}

/// Why `v` does not fit `s` (within the schema document `root`), at `at`.
fn check(v: &Value, s: &Value, root: &Value, at: &str) -> Result<(), String> {
    let Some(s) = s.as_object() else {
        return Err(format!("{at}: the schema is not an object"));
    };
    for k in s.keys() {
        let known = [
            "$schema",
            "$id",
            "$defs",
            "title",
            "description",
            "$ref",
            "type",
            "const",
            "enum",
            "properties",
            "required",
            "items",
            "prefixItems",
            "anyOf",
        ];
        if !known.contains(&k.as_str()) {
            return Err(format!(
                "{at}: schema keyword {k:?} is not implemented here"
            ));
        }
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/$defs/")
            .ok_or(format!("{at}: $ref {r}"))?;
        let target = &root["$defs"][name];
        if target.is_null() {
            return Err(format!("{at}: $ref {r} names no definition"));
        }
        check(v, target, root, at)?;
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return Err(format!("{at}: bad type {t}")),
        };
        let fits = |t: &str| match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            _ => false,
        };
        if !types.iter().any(|t| fits(t)) {
            return Err(format!("{at}: {v} is not of type {t}"));
        }
    }
    if let Some(c) = s.get("const") {
        if v != c {
            return Err(format!("{at}: {v} is not {c}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            return Err(format!(
                "{at}: {v} is not one of {}",
                Value::Array(e.clone())
            ));
        }
    }
    if let Some(o) = v.as_object() {
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap_or("");
            if !o.contains_key(r) {
                return Err(format!("{at}: no field {r:?}"));
            }
        }
        if let Some(ps) = s.get("properties").and_then(Value::as_object) {
            for (k, p) in ps {
                if let Some(x) = o.get(k) {
                    check(x, p, root, &format!("{at}.{k}"))?;
                }
            }
        }
    }
    if let Some(a) = v.as_array() {
        let first = s.get("prefixItems").and_then(Value::as_array);
        for (i, x) in a.iter().enumerate() {
            match (first.and_then(|f| f.get(i)), s.get("items")) {
                (Some(p), _) | (None, Some(p)) => check(x, p, root, &format!("{at}[{i}]"))?,
                (None, None) => {}
            }
        }
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        if !any.iter().any(|a| check(v, a, root, at).is_ok()) {
            return Err(format!("{at}: {v} fits none of anyOf"));
        }
    }
    Ok(())
}

/// The validator rejects what does not fit: a wrong type, a missing
/// field, a wrong kind, a version from the future.
#[test]
fn the_validator_finds_what_does_not_fit() {
    let good = r#"{"version": 1, "kind": "variants", "flushcheck": "0.1.0", "data": [
        {"name": "v6.0", "lineage": "global", "kind": "kernel", "twin": "v5.19", "updated_tree": false, "summary": "x"}]}"#;
    data(good, "variants");
    let s = schema("variants");
    for bad in [
        good.replace("\"version\": 1", "\"version\": 2"),
        good.replace("\"variants\"", "\"matrix\""),
        good.replace("\"updated_tree\": false", "\"updated_tree\": 0"),
        good.replace("\"lineage\": \"global\"", "\"lineage\": \"galactic\""),
        good.replace("\"name\": \"v6.0\", ", ""),
    ] {
        let doc: Value = serde_json::from_str(&bad).unwrap();
        assert!(check(&doc, &s, &s, "$").is_err(), "accepted: {bad}");
    }
}

/// Every kind of document has a schema, and every schema a kind.
#[test]
fn every_schema_parses_and_uses_only_implemented_keywords() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/schemas");
    let mut kinds: Vec<String> = std::fs::read_dir(dir)
        .expect("docs/schemas")
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(String::from)
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "bench",
            "bench-barrier",
            "bench-fixes",
            "bounds",
            "counterexample",
            "exhaustive",
            "exhaustive-growth",
            "fuzz",
            "kernels",
            "kernels-plan",
            "matrix",
            "perf",
            "variants"
        ]
    );
    for k in &kinds {
        let s = schema(k);
        assert_eq!(s["properties"]["kind"]["const"], k.as_str(), "{k}");
        // A null fits no schema but `null`: this walks every keyword.
        let e = check(&Value::Null, &s, &s, "$").unwrap_err();
        assert!(!e.contains("not implemented"), "{k}: {e}");
    }
}

/// The outputs no other test reads, each from its cheapest command.
#[test]
fn every_json_output_fits_its_schema() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let runs = [
        ("variants", "variants --json"),
        (
            "counterexample",
            "explain --variant mutant-cached-flushable --property no_lost_flush \
             --backend shuttle-random --entry epochs --format json",
        ),
        (
            "bounds",
            "bounds --custom --cpus 2 --batch 2 --updates 3 --val 1 --no-periodic \
             --variant v6.0 --json --shuttle-iterations 100",
        ),
        ("exhaustive", "exhaustive --json"),
        (
            "exhaustive-growth",
            "exhaustive --growth --max-cpus 2 --budget 1 --json",
        ),
        ("bench", "bench --threads 1 --updates 2048 --reps 1 --json"),
        (
            "bench-barrier",
            "bench --barrier --threads 1 --updates 2048 --reps 1 --json",
        ),
        (
            "bench-fixes",
            "bench --fixes --finding c1-bound --threads 1 --updates 2048 --reps 1 --json",
        ),
        ("perf", "perf --seeds 1 --no-growth --budget 1 --json"),
        (
            "kernels",
            "kernels --from tests/consoles --kernel 7.3 --json",
        ),
        (
            "kernels-plan",
            "kernels --plan --kernel 7.3.4+deb13-amd64 --cpus 1,2 --json",
        ),
    ];
    for (kind, cmd) in runs {
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let out = common::flushcheck(&args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let d = data(&out.stdout, kind);
        assert!(
            d.as_array().is_none_or(|a| !a.is_empty()),
            "{kind}: no data"
        );
    }
    // Shards of an exhaustive search, merged.
    let mut files = Vec::new();
    for i in 0..2 {
        let out = common::flushcheck(&["exhaustive", "--shard", &format!("{i}/2"), "--json"]);
        data(&out.stdout, "exhaustive");
        let f = dir.join(format!("ex{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = common::flushcheck(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    data(&out.stdout, "exhaustive");
}
