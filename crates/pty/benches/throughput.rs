//! PTY throughput, measured in one run (the
//! PTY read anchor of the engineering notes): `cat` of a 64 MiB `ls -l`-like file
//!   1. read directly from the file (baseline),
//!   2. through a raw portable-pty reader thread (the PTY's own rate),
//!   3. through `PtySession` (reader thread → bounded channel → terminal
//!      model + query filter → fan-out) to one subscriber,
//!
//! and the ratio 3/2 (target ≥ 0.8).
//!
//! `cargo bench -p harness-pty --bench throughput`; set `HARNESS_BENCH_MIB`
//! to change the size.

use std::io::{Read, Write};
use std::time::Instant;

use harness_pty::{OutputEvent, PtySession, SpawnSpec, SubscriberLimits};
use portable_pty::{CommandBuilder, PtySize};

fn mb_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / 1_000_000.0
}

fn make_file(dir: &std::path::Path, mib: usize) -> std::io::Result<std::path::PathBuf> {
    let path = dir.join("bench.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
    let target = mib * 1024 * 1024;
    let mut written = 0;
    let mut i = 0u64;
    while written < target {
        let line = format!(
            "-rw-r--r--  1 user group {:>9} Nov 29 20:{:02} file-{i:08}.rs\n",
            (i * 7919) % 1_000_000,
            i % 60
        );
        f.write_all(line.as_bytes())?;
        written += line.len();
        i += 1;
    }
    f.flush()?;
    Ok(path)
}

fn direct(path: &std::path::Path) -> std::io::Result<(u64, f64)> {
    let start = Instant::now();
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    Ok((total, start.elapsed().as_secs_f64()))
}

fn raw_pty(path: &std::path::Path) -> Result<(u64, f64, f64), Box<dyn std::error::Error>> {
    let pair = portable_pty::native_pty_system().openpty(PtySize {
        rows: 24,
        cols: 80,
        pixel_width: 0,
        pixel_height: 0,
    })?;
    let mut cmd = CommandBuilder::new("cat");
    cmd.arg(path);
    cmd.env_clear();
    cmd.env("PATH", "/usr/bin:/bin");
    let start = Instant::now();
    let mut child = pair.slave.spawn_command(cmd)?;
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader()?;
    let _writer = pair.master.take_writer()?;
    let mut buf = vec![0u8; 64 * 1024];
    let (mut total, mut reads) = (0u64, 0u64);
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                reads += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    child.wait()?;
    Ok((total, secs, total as f64 / reads.max(1) as f64))
}

async fn session(path: &std::path::Path) -> Result<(u64, f64, u64), Box<dyn std::error::Error>> {
    let spec = SpawnSpec::new(
        ["cat".to_owned(), path.display().to_string()],
        std::env::temp_dir(),
    );
    let start = Instant::now();
    let s = PtySession::spawn(spec).await?;
    // A consumer that keeps up (the WebSocket layer adds its own flow control).
    let mut sub = s.subscribe_with(SubscriberLimits {
        max_chunks: 1 << 16,
        max_bytes: 64 << 20,
    });
    let mut total = 0u64;
    loop {
        match sub.recv().await {
            OutputEvent::Data(d) => total += d.len() as u64,
            OutputEvent::Exited(_) => break,
            other => return Err(format!("subscription ended with {other:?}").into()),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    if total != s.bytes_out() || s.drain_timed_out() {
        eprintln!(
            "  (subscriber got {total} of {} bytes read; drain timed out: {})",
            s.bytes_out(),
            s.drain_timed_out()
        );
    }
    Ok((total, secs, s.model_skipped()))
}

/// vt100 parse rate of the same bytes (what the screen model costs).
fn model_rate(path: &std::path::Path) -> std::io::Result<f64> {
    let data = std::fs::read(path)?;
    let data: Vec<u8> = data
        .iter()
        .flat_map(|&b| {
            if b == b'\n' {
                vec![b'\r', b'\n']
            } else {
                vec![b]
            }
        })
        .collect();
    let mut m = harness_term::TerminalModel::new(24, 80);
    let start = Instant::now();
    for chunk in data.chunks(4096) {
        m.feed(chunk);
    }
    Ok(mb_per_s(data.len() as u64, start.elapsed().as_secs_f64()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let mib: usize = std::env::var("HARNESS_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let dir = tempfile::tempdir()?;
    let path = make_file(dir.path(), mib)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;

    let rounds: usize = std::env::var("HARNESS_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let (d_bytes, d_secs) = direct(&path)?;
    let direct_rate = mb_per_s(d_bytes, d_secs);
    let model = model_rate(&path)?;
    println!("pty throughput, cat of a {mib} MiB ls -l-like file, {rounds} interleaved rounds");
    println!("  direct file read             {direct_rate:>9.1} MB/s  ({d_bytes} bytes)");
    println!("  terminal model (vt100) alone {model:>9.1} MB/s");
    let (mut best_raw, mut best_fan) = (0f64, 0f64);
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let (r_bytes, r_secs, avg_read) = raw_pty(&path)?;
        let (s_bytes, s_secs, skipped) = rt.block_on(session(&path))?;
        let raw_rate = mb_per_s(r_bytes, r_secs);
        let fan_rate = mb_per_s(s_bytes, s_secs);
        println!(
            "  round {round}: raw pty {raw_rate:>6.1} MB/s (avg read {avg_read:.0} B) | PtySession → subscriber {fan_rate:>6.1} MB/s ({s_bytes} bytes, model skipped {skipped}) | ratio {:.2}",
            fan_rate / raw_rate
        );
        best_raw = best_raw.max(raw_rate);
        best_fan = best_fan.max(fan_rate);
        ratios.push(fan_rate / raw_rate);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    println!("  best raw pty read           {best_raw:>9.1} MB/s");
    println!("  best PtySession → subscriber {best_fan:>8.1} MB/s");
    println!(
        "  ratio subscriber / raw pty: best-of {:.2}, median of rounds {median:.2} (target >= 0.8)",
        best_fan / best_raw
    );
    Ok(())
}
