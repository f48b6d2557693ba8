//! Typing into the PTY: an ordered, bounded queue of writes (a reply's
//! text, then its submit key after the settle delay), written without
//! blocking, and the idempotency ledger of input keys.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::time::{Duration, Instant};

use harness_pty::InjectionLedger;

use crate::protocol::{InputMode, InputOutcome};

/// Input bytes queued for the PTY at most; more is answered `Busy`.
pub const MAX_PENDING_INPUT: usize = 1024 * 1024;

struct PendingWrite {
    data: Vec<u8>,
    pos: usize,
    /// Delay after the previous write completed (the settle before the
    /// submit key).
    delay: Duration,
    due: Option<Instant>,
}

#[derive(Default)]
pub(crate) struct Typing {
    writes: VecDeque<PendingWrite>,
    bytes: usize,
    ledger: InjectionLedger,
}

impl Typing {
    /// Queues an input. `bracketed` is whether the application enabled
    /// bracketed paste (for `PasteMode::Auto`).
    pub(crate) fn input(
        &mut self,
        key: &str,
        mode: InputMode,
        data: Vec<u8>,
        bracketed: bool,
    ) -> InputOutcome {
        if !key.is_empty() && self.ledger.was_injected(key) {
            return InputOutcome::Duplicate;
        }
        let mut parts: Vec<(Vec<u8>, Duration)> = Vec::new();
        match mode {
            InputMode::Raw => parts.push((data, Duration::ZERO)),
            InputMode::Reply {
                submit,
                paste,
                settle_ms,
            } => {
                let Ok(text) = String::from_utf8(data) else {
                    return InputOutcome::Invalid;
                };
                let paste = match paste {
                    harness_pty::PasteMode::Auto => bracketed,
                    harness_pty::PasteMode::Always => true,
                    harness_pty::PasteMode::Never => false,
                };
                let body = harness_pty::reply::reply_text_bytes(&text, submit, paste);
                let settle = if body.is_empty() {
                    Duration::ZERO
                } else {
                    Duration::from_millis(settle_ms.into())
                };
                parts.push((body, Duration::ZERO));
                if submit {
                    parts.push((harness_pty::reply::SUBMIT_KEY.to_vec(), settle));
                }
            }
        }
        let len: usize = parts.iter().map(|(d, _)| d.len()).sum();
        if self.bytes + len > MAX_PENDING_INPUT {
            return InputOutcome::Busy;
        }
        if !key.is_empty() && !harness_pty::reply::record_once(&self.ledger, key) {
            return InputOutcome::Duplicate;
        }
        for (data, delay) in parts.into_iter().filter(|(d, _)| !d.is_empty()) {
            self.bytes += data.len();
            self.writes.push_back(PendingWrite {
                data,
                pos: 0,
                delay,
                due: None,
            });
        }
        InputOutcome::Accepted
    }

    /// Drops everything queued (the program is gone).
    pub(crate) fn clear(&mut self) {
        self.writes.clear();
        self.bytes = 0;
    }

    /// True when the head of the queue is due (poll the PTY for writing).
    pub(crate) fn wants_write(&self, now: Instant) -> bool {
        self.writes
            .front()
            .is_some_and(|w| w.due.is_some_and(|d| d <= now))
    }

    /// When the head of the queue is due (a head not yet timed gets its due
    /// time on the next flush, so "now").
    pub(crate) fn next_due(&self, now: Instant) -> Option<Instant> {
        self.writes.front().map(|w| w.due.unwrap_or(now))
    }

    /// Writes due input to the PTY without blocking, in order.
    pub(crate) fn flush(&mut self, master: &mut File, now: Instant) {
        while let Some(head) = self.writes.front_mut() {
            let due = *head.due.get_or_insert(now + head.delay);
            if due > now {
                return;
            }
            match master.write(&head.data[head.pos..]) {
                Ok(n) => {
                    head.pos += n;
                    self.bytes = self.bytes.saturating_sub(n);
                    if head.pos == head.data.len() {
                        self.writes.pop_front();
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::debug!(error = %e, "pty write failed: dropping queued input");
                    self.clear();
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: InputMode = InputMode::Reply {
        submit: true,
        paste: harness_pty::PasteMode::Auto,
        settle_ms: 50,
    };

    #[test]
    fn a_key_is_queued_once_and_a_full_queue_records_nothing() {
        let mut t = Typing::default();
        assert_eq!(
            t.input("k", REPLY, b"hi\n".to_vec(), true),
            InputOutcome::Accepted
        );
        assert_eq!(
            t.input("k", REPLY, b"hi".to_vec(), true),
            InputOutcome::Duplicate
        );
        // Text as bracketed paste, then the submit key on its own.
        assert_eq!(t.writes[0].data, b"\x1b[200~hi\x1b[201~");
        assert_eq!(
            (t.writes[1].data.as_slice(), t.writes[1].delay),
            (&b"\r"[..], Duration::from_millis(50))
        );
        let big = vec![b'x'; MAX_PENDING_INPUT];
        assert_eq!(
            t.input("big", InputMode::Raw, big, false),
            InputOutcome::Busy
        );
        // Busy did not record the key: it can be sent again later.
        t.clear();
        assert_eq!(
            t.input("big", InputMode::Raw, b"x".to_vec(), false),
            InputOutcome::Accepted
        );
        assert_eq!(
            t.input("bad", REPLY, vec![0xff], false),
            InputOutcome::Invalid
        );
    }
}
