//! Acknowledgement accounting for the server's flow control: the server
//! stops sending when more than 1 MiB is unacknowledged, so the client acks
//! at least every [`ACK_EVERY`] bytes processed and whenever it goes idle.

/// Ack after at most this many processed, unacknowledged bytes.
pub const ACK_EVERY: u64 = 64 * 1024;

/// Counts output bytes processed on one connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckCounter {
    processed: u64,
    acked: u64,
}

impl AckCounter {
    /// A counter for a new connection (everything at zero).
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `n` bytes fed to the model; returns the cumulative count to
    /// acknowledge when [`ACK_EVERY`] or more are unacknowledged.
    pub fn processed(&mut self, n: usize) -> Option<u64> {
        self.processed += n as u64;
        (self.unacked() >= ACK_EVERY).then(|| self.ack())
    }

    /// Called when the client is idle: returns the cumulative count to
    /// acknowledge when anything is unacknowledged.
    pub fn idle(&mut self) -> Option<u64> {
        (self.unacked() > 0).then(|| self.ack())
    }

    /// Bytes processed and not acknowledged yet.
    pub fn unacked(&self) -> u64 {
        self.processed - self.acked
    }

    /// Bytes processed on this connection.
    pub fn total(&self) -> u64 {
        self.processed
    }

    fn ack(&mut self) -> u64 {
        self.acked = self.processed;
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_every_64_kib_cumulatively() {
        let mut c = AckCounter::new();
        assert_eq!(c.processed(60_000), None);
        assert_eq!(c.processed(5_535), None); // 65_535: one short
        assert_eq!(c.processed(1), Some(65_536));
        assert_eq!(c.unacked(), 0);
        assert_eq!(c.processed(100), None);
        // A large frame acks at once, with the cumulative total.
        assert_eq!(c.processed(200_000), Some(265_636));
        assert_eq!(c.total(), 265_636);
    }

    #[test]
    fn idle_acks_only_the_remainder() {
        let mut c = AckCounter::new();
        assert_eq!(c.idle(), None);
        c.processed(10);
        assert_eq!(c.idle(), Some(10));
        assert_eq!(c.idle(), None);
        c.processed(0);
        assert_eq!(c.idle(), None);
        c.processed(5);
        assert_eq!(c.idle(), Some(15));
    }

    #[test]
    fn never_more_than_64_kib_unacked_after_processing() {
        let mut c = AckCounter::new();
        let mut last = 0;
        for n in [1, 4096, 65_536, 70_000, 3, 131_072, 9] {
            if let Some(a) = c.processed(n) {
                assert!(a > last);
                last = a;
            }
            assert!(c.unacked() < ACK_EVERY);
        }
    }
}
