//! Costs of a holder, measured in one run (not a timed test):
//!
//! 1. one idle holder with a child (`sleep`), attached and not: its RSS,
//!    thread count, CPU ticks and context switches over a few idle seconds
//!    (read from `/proc/<pid>/status` and `/proc/<pid>/stat`);
//! 2. `HARNESS_BENCH_HOLDERS` (default 100) holders: private memory per
//!    holder and the time to re-attach to all of them at once;
//! 3. throughput of `cat` of an `ls -l`-like file through a raw PTY read,
//!    and PTY → holder → client (the tokio client, every byte delivered),
//!    and their ratio.
//!
//! `cargo run --release -p harness-holder --example measure`; set
//! `HARNESS_BENCH_MIB` to change the size (default 64). The example is its
//! own `hold` binary: `measure hold <args>` runs a holder.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use harness_holder::{HoldConfig, HolderClient, HolderEvent, spawn_holder};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some("hold".as_ref()) {
        return harness_holder::hold::run(args, "measure");
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(measure()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("measure failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn env() -> Vec<(OsString, OsString)> {
    vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("TERM".into(), "xterm-256color".into()),
    ]
}

async fn holder(dir: &Path, argv: &[&str]) -> Res<(HolderClient, harness_holder::HolderEvents)> {
    let mut cfg = HoldConfig::new(dir, argv.iter().map(OsString::from).collect());
    // A measurement that stops half-way leaves no holder for long.
    cfg.orphan_timeout = Duration::from_secs(120);
    let exe = std::env::current_exe()?;
    let socket = spawn_holder(&exe, &["hold".into()], &cfg, env(), Duration::from_secs(10)).await?;
    Ok(HolderClient::connect(&socket, "measure").await?)
}

/// `(field, value)` lines of `/proc/<pid>/status` that matter here.
fn status(pid: u32) -> Res<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let keep = ["VmRSS", "RssAnon", "RssFile", "Threads"];
    Ok(text
        .lines()
        .filter(|l| keep.iter().any(|k| l.starts_with(k)))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(", "))
}

/// utime + stime in clock ticks, and voluntary context switches.
fn cpu(pid: u32) -> Res<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after = &stat[stat.rfind(')').ok_or("stat")? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = f[11].parse::<u64>()? + f[12].parse::<u64>()?;
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let switches = text
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .ok_or("ctxt")?
        .trim()
        .parse()?;
    Ok((ticks, switches))
}

async fn idle() -> Res<()> {
    let tmp = tempfile::tempdir()?;
    let (client, mut events) = holder(&tmp.path().join("run"), &["sleep", "1000"]).await?;
    let info = client.info().clone();
    client.attach(None).await?;
    let _ = events.next().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    println!("idle holder (pid {}), attached:", info.holder_pid);
    println!("  holder: {}", status(info.holder_pid)?);
    println!("  child (sleep): {}", status(info.child_pid)?);
    let before = cpu(info.holder_pid)?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = cpu(info.holder_pid)?;
    println!(
        "  over 5 s idle, attached: {} CPU ticks, {} wakeups",
        after.0 - before.0,
        after.1 - before.1
    );
    drop((client, events));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = cpu(info.holder_pid)?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = cpu(info.holder_pid)?;
    println!(
        "  over 5 s idle, detached: {} CPU ticks, {} wakeups; {}",
        after.0 - before.0,
        after.1 - before.1,
        status(info.holder_pid)?
    );
    let _ = Command::new("kill")
        .args([
            "-9",
            &info.holder_pid.to_string(),
            &info.child_pid.to_string(),
        ])
        .status();
    Ok(())
}

fn make_file(path: &Path, mib: usize) -> Res<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let target = mib * 1024 * 1024;
    let (mut written, mut i) = (0usize, 0u64);
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
    Ok(written as u64)
}

/// `cat path` on a fresh PTY, read by one blocking thread: bytes (after the
/// PTY's `\n` → `\r\n`) and seconds from the first byte to EOF.
fn raw_pty(path: &Path) -> Res<(u64, f64)> {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: valid out-pointers; null name/termios; `size` is only read.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: openpty succeeded; both descriptors are ours.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = Command::new("cat")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::null())
        .spawn()?;
    drop(slave);
    let mut master = std::fs::File::from(master);
    let mut buf = vec![0u8; 64 * 1024];
    let (mut total, mut start) = (0u64, None);
    loop {
        match master.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                start.get_or_insert_with(Instant::now);
                total += n as u64;
            }
        }
    }
    child.wait()?;
    Ok((total, start.map_or(0.0, |s| s.elapsed().as_secs_f64())))
}

/// The same through a holder: bytes and seconds from the first output byte
/// to the exit frame.
async fn through_holder(path: &Path) -> Res<(u64, f64)> {
    let tmp = tempfile::tempdir()?;
    let script = format!("sleep 0.3; exec cat '{}'", path.display());
    let (client, mut events) = holder(&tmp.path().join("run"), &["sh", "-c", &script]).await?;
    let (own_before, _) = cpu(std::process::id())?;
    client.attach(Some(0)).await?;
    let (mut total, mut start, mut frames) = (0u64, None, 0u64);
    while let Some(event) = events.next().await {
        match event {
            HolderEvent::Output { data, .. } => {
                start.get_or_insert_with(Instant::now);
                frames += 1;
                total += data.len() as u64;
            }
            HolderEvent::Exit { .. } => break,
            HolderEvent::Snapshot { lagged: true, .. } => return Err("the client lagged".into()),
            _ => {}
        }
    }
    let secs = start.map_or(0.0, |s| s.elapsed().as_secs_f64());
    let (ticks, _) = cpu(client.info().holder_pid)?;
    let (own, _) = cpu(std::process::id())?;
    println!(
        "    holder run: {total} bytes in {frames} frames, {secs:.2} s; CPU: holder {:.2} s, client {:.2} s",
        ticks as f64 / 100.0,
        (own - own_before) as f64 / 100.0
    );
    client.ack_exit().await?;
    Ok((total, secs))
}

/// `n` holders with a `sleep` each: their summed private memory, and the
/// time to re-attach to all of them at once (connect, hello, attach, first
/// stream event), as a restarted server would.
async fn many(n: usize) -> Res<()> {
    let tmp = tempfile::tempdir()?;
    let exe = std::env::current_exe()?;
    let mut sockets = Vec::new();
    let mut pids = Vec::new();
    let started = Instant::now();
    for i in 0..n {
        let mut cfg = HoldConfig::new(
            tmp.path().join(format!("run{i}")),
            vec!["sleep".into(), "1000".into()],
        );
        cfg.orphan_timeout = Duration::from_secs(120);
        let socket =
            spawn_holder(&exe, &["hold".into()], &cfg, env(), Duration::from_secs(30)).await?;
        sockets.push(socket);
    }
    println!(
        "{n} holders started in {:.2} s (one after the other)",
        started.elapsed().as_secs_f64()
    );
    let reattach = |sockets: Vec<std::path::PathBuf>| async move {
        let start = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for socket in sockets {
            tasks.spawn(async move {
                let (client, mut events) = HolderClient::connect(&socket, "measure").await?;
                client.attach(None).await?;
                events.next().await.ok_or("no event")?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(client)
            });
        }
        let mut clients = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            clients.push(
                joined
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())?,
            );
        }
        Ok::<_, String>((start.elapsed(), clients))
    };
    let (first, clients) = reattach(sockets.clone()).await?;
    for c in &clients {
        pids.push((c.info().holder_pid, c.info().child_pid));
    }
    drop(clients);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (again, clients) = reattach(sockets).await?;
    let mut anon = 0u64;
    let mut rss = 0u64;
    let mut threads = 0u64;
    for (holder, _) in &pids {
        let text = std::fs::read_to_string(format!("/proc/{holder}/status"))?;
        let field = |name: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        anon += field("RssAnon:");
        rss += field("VmRSS:");
        threads += field("Threads:");
    }
    println!(
        "  attach to all {n}: {:.0} ms; re-attach after the first server left: {:.0} ms",
        first.as_secs_f64() * 1000.0,
        again.as_secs_f64() * 1000.0
    );
    println!(
        "  per holder: RssAnon {} kB, VmRSS {} kB, {:.1} threads",
        anon / n as u64,
        rss / n as u64,
        threads as f64 / n as f64
    );
    drop(clients);
    for (holder, child) in pids {
        let _ = Command::new("kill")
            .args(["-9", &holder.to_string(), &child.to_string()])
            .status();
    }
    Ok(())
}

async fn measure() -> Res<()> {
    idle().await?;
    let n: usize = std::env::var("HARNESS_BENCH_HOLDERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    if n > 0 {
        many(n).await?;
    }
    let mib: usize = std::env::var("HARNESS_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let tmp = tempfile::tempdir()?;
    let file = tmp.path().join("bench.txt");
    let size = make_file(&file, mib)?;
    println!("throughput, cat of {size} bytes, 3 interleaved rounds:");
    let mbps = |bytes: u64, secs: f64| bytes as f64 / secs / 1e6;
    let mut raw_best: f64 = 0.0;
    let mut held_best: f64 = 0.0;
    let mut ratios = Vec::new();
    for _ in 0..3 {
        let path = file.clone();
        let (bytes, secs) =
            tokio::task::spawn_blocking(move || raw_pty(&path).map_err(|e| e.to_string()))
                .await??;
        raw_best = raw_best.max(mbps(bytes, secs));
        let (hbytes, hsecs) = through_holder(&file).await?;
        if hbytes != bytes {
            return Err(format!("holder delivered {hbytes} bytes, raw read {bytes}").into());
        }
        held_best = held_best.max(mbps(hbytes, hsecs));
        let (raw, held) = (mbps(bytes, secs), mbps(hbytes, hsecs));
        println!(
            "  round: raw {raw:6.1} MB/s, through the holder {held:6.1} MB/s, ratio {:.2}",
            held / raw
        );
        ratios.push(held / raw);
    }
    ratios.sort_by(f64::total_cmp);
    println!("  raw PTY read:          {raw_best:8.1} MB/s");
    println!("  PTY → holder → client: {held_best:8.1} MB/s");
    println!(
        "  ratio holder/raw:      {:8.2} best-of, {:.2} median of rounds",
        held_best / raw_best,
        ratios[ratios.len() / 2]
    );
    Ok(())
}
