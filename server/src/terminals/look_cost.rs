//! What the agent watcher's looks cost (`/metrics`, the `agent_watch`
//! benchmark): how many looks at a screen that printed, their wall time,
//! and the CPU time they used — measured on the looking thread
//! (`CLOCK_THREAD_CPUTIME_ID`) for one probe in [`SAMPLE_EVERY`] and
//! scaled to all looks. Wall time alone over-counts under load: a look that
//! waits for a terminal model's lock, or is preempted, uses no CPU
//! meanwhile, and the thread that ran instead is counted on its own. A
//! sample is taken on the same thread as the look (the probe's span holds
//! no `.await`), and the two clock reads it costs are paid by one probe in
//! [`SAMPLE_EVERY`] only.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One probe in this many measures its thread's CPU time.
pub(crate) const SAMPLE_EVERY: u64 = 8;

/// The counters (lock-free; read by `/metrics` and the benchmark).
#[derive(Default)]
pub(crate) struct LookCost {
    probes: AtomicU64,
    looks: AtomicU64,
    wall_nanos: AtomicU64,
    sampled_looks: AtomicU64,
    sampled_cpu_nanos: AtomicU64,
}

/// What watching cost since the start.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WatchCost {
    /// Looks at a screen that printed (screen lines, recogniser, state).
    pub looks: u64,
    /// Their summed wall time.
    pub wall: Duration,
    /// The looks whose thread CPU time was measured, and its sum.
    pub sampled: u64,
    pub sampled_cpu: Duration,
}

impl WatchCost {
    /// The looks' CPU time: the sampled looks' mean times the looks
    /// (`None` before a look was sampled, or where the thread's CPU clock
    /// cannot be read).
    pub fn cpu(&self) -> Option<Duration> {
        (self.sampled > 0).then(|| {
            Duration::from_secs_f64(
                self.sampled_cpu.as_secs_f64() / self.sampled as f64 * self.looks as f64,
            )
        })
    }

    /// The cost between `earlier` and `self`.
    pub fn since(&self, earlier: &WatchCost) -> WatchCost {
        WatchCost {
            looks: self.looks.saturating_sub(earlier.looks),
            wall: self.wall.saturating_sub(earlier.wall),
            sampled: self.sampled.saturating_sub(earlier.sampled),
            sampled_cpu: self.sampled_cpu.saturating_sub(earlier.sampled_cpu),
        }
    }
}

impl LookCost {
    /// A probe around one look's span; counted as a look only when
    /// [`Probe::looked`] was called before it drops.
    pub(crate) fn probe(&self) -> Probe<'_> {
        let n = self.probes.fetch_add(1, Ordering::Relaxed);
        Probe {
            cost: self,
            wall: Instant::now(),
            cpu: if n.is_multiple_of(SAMPLE_EVERY) {
                thread_cpu()
            } else {
                None
            },
            looked: false,
        }
    }

    pub(crate) fn read(&self) -> WatchCost {
        WatchCost {
            looks: self.looks.load(Ordering::Relaxed),
            wall: Duration::from_nanos(self.wall_nanos.load(Ordering::Relaxed)),
            sampled: self.sampled_looks.load(Ordering::Relaxed),
            sampled_cpu: Duration::from_nanos(self.sampled_cpu_nanos.load(Ordering::Relaxed)),
        }
    }
}

/// Records one look's cost when it drops (see [`LookCost::probe`]).
pub(crate) struct Probe<'a> {
    cost: &'a LookCost,
    wall: Instant,
    cpu: Option<Duration>,
    looked: bool,
}

impl Probe<'_> {
    /// The span looked at a screen.
    pub(crate) fn looked(&mut self) {
        self.looked = true;
    }
}

impl Drop for Probe<'_> {
    fn drop(&mut self) {
        if !self.looked {
            return;
        }
        let c = self.cost;
        c.looks.fetch_add(1, Ordering::Relaxed);
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        c.wall_nanos
            .fetch_add(nanos(self.wall.elapsed()), Ordering::Relaxed);
        if let Some(used) = self
            .cpu
            .and_then(|start| Some(thread_cpu()?.saturating_sub(start)))
        {
            c.sampled_looks.fetch_add(1, Ordering::Relaxed);
            c.sampled_cpu_nanos
                .fetch_add(nanos(used), Ordering::Relaxed);
        }
    }
}

/// The CPU time this thread has used (`None` where it cannot be read).
fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given, which
    // lives for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(d: Duration) {
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < d {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
    }

    #[test]
    fn only_looks_count_and_the_cpu_is_scaled_from_the_samples() {
        let cost = LookCost::default();
        assert_eq!(cost.read(), WatchCost::default());
        // A probe that did not look counts nothing.
        drop(cost.probe());
        assert_eq!(cost.read().looks, 0);
        for _ in 0..(SAMPLE_EVERY * 4) {
            let mut p = cost.probe();
            spin(Duration::from_micros(200));
            p.looked();
        }
        let read = cost.read();
        assert_eq!(read.looks, SAMPLE_EVERY * 4);
        // Busy looks: their CPU is close to their wall time (never more).
        let (wall, cpu) = (read.wall.as_secs_f64(), read.cpu().unwrap().as_secs_f64());
        assert_eq!(read.sampled, 4, "{read:?}");
        assert!(cpu <= wall * 1.05 && cpu > 0.0, "cpu {cpu} wall {wall}");
        // Sleeping looks use wall time, not CPU.
        let sleepy = LookCost::default();
        for _ in 0..SAMPLE_EVERY {
            let mut p = sleepy.probe();
            std::thread::sleep(Duration::from_millis(2));
            p.looked();
        }
        let read = sleepy.read();
        assert!(read.wall >= Duration::from_millis(16), "{read:?}");
        assert!(read.cpu().unwrap() < read.wall / 4, "{read:?}");
        // A window: its looks, its samples' mean.
        let earlier = WatchCost {
            looks: 10,
            wall: Duration::from_millis(10),
            sampled: 2,
            sampled_cpu: Duration::from_millis(12),
        };
        let later = WatchCost {
            looks: 30,
            wall: Duration::from_millis(40),
            sampled: 4,
            sampled_cpu: Duration::from_millis(14),
        };
        let w = later.since(&earlier);
        assert_eq!(
            (w.looks, w.wall, w.sampled),
            (20, Duration::from_millis(30), 2)
        );
        assert_eq!(w.cpu(), Some(Duration::from_millis(20)));
        assert_eq!(WatchCost::default().cpu(), None);
    }
}
