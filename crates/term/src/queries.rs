//! Terminal queries: sequences that make a terminal *answer* by typing into
//! the application's input. A browser terminal that receives a replayed or
//! forwarded query answers it, and that answer arrives in the agent's PTY as
//! keystrokes (phantom input, engineering-notes §C.6). So queries are
//! stripped from everything a browser receives, and OSC 52 clipboard reads
//! and title reports are never honoured.

use crate::scan::{Csi, Event, Scanner, SeqKind};

/// Longest OSC/DCS string passed through to a browser (1 MiB, the usual OSC
/// 52 payload cap). Longer strings are dropped whole.
pub const MAX_STRING_SEQUENCE: usize = 1024 * 1024;

/// True when the complete sequence `seq` (starting with `ESC`) is a terminal
/// query, or otherwise must not reach a browser terminal.
///
/// Dropped: DA1/DA2/DA3 (`CSI c`, `CSI > c`, `CSI = c`), DECID (`ESC Z`),
/// DSR/CPR (`CSI 5 n`, `CSI 6 n`, `CSI ? … n`), XTVERSION (`CSI > q`),
/// DECRQM (`CSI … $ p`), window reports (`CSI 11/13/14/15/16/18/19/20/21 t`,
/// including the title report `CSI 21 t`), kitty keyboard query (`CSI ? u`),
/// XTQMODKEYS (`CSI ? … m`), DECREQTPARM (`CSI x`), DECRQPSR (`CSI … $ w`),
/// DECRQCRA (`CSI … * y`), XTREPORTSGR (`CSI … # |`), XTSMGRAPHICS
/// (`CSI ? … S`), colour queries (OSC 4/5/10–19/21 with `?`), OSC 52
/// clipboard reads, OSC 50 (font) and OSC 1337, DECRQSS (`DCS $ q`),
/// XTGETTCAP/XTSETTCAP (`DCS + q`, `DCS + p`), and SOS/PM/APC strings.
pub fn is_query(seq: &[u8]) -> bool {
    match seq.get(1) {
        Some(b'[') => Csi::parse(seq).is_some_and(|csi| csi_is_query(&csi)),
        Some(b']') => osc_is_query(seq),
        Some(b'P') => {
            let body = &seq[2..];
            body.starts_with(b"$q") || body.starts_with(b"+q") || body.starts_with(b"+p")
        }
        Some(b'X' | b'^' | b'_') => true,
        Some(b'Z') => seq.len() == 2,
        _ => false,
    }
}

fn csi_is_query(csi: &Csi<'_>) -> bool {
    let first = csi.numbers().next().unwrap_or(0);
    match (csi.prefix, csi.intermediates, csi.final_byte) {
        (_, b"", b'c') => true,                       // DA1, DA2 (>), DA3 (=)
        (None | Some(b'?'), b"", b'n') => true,       // DSR, CPR, DECXCPR
        (Some(b'>'), b"", b'q') => true,              // XTVERSION
        (_, b"$", b'p') => true,                      // DECRQM (ANSI and DEC)
        (None, b"", b't') => is_window_report(first), // XTWINOPS reports
        (Some(b'?'), b"", b'u') => true,              // kitty keyboard flags
        (Some(b'?'), b"", b'm') => true,              // XTQMODKEYS
        (None, b"", b'x') => true,                    // DECREQTPARM
        (_, b"$", b'w') => true,                      // DECRQPSR
        (_, b"*", b'y') => true,                      // DECRQCRA (checksum)
        (_, b"#", b'|') => true,                      // XTREPORTSGR
        (Some(b'?'), b"", b'S') => true,              // XTSMGRAPHICS
        _ => false,
    }
}

fn is_window_report(op: u16) -> bool {
    matches!(op, 11 | 13 | 14 | 15 | 16 | 18 | 19 | 20 | 21)
}

fn osc_is_query(seq: &[u8]) -> bool {
    let body = &seq[2..];
    let body = body
        .strip_suffix(b"\x07")
        .or_else(|| body.strip_suffix(b"\x1b\\"))
        .unwrap_or(body);
    let mut parts = body.split(|&b| b == b';');
    let number = parts.next().unwrap_or_default();
    let asks = || body.split(|&b| b == b';').skip(1).any(|p| p == b"?");
    match number {
        b"4" | b"5" | b"10" | b"11" | b"12" | b"13" | b"14" | b"15" | b"16" | b"17" | b"18"
        | b"19" | b"21" => asks(),
        // OSC 52 ; selection ; data — data `?` is a clipboard read.
        b"52" => parts.nth(1).is_none_or(|data| data == b"?"),
        b"50" | b"1337" => true,
        _ => false,
    }
}

/// A stateful filter that removes terminal queries from a live output stream
/// before it reaches a browser. Sequences split across chunks are held back
/// until complete (bounded), so the output never ends mid-sequence unless the
/// input does; over-long strings are dropped.
#[derive(Clone, Debug)]
pub struct QueryFilter {
    scanner: Scanner,
    dropped: u64,
}

impl Default for QueryFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl QueryFilter {
    /// A new filter in the ground state.
    pub fn new() -> Self {
        Self {
            scanner: Scanner::new(MAX_STRING_SEQUENCE),
            dropped: 0,
        }
    }

    /// Filters one chunk, returning the bytes safe to forward.
    pub fn filter(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(input.len());
        self.filter_into(input, &mut out);
        out
    }

    /// Filters one chunk, appending the bytes safe to forward to `out`.
    pub fn filter_into(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let dropped = &mut self.dropped;
        self.scanner.advance(input, |event| match event {
            Event::Text(text) => out.extend_from_slice(text),
            Event::Seq {
                kind,
                bytes,
                overflow,
                ..
            } => {
                let too_long = overflow
                    && matches!(
                        kind,
                        SeqKind::Osc | SeqKind::Dcs | SeqKind::OtherString | SeqKind::Csi
                    );
                if too_long || is_query(bytes) {
                    *dropped += 1;
                } else {
                    out.extend_from_slice(bytes);
                }
            }
            Event::Abort => {}
        });
    }

    /// Number of sequences dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// True while an incomplete sequence is being held back.
    pub fn holding(&self) -> bool {
        self.scanner.in_sequence()
    }
}

/// Strips terminal queries from a complete byte string (one-shot
/// [`QueryFilter`]; an incomplete trailing sequence is dropped).
pub fn strip_queries(input: &[u8]) -> Vec<u8> {
    QueryFilter::new().filter(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_queries() {
        let queries: &[&[u8]] = &[
            b"\x1b[c",
            b"\x1b[0c",
            b"\x1b[>c",
            b"\x1b[>0c",
            b"\x1b[=c",
            b"\x1bZ",
            b"\x1b[5n",
            b"\x1b[6n",
            b"\x1b[?6n",
            b"\x1b[>q",
            b"\x1b[>0q",
            b"\x1b[?2004$p",
            b"\x1b[4$p",
            b"\x1b[21t",
            b"\x1b[14t",
            b"\x1b[18t",
            b"\x1b[?u",
            b"\x1b[?4m",
            b"\x1b[x",
            b"\x1b[1$w",
            b"\x1b[1;1;1;1;1;1*y",
            b"\x1b[#|",
            b"\x1b[?1;1S",
            b"\x1b]10;?\x07",
            b"\x1b]11;?\x1b\\",
            b"\x1b]12;?\x07",
            b"\x1b]4;1;?\x07",
            b"\x1b]52;c;?\x07",
            b"\x1b]52;?\x07",
            b"\x1b]50;?\x07",
            b"\x1b]1337;ReportCellSize\x07",
            b"\x1bP$qm\x1b\\",
            b"\x1bP+q544e\x1b\\",
            b"\x1b_Ga=q;\x1b\\",
        ];
        for q in queries {
            assert!(is_query(q), "{:?}", String::from_utf8_lossy(q));
        }
        let not_queries: &[&[u8]] = &[
            b"\x1b[m",
            b"\x1b[1;31m",
            b"\x1b[38;2;1;2;3m",
            b"\x1b[H",
            b"\x1b[2J",
            b"\x1b[?1049h",
            b"\x1b[?2004h",
            b"\x1b[2 q",
            b"\x1b[>1u",
            b"\x1b[>4;1m",
            b"\x1b[>0n",
            b"\x1b[8;24;80t",
            b"\x1b[22;0t",
            b"\x1b[1;24r",
            b"\x1b]0;title\x07",
            b"\x1b]2;title\x1b\\",
            b"\x1b]11;rgb:00/00/00\x07",
            b"\x1b]52;c;aGVsbG8=\x07",
            b"\x1b]8;;https://example.com\x07",
            b"\x1bc",
            b"\x1b7",
            b"\x1b(B",
        ];
        for q in not_queries {
            assert!(!is_query(q), "{:?}", String::from_utf8_lossy(q));
        }
    }

    #[test]
    fn filter_removes_queries_keeps_the_rest() {
        let input = b"a\x1b[6nb\x1b[1mc\x1b]11;?\x07d\x1b[>cE\x1b]52;c;?\x07\x1b[21t";
        assert_eq!(strip_queries(input), b"ab\x1b[1mcdE");
    }

    #[test]
    fn filter_handles_split_sequences() {
        let input: &[u8] = b"x\x1b]11;?\x1b\\y\x1b[38;2;1;2;3mz\x1b[c\x1b]0;t\x07";
        let whole = strip_queries(input);
        let mut f = QueryFilter::new();
        let mut piecewise = Vec::new();
        for b in input {
            f.filter_into(std::slice::from_ref(b), &mut piecewise);
        }
        assert_eq!(piecewise, whole);
        assert_eq!(whole, b"xy\x1b[38;2;1;2;3mz\x1b]0;t\x07");
        assert_eq!(f.dropped(), 2);
    }

    #[test]
    fn filter_holds_incomplete_sequence() {
        let mut f = QueryFilter::new();
        assert_eq!(f.filter(b"ab\x1b[3"), b"ab");
        assert!(f.holding());
        assert_eq!(f.filter(b"1mc"), b"\x1b[31mc");
        assert!(!f.holding());
    }

    #[test]
    fn oversized_osc_is_dropped() {
        let mut input = b"a\x1b]52;c;".to_vec();
        input.extend(std::iter::repeat_n(b'Q', MAX_STRING_SEQUENCE + 10));
        input.extend_from_slice(b"\x07b");
        assert_eq!(strip_queries(&input), b"ab");
    }
}
