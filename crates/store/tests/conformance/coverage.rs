//! The coverage checklist, kept by a test instead of by hand: every method
//! of every trait in the port (`crates/core/src/store/*.rs`) must be called
//! directly through a store by at least one conformance case.
//!
//! "Directly through a store": a call `.method(` in a case file whose
//! receiver is not a core `Harness` — by the suite's naming rule, `Harness`
//! values are named `h…` / `harness` and nothing else is. A method reached
//! only through the core counts as uncovered: the suite states the port's
//! contract, not the core's.

use std::{fs, path::Path};

/// The methods of the port's traits, as `(trait, method)`.
pub fn port_methods() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src/store");
    let mut methods = Vec::new();
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("pub trait ") {
            let after = &rest[at + "pub trait ".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let open = after.find('{').unwrap();
            let body = block(&after[open..]);
            if name != "Store" {
                for piece in body.split("fn ").skip(1) {
                    let method: String = piece
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !method.is_empty() {
                        methods.push((name.clone(), method));
                    }
                }
            }
            rest = &after[open + body.len()..];
        }
    }
    methods
}

/// The text of the `{ … }` block `text` starts with.
fn block(text: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..=i];
                }
            }
            _ => {}
        }
    }
    text
}

/// Whether `text` calls `.method(` on a receiver that is not a `Harness`.
fn called_on_a_store(text: &str, method: &str) -> bool {
    let needle = method;
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let start = from + found;
        let end = start + needle.len();
        from = end;
        // `.method(` with whitespace allowed around the dot and before `(`.
        let after = text[end..].trim_start();
        if !after.starts_with('(') {
            continue;
        }
        if bytes
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            continue;
        }
        let before = text[..start].trim_end();
        let Some(before) = before.strip_suffix('.') else {
            continue;
        };
        let receiver: String = before
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ')' || *c == '(')
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        if !receiver.starts_with('h') {
            return true;
        }
    }
    false
}

/// Port methods no case calls through a store.
pub fn uncovered_port_methods() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut cases = String::new();
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".rs") && name != "coverage.rs" && name != "mod.rs" {
            cases.push_str(&fs::read_to_string(&path).unwrap());
        }
    }
    port_methods()
        .into_iter()
        .filter(|(_, m)| !called_on_a_store(&cases, m))
        .map(|(t, m)| format!("{t}::{m}"))
        .collect()
}

/// Methods reached only through the core, without a direct case yet (none
/// today). The test fails when this list is not exactly the uncovered set —
/// a new method without a case, or a listed one that got its case (then
/// strike it here).
const KNOWN_GAPS: &[&str] = &[];

#[test]
fn every_port_method_has_a_case() {
    let methods = port_methods();
    assert!(methods.len() > 80, "the port was not parsed: {methods:?}");
    let missing = uncovered_port_methods();
    assert_eq!(
        missing, KNOWN_GAPS,
        "port methods without a conformance case (left) vs. the known gaps (right)"
    );
}
