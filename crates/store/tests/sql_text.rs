//! Rules on the SQL text of the SQLite store that no query result shows.

use std::path::Path;

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &Path, out: &mut Vec<(String, String)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            sources(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((path.display().to_string(), std::fs::read_to_string(&path)?));
        }
    }
    Ok(())
}

/// A bound `LIMIT ?` (or `LIMIT $1`) is read by SQLite's planner, so each
/// new value expires the cached statement and every execution parses it
/// again; `LIMIT +$1` is evaluated at run time instead (see
/// `src/sqlite/mod.rs`). The SQL shared with PostgreSQL (`src/shared`) runs
/// on SQLite too.
#[test]
fn no_bound_limit_is_planned() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sqlite");
    let mut files = Vec::new();
    sources(&dir, &mut files)?;
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shared"),
        &mut files,
    )?;
    assert!(
        files.len() > 5,
        "the SQLite sources were not found in {dir:?}"
    );
    let mut bad = Vec::new();
    for (path, text) in &files {
        for (n, line) in text.lines().enumerate() {
            let upper = line.to_ascii_uppercase();
            if ["LIMIT ?", "OFFSET ?", "LIMIT $", "OFFSET $"]
                .iter()
                .any(|bound| upper.contains(bound))
            {
                bad.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "bound limits planned by SQLite:\n{}",
        bad.join("\n")
    );
    Ok(())
}
