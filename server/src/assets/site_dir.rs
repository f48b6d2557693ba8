//! The layout of a built site directory (`scripts/build-site.sh` →
//! `<target>/site`): served files, their `.br`/`.gz` copies and the
//! `.output-name` file. Plain `std` only: `server/build.rs` includes this file
//! too, to embed the same files the development override reads at run time.

use std::{
    io,
    path::{Path, PathBuf},
};

/// The file naming the content-hashed bundle (`harness-<hash>`); not served.
pub const OUTPUT_NAME_FILE: &str = ".output-name";

/// The chunks each lazy page loads, as `frontend/tools/pack.mjs` wrote them
/// (JSON: page's split name → hashed file names without `.wasm`); not served.
/// Absent when the build did not split the bundle.
pub const SPLIT_MANIFEST_FILE: &str = ".split-manifest.json";

/// The split manifest's text, if the site has one.
pub fn split_manifest(site: &Path) -> io::Result<Option<String>> {
    match std::fs::read_to_string(site.join(SPLIT_MANIFEST_FILE)) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// One file to serve and its precompressed copies.
#[derive(Debug, Clone)]
pub struct SiteFile {
    /// URL path, e.g. `/pkg/harness-0123456789abcdef.js`.
    pub url: String,
    pub path: PathBuf,
    pub br: Option<PathBuf>,
    pub gz: Option<PathBuf>,
}

/// The hashed output name written by the build, if this is a built site.
pub fn output_name(site: &Path) -> io::Result<String> {
    let text = std::fs::read_to_string(site.join(OUTPUT_NAME_FILE))?;
    let name = text.trim();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(name.to_string())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{OUTPUT_NAME_FILE} holds an invalid name"),
        ))
    }
}

/// Every servable file under `site` (dot files and the `.br`/`.gz` copies
/// excluded), sorted by URL.
pub fn scan(site: &Path) -> io::Result<Vec<SiteFile>> {
    let mut found = Vec::new();
    walk(site, site, &mut found)?;
    found.sort_by(|a, b| a.url.cmp(&b.url));
    Ok(found)
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<SiteFile>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(root, &path, found)?;
            continue;
        }
        if name.ends_with(".br") || name.ends_with(".gz") {
            continue;
        }
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let Some(relative) = relative.to_str() else {
            continue;
        };
        let sibling = |ext: &str| {
            let copy = dir.join(format!("{name}.{ext}"));
            copy.is_file().then_some(copy)
        };
        found.push(SiteFile {
            url: format!("/{}", relative.replace('\\', "/")),
            br: sibling("br"),
            gz: sibling("gz"),
            path,
        });
    }
    Ok(())
}

/// The `Content-Type` for a served file name.
pub fn content_type(url: &str) -> &'static str {
    let ext = url.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
    match ext {
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "html" => "text/html; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "png" => "image/png",
        "txt" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}
