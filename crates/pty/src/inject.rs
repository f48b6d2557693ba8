//! Exactly-once input injection (docs/decisions.md D5): a ledger of injection ids per
//! session, and the byte encoding of an injected reply (bracketed paste when
//! the application enabled it, then the submit key as a separate write).

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// Default number of remembered injection ids per session.
pub const DEFAULT_LEDGER_CAPACITY: usize = 1024;
/// Default delay between the text and the submit key.
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(80);

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// How to write injected text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PasteMode {
    /// Bracketed paste when the application enabled it (`CSI ? 2004 h`),
    /// else raw.
    #[default]
    Auto,
    /// Always wrap in bracketed-paste markers.
    Always,
    /// Always write raw.
    Never,
}

/// Options of [`crate::PtySession::inject`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InjectOptions {
    /// Press the submit key (`\r`) after the text. Trailing CR/LF of the
    /// text are then dropped (a newline-only text becomes a bare Enter).
    pub submit: bool,
    /// Delay between the text and the submit key (per provider).
    pub settle: Duration,
    /// Paste or type.
    pub paste: PasteMode,
}

impl Default for InjectOptions {
    fn default() -> Self {
        Self {
            submit: true,
            settle: DEFAULT_SETTLE,
            paste: PasteMode::Auto,
        }
    }
}

/// Result of an injection attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectOutcome {
    /// This call wrote the text (and the submit key, if asked).
    Written,
    /// The id was injected before; nothing was written.
    AlreadyInjected,
    /// Another call with the same id is writing right now; nothing written.
    InProgress,
}

/// State of an id in the ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// The caller now owns the id and must `accept` or `release` it.
    Claimed,
    Pending,
    Done,
}

/// Remembers which injection ids were written (bounded: the oldest ids are
/// forgotten first) and which are being written.
#[derive(Debug)]
pub struct InjectionLedger {
    inner: Mutex<LedgerInner>,
}

#[derive(Debug)]
struct LedgerInner {
    pending: HashSet<String>,
    done: HashSet<String>,
    order: VecDeque<String>,
    capacity: usize,
}

impl Default for InjectionLedger {
    fn default() -> Self {
        Self::new(DEFAULT_LEDGER_CAPACITY)
    }
}

impl InjectionLedger {
    /// A ledger remembering up to `capacity` written ids.
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(LedgerInner {
                pending: HashSet::new(),
                done: HashSet::new(),
                order: VecDeque::new(),
                capacity: capacity.max(1),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LedgerInner> {
        // The ledger's invariants hold between statements; a poisoned lock
        // (a panic elsewhere while holding it) leaves a usable state.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn claim(&self, id: &str) -> Claim {
        let mut inner = self.lock();
        if inner.done.contains(id) {
            Claim::Done
        } else if !inner.pending.insert(id.to_owned()) {
            Claim::Pending
        } else {
            Claim::Claimed
        }
    }

    pub(crate) fn accept(&self, id: &str) {
        let mut inner = self.lock();
        inner.pending.remove(id);
        if inner.done.insert(id.to_owned()) {
            inner.order.push_back(id.to_owned());
            while inner.order.len() > inner.capacity {
                if let Some(old) = inner.order.pop_front() {
                    inner.done.remove(&old);
                }
            }
        }
    }

    pub(crate) fn release(&self, id: &str) {
        self.lock().pending.remove(id);
    }

    /// True if `id` was written.
    pub fn was_injected(&self, id: &str) -> bool {
        self.lock().done.contains(id)
    }

    /// Number of remembered written ids.
    pub fn len(&self) -> usize {
        self.lock().done.len()
    }

    /// True when no id is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The text body to write: trailing CR/LF dropped when submitting.
pub(crate) fn body(text: &str, submit: bool) -> &str {
    if submit {
        text.trim_end_matches(['\r', '\n'])
    } else {
        text
    }
}

/// Wraps `body` in bracketed-paste markers after removing any markers inside
/// it, so pasted text cannot end the paste early and be typed as keys.
pub(crate) fn bracketed(body: &[u8]) -> Vec<u8> {
    let mut clean = body.to_vec();
    loop {
        let before = clean.len();
        clean = remove_all(&clean, PASTE_END);
        clean = remove_all(&clean, PASTE_START);
        if clean.len() == before {
            break;
        }
    }
    let mut out = Vec::with_capacity(clean.len() + 12);
    out.extend_from_slice(PASTE_START);
    out.extend_from_slice(&clean);
    out.extend_from_slice(PASTE_END);
    out
}

fn remove_all(haystack: &[u8], needle: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_claims_once() {
        let l = InjectionLedger::new(2);
        assert_eq!(l.claim("a"), Claim::Claimed);
        assert_eq!(l.claim("a"), Claim::Pending);
        l.release("a");
        assert_eq!(l.claim("a"), Claim::Claimed);
        l.accept("a");
        assert_eq!(l.claim("a"), Claim::Done);
        assert!(l.was_injected("a"));
        // Bounded: the oldest id is forgotten.
        for id in ["b", "c"] {
            assert_eq!(l.claim(id), Claim::Claimed);
            l.accept(id);
        }
        assert_eq!(l.len(), 2);
        assert!(!l.was_injected("a"));
    }

    #[test]
    fn body_trims_when_submitting() {
        assert_eq!(body("hi\r\n\n", true), "hi");
        assert_eq!(body("\n", true), "");
        assert_eq!(body("hi\n", false), "hi\n");
    }

    #[test]
    fn paste_cannot_be_broken_out_of() {
        assert_eq!(bracketed(b"ok"), b"\x1b[200~ok\x1b[201~");
        let evil = b"a\x1b[201~rm -rf /\r";
        assert_eq!(bracketed(evil), b"\x1b[200~arm -rf /\r\x1b[201~");
        // Removing one marker must not assemble another.
        let nested = b"x\x1b[20\x1b[201~1~y";
        let out = bracketed(nested);
        let inner = &out[6..out.len() - 6];
        assert!(!inner.windows(6).any(|w| w == PASTE_END || w == PASTE_START));
    }
}
