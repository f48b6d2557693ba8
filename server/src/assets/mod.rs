//! The browser site (hydrate wasm, JS glue, CSS, favicon): embedded in the
//! binary at build time (`server/build.rs`), or read from a directory at start
//! when `HARNESS_SITE_ROOT` is set (development). Served from memory with the
//! best precompressed copy the browser accepts (Brotli, then gzip), hashed
//! files as immutable. Also the response layers of the dynamic routes: HTML
//! is `no-cache`, and HTML/JSON is compressed on the fly — only where these
//! layers are put (never on the SSE stream or the WebSocket).

pub mod encoding;
pub mod site_dir;

use std::{collections::HashMap, path::Path, sync::Arc};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::Request,
    http::{HeaderMap, HeaderValue, Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use tower_http::compression::{CompressionLayer, CompressionLevel};

use crate::state::AppState;
use encoding::Encoding;

/// `Cache-Control` of content-hashed files: never revalidated.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of HTML pages: always revalidated, so a new build's page
/// (and with it the new bundle names) is seen at once.
pub const NO_CACHE: &str = "no-cache";
/// `Cache-Control` of unhashed static files (favicon): a day, then an ETag check.
pub const SHORT: &str = "public, max-age=86400";

mod embedded {
    pub(super) struct Embedded {
        pub url: &'static str,
        pub raw: &'static [u8],
        pub br: Option<&'static [u8]>,
        pub gz: Option<&'static [u8]>,
    }
    include!(concat!(env!("OUT_DIR"), "/embedded_site.rs"));
}

/// Where the served site came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Embedded,
    Directory(std::path::PathBuf),
    /// No site: pages render but do not hydrate.
    Missing,
}

struct Asset {
    raw: Bytes,
    br: Option<Bytes>,
    gz: Option<Bytes>,
    content_type: &'static str,
    cache_control: &'static str,
    /// For files that are revalidated (not hashed): a strong validator.
    etag: Option<String>,
}

/// The site's files, in memory.
#[derive(Clone)]
pub struct Site {
    output_name: Arc<str>,
    origin: Origin,
    files: Arc<HashMap<String, Asset>>,
    /// Lazy page (its split name) → the chunks it loads (hashed names
    /// without `.wasm`): preloaded with a page that opens on it.
    split_manifest: Option<Arc<SplitManifest>>,
}

/// A lazy page's split name → the `/pkg/` files (without `.wasm`) it loads.
pub type SplitManifest = HashMap<String, Vec<String>>;

/// The build's split manifest; a malformed one is logged and ignored (the
/// pages then load their chunks after the main module, as without it).
fn parse_split_manifest(text: Option<&str>) -> Option<Arc<SplitManifest>> {
    match serde_json::from_str::<SplitManifest>(text?) {
        Ok(manifest) => Some(Arc::new(manifest)),
        Err(err) => {
            tracing::warn!(%err, "the site's split manifest is malformed; lazy pages are not preloaded");
            None
        }
    }
}

impl Site {
    /// The site of this binary: `override_dir` (HARNESS_SITE_ROOT) when given,
    /// else the embedded one. Problems are logged, never fatal: without a site
    /// the pages still render, they only do not hydrate.
    pub fn load(override_dir: Option<&Path>) -> Site {
        if let Some(dir) = override_dir {
            match Site::from_dir(dir) {
                Ok(site) => return site,
                Err(err) => {
                    tracing::warn!(site_root = %dir.display(), %err, "web assets not found; pages will not hydrate (run scripts/build-site.sh)");
                    return Site::missing();
                }
            }
        }
        match Site::embedded() {
            Some(site) => site,
            None => {
                tracing::warn!(
                    "this binary was built without the web assets; pages will not hydrate (run scripts/build-site.sh, rebuild, or set HARNESS_SITE_ROOT)"
                );
                Site::missing()
            }
        }
    }

    /// The site compiled into the binary, if the build found one.
    pub fn embedded() -> Option<Site> {
        let name = embedded::OUTPUT_NAME?;
        let files = embedded::FILES
            .iter()
            .map(|f| {
                let asset = Asset::new(
                    f.url,
                    Bytes::from_static(f.raw),
                    f.br.map(Bytes::from_static),
                    f.gz.map(Bytes::from_static),
                );
                (f.url.to_string(), asset)
            })
            .collect();
        Some(Site {
            output_name: name.into(),
            origin: Origin::Embedded,
            files: Arc::new(files),
            split_manifest: parse_split_manifest(embedded::SPLIT_MANIFEST),
        })
    }

    /// A built site directory (`<target>/site`), read into memory.
    pub fn from_dir(dir: &Path) -> std::io::Result<Site> {
        let name = site_dir::output_name(dir)?;
        let mut files = HashMap::new();
        let read = |p: &Option<std::path::PathBuf>| -> std::io::Result<Option<Bytes>> {
            p.as_ref()
                .map(|p| std::fs::read(p).map(Bytes::from))
                .transpose()
        };
        for file in site_dir::scan(dir)? {
            let raw = Bytes::from(std::fs::read(&file.path)?);
            let asset = Asset::new(&file.url, raw, read(&file.br)?, read(&file.gz)?);
            files.insert(file.url, asset);
        }
        let manifest = site_dir::split_manifest(dir)?;
        Ok(Site {
            output_name: name.into(),
            origin: Origin::Directory(dir.to_path_buf()),
            files: Arc::new(files),
            split_manifest: parse_split_manifest(manifest.as_deref()),
        })
    }

    fn missing() -> Site {
        Site {
            output_name: app::OUTPUT_NAME.into(),
            origin: Origin::Missing,
            files: Arc::new(HashMap::new()),
            split_manifest: None,
        }
    }

    /// The name of the JS/wasm/CSS files, `harness-<hash>`: the Leptos output
    /// name (`/pkg/{name}.js`, `/pkg/{name}_bg.wasm`, `/pkg/{name}.css`).
    pub fn output_name(&self) -> &str {
        &self.output_name
    }

    /// The chunks each lazy page loads, when the build split the bundle.
    pub fn split_manifest(&self) -> Option<&SplitManifest> {
        self.split_manifest.as_deref()
    }

    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// URL paths served.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Routes for every file: `/pkg/*` (unknown names: 404, e.g. an old
    /// build's bundle) and each top-level file (`/favicon.ico`).
    pub fn router(&self) -> Router<AppState> {
        let mut router = Router::new();
        let pkg = self.clone();
        router = router.route(
            "/pkg/{*file}",
            axum::routing::get(move |req: Request| {
                let site = pkg.clone();
                async move { site.respond(&req) }
            }),
        );
        for url in self.urls().filter(|u| !u.starts_with("/pkg/")) {
            let site = self.clone();
            router = router.route(
                url,
                axum::routing::get(move |req: Request| {
                    let site = site.clone();
                    async move { site.respond(&req) }
                }),
            );
        }
        router
    }

    /// The response for a GET/HEAD of one of the site's files.
    pub fn respond(&self, req: &Request) -> Response {
        let Some(asset) = self.files.get(req.uri().path()) else {
            return (
                StatusCode::NOT_FOUND,
                [(header::CACHE_CONTROL, NO_CACHE)],
                "not found",
            )
                .into_response();
        };
        let choice = encoding::choose(req.headers(), asset.br.is_some(), asset.gz.is_some());
        let body = match choice {
            Encoding::Brotli => asset.br.clone(),
            Encoding::Gzip => asset.gz.clone(),
            Encoding::Identity => None,
        }
        .unwrap_or_else(|| asset.raw.clone());
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(asset.cache_control),
        );
        if asset.br.is_some() || asset.gz.is_some() {
            headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        if let Some(token) = choice.token() {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(token));
        }
        if let Some(etag) = &asset.etag {
            let etag = format!("\"{etag}{}\"", choice.etag_suffix());
            if let Ok(value) = HeaderValue::from_str(&etag) {
                let matches = req
                    .headers()
                    .get(header::IF_NONE_MATCH)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
                headers.insert(header::ETAG, value);
                if matches {
                    return (StatusCode::NOT_MODIFIED, headers).into_response();
                }
            }
        }
        if req.method() == Method::HEAD {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
            return (StatusCode::OK, headers).into_response();
        }
        (StatusCode::OK, headers, Body::from(body)).into_response()
    }
}

impl Asset {
    fn new(url: &str, raw: Bytes, br: Option<Bytes>, gz: Option<Bytes>) -> Asset {
        // Everything under /pkg/ carries the build's content hash in its name.
        let hashed = url.starts_with("/pkg/");
        let etag = (!hashed).then(|| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            raw.hash(&mut h);
            format!("{:016x}", h.finish())
        });
        Asset {
            content_type: site_dir::content_type(url),
            cache_control: if hashed { IMMUTABLE } else { SHORT },
            etag,
            raw,
            br,
            gz,
        }
    }
}

/// On-the-fly compression of dynamic responses (HTML pages, server-function
/// and REST JSON). Brotli at a fast level, gzip as fallback; tower-http skips
/// responses that already carry a `Content-Encoding`, small bodies, images
/// and `text/event-stream`. Put it on routers that never stream events or
/// upgrade to a WebSocket.
pub fn compression() -> CompressionLayer {
    CompressionLayer::new()
        .br(true)
        .gzip(true)
        .quality(CompressionLevel::Default)
}

/// HTML without a `Cache-Control` gets `no-cache`: the browser revalidates
/// every page, so it always learns the current bundle names.
pub async fn html_no_cache(mut response: Response) -> Response {
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if is_html && !response.headers().contains_key(header::CACHE_CONTROL) {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
    }
    response
}
