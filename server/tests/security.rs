//! response headers (framing), sessions on every bind, logout and
//! revocation, login throttling — against a real server on a real socket.

use crate::common;

use common::no_redirects;
use reqwest::StatusCode;

/// Tests in this binary run one at a time: several in-process servers
/// rendering pages concurrently in one process sometimes leave a page request
/// unanswered (a process-global in the SSR stack, under investigation; one
/// server per process — the product — is not affected).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Every server function the UI registers (read from the app's sources, so a
/// new one is covered without editing this test).
fn server_functions() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/src");
    let mut names = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for line in text.lines() {
                if let Some(rest) = line
                    .trim()
                    .strip_prefix("#[server(prefix = \"/sfn\", endpoint = \"")
                {
                    names.push(rest.split('"').next().unwrap().to_string());
                }
            }
        }
    }
    assert!(names.len() >= 10, "found only {names:?}");
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_forbids_framing_and_sniffing() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let client = no_redirects();
    let session = s.session().await;
    let paths = [
        "/harness",
        "/tasks",
        "/no/such/page",
        "/login",
        "/logout",
        "/healthz",
        "/api/tasks",
        "/pkg/missing.js",
        "/mcp",
        "/sfn/overview",
    ];
    for path in paths {
        for cookie in [None, Some(session.as_str())] {
            let mut req = client.get(s.url(path));
            if let Some(c) = cookie {
                req = req.header("Cookie", c);
            }
            let resp = req.send().await.unwrap();
            let h = resp.headers();
            let ctx = format!("{path} (session: {}) → {}", cookie.is_some(), resp.status());
            assert_eq!(h["x-frame-options"], "DENY", "{ctx}");
            assert_eq!(h["x-content-type-options"], "nosniff", "{ctx}");
            // Never a referrer to another origin: app pages keep theirs for
            // their own no-JS forms, everything else sends none.
            let referrer = h["referrer-policy"].to_str().unwrap();
            assert!(["no-referrer", "same-origin"].contains(&referrer), "{ctx}");
            if ["/login", "/logout", "/healthz", "/api/tasks", "/mcp"].contains(&path) {
                assert_eq!(referrer, "no-referrer", "{ctx}");
            }
            let csp = h["content-security-policy"].to_str().unwrap();
            assert!(csp.contains("frame-ancestors 'none'"), "{ctx}: {csp}");
        }
    }
    // A page: scripts from self plus the hydration script's per-response nonce.
    let page = |c: &str| {
        client
            .get(s.url("/harness"))
            .header("Cookie", c.to_string())
            .send()
    };
    let first = page(&session).await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let csp = first.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    let html = first.text().await.unwrap();
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .expect("a nonce in the page policy")
        .to_string();
    assert!(csp.contains("script-src 'self' 'nonce-"), "{csp}");
    assert!(!csp.contains("unsafe-eval'") || csp.contains("'wasm-unsafe-eval'"));
    assert!(!csp.contains("script-src 'self' 'unsafe-inline'"), "{csp}");
    assert!(
        html.contains(&format!("nonce=\"{nonce}\"")),
        "the hydration script carries the nonce"
    );
    let scripts = html.matches("<script").count();
    let with_nonce = html.matches(&format!("nonce=\"{nonce}\"")).count();
    assert!(
        with_nonce >= 1 && scripts <= with_nonce,
        "{scripts} scripts, {with_nonce} with the nonce"
    );
    let second = page(&session).await.unwrap();
    let csp2 = second.headers()["content-security-policy"]
        .to_str()
        .unwrap();
    assert!(!csp2.contains(&nonce), "a fresh nonce per response");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessionless_local_client_gets_nothing() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let client = no_redirects();
    let t = s.task("t").await;
    // Pages send the browser to the login.
    let resp = client.get(s.url("/tasks")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/login?next=%2Ftasks");
    // Every server function: 401, with or without a same-origin Origin.
    for name in server_functions() {
        for origin in [None, Some(s.base.clone())] {
            let mut req = client
                .post(s.url(&format!("/sfn/{name}")))
                .form(&[("task_id", t.as_str()), ("text", "yes")]);
            if let Some(o) = &origin {
                req = req.header("Origin", o);
            }
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "/sfn/{name}");
            let body: serde_json::Value = resp.json().await.unwrap();
            assert_eq!(body["error"], "login required");
        }
    }
    // An agent's token is not a UI credential (an agent cannot answer its own ask).
    let resp = client
        .post(s.url("/sfn/reply_ask"))
        .header("Origin", &s.base)
        .bearer_auth("hx_not_the_admin")
        .form(&[("task_id", t.as_str()), ("text", "yes")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // Live events and the terminal socket.
    let resp = client.get(s.url("/events/harness")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let url = format!("ws://{}/ws/terminal/{t}", s.running.addr);
    let err = tokio_tungstenite::connect_async(url.as_str())
        .await
        .expect_err("no socket without a session");
    match err {
        tokio_tungstenite::tungstenite::Error::Http(resp) => {
            assert_eq!(resp.status(), StatusCode::UNAUTHORIZED.as_u16())
        }
        other => panic!("expected 401, got {other:?}"),
    }
    // With the admin bearer (scripts) the same calls work.
    let resp = client
        .post(s.url("/sfn/overview"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let resp = client
        .get(s.url("/tasks"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_hashed_revocable_and_need_an_origin_to_change_state() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let client = no_redirects();
    // The printed link logs in and lands on the page asked for.
    let resp = client
        .get(s.url(&format!("/login?token={}&next=%2Ftasks", s.admin)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/tasks");
    let set = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.contains("Secure"), "plain HTTP: no Secure flag");
    assert!(!set.contains(&s.admin), "the cookie is not the admin token");
    let cookie = set.split(';').next().unwrap().to_string();
    let id = cookie.split_once('=').unwrap().1.to_string();
    // Stored hashed: the id itself is nowhere in the database.
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{}/harness.db", dir.path().display()))
        .await
        .unwrap();
    let hashes: Vec<String> = sqlx::query_scalar("SELECT id_hash FROM harness_sessions")
        .fetch_all(&db)
        .await
        .unwrap();
    assert_eq!(hashes, vec![harness_core::ids::token_hash(&id)]);

    let get = |c: String| client.get(s.url("/harness")).header("Cookie", c).send();
    assert_eq!(get(cookie.clone()).await.unwrap().status(), StatusCode::OK);
    // A state-changing call with the cookie but without Origin is refused.
    let resp = client
        .post(s.url("/sfn/overview"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = client
        .post(s.url("/sfn/overview"))
        .header("Cookie", &cookie)
        .header("Origin", &s.base)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    // Behind a TLS proxy the cookie is Secure.
    let resp = client
        .get(s.url(&format!("/login?token={}", s.admin)))
        .header("X-Forwarded-Proto", "https")
        .send()
        .await
        .unwrap();
    assert!(
        resp.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("; Secure")
    );
    let other = resp.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();

    // Logout needs an Origin, revokes this session only.
    let resp = client
        .post(s.url("/logout"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = client
        .post(s.url("/logout"))
        .header("Cookie", &cookie)
        .header("Origin", &s.base)
        .form(&[("x", "")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert!(
        resp.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    let resp = get(cookie.clone()).await.unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::SEE_OTHER,
        "a revoked session is refused"
    );
    let resp = client
        .post(s.url("/sfn/overview"))
        .header("Cookie", &cookie)
        .header("Origin", &s.base)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(get(other.clone()).await.unwrap().status(), StatusCode::OK);

    // Log out everywhere: every other browser is out too.
    let third = s.session().await;
    let resp = client
        .post(s.url("/logout"))
        .header("Cookie", &other)
        .header("Origin", &s.base)
        .form(&[("everywhere", "1")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(get(other).await.unwrap().status(), StatusCode::SEE_OTHER);
    assert_eq!(get(third).await.unwrap().status(), StatusCode::SEE_OTHER);
    // Sessions survive a restart (they are rows, not memory).
    let fresh = s.session().await;
    s.shutdown().await;
    let s = common::start(dir.path()).await;
    let resp = no_redirects()
        .get(s.url("/harness"))
        .header("Cookie", &fresh)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_logins_are_throttled_but_the_right_token_always_logs_in() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let client = no_redirects();
    let login = |token: &str| {
        client
            .post(s.url("/login"))
            .header("Origin", &s.base)
            .form(&[("token", token.to_string())])
            .send()
    };
    // Without an Origin the form is refused outright.
    let resp = client
        .post(s.url("/login"))
        .form(&[("token", s.admin.clone())])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    for _ in 0..harness_server::login::MAX_FAILURES {
        assert_eq!(
            login("wrong").await.unwrap().status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let resp = login("wrong").await.unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait));
    assert!(
        resp.text()
            .await
            .unwrap()
            .contains("Too many failed logins")
    );
    // failures cannot lock the owner out — five wrong
    // `GET /login?token=x` (an `<img>` on any local page makes them) and the
    // right token still logs in at once, by the form and by the link.
    for _ in 0..3 {
        let resp = client.get(s.url("/login?token=x")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    }
    let resp = login(&s.admin).await.unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert!(resp.headers().contains_key("set-cookie"));
    let resp = client
        .get(s.url(&format!("/login?token={}", s.admin)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    // Without `next`, Home (a newcomer's first step).
    assert_eq!(resp.headers()["location"], "/");
    // …while wrong tokens are still refused with 429.
    assert_eq!(
        login("wrong").await.unwrap().status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    // Scripts with the bearer are not affected.
    let (status, _) = s.admin("GET", "/api/tasks", None).await;
    assert_eq!(status, StatusCode::OK);
    s.shutdown().await;
}

/// A raw HTTP/1.1 request with a chosen Host (reqwest derives Host from the URL).
async fn raw(addr: std::net::SocketAddr, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebinding_host_gets_no_page_on_any_route() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let session = s.session().await;
    let port = s.running.addr.port();
    for path in [
        "/harness",
        "/tasks",
        "/",
        "/login",
        "/healthz",
        "/api/tasks",
        "/pkg/harness.js",
        "/events/harness",
        "/mcp",
    ] {
        // Even with a valid session and the admin bearer: the Host is wrong.
        let response = raw(
            s.running.addr,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: rebind.example:{port}\r\nCookie: {session}\r\n\
                 Authorization: Bearer {}\r\nConnection: close\r\n\r\n",
                s.admin
            ),
        )
        .await;
        assert!(response.starts_with("HTTP/1.1 403"), "{path}: {response}");
        assert!(response.contains("Host header is not allowed"), "{path}");
        assert!(!response.contains("<html"), "{path}");
        assert!(response.contains("x-frame-options: DENY"), "{path}");
    }
    // The same request with our own Host is served.
    let response = raw(
        s.running.addr,
        &format!(
            "GET /harness HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {session}\r\n\
             Connection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    // Origin must match in scheme too.
    let resp = no_redirects()
        .post(s.url("/sfn/overview"))
        .header("Cookie", &session)
        .header("Origin", format!("https://127.0.0.1:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_bind_logs_in_from_the_network_but_not_through_rebinding() {
    let _serial = SERIAL.lock().await;
    // The machine's own non-loopback address, if it has one.
    let Some(ip) = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| {
            s.connect("192.0.2.1:9")?;
            s.local_addr()
        })
        .ok()
        .map(|a| a.ip())
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
    else {
        eprintln!("no non-loopback address here; skipping");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut cfg =
        harness_server::ServeConfig::new(listener.local_addr().unwrap(), dir.path().to_path_buf());
    cfg.harness_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    let running = harness_server::launch(cfg, listener).await.unwrap();
    // From the network, under a name we were never told about: login works.
    let network = std::net::SocketAddr::new(ip, port);
    let response = raw(
        network,
        &format!(
            "GET /login?token={} HTTP/1.1\r\nHost: devbox.lan:{port}\r\nConnection: close\r\n\r\n",
            running.admin_token
        ),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 303"), "{response}");
    assert!(response.contains("harness_session="), "{response}");
    // Over loopback, a foreign name is still a rebinding attempt.
    let local = std::net::SocketAddr::new([127, 0, 0, 1].into(), port);
    let response = raw(
        local,
        &format!("GET /login HTTP/1.1\r\nHost: devbox.lan:{port}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_errors_are_json_and_the_database_is_private() {
    let _serial = SERIAL.lock().await;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let client = no_redirects();
    let check = |what: &'static str| {
        move |resp: reqwest::Response| async move {
            let status = resp.status();
            let kind = resp.headers()["content-type"].to_str().unwrap().to_string();
            let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap())
                .unwrap_or_else(|e| panic!("{what}: not JSON ({e})"));
            assert!(kind.starts_with("application/json"), "{what}: {kind}");
            assert!(body["error"].is_string(), "{what}: {body}");
            status
        }
    };
    let big = "x".repeat(400 * 1024);
    // The server answers 413 without reading the rest of the body and closes
    // the connection: send it on its own client so no later request reuses it.
    let resp = no_redirects()
        .post(s.url("/api/tasks"))
        .bearer_auth(&s.admin)
        .header("content-type", "application/json")
        .header("connection", "close")
        .body(format!("{{\"title\":\"{big}\"}}"))
        .send()
        .await
        .unwrap();
    assert_eq!(check("413")(resp).await, StatusCode::PAYLOAD_TOO_LARGE);
    let resp = client
        .get(s.url("/api/tasks/%FF%FE"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(
        check("invalid UTF-8 path")(resp).await,
        StatusCode::BAD_REQUEST
    );
    let resp = client
        .get(s.url("/api/no-such-route"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(check("unknown route")(resp).await, StatusCode::NOT_FOUND);
    let resp = client
        .delete(s.url("/api/tasks"))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(
        check("wrong method")(resp).await,
        StatusCode::METHOD_NOT_ALLOWED
    );
    // Database files: this user only.
    s.task("t").await;
    for name in ["harness.db", "harness.db-wal", "harness.db-shm"] {
        let path = dir.path().join(name);
        if path.exists() {
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{name}");
        }
    }
    s.shutdown().await;
}
