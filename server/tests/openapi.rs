//! `GET /api/openapi.json`: an OpenAPI 3.1 document that covers every `/api`
//! route the axum router really has (and no other), with the JSON error
//! body on every operation.

use crate::common;

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::Value;

/// The `/api` route templates as the router holds them: axum's `Debug` of a
/// router lists its path table (`RouteId(n): "/path"`). The JSON 404
/// fallback is registered by axum as `/` and `/{*__private__axum_fallback}`:
/// not routes of ours.
fn router_paths() -> BTreeSet<String> {
    let debug = format!("{:?}", harness_server::routes::api());
    let paths: BTreeSet<String> = debug
        .split("RouteId(")
        .skip(1)
        .filter_map(|piece| {
            let (_, rest) = piece.split_once("): \"")?;
            let (path, _) = rest.split_once('"')?;
            Some(path)
        })
        .filter(|path| *path != "/" && !path.contains("__private__axum_fallback"))
        .map(|path| format!("/api{path}"))
        .collect();
    assert!(
        paths.len() > 20,
        "the router's Debug output changed shape (axum upgrade?); found only {paths:?}"
    );
    paths
}

/// A concrete path for a template (`{id}` → `x`).
fn concrete(template: &str) -> String {
    template
        .split('/')
        .map(|seg| if seg.starts_with('{') { "x" } else { seg })
        .collect::<Vec<_>>()
        .join("/")
}

/// The methods the router answers on `template`: a request with a method no
/// route uses gets 405 with the route's `Allow` header.
async fn allowed_methods(s: &common::Server, template: &str) -> BTreeSet<String> {
    let probe = reqwest::Method::from_bytes(b"PROBE").unwrap();
    let resp = s
        .client
        .request(probe, s.url(&concrete(template)))
        .bearer_auth(&s.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::METHOD_NOT_ALLOWED,
        "probing {template}"
    );
    let allow = resp
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    allow
        .split(',')
        .map(|m| m.trim().to_ascii_uppercase())
        .filter(|m| !m.is_empty() && m != "HEAD")
        .collect()
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_covers_every_api_route_and_only_those() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;

    // Same credential as the rest of /api.
    let (status, body) = s.call("GET", "/api/openapi.json", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body["error"].is_string(), "{body}");
    let (status, doc) = s.admin("GET", "/api/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "{}",
        doc["openapi"]
    );

    let mut routed = BTreeSet::new();
    for template in router_paths() {
        for method in allowed_methods(&s, &template).await {
            routed.insert(format!("{method} {template}"));
        }
    }
    let paths = doc["paths"].as_object().expect("paths");
    let mut documented = BTreeSet::new();
    for (path, item) in paths {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                documented.insert(format!("{} {path}", method.to_ascii_uppercase()));
                // Every operation documents the JSON error body.
                for status in ["400", "401", "403", "404"] {
                    assert!(
                        op["responses"][status].is_object(),
                        "{method} {path} lacks the {status} response"
                    );
                }
            }
        }
    }
    let missing: Vec<_> = routed.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&routed).collect();
    assert!(
        missing.is_empty(),
        "routes missing from the OpenAPI document (annotate the handler with \
         #[utoipa::path] and list it in its module's `Api`): {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "documented operations the router does not have: {extra:?}"
    );

    // Operation ids are unique, and every response link names one of them.
    let ops: Vec<&Value> = paths
        .values()
        .flat_map(|item| METHODS.iter().filter_map(|m| item.get(*m)))
        .collect();
    let ids: BTreeSet<&str> = ops
        .iter()
        .map(|op| op["operationId"].as_str().expect("operationId"))
        .collect();
    assert_eq!(ids.len(), ops.len(), "operation ids repeat");
    let mut links = 0;
    for op in &ops {
        for response in op["responses"].as_object().unwrap().values() {
            for (name, link) in response["links"].as_object().into_iter().flatten() {
                let target = link["operationId"].as_str().unwrap_or_default();
                assert!(
                    ids.contains(target),
                    "link {name} names no operation: {link}"
                );
                links += 1;
            }
        }
    }
    assert!(links >= 10, "the create operations link to their resources");

    let error = &doc["components"]["schemas"]["ErrorBody"];
    assert_eq!(error["required"], serde_json::json!(["error"]), "{error}");
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn the_router_listing_sees_known_routes_and_each_path_is_documented() {
    // The comparison above is only as good as the router listing: a route
    // that exists must show up in it.
    let paths = router_paths();
    for expected in [
        "/api/tasks/{id}",
        "/api/internal/harness/ask",
        "/api/internal/terminal/{task_id}/input",
        "/api/openapi.json",
    ] {
        assert!(paths.contains(expected), "{expected} not in {paths:?}");
    }
    let doc: Value = serde_json::to_value(harness_server::routes::openapi_document()).unwrap();
    let documented: BTreeSet<String> = doc["paths"].as_object().unwrap().keys().cloned().collect();
    assert!(
        paths.is_subset(&documented),
        "router paths without a document entry: {:?}",
        paths.difference(&documented).collect::<Vec<_>>()
    );
}
