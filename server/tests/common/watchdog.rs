//! A test that never ends fails by name instead of holding the whole run
//! until CI's limit: each test thread that starts a server is watched, and
//! one still running after [`limit`] is named on stderr and the test
//! binary exits (libtest has no per-test timeout; one full run hung once
//! with every thread parked and no name in the log).

use std::io::Write;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Longer than the slowest test (the real CLIs' recoveries take ~3 min);
/// `HARNESS_TEST_WATCHDOG_SECS` sets another.
fn limit() -> Duration {
    let secs = std::env::var("HARNESS_TEST_WATCHDOG_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(secs)
}

thread_local! {
    /// Alive exactly as long as the test's thread: the watchdog holds a Weak.
    static ALIVE: Arc<()> = Arc::new(());
}

/// Watches the calling test thread (once per thread; later calls are free).
pub fn watch() {
    thread_local! {
        static WATCHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if WATCHED.with(|w| w.replace(true)) {
        return;
    }
    let name = std::thread::current()
        .name()
        .unwrap_or("an unnamed test thread")
        .to_string();
    let alive: Weak<()> = ALIVE.with(Arc::downgrade);
    let watched = name.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("watchdog {name}"))
        .spawn(move || {
            let name = watched;
            let (step, limit) = (Duration::from_secs(1), limit());
            let mut waited = Duration::ZERO;
            while waited < limit {
                std::thread::sleep(step);
                waited += step;
                if alive.upgrade().is_none() {
                    return;
                }
            }
            // Straight to stderr: libtest captures `eprintln!` of a thread
            // spawned by a test, and the capture is lost at the exit.
            let _ = writeln!(
                std::io::stderr(),
                "\nwatchdog: the test `{name}` is still running after {} s — it hangs; \
                 the test binary stops here so the run fails by name\n",
                limit.as_secs()
            );
            std::process::exit(124);
        });
    if let Err(e) = spawned {
        eprintln!("watchdog: could not start for {name}: {e}");
    }
}
