//! `GET /api/report?lang=` and `POST /api/report/{id}/reply?lang=`: the
//! report's phrases and a reply's outcome in English (the default) or
//! Chinese, over a real server; any other language is a 400 naming `lang`.

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
    // A reply to it is answered back in the language asked for.
    let id = zh["id"].as_str().unwrap_or_default().to_string();
    let reply = |lang: &str| format!("/api/report/{id}/reply{lang}");
    let body = serde_json::json!({"text": "yes please"});
    let (st, out) = s.admin("POST", &reply(""), Some(body.clone())).await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let en_why = out["malformed"].as_str().unwrap_or_default().to_string();
    let cjk = |t: &str| t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    assert!(!en_why.is_empty() && !cjk(&en_why), "{out}");
    let (st, out) = s
        .admin("POST", &reply("?lang=zh"), Some(body.clone()))
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let zh_why = out["malformed"].as_str().unwrap_or_default();
    assert!(cjk(zh_why), "{out}");
    let (st, out) = s.admin("POST", &reply("?lang=fr"), Some(body)).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "lang", "{out}");
    s.shutdown().await;
}
