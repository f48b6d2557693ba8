//! Mode-setting sequences, kept when a flood of output has to be skipped:
//! replaying just these over a stale screen keeps the terminal's modes
//! (alternate screen, bracketed paste, cursor visibility, keypad/cursor
//! keys, mouse, scroll region, resets) right while the text is dropped.

use crate::scan::{Csi, Event, Scanner, SeqKind};

/// Appends to `out` the mode-setting sequences of a chunk of output that
/// holds only complete sequences (as [`crate::QueryFilter`] emits them):
/// DECSET/DECRST (`CSI ? … h/l`), DECSTBM (`CSI … r`), cursor style
/// (`CSI … SP q`), DECKPAM/DECKPNM (`ESC =`, `ESC >`) and RIS (`ESC c`).
pub fn mode_sequences(chunk: &[u8], out: &mut Vec<u8>) {
    ModeScanner::new().scan(chunk, out);
}

/// [`mode_sequences`] over a stream cut anywhere: a sequence split across
/// chunks is reported when it completes. Skipping output from a point where
/// the terminal is outside any sequence, and resuming the terminal only
/// where [`in_sequence`](Self::in_sequence) is false, skips exactly whole
/// sequences.
#[derive(Clone, Debug)]
pub struct ModeScanner {
    scanner: Scanner,
}

impl Default for ModeScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl ModeScanner {
    /// A scanner outside any sequence.
    pub fn new() -> Self {
        Self {
            scanner: Scanner::new(0),
        }
    }

    /// Appends to `out` the mode-setting sequences completed in `chunk`.
    pub fn scan(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        self.scanner.advance(chunk, |event| {
            if let Event::Seq {
                kind,
                bytes,
                overflow: false,
                ..
            } = event
                && is_mode(kind, bytes)
            {
                out.extend_from_slice(bytes);
            }
        });
    }

    /// True while the bytes scanned so far end inside a sequence.
    pub fn in_sequence(&self) -> bool {
        self.scanner.in_sequence()
    }
}

fn is_mode(kind: SeqKind, seq: &[u8]) -> bool {
    match kind {
        SeqKind::Esc => matches!(seq, b"\x1b=" | b"\x1b>" | b"\x1bc"),
        SeqKind::Csi => Csi::parse(seq).is_some_and(|c| {
            matches!(
                (c.prefix, c.intermediates, c.final_byte),
                (Some(b'?'), b"", b'h' | b'l') | (None, b"", b'r') | (None, b" ", b'q')
            )
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_modes() {
        let mut out = Vec::new();
        mode_sequences(
            b"text\x1b[?1049h\x1b[1;31mred\x1b[2;20r\x1b[H\x1b=\x1b[?2004h\x1b[5 q\x1bc\x1b]0;t\x07",
            &mut out,
        );
        assert_eq!(out, b"\x1b[?1049h\x1b[2;20r\x1b=\x1b[?2004h\x1b[5 q\x1bc");
    }

    #[test]
    fn a_sequence_split_across_chunks_is_kept_once() {
        let mut scanner = ModeScanner::new();
        let mut out = Vec::new();
        scanner.scan(b"text\x1b[?20", &mut out);
        assert!(scanner.in_sequence());
        scanner.scan(b"04h more\x1b[1", &mut out);
        assert!(scanner.in_sequence());
        scanner.scan(b"mred\x1b[?25l", &mut out);
        assert!(!scanner.in_sequence());
        assert_eq!(out, b"\x1b[?2004h\x1b[?25l");
    }
}
