//! `<link rel="preload">` for the chunks of the lazy page a request opens:
//! they download with the main module instead of after it. The
//! site build packs a page's chunks into one file (`…_pack_<page>.wasm`,
//! frontend/tools/pack.mjs) and the manifest names that pack, so a page
//! preloads one file; the split loader cuts the chunks out of it.
//!
//! Leptos can emit these itself (`WasmSplitManifest` + the `#[lazy]`
//! function registering its name on the server), but that registration
//! runs outside the request's reactive owner: under concurrent requests a
//! page lost its own hints or received another page's (measured: 8 parallel
//! `/settings` + `/analytics` renders, about half wrong). So the shell
//! renders them here, from the request path alone, deterministically.
//!
//! The split names come from the route types in `lazy_pages.rs`
//! (`SettingsRoute` → `__settings_route_view_<hash>`); [`page_of`] maps a
//! path to that prefix, next to the `<Routes>` table it mirrors.

use std::{collections::HashMap, sync::Arc};

use leptos::prelude::*;

/// The build's split manifest as the server hands it over: the `/pkg`
/// root, split name → hashed chunk names (without `.wasm`), and the
/// loader's file name.
#[derive(Clone, Debug)]
pub struct PagePreloads {
    pub pkg_root: String,
    pub manifest: Arc<HashMap<String, Vec<String>>>,
    pub loader: String,
}

/// Every lazy page: its path pattern (segments; `*` is one parameter) and
/// the prefix of its split name.
pub const LAZY_PAGES: &[(&[&str], &str)] = &[
    (&[], "__home_route_view_"),
    (&["tasks"], "__task_list_route_view_"),
    (&["tasks", "*"], "__task_detail_route_view_"),
    (&["projects"], "__project_list_route_view_"),
    (&["projects", "*", "plan"], "__plan_route_view_"),
    (&["settings"], "__settings_route_view_"),
    (&["analytics"], "__analytics_route_view_"),
    (&["gateway"], "__gateway_route_view_"),
    (&["report"], "__report_route_view_"),
];

/// Lazy functions that are parts of a page, not pages: fetched once the page
/// is hydrated (`/harness`' dialog body and inbound list), never preloaded
/// (they would compete with the main module for the first paint's bytes).
pub const LAZY_PARTS: &[&str] = &["dialog_body_", "harness_inbound_"];

/// The split-name prefix of the lazy page `path` opens, if it is one.
pub fn page_of(path: &str) -> Option<&'static str> {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    LAZY_PAGES.iter().find_map(|(pattern, prefix)| {
        let same = pattern.len() == segments.len()
            && pattern
                .iter()
                .zip(&segments)
                .all(|(p, s)| *p == "*" || p == s);
        same.then_some(*prefix)
    })
}

impl PagePreloads {
    /// The files the manifest names for the page at `path` (its pack):
    /// `<pkg_root>/<name>.wasm`.
    pub fn chunks_for(&self, path: &str) -> Vec<String> {
        let Some(prefix) = page_of(path) else {
            return Vec::new();
        };
        let mut keys: Vec<&String> = self
            .manifest
            .keys()
            .filter(|k| k.starts_with(prefix))
            .collect();
        keys.sort();
        keys.into_iter()
            .flat_map(|k| self.manifest.get(k).into_iter().flatten())
            .map(|module| format!("{}/{module}.wasm", self.pkg_root))
            .collect()
    }

    /// Manifest entries no path maps to (a lazy route added to `<Routes>`
    /// but not to [`LAZY_PAGES`]): the server warns about them at start.
    pub fn unmapped(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .manifest
            .keys()
            .filter(|k| !LAZY_PAGES.iter().any(|(_, prefix)| k.starts_with(prefix)))
            .filter(|k| !LAZY_PARTS.iter().any(|prefix| k.starts_with(prefix)))
            .cloned()
            .collect();
        out.sort();
        out
    }
}

/// The hints for this request (server only; nothing without a split build).
#[component]
pub fn PreloadLinks(nonce: Option<String>) -> impl IntoView {
    let links = use_context::<PagePreloads>().and_then(|p| {
        let path = request_path()?;
        let chunks = p.chunks_for(&path);
        (!chunks.is_empty()).then(|| (chunks, format!("{}/{}", p.pkg_root, p.loader)))
    });
    links.map(|(chunks, loader)| {
        // As Leptos writes them: `crossorigin` carries the nonce (any value
        // but "use-credentials" is anonymous, as the loader's fetch is).
        let chunk_links = chunks
            .into_iter()
            .map(|href| {
                view! {
                    <link rel="preload" href=href r#as="fetch" r#type="application/wasm"
                        crossorigin=nonce.clone() />
                }
            })
            .collect_view();
        view! {
            {chunk_links}
            <link rel="modulepreload" href=loader crossorigin=nonce.clone() />
        }
    })
}

#[cfg(feature = "ssr")]
fn request_path() -> Option<String> {
    use_context::<http::request::Parts>().map(|p| p.uri.path().to_string())
}

#[cfg(not(feature = "ssr"))]
fn request_path() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lazy_path_names_its_page() {
        assert_eq!(page_of("/"), Some("__home_route_view_"));
        assert_eq!(page_of("/settings"), Some("__settings_route_view_"));
        assert_eq!(page_of("/settings/"), Some("__settings_route_view_"));
        assert_eq!(
            page_of("/tasks?state=open"),
            Some("__task_list_route_view_")
        );
        assert_eq!(page_of("/tasks/abc"), Some("__task_detail_route_view_"));
        assert_eq!(page_of("/projects/p1/plan"), Some("__plan_route_view_"));
        assert_eq!(page_of("/report?since=12h"), Some("__report_route_view_"));
        assert_eq!(page_of("/harness"), None);
        assert_eq!(page_of("/projects/p1"), None);
        assert_eq!(page_of("/nope"), None);
    }

    #[test]
    fn the_chunks_come_from_the_manifest_and_unknown_pages_are_named() {
        let manifest = HashMap::from([
            (
                "__settings_route_view_42".to_string(),
                vec!["h_chunk_1".to_string(), "h_split_settings".to_string()],
            ),
            (
                "__brand_new_route_view_7".to_string(),
                vec!["h_chunk_2".to_string()],
            ),
            (
                "dialog_body_10339176857337961351".to_string(),
                vec!["h_chunk_3".to_string()],
            ),
        ]);
        let p = PagePreloads {
            pkg_root: "/pkg".into(),
            manifest: Arc::new(manifest),
            loader: "h_split.js".into(),
        };
        assert_eq!(
            p.chunks_for("/settings"),
            vec!["/pkg/h_chunk_1.wasm", "/pkg/h_split_settings.wasm"]
        );
        assert!(p.chunks_for("/harness").is_empty());
        assert!(p.chunks_for("/analytics").is_empty());
        assert_eq!(p.unmapped(), vec!["__brand_new_route_view_7"]);
    }
}
