//! Node-to-node calls: a route under `/internal/node/` answers
//! only a request signed with the node key (`secrets/node.key`, shared by the
//! nodes of a cluster through a shared secrets directory or
//! `HARNESS_NODE_KEY`); no session, admin token, gateway key or replayed
//! signature passes, and the Host rule of every route still holds.

use crate::common;

use harness_server::node_call::NodeClient;
use reqwest::StatusCode;

fn signed(s: &common::Server, key: &[u8], path: &str) -> reqwest::RequestBuilder {
    let mut req = s.client.get(s.url(path));
    for (name, value) in NodeClient::new(key.to_vec()).sign("GET", path, b"") {
        req = req.header(name, value);
    }
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_call_signed_with_the_node_key_passes() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("cluster-secrets");
    let a = common::start_with(&dir.path().join("a"), |cfg| {
        cfg.secrets.dir = Some(shared.clone());
    })
    .await;
    let node_key = std::fs::read_to_string(shared.join("node.key")).unwrap();
    let node_key = node_key.trim().as_bytes().to_vec();
    let internal_key = std::fs::read_to_string(shared.join("internal-api.key")).unwrap();
    let task = a.task("screen me").await;
    let path = format!("/internal/node/tasks/{task}/screen");

    // Nothing, the admin token, a browser session: 401 (a node's credential only).
    let resp = a.client.get(a.url(&path)).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let resp = a
        .client
        .get(a.url(&path))
        .bearer_auth(&a.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let cookie = a.session().await;
    let resp = a
        .client
        .get(a.url(&path))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // The gateways' key (signed requests of the gateway routes) is not a node's.
    let resp = signed(&a, internal_key.trim().as_bytes(), &path)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // Signed for another path.
    let mut moved = a.client.get(a.url(&path));
    for (name, value) in NodeClient::new(node_key.clone()).sign("GET", "/internal/node/x", b"") {
        moved = moved.header(name, value);
    }
    assert_eq!(
        moved.send().await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );

    // The node key: through (no terminal here: 404, the route's own answer).
    let headers = NodeClient::new(node_key.clone()).sign("GET", &path, b"");
    let mut req = a.client.get(a.url(&path));
    for (name, value) in headers.clone() {
        req = req.header(name, value);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("No active terminal"),
        "{body}"
    );
    // The same signature again: a replay.
    let mut again = a.client.get(a.url(&path));
    for (name, value) in headers {
        again = again.header(name, value);
    }
    assert_eq!(again.send().await.unwrap().status(), StatusCode::CONFLICT);
    // A Host this node is not: refused before anything else.
    let resp = signed(&a, &node_key, &path)
        .header("host", "rebind.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    // A cross-origin page cannot use it either.
    let resp = signed(&a, &node_key, &path)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);

    // A second node on the same secrets directory holds the same key.
    let b = common::start_with(&dir.path().join("b"), |cfg| {
        cfg.secrets.dir = Some(shared.clone());
    })
    .await;
    assert_eq!(a.admin, b.admin, "one admin token for the cluster");
    let resp = signed(&b, &node_key, &path).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    b.shutdown().await;
    a.shutdown().await;
}

/// A node called by the name in its `--node-url` accepts that `Host` (the
/// other nodes use it); any other name is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_accepts_the_host_of_its_own_node_url() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("cluster-secrets");
    let a = common::start_with(&dir.path().join("a"), |cfg| {
        cfg.secrets.dir = Some(shared.clone());
        cfg.node_url = Some(format!("http://node-a.example:{}", cfg.bind.port()));
    })
    .await;
    let key = std::fs::read_to_string(shared.join("node.key")).unwrap();
    let task = a.task("by name").await;
    let path = format!("/internal/node/tasks/{task}/screen");
    let port = a.running.addr.port();
    let resp = signed(&a, key.trim().as_bytes(), &path)
        .header("host", format!("node-a.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND, "through to the route");
    let resp = signed(&a, key.trim().as_bytes(), &path)
        .header("host", format!("node-b.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    a.shutdown().await;
}
