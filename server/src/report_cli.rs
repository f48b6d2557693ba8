//! `harness report [--since] [--json] [--send]`: the morning report of the
//! running server (`GET /api/report`, `POST /api/report/send`), found as
//! `harness node` finds it, with the admin token.

use serde_json::json;

use crate::node_cli::{Api, Target};

/// `since` as the query string carries it.
fn query(since: Option<&str>) -> String {
    match since.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => format!("?since={}", urlencoding(s)),
        None => String::new(),
    }
}

/// The characters of an RFC 3339 time or a duration that a query needs
/// escaped.
fn urlencoding(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '+' => "%2B".to_string(),
            ':' => "%3A".to_string(),
            ' ' => "%20".to_string(),
            '&' => "%26".to_string(),
            '#' => "%23".to_string(),
            c => c.to_string(),
        })
        .collect()
}

pub fn report(
    target: &Target,
    since: Option<&str>,
    json_out: bool,
    send: bool,
) -> anyhow::Result<()> {
    let api = Api::new(target)?;
    let (report, sent) = if send {
        let body = json!({"since": since});
        let out = api.call(reqwest::Method::POST, "/report/send", Some(body))?;
        let parts = out["outboundIds"].as_array().map_or(0, Vec::len);
        (out["report"].clone(), Some(parts))
    } else {
        let out = api.call(
            reqwest::Method::GET,
            &format!("/report{}", query(since)),
            None,
        )?;
        (out, None)
    };
    if json_out {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", report["text"].as_str().unwrap_or(""));
    }
    if let Some(parts) = sent {
        eprintln!(
            "sent to chat in {parts} part{} (report {})",
            if parts == 1 { "" } else { "s" },
            report["id"].as_str().unwrap_or("?")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_escaped_in_the_query() {
        assert_eq!(query(None), "");
        assert_eq!(query(Some(" 12h ")), "?since=12h");
        assert_eq!(
            query(Some("2026-12-05T07:00:00+01:00")),
            "?since=2026-12-05T07%3A00%3A00%2B01%3A00"
        );
    }
}
