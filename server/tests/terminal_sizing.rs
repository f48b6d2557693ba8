//! Terminal size with several viewers: the PTY keeps the size of
//! the largest active viewer; a phone never shrinks a desktop's terminal, and
//! the size the remaining viewers need comes back when a viewer leaves.
//! Real server, real PTY, two real WebSocket clients.

use crate::common;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, tungstenite::Message};

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(s: &common::Server, t: &str) -> Ws {
    let url = format!("ws://{}/ws/terminal/{t}", s.running.addr);
    tokio_tungstenite::connect_async(s.ws_request(&url))
        .await
        .expect("websocket")
        .0
}

async fn vote(ws: &mut Ws, rows: u16, cols: u16) {
    ws.send(Message::Text(
        json!({"type": "resize", "rows": rows, "cols": cols})
            .to_string()
            .into(),
    ))
    .await
    .expect("send resize");
}

/// Reads frames until a `size` frame says `want` (acknowledging output so
/// the server keeps sending).
async fn wait_size_frame(ws: &mut Ws, want: (u64, u64)) {
    let mut bytes = 0usize;
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(msg)) = ws.next().await {
            match msg {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(&t).unwrap_or_default();
                    if v["type"] == "size"
                        && (v["rows"].as_u64(), v["cols"].as_u64()) == (Some(want.0), Some(want.1))
                    {
                        return true;
                    }
                }
                Message::Binary(b) => {
                    bytes += b.len();
                    let ack = json!({"type": "ack", "bytes": bytes}).to_string();
                    if ws.send(Message::Text(ack.into())).await.is_err() {
                        return false;
                    }
                }
                _ => {}
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(found, "no size frame {want:?}");
}

/// Polls the PTY's size (the server's terminal model follows every resize
/// of the PTY) and the size the program itself reads (`stty size` on
/// SIGWINCH) until both are `want`.
async fn wait_pty_size(s: &common::Server, t: &str, want: (u64, u64)) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let seen = format!("SIZE {} {}", want.0, want.1);
    loop {
        let (status, screen) = s
            .admin("GET", &format!("/api/tasks/{t}/screen"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{screen}");
        let size = (
            screen["rows"].as_u64().unwrap_or(0),
            screen["cols"].as_u64().unwrap_or(0),
        );
        let text = screen["text"].as_str().unwrap_or_default();
        if size == want
            && text.lines().rev().find(|l| l.starts_with("SIZE ")) == Some(seen.as_str())
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "PTY size {size:?}, wanted {want:?}; screen:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A program that prints the size it reads from its terminal on every
/// SIGWINCH, started and ready; its task id.
async fn start_size_printer(s: &common::Server, title: &str) -> String {
    let script = "trap 'echo SIZE $(stty size)' WINCH; echo ready; while :; do sleep 0.05; done";
    let (status, task) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": title, "agent": {"provider": "command",
                "command": ["sh", "-c", script], "cwd": std::env::temp_dir()}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let t = task["id"].as_str().expect("id").to_string();
    let (status, out) = s
        .admin("POST", &format!("/api/tasks/{t}/start"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    wait_ready(s, &t).await;
    t
}

/// The program's trap is set once it printed "ready" (a resize before that
/// would reach nobody; an isolated agent starts a few ms later).
async fn wait_ready(s: &common::Server, t: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, screen) = s
            .admin("GET", &format!("/api/tasks/{t}/screen"), None)
            .await;
        if screen["text"]
            .as_str()
            .unwrap_or_default()
            .contains("ready")
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never ready: {screen}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The PTY's size stays `want` for a while (a shrink would show within it).
async fn stays(s: &common::Server, t: &str, want: (u64, u64)) {
    for _ in 0..10 {
        let (_, screen) = s
            .admin("GET", &format!("/api/tasks/{t}/screen"), None)
            .await;
        let size = (
            screen["rows"].as_u64().unwrap_or(0),
            screen["cols"].as_u64().unwrap_or(0),
        );
        assert_eq!(size, want, "the PTY changed size");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_phone_never_shrinks_the_desktop_terminal_and_sizes_come_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = common::start(&dir.path().join("data")).await;
    let t = start_size_printer(&s, "sizing").await;

    // The desktop alone: its size.
    let mut desktop = connect(&s, &t).await;
    vote(&mut desktop, 40, 160).await;
    wait_size_frame(&mut desktop, (40, 160)).await;
    wait_pty_size(&s, &t, (40, 160)).await;

    // A phone joins with 50 × 43 (taller, narrower): the PTY keeps 40 × 160
    // (no rows added either), the phone is told to draw 40 × 160 and scroll.
    let mut phone = connect(&s, &t).await;
    wait_size_frame(&mut phone, (40, 160)).await;
    vote(&mut phone, 50, 43).await;
    stays(&s, &t, (40, 160)).await;
    vote(&mut phone, 30, 43).await;
    stays(&s, &t, (40, 160)).await;

    // The desktop grows: both viewers learn the new size.
    vote(&mut desktop, 45, 170).await;
    wait_pty_size(&s, &t, (45, 170)).await;
    wait_size_frame(&mut phone, (45, 170)).await;

    // The phone leaves: nothing changes for the desktop.
    phone.close(None).await.expect("close phone");
    drop(phone);
    stays(&s, &t, (45, 170)).await;

    // The phone comes back, then the desktop leaves: the phone alone has the
    // terminal at its own size; when the desktop returns its size is back.
    let mut phone = connect(&s, &t).await;
    vote(&mut phone, 30, 43).await;
    stays(&s, &t, (45, 170)).await;
    desktop.close(None).await.expect("close desktop");
    drop(desktop);
    wait_pty_size(&s, &t, (30, 43)).await;
    wait_size_frame(&mut phone, (30, 43)).await;
    let mut desktop = connect(&s, &t).await;
    vote(&mut desktop, 40, 160).await;
    wait_pty_size(&s, &t, (40, 160)).await;
    wait_size_frame(&mut phone, (40, 160)).await;

    let (status, _) = s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    assert_eq!(status, StatusCode::OK);
    s.shutdown().await;
}

/// a viewer's resize to 10000 × 10000 (once 2.1 GB that
/// was never freed) is clamped to the one bound, 500 × 1000, on the
/// WebSocket, in the PTY (the program reads it) and in the server's model;
/// the server's memory stays bounded, and a smaller size comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_huge_resize_is_clamped_on_every_path() {
    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let s = common::start(dir.path()).await;
    let t = start_size_printer(&s, "huge").await;
    let mut ws = connect(&s, &t).await;
    vote(&mut ws, 40, 160).await;
    wait_pty_size(&s, &t, (40, 160)).await;
    let before = rss_kib();
    vote(&mut ws, 10000, 10000).await;
    wait_size_frame(&mut ws, (500, 1000)).await;
    wait_pty_size(&s, &t, (500, 1000)).await;
    let grown = rss_kib();
    eprintln!("rss {before} KiB → {grown} KiB at 500 × 1000");
    assert!(
        grown < before + 256 * 1024,
        "memory ballooned: {before} KiB → {grown} KiB"
    );
    let live = s.running.terminals.live(&t).expect("live terminal");
    // Back to a small size: the model gives the large screen's cells back.
    vote(&mut ws, 24, 80).await;
    wait_pty_size(&s, &t, (24, 80)).await;
    let cells = live.model_allocated_cells();
    assert!(
        cells < 24 * 80 * 4 + 1000 * 160,
        "the model still holds {cells} cells at 24 × 80"
    );
    let (status, _) = s.admin("POST", &format!("/api/tasks/{t}/stop"), None).await;
    assert_eq!(status, StatusCode::OK);
    s.shutdown().await;
}
