//! Reconnect back-off: 0.5 s doubling to 8 s, with jitter so that many
//! browsers do not reconnect in lock-step after a server restart.

/// First delay (before jitter).
pub const INITIAL_MS: u32 = 500;
/// Longest delay.
pub const MAX_MS: u32 = 8_000;
/// Jitter takes up to this fraction off a delay.
pub const JITTER: f64 = 0.25;

/// Exponential back-off state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Backoff {
    attempt: u32,
}

impl Backoff {
    /// Fresh state: the next delay is [`INITIAL_MS`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Back to the first delay (after a connection delivered its snapshot).
    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    /// The delay before attempt `attempt` (0-based), without jitter.
    pub fn base_ms(attempt: u32) -> u32 {
        INITIAL_MS
            .checked_shl(attempt.min(16))
            .map_or(MAX_MS, |d| d.min(MAX_MS))
    }

    /// The next delay in milliseconds; `random` in `[0, 1)` takes up to
    /// [`JITTER`] of it off.
    pub fn next_ms(&mut self, random: f64) -> u32 {
        let base = f64::from(Self::base_ms(self.attempt));
        self.attempt = self.attempt.saturating_add(1);
        let r = if random.is_finite() {
            random.clamp(0.0, 1.0)
        } else {
            0.0
        };
        // In [0.75 · base, base]: never above the cap.
        (base * (1.0 - JITTER * r)).round() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_doubles_to_the_cap() {
        let mut b = Backoff::new();
        let got: Vec<u32> = (0..8).map(|_| b.next_ms(0.0)).collect();
        assert_eq!(got, [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000]);
    }

    #[test]
    fn jitter_stays_within_bounds() {
        for attempt in 0..40 {
            let base = Backoff::base_ms(attempt);
            for r in [0.0, 0.3, 0.999, 1.0, -5.0, 7.0, f64::NAN] {
                let mut b = Backoff { attempt };
                let d = b.next_ms(r);
                assert!(d <= base && d <= MAX_MS, "{attempt} {r} {d}");
                assert!(f64::from(d) >= f64::from(base) * (1.0 - JITTER) - 0.5);
            }
        }
        let mut b = Backoff::new();
        assert_eq!(b.next_ms(0.999_999), 375);
    }

    #[test]
    fn reset_starts_over() {
        let mut b = Backoff::new();
        for _ in 0..10 {
            b.next_ms(0.5);
        }
        b.reset();
        assert_eq!(b.next_ms(0.0), 500);
    }

    #[test]
    fn huge_attempt_counts_do_not_overflow() {
        let mut b = Backoff { attempt: u32::MAX };
        assert_eq!(b.next_ms(0.0), MAX_MS);
        assert_eq!(b.next_ms(0.0), MAX_MS);
    }
}
