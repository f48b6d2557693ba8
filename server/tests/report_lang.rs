//! `GET /api/report?lang=`: the report's phrases in English (the default)
//! or Chinese, over a real server; any other language is a 400 naming
//! `lang`.

use crate::common;

use reqwest::StatusCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_is_read_in_english_or_chinese_and_another_language_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    for bad in ["fr", "ZH", "zh-CN"] {
        let (st, out) = s
            .admin("GET", &format!("/api/report?lang={bad}"), None)
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad}: {out}");
        assert_eq!(out["field"], "lang", "{bad}: {out}");
    }
    let (st, en) = s.admin("GET", "/api/report", None).await;
    assert_eq!(st, StatusCode::OK, "{en}");
    let text = en["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Harness report, "), "{text}");
    assert!(text.ends_with("Nothing waits for you."), "{text}");
    let (st, en2) = s.admin("GET", "/api/report?lang=en", None).await;
    assert_eq!(st, StatusCode::OK, "{en2}");
    assert!(
        en2["text"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Harness report, ")
    );
    let (st, zh) = s.admin("GET", "/api/report?lang=zh", None).await;
    assert_eq!(st, StatusCode::OK, "{zh}");
    let text = zh["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Harness 报告，"), "{text}");
    assert!(text.ends_with("没有等你处理的事项。"), "{text}");
    s.shutdown().await;
}
