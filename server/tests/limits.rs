//! A bounded flood of idle and slow-header connections
//! on loopback neither stops `/healthz` nor keeps the memory.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use harness_server::{ServeConfig, launch, serve::Limits};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

const CAP: usize = 300;
const TIMEOUT: Duration = Duration::from_secs(1);

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// `GET /healthz` on a fresh connection; the time to the full answer.
async fn healthz(addr: SocketAddr) -> Duration {
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    started.elapsed()
}

/// Waits (with a deadline) until the server closes `s`.
async fn closed_by_server(mut s: TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // a 408 or similar before the close
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_and_slow_header_flood_leaves_healthz_answering_and_memory_returns() {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut cfg = ServeConfig::new(addr, dir.path().to_path_buf());
    cfg.harness_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    cfg.limits = Limits {
        max_connections: CAP,
        header_read_timeout: TIMEOUT,
        ..Limits::default()
    };
    let running = launch(cfg, listener).await.unwrap();
    for _ in 0..20 {
        healthz(addr).await;
    }
    let baseline = rss_kib();

    // 200 idle connections and 60 that trickle a request head byte by byte.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut slow = Vec::new();
    for _ in 0..60 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(s);
    }
    let trickle = tokio::spawn(async move {
        for _ in 0..20 {
            for s in slow.iter_mut() {
                let _ = s.write_all(b"a").await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        slow
    });
    // A keep-alive client that goes quiet after one request.
    let mut kept = TcpStream::connect(addr).await.unwrap();
    kept.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = [0u8; 512];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));

    // While they are all open, health answers at once.
    for _ in 0..5 {
        let took = healthz(addr).await;
        assert!(
            took < Duration::from_millis(100),
            "/healthz took {took:?} during the flood"
        );
    }
    // Past the cap, the oldest connections that never sent a request make
    // room: new clients, /healthz included, are still served at once.
    let mut over = Vec::new();
    for _ in 0..100 {
        over.push(TcpStream::connect(addr).await.unwrap());
    }
    for _ in 0..5 {
        let took = healthz(addr).await;
        assert!(
            took < Duration::from_millis(100),
            "/healthz took {took:?} at the cap"
        );
    }
    let oldest: Vec<TcpStream> = idle.drain(..80).collect();
    let mut evicted = 0;
    for s in oldest {
        if closed_by_server(s, Duration::from_millis(300)).await {
            evicted += 1;
        }
    }
    assert!(
        evicted >= 60,
        "only {evicted} of the oldest idle connections made room"
    );

    // Idle, slow-header and quiet keep-alive connections are all closed by the server.
    let slow = trickle.await.unwrap();
    let within = TIMEOUT * 4;
    let mut open = 0;
    for s in idle.into_iter().chain(slow).chain(over).chain([kept]) {
        if !closed_by_server(s, within).await {
            open += 1;
        }
    }
    assert_eq!(
        open, 0,
        "{open} flood connections were never closed by the server"
    );

    // Service is back, and memory is near where it started.
    for _ in 0..5 {
        let took = healthz(addr).await;
        assert!(
            took < Duration::from_millis(100),
            "/healthz took {took:?} after the flood"
        );
    }
    let after = rss_kib();
    eprintln!("rss baseline {baseline} KiB, after the flood {after} KiB");
    assert!(
        after < baseline + 16 * 1024,
        "memory did not come back: {baseline} KiB → {after} KiB"
    );
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn event_streams_are_capped_apart_from_connections() {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut cfg = ServeConfig::new(addr, dir.path().to_path_buf());
    cfg.harness_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    cfg.limits = Limits {
        max_event_streams: 1,
        ..Limits::default()
    };
    let running = launch(cfg, listener).await.unwrap();
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/events/harness");
    let first = client
        .get(&url)
        .bearer_auth(&running.admin_token)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), reqwest::StatusCode::OK);
    let second = client
        .get(&url)
        .bearer_auth(&running.admin_token)
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    drop(first);
    // The slot comes back when the stream ends (its pump notices the close).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let again = client
            .get(&url)
            .bearer_auth(&running.admin_token)
            .send()
            .await
            .unwrap();
        if again.status() == reqwest::StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "the stream slot never came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    running.shutdown().await.unwrap();
}

/// more connections than the cap, each sending a request
/// head and then one body byte now and then (once 1100 of them held all 1024
/// slots and `/healthz` was refused for 45 s). `/healthz` answers at once
/// throughout, and the server closes every slow-body connection once its
/// body is overdue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_flood_past_the_cap_leaves_healthz_answering() {
    const SLOW_CAP: usize = 100;
    const BODY_TIMEOUT: Duration = Duration::from_secs(2);
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut cfg = ServeConfig::new(addr, dir.path().to_path_buf());
    cfg.harness_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    cfg.limits = Limits {
        max_connections: SLOW_CAP,
        header_read_timeout: Duration::from_secs(30),
        body_read_timeout: BODY_TIMEOUT,
        ..Limits::default()
    };
    let running = launch(cfg, listener).await.unwrap();
    healthz(addr).await;

    // 130 connections (past the cap of 100): a complete head of a form post
    // that reads its body, then one byte of a 100 kB body.
    let head = format!(
        "POST /login HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nt"
    );
    let started = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..130 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(head.as_bytes()).await.unwrap();
        slow.push(s);
    }
    let trickle = tokio::spawn(async move {
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            for s in slow.iter_mut() {
                let _ = s.write_all(b"o").await;
            }
        }
        slow
    });
    // Throughout the flood, /healthz answers at once on a new connection
    // (first a moment for the server to read every head: without the fix
    // the slots are all held from then on and /healthz is reset).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut checks = 0;
    while started.elapsed() < BODY_TIMEOUT + Duration::from_secs(1) {
        let took = tokio::time::timeout(Duration::from_secs(5), healthz(addr))
            .await
            .expect("/healthz did not answer during the slow-body flood");
        assert!(
            took < Duration::from_millis(500),
            "/healthz took {took:?} during the slow-body flood"
        );
        checks += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(checks >= 10);
    // Every slow-body connection is closed by the server (evicted at the
    // cap, or answered and closed once its body is overdue).
    let slow = trickle.await.unwrap();
    let mut open = 0;
    for s in slow {
        if !closed_by_server(s, BODY_TIMEOUT * 2).await {
            open += 1;
        }
    }
    assert_eq!(open, 0, "{open} slow-body connections were never closed");
    for _ in 0..5 {
        let took = healthz(addr).await;
        assert!(
            took < Duration::from_millis(100),
            "/healthz took {took:?} after"
        );
    }
    running.shutdown().await.unwrap();
}

/// A body that arrives in time is served normally (the deadline covers a
/// body, not a connection: keep-alive requests after it are fine).
#[tokio::test]
async fn a_body_that_arrives_in_time_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut cfg = ServeConfig::new(addr, dir.path().to_path_buf());
    cfg.harness_bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    cfg.limits = Limits {
        body_read_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let running = launch(cfg, listener).await.unwrap();
    let client = reqwest::Client::new();
    for _ in 0..3 {
        let resp = client
            .post(format!("http://{addr}/api/projects"))
            .bearer_auth(&running.admin_token)
            .json(&serde_json::json!({"name": "p", "path": dir.path()}))
            .send()
            .await
            .unwrap();
        assert!(resp.status().as_u16() < 500, "{}", resp.status());
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    running.shutdown().await.unwrap();
}
