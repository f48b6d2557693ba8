//! The byte encoding of an injected reply and the ledger's "write once"
//! step, callable by writers outside this crate (the agent holder types
//! replies into a PTY it owns itself, with the same rules as
//! [`crate::PtySession::inject`]).

use crate::InjectionLedger;
use crate::inject::{self, Claim};

/// The submit key, written after a reply's text (after a settle delay when
/// there was text).
pub const SUBMIT_KEY: &[u8] = b"\r";

/// The bytes of `text` as a reply: trailing CR/LF dropped when `submit`,
/// wrapped in bracketed-paste markers (any markers inside removed) when
/// `paste`. Empty when nothing is left to write (a newline-only submitted
/// reply is a bare submit key, written separately).
pub fn reply_text_bytes(text: &str, submit: bool, paste: bool) -> Vec<u8> {
    let body = inject::body(text, submit);
    if body.is_empty() {
        Vec::new()
    } else if paste {
        inject::bracketed(body.as_bytes())
    } else {
        body.as_bytes().to_vec()
    }
}

/// Records `id` as written unless it was written (or is being written)
/// before: true when the caller may write it now, false for a duplicate.
/// The ledger stays bounded (its oldest ids are forgotten first).
pub fn record_once(ledger: &InjectionLedger, id: &str) -> bool {
    match ledger.claim(id) {
        Claim::Claimed => {
            ledger.accept(id);
            true
        }
        Claim::Pending | Claim::Done => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_inject() {
        assert_eq!(reply_text_bytes("hi\n", true, false), b"hi");
        assert_eq!(reply_text_bytes("hi\n", false, false), b"hi\n");
        assert_eq!(
            reply_text_bytes("hi\n", true, true),
            b"\x1b[200~hi\x1b[201~"
        );
        assert!(reply_text_bytes("\r\n", true, true).is_empty());
    }

    #[test]
    fn records_once() {
        let ledger = InjectionLedger::new(4);
        assert!(record_once(&ledger, "a"));
        assert!(!record_once(&ledger, "a"));
        assert!(ledger.was_injected("a"));
    }
}
