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
    let mut scanner = Scanner::new(0);
    scanner.advance(chunk, |event| {
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
}
