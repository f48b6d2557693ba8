//! after login `next=` keeps only a same-site path; a
//! `next` that is not one is a clean 400 page (never a redirect elsewhere,
//! never a plain-text 500) — against a real server on a real socket.

use crate::common;

use common::no_redirects;
use reqwest::StatusCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_after_login_is_a_same_site_path_or_a_clean_400() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let client = no_redirects();
    // A same-site path is kept.
    let resp = client
        .get(s.url(&format!(
            "/login?token={}&next=%2Ftasks%2Fx%3Fy%3D1",
            s.admin
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/tasks/x?y=1");
    // Everything else is refused before the token is even looked at.
    for next in [
        "%2F%0a", // "/\n": once a plain-text 500
        "%2F%0d%0aSet-Cookie:%20x%3D1",
        "%2F%2Fevil.example",    // "//evil.example"
        "%2F%5Cevil.example",    // "/\evil.example"
        "%2F%09%2Fevil.example", // "/\t/evil.example"
        "https%3A%2F%2Fevil.example",
        "%2F%ff", // not UTF-8
    ] {
        for with_token in [true, false] {
            let token = if with_token {
                format!("token={}&", s.admin)
            } else {
                String::new()
            };
            let resp = client
                .get(s.url(&format!("/login?{token}next={next}")))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "next={next}");
            assert!(resp.headers().get("location").is_none(), "next={next}");
            assert!(resp.headers().get("set-cookie").is_none(), "next={next}");
            let kind = resp.headers()["content-type"].to_str().unwrap().to_string();
            assert!(kind.starts_with("text/html"), "next={next}: {kind}");
            let body = resp.text().await.unwrap();
            assert!(body.contains("role=\"alert\""), "next={next}: {body}");
        }
    }
    // The form refuses the same way.
    let resp = client
        .post(s.url("/login"))
        .header("Origin", &s.base)
        .form(&[("token", s.admin.as_str()), ("next", "//evil.example")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(resp.headers().get("location").is_none());
    let resp = client
        .post(s.url("/login"))
        .header("Origin", &s.base)
        .form(&[("token", s.admin.as_str()), ("next", "/tasks")])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/tasks");
    s.shutdown().await;
}
