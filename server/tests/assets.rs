//! The web assets: the real site packer (`frontend/tools/pack.mjs`, Node)
//! builds small sites, a real server serves them (the `HARNESS_SITE_ROOT`
//! path; the embedded path is the same code, checked by the Playwright
//! one-file test): content-hashed names, precompressed Brotli/gzip copies by
//! `Accept-Encoding`, immutable caching, HTML `no-cache`, a new build never
//! serving the old bundle, and no compression of the event stream.

use std::{
    io::Read,
    path::{Path, PathBuf},
    process::Command,
};

use harness_server::{ServeConfig, launch};
use reqwest::{
    Client, StatusCode,
    header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, VARY},
};
use sha2::{Digest, Sha256};

const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Tests in this binary run one at a time: several in-process servers
/// rendering pages concurrently in one process sometimes leave a page request
/// unanswered (a process-global in the SSR stack, under investigation; one
/// server per process — the product — is not affected).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A fake wasm-bindgen output (big enough to be compressed) packed into `site`.
fn pack(work: &Path, site: &Path, js_marker: &str) -> [Vec<u8>; 3] {
    let staging = work.join("staging");
    let public = work.join("public");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::create_dir_all(&public).unwrap();
    let js = (0..40)
        .map(|i| {
            format!(
                "export function hydrate_{i}(value) {{ /* {js_marker} */ return value + {i}; }}\n"
            )
        })
        .collect::<String>();
    let mut wasm = b"\0asm\x01\0\0\0".to_vec();
    wasm.extend(std::iter::repeat_n(b"wasm code section ".as_slice(), 200).flatten());
    let css = (0..30)
        .map(|i| format!(".c{i} {{ color: black; margin: {i}px }}\n"))
        .collect::<String>();
    std::fs::write(staging.join("harness.js"), &js).unwrap();
    std::fs::write(staging.join("harness_bg.wasm"), &wasm).unwrap();
    std::fs::write(staging.join("harness.css"), &css).unwrap();
    std::fs::write(public.join("favicon.ico"), vec![7u8; 600]).unwrap();
    let packer = Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontend/tools/pack.mjs");
    let out = Command::new("node")
        .arg(&packer)
        .arg(&staging)
        .arg(&public)
        .arg(site)
        .arg("--fast")
        .output()
        .expect("node runs the site packer (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "pack.mjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    [js.into_bytes(), wasm, css.into_bytes()]
}

/// The name the build must give: sha256 over the length-prefixed files.
fn expected_name(files: &[Vec<u8>; 3]) -> String {
    let mut hash = Sha256::new();
    for f in files {
        hash.update((f.len() as u64).to_le_bytes());
        hash.update(f);
    }
    format!("harness-{}", &hex::encode(hash.finalize())[..16])
}

struct Site {
    running: harness_server::Running,
    base: String,
    client: Client,
}

async fn serve(data: &Path, site: &Path) -> Site {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut cfg = ServeConfig::new(listener.local_addr().unwrap(), data.to_path_buf());
    cfg.site_root = Some(site.to_path_buf());
    let running = launch(cfg, listener).await.unwrap();
    Site {
        base: running.base_url(),
        running,
        client: Client::new(),
    }
}

impl Site {
    async fn get(&self, path: &str, accept: Option<&str>) -> reqwest::Response {
        // Pages need a session or the admin bearer (scripts, tests).
        let mut req = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.running.admin_token);
        if let Some(a) = accept {
            req = req.header(ACCEPT_ENCODING, a);
        }
        req.send().await.unwrap()
    }
}

fn header(resp: &reqwest::Response, name: reqwest::header::HeaderName) -> Option<String> {
    resp.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hashed_precompressed_assets_and_no_cache_html() {
    let _serial = SERIAL.lock().await;
    let tmp = tempfile::tempdir().unwrap();
    let site_dir = tmp.path().join("site");
    let files = pack(tmp.path(), &site_dir, "one");
    let name = expected_name(&files);
    let site = serve(&tmp.path().join("data"), &site_dir).await;

    // The page names the bundle by its hash and is revalidated every time.
    let page = site.get("/harness", None).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(header(&page, CACHE_CONTROL).as_deref(), Some("no-cache"));
    let html = page.text().await.unwrap();
    for url in [
        format!("/pkg/{name}.js"),
        format!("/pkg/{name}_bg.wasm"),
        format!("/pkg/{name}.css"),
    ] {
        assert!(html.contains(&url), "{url} not in the page");
    }
    // HTML is compressed on the fly.
    let page = site.get("/harness", Some("gzip")).await;
    assert_eq!(header(&page, CONTENT_ENCODING).as_deref(), Some("gzip"));
    let mut unzipped = String::new();
    flate2::read::GzDecoder::new(page.bytes().await.unwrap().as_ref())
        .read_to_string(&mut unzipped)
        .unwrap();
    assert!(unzipped.contains(&format!("/pkg/{name}.js")));

    let pkg = site_dir.join("pkg");
    // The JS and the CSS are minified (the comments and spaces go, the
    // exports and rules stay); the wasm is served as built.
    let js = std::fs::read_to_string(pkg.join(format!("{name}.js"))).unwrap();
    assert!(js.len() < files[0].len() && !js.contains("/*"), "{js}");
    assert!(js.contains("hydrate_39"), "{js}");
    let css = std::fs::read_to_string(pkg.join(format!("{name}.css"))).unwrap();
    assert!(css.len() < files[2].len() && css.contains(".c29{"), "{css}");
    for (file, raw, content_type) in [
        (
            format!("{name}.js"),
            &js.into_bytes(),
            "text/javascript; charset=utf-8",
        ),
        (format!("{name}_bg.wasm"), &files[1], "application/wasm"),
        (
            format!("{name}.css"),
            &css.into_bytes(),
            "text/css; charset=utf-8",
        ),
    ] {
        let url = format!("/pkg/{file}");
        let read = |ext: &str| std::fs::read(pkg.join(format!("{file}{ext}"))).unwrap();
        for (accept, encoding, body) in [
            (Some("gzip, deflate, br, zstd"), Some("br"), read(".br")),
            (Some("gzip, deflate"), Some("gzip"), read(".gz")),
            (Some("br;q=0, gzip"), Some("gzip"), read(".gz")),
            (None, None, raw.clone()),
        ] {
            let resp = site.get(&url, accept).await;
            assert_eq!(resp.status(), StatusCode::OK, "{url}");
            assert_eq!(
                header(&resp, CONTENT_ENCODING).as_deref(),
                encoding,
                "{url} {accept:?}"
            );
            assert_eq!(header(&resp, CACHE_CONTROL).as_deref(), Some(IMMUTABLE));
            assert_eq!(header(&resp, CONTENT_TYPE).as_deref(), Some(content_type));
            assert_eq!(header(&resp, VARY).as_deref(), Some("accept-encoding"));
            assert_eq!(
                resp.bytes().await.unwrap().as_ref(),
                body.as_slice(),
                "{url} {accept:?}"
            );
        }
        assert!(read(".br").len() < raw.len() && read(".gz").len() < raw.len());
    }

    // Unhashed files: a short cache and an ETag to revalidate.
    let icon = site.get("/favicon.ico", Some("br")).await;
    assert_eq!(icon.status(), StatusCode::OK);
    assert_eq!(
        header(&icon, CACHE_CONTROL).as_deref(),
        Some("public, max-age=86400")
    );
    let etag = header(&icon, ETAG).expect("favicon has an ETag");
    let again = site
        .client
        .get(format!("{}/favicon.ico", site.base))
        .header(ACCEPT_ENCODING, "br")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    // Another build's bundle is not here; neither is the build's name file.
    assert_eq!(
        site.get("/pkg/harness-0000000000000000.js", None)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        site.get("/pkg/harness.js", None).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_ne!(
        site.get("/.output-name", None)
            .await
            .text()
            .await
            .unwrap()
            .trim(),
        name
    );
    site.running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_build_never_serves_the_old_bundle() {
    let _serial = SERIAL.lock().await;
    let tmp = tempfile::tempdir().unwrap();
    let site_dir = tmp.path().join("site");
    let old = expected_name(&pack(tmp.path(), &site_dir, "old build"));
    let new = expected_name(&pack(tmp.path(), &site_dir, "new build"));
    assert_ne!(old, new, "a changed bundle gets a new name");
    // The new site holds only the new build's files.
    let names: Vec<PathBuf> = std::fs::read_dir(site_dir.join("pkg"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        names.iter().all(|p| p.to_string_lossy().contains(&new)),
        "{names:?}"
    );
    assert!(!site_dir.with_extension("old").exists() && !site_dir.with_extension("new").exists());

    let site = serve(&tmp.path().join("data"), &site_dir).await;
    let html = site.get("/harness", None).await.text().await.unwrap();
    assert!(html.contains(&format!("/pkg/{new}.js")) && !html.contains(&old));
    // A browser still holding the old page asks for the old names: 404, never
    // the new bytes under an old (immutable) name.
    for url in [format!("/pkg/{old}.js"), format!("/pkg/{old}_bg.wasm")] {
        assert_eq!(
            site.get(&url, Some("br")).await.status(),
            StatusCode::NOT_FOUND
        );
    }
    assert_eq!(
        site.get(&format!("/pkg/{new}.js"), Some("br"))
            .await
            .status(),
        StatusCode::OK
    );
    site.running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_is_compressed_but_the_event_stream_is_not() {
    let _serial = SERIAL.lock().await;
    let tmp = tempfile::tempdir().unwrap();
    let site_dir = tmp.path().join("site");
    pack(tmp.path(), &site_dir, "events");
    let site = serve(&tmp.path().join("data"), &site_dir).await;
    let admin = site.running.admin_token.clone();
    for i in 0..3 {
        let resp = site
            .client
            .post(format!("{}/api/tasks", site.base))
            .bearer_auth(&admin)
            .json(&serde_json::json!({"title": format!("task {i}"), "agent": {"provider": "command", "command": ["true"]}}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
    }
    let list = |accept: Option<&'static str>| {
        let mut req = site
            .client
            .get(format!("{}/api/tasks", site.base))
            .bearer_auth(&admin);
        if let Some(a) = accept {
            req = req.header(ACCEPT_ENCODING, a);
        }
        req.send()
    };
    let plain = list(None).await.unwrap();
    assert_eq!(header(&plain, CONTENT_ENCODING), None);
    let plain = plain.text().await.unwrap();
    let zipped = list(Some("gzip")).await.unwrap();
    assert_eq!(header(&zipped, CONTENT_ENCODING).as_deref(), Some("gzip"));
    let mut unzipped = String::new();
    flate2::read::GzDecoder::new(zipped.bytes().await.unwrap().as_ref())
        .read_to_string(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, plain);

    // The live event stream: never compressed (it must flush every event).
    let events = site.get("/events/harness", Some("br, gzip")).await;
    assert_eq!(events.status(), StatusCode::OK);
    assert!(
        header(&events, CONTENT_TYPE)
            .unwrap_or_default()
            .starts_with("text/event-stream")
    );
    assert_eq!(header(&events, CONTENT_ENCODING), None);
    drop(events);
    site.running.shutdown().await.unwrap();
}
