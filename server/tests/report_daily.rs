//! The daily report per notify target over a real server, its real store
//! and outbox, and the gateway double (which records every send): a target
//! whose time is now gets exactly one report — with two more workers (two
//! cores on the same database, as a second node's would be) racing the
//! server's own, and across a restart of the server; a target due while
//! the server was down gets its one report when it is back. A malformed
//! time or zone is a 400 naming its field, and nothing is stored. On
//! SQLite and on PostgreSQL.

use crate::common;

use std::{collections::HashSet, path::Path, time::Duration};

use chrono::{Datelike, Timelike, Utc};
use harness_core::{
    Harness, HarnessConfig,
    report::{NoWork, daily, service::DailyDue},
    settings::NotifyTarget,
};
use harness_store::AnyStore;
use reqwest::StatusCode;
use serde_json::{Value, json};

const GATEWAY: &str = env!("CARGO_BIN_EXE_harness-gateway-double");

/// The time of day `offset_minutes` east of UTC as `HH:MM`, with at least
/// ten seconds of that minute left (a target set to it is due at once).
async fn this_minute(offset_minutes: i64) -> String {
    loop {
        let now = Utc::now();
        if now.second() < 50 {
            let local = now + chrono::Duration::minutes(offset_minutes);
            return format!("{:02}:{:02}", local.hour(), local.minute());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The reports the double sent to Telegram chat `dest`.
fn reports_to(record: &Path, dest: &str) -> usize {
    common::json_lines(record)
        .iter()
        .filter(|r| {
            r["sent"] == true
                && r["target"] == format!("telegram:{dest}").as_str()
                && r["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("Harness report"))
        })
        .count()
}

fn database(data: &Path, db: Option<&str>) -> String {
    match db {
        Some(url) => url.to_string(),
        None => format!("sqlite://{}", data.join("harness.db").display()),
    }
}

async fn core(url: &str) -> Harness {
    let store = AnyStore::open(url).await.unwrap().port();
    Harness::new(store, HarnessConfig::new("x".repeat(64)))
}

fn target(label: &str, dest: &str, at: &str, zone: &str) -> Value {
    json!({"label": label, "gateway": "openclaw", "downstream": "telegram", "dest": dest,
        "scope": "unattended", "reportAt": at, "reportTimeZone": zone})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_target_due_now_gets_one_report_across_racing_workers_and_a_restart() {
    once_across_a_restart(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_target_due_now_gets_one_report_across_racing_workers_and_a_restart_on_postgres() {
    if let Some(db) = common::pg::fresh().await {
        once_across_a_restart(Some(&db.url)).await;
    }
}

async fn once_across_a_restart(db: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let record = dir.path().join("sent.jsonl");
    let s = common::start_on(&data, db.map(str::to_string)).await;
    let settings = json!({"openclaw": {"cliPath": GATEWAY,
        "env": {"GATEWAY_DOUBLE_RECORD": &record}}});
    let (st, out) = s
        .admin("PUT", "/api/settings/gateways", Some(settings))
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");

    // Due now: this minute, in UTC.
    let minute = this_minute(0).await;
    let (st, phone) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(target("phone", "-100777", &minute, "UTC")),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{phone}");
    assert_eq!(phone["reportAt"], minute.as_str());
    assert_eq!(phone["reportTimeZone"], "UTC");
    assert!(phone["reportSince"].is_string(), "{phone}");
    let phone_id = phone["id"].as_str().unwrap().to_string();

    // Two more workers on the same database race the server's for it.
    let url = database(&data, db);
    let (a, b) = (core(&url).await, core(&url).await);
    let today = Utc::now().date_naive();
    let date = jiff::civil::date(
        i16::try_from(today.year()).unwrap(),
        i8::try_from(today.month()).unwrap(),
        i8::try_from(today.day()).unwrap(),
    );
    let due = DailyDue {
        report_id: daily::report_id(&phone_id, date),
        target: phone_id.clone(),
        date: date.to_string(),
        at: Utc::now(),
    };
    let (ra, rb) = (a.reports(), b.reports());
    let (x, y) = tokio::join!(
        ra.send_daily_report(&due, &NoWork),
        rb.send_daily_report(&due, &NoWork)
    );
    let written = [x.unwrap(), y.unwrap()]
        .into_iter()
        .filter(Option::is_some)
        .count();
    assert!(written <= 1, "two workers wrote the same report");
    common::wait_until("the phone's report sent", Duration::from_secs(30), || {
        reports_to(&record, "-100777") == 1
    })
    .await;
    let report = a.store().get_report(&due.report_id).await.unwrap();
    assert!(report.is_some(), "the report is kept under its derived id");
    // Owed no more: every worker's next look finds it written.
    let owed = a
        .reports()
        .owed_daily_reports(Utc::now(), &mut HashSet::new())
        .await
        .unwrap();
    assert!(
        owed.iter().all(|d| d.report_id != due.report_id),
        "{owed:?}"
    );
    s.shutdown().await;

    // While the server is down, a second target comes due (this minute in
    // Kolkata, UTC+05:30).
    let minute = this_minute(330).await;
    let desk: NotifyTarget =
        serde_json::from_value(target("desk", "-100888", &minute, "Asia/Kolkata")).unwrap();
    a.outbox().add_notify_target(desk).await.unwrap();

    // Back up: the desk gets its report once, the phone none again.
    let s = common::start_on(&data, db.map(str::to_string)).await;
    common::wait_until("the desk's report sent", Duration::from_secs(30), || {
        reports_to(&record, "-100888") == 1
    })
    .await;
    // The turn that found the desk's owed looked at the phone's too: once
    // nothing is left to send, the phone still has its one report.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (st, rows) = s.admin("GET", "/api/outbound?limit=500", None).await;
        assert_eq!(st, StatusCode::OK, "{rows}");
        let rows = rows.as_array().unwrap().clone();
        let phone_rows = rows
            .iter()
            .filter(|r| {
                r["dedupKey"]
                    .as_str()
                    .is_some_and(|k| k.starts_with(&format!("report:{}:", due.report_id)))
            })
            .count();
        assert_eq!(
            phone_rows, 1,
            "one outbox row for the phone's report: {rows:?}"
        );
        if rows.iter().all(|r| r["state"] == "DELIVERED") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the outbox never drained: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        reports_to(&record, "-100777"),
        1,
        "the phone's report again"
    );
    assert_eq!(reports_to(&record, "-100888"), 1);
    s.shutdown().await;
}

#[tokio::test]
async fn a_malformed_time_or_zone_is_a_400_naming_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::start(dir.path()).await;
    let cases = [
        (
            target("phone", "-1", "08:00", "Mars/Olympus"),
            "reportTimeZone",
        ),
        (target("phone", "-1", "8:00", "UTC"), "reportAt"),
        (target("phone", "-1", "24:00", "UTC"), "reportAt"),
        (
            json!({"label": "phone", "gateway": "openclaw", "downstream": "telegram",
                "dest": "-1", "reportAt": "08:00"}),
            "reportTimeZone",
        ),
    ];
    for (body, field) in &cases {
        let (st, out) = s
            .admin(
                "POST",
                "/api/settings/notify-targets/add",
                Some(body.clone()),
            )
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{body}: {out}");
        assert_eq!(out["field"], *field, "{body}: {out}");
        let (st, out) = s
            .admin(
                "PUT",
                "/api/settings/notify-targets",
                Some(json!({"targets": [body]})),
            )
            .await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{body}: {out}");
        assert_eq!(out["field"], *field, "{body}: {out}");
    }
    let (st, out) = s.admin("GET", "/api/settings/notify-targets", None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(out, json!([]), "nothing stored");
    // Editing one target names the field too; off is no time.
    let (st, added) = s
        .admin(
            "POST",
            "/api/settings/notify-targets/add",
            Some(target("phone", "-1", "07:30", "Europe/Berlin")),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{added}");
    let id = added["id"].as_str().unwrap();
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/settings/notify-targets/{id}"),
            Some(target("phone", "-1", "07:30", "Europe/Berlinn")),
        )
        .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{out}");
    assert_eq!(out["field"], "reportTimeZone");
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/settings/notify-targets/{id}"),
            Some(
                json!({"label": "phone", "gateway": "openclaw", "downstream": "telegram",
                "dest": "-1"}),
            ),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    assert!(out.get("reportAt").is_none(), "off: {out}");
    assert!(out.get("reportSince").is_none(), "off: {out}");
    s.shutdown().await;
}
