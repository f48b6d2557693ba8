//! An incremental scanner that splits a terminal byte stream into plain text
//! and escape sequences, following the state machine of `vte` (the parser
//! inside `vt100`) closely enough that both agree on where a sequence starts
//! and ends.
//!
//! Only 7-bit introducers (`ESC`) are recognised, like `vte`: a UTF-8 encoded
//! C1 control is text to both. Sequences may be split across chunks; the
//! scanner keeps the bytes of the sequence in progress in a bounded buffer.

/// What kind of escape sequence was completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeqKind {
    /// `ESC [` … final byte.
    Csi,
    /// `ESC ]` … `BEL` or `ESC \`.
    Osc,
    /// `ESC P` … `ESC \`.
    Dcs,
    /// `ESC X`, `ESC ^`, `ESC _` (SOS, PM, APC) … `ESC \`.
    OtherString,
    /// Any other `ESC` sequence (`ESC c`, `ESC 7`, `ESC ( B`, …).
    Esc,
}

/// One step of scanner output.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// Plain bytes (text and C0 controls outside sequences), in order.
    Text(&'a [u8]),
    /// A complete sequence. `bytes` holds it from its `ESC` on (truncated when
    /// `overflow` is set); `end` is the offset in the current chunk just past
    /// its last byte. (A string ended by an `ESC` that starts the next
    /// sequence reports `end` just past that `ESC`; CSI and ESC sequences
    /// always end on a byte of the current chunk, so `end >= 1` for them.)
    Seq {
        kind: SeqKind,
        bytes: &'a [u8],
        overflow: bool,
        end: usize,
    },
    /// The sequence in progress was abandoned (ESC, CAN or SUB inside it);
    /// a terminal ignores it.
    Abort,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscIntermediate,
    Csi,
    Osc,
    OscEsc,
    Str(SeqKind),
    StrEsc(SeqKind),
}

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// The incremental scanner. Cheap to create; holds at most `cap` bytes of a
/// sequence in progress (CSI and short `ESC` sequences are capped at
/// `SHORT_CAP` regardless).
#[derive(Clone, Debug)]
pub(crate) struct Scanner {
    state: State,
    buf: Vec<u8>,
    overflow: bool,
    string_cap: usize,
}

/// CSI and plain ESC sequences longer than this are junk; they are marked as
/// overflowed (xterm ignores them too).
const SHORT_CAP: usize = 256;

impl Scanner {
    /// A scanner that keeps up to `string_cap` bytes of OSC/DCS strings.
    pub(crate) fn new(string_cap: usize) -> Self {
        Self {
            state: State::Ground,
            buf: Vec::new(),
            overflow: false,
            string_cap: string_cap.max(SHORT_CAP),
        }
    }

    /// True while a sequence is incomplete (its bytes are held back).
    pub(crate) fn in_sequence(&self) -> bool {
        self.state != State::Ground
    }

    fn begin(&mut self, state: State) {
        self.buf.clear();
        self.buf.push(ESC);
        self.overflow = false;
        self.state = state;
    }

    fn push(&mut self, b: u8) {
        let cap = match self.state {
            State::Osc | State::OscEsc | State::Str(_) | State::StrEsc(_) => self.string_cap,
            _ => SHORT_CAP,
        };
        if self.buf.len() < cap {
            self.buf.push(b);
        } else {
            self.overflow = true;
        }
    }

    /// Scans `input`, reporting text runs and complete sequences in order.
    pub(crate) fn advance(&mut self, input: &[u8], mut on: impl FnMut(Event<'_>)) {
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Ground {
                let rest = &input[i..];
                let n = memchr::memchr(ESC, rest).unwrap_or(rest.len());
                if n > 0 {
                    on(Event::Text(&rest[..n]));
                }
                i += n;
                if i < input.len() {
                    self.begin(State::Escape);
                    i += 1;
                }
                continue;
            }
            let b = input[i];
            match self.state {
                State::Ground => {}
                State::Escape | State::EscIntermediate => match b {
                    ESC => {
                        on(Event::Abort);
                        self.begin(State::Escape);
                    }
                    CAN | SUB => {
                        on(Event::Abort);
                        self.state = State::Ground;
                        on(Event::Text(&input[i..=i]));
                    }
                    b'[' if self.state == State::Escape => {
                        self.push(b);
                        self.state = State::Csi;
                    }
                    b']' if self.state == State::Escape => {
                        self.push(b);
                        self.state = State::Osc;
                    }
                    b'P' if self.state == State::Escape => {
                        self.push(b);
                        self.state = State::Str(SeqKind::Dcs);
                    }
                    b'X' | b'^' | b'_' if self.state == State::Escape => {
                        self.push(b);
                        self.state = State::Str(SeqKind::OtherString);
                    }
                    0x20..=0x2f => {
                        self.push(b);
                        self.state = State::EscIntermediate;
                    }
                    0x30..=0x7e => {
                        self.push(b);
                        self.finish(SeqKind::Esc, i + 1, &mut on);
                    }
                    0x80..=0xff => {
                        // Not a sequence after all; vte returns to ground.
                        on(Event::Abort);
                        self.state = State::Ground;
                        continue; // reprocess this byte as text
                    }
                    _ => self.push(b), // C0 controls and DEL inside an escape
                },
                State::Csi => match b {
                    ESC => {
                        on(Event::Abort);
                        self.begin(State::Escape);
                    }
                    CAN | SUB => {
                        on(Event::Abort);
                        self.state = State::Ground;
                        on(Event::Text(&input[i..=i]));
                    }
                    0x40..=0x7e => {
                        self.push(b);
                        self.finish(SeqKind::Csi, i + 1, &mut on);
                    }
                    _ => self.push(b),
                },
                State::Osc => match b {
                    BEL => {
                        self.push(b);
                        self.finish(SeqKind::Osc, i + 1, &mut on);
                    }
                    ESC => self.state = State::OscEsc,
                    CAN | SUB => {
                        on(Event::Abort);
                        self.state = State::Ground;
                        on(Event::Text(&input[i..=i]));
                    }
                    _ => self.push(b),
                },
                State::Str(kind) => match b {
                    ESC => self.state = State::StrEsc(kind),
                    CAN | SUB => {
                        on(Event::Abort);
                        self.state = State::Ground;
                        on(Event::Text(&input[i..=i]));
                    }
                    _ => self.push(b),
                },
                State::OscEsc | State::StrEsc(_) => {
                    let kind = match self.state {
                        State::StrEsc(k) => k,
                        _ => SeqKind::Osc,
                    };
                    if b == b'\\' {
                        // String terminator: ESC \ belongs to the string.
                        self.state = State::Str(kind);
                        self.push(ESC);
                        self.push(b);
                        self.finish(kind, i + 1, &mut on);
                    } else {
                        // The ESC ends the string and starts a new sequence.
                        self.finish(kind, i, &mut on);
                        self.begin(State::Escape);
                        continue; // reprocess this byte in the Escape state
                    }
                }
            }
            i += 1;
        }
    }

    fn finish(&mut self, kind: SeqKind, end: usize, on: &mut impl FnMut(Event<'_>)) {
        on(Event::Seq {
            kind,
            bytes: &self.buf,
            overflow: self.overflow,
            end,
        });
        self.state = State::Ground;
        self.buf.clear();
        self.overflow = false;
    }
}

/// A parsed CSI sequence: `ESC [ <prefix>? <params> <intermediates> <final>`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Csi<'a> {
    /// Private-parameter marker (`<`, `=`, `>`, `?`), if any.
    pub(crate) prefix: Option<u8>,
    /// Raw parameter bytes (digits, `;`, `:`).
    pub(crate) params: &'a [u8],
    /// Intermediate bytes (0x20–0x2f).
    pub(crate) intermediates: &'a [u8],
    /// Final byte.
    pub(crate) final_byte: u8,
}

impl<'a> Csi<'a> {
    /// Parses the bytes of a complete CSI (starting with `ESC [`).
    pub(crate) fn parse(bytes: &'a [u8]) -> Option<Self> {
        let body = bytes.strip_prefix(b"\x1b[")?;
        let (&final_byte, body) = body.split_last()?;
        // C0 controls inside a CSI are executed by the terminal, not part of it.
        let (prefix, rest) = match body.first() {
            Some(&p @ (b'<' | b'=' | b'>' | b'?')) => (Some(p), &body[1..]),
            _ => (None, body),
        };
        let split = rest
            .iter()
            .position(|b| (0x20..=0x2f).contains(b))
            .unwrap_or(rest.len());
        Some(Self {
            prefix,
            params: &rest[..split],
            intermediates: &rest[split..],
            final_byte,
        })
    }

    /// The first sub-parameter of each `;`-separated parameter, saturated to
    /// `u16` like vte; an empty parameter is 0.
    pub(crate) fn numbers(&self) -> impl Iterator<Item = u16> + '_ {
        self.params.split(|&b| b == b';').map(|p| {
            p.iter()
                .take_while(|&&b| b != b':')
                .filter(|b| b.is_ascii_digit())
                .fold(0u16, |acc, &d| {
                    acc.saturating_mul(10).saturating_add(u16::from(d - b'0'))
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(scanner: &mut Scanner, input: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        scanner.advance(input, |e| match e {
            Event::Text(t) => out.push(format!("T:{}", String::from_utf8_lossy(t))),
            Event::Seq {
                kind, bytes, end, ..
            } => out.push(format!(
                "{kind:?}:{}@{end}",
                String::from_utf8_lossy(bytes).replace('\x1b', "^")
            )),
            Event::Abort => out.push("abort".into()),
        });
        out
    }

    #[test]
    fn splits_text_and_sequences() {
        let mut s = Scanner::new(1024);
        let ev = collect(&mut s, b"ab\x1b[1;2Hcd\x1b]0;t\x07e\x1bcf");
        assert_eq!(
            ev,
            vec![
                "T:ab",
                "Csi:^[1;2H@8",
                "T:cd",
                "Osc:^]0;t\x07@16",
                "T:e",
                "Esc:^c@19",
                "T:f"
            ]
        );
    }

    #[test]
    fn sequence_split_across_chunks() {
        let mut s = Scanner::new(1024);
        assert_eq!(collect(&mut s, b"x\x1b["), vec!["T:x"]);
        assert!(s.in_sequence());
        assert_eq!(collect(&mut s, b"6"), Vec::<String>::new());
        assert_eq!(collect(&mut s, b"ny"), vec!["Csi:^[6n@1", "T:y"]);
    }

    #[test]
    fn string_terminators() {
        let mut s = Scanner::new(1024);
        let ev = collect(&mut s, b"\x1bP$qm\x1b\\\x1b]11;?\x1b\\z");
        assert_eq!(ev, vec!["Dcs:^P$qm^\\@7", "Osc:^]11;?^\\@15", "T:z"]);
        // ESC not followed by '\' ends the OSC and starts a new sequence.
        let ev = collect(&mut s, b"\x1b]2;t\x1b[m");
        assert_eq!(ev, vec!["Osc:^]2;t@6", "Csi:^[m@8"]);
    }

    #[test]
    fn can_aborts() {
        let mut s = Scanner::new(1024);
        let ev = collect(&mut s, b"\x1b[12\x18a");
        assert_eq!(ev, vec!["abort", "T:\x18", "T:a"]);
    }

    #[test]
    fn overflow_is_bounded() {
        let mut s = Scanner::new(300);
        let mut input = b"\x1b]52;c;".to_vec();
        input.extend(std::iter::repeat_n(b'A', 10_000));
        input.push(BEL);
        let mut seen = None;
        s.advance(&input, |e| {
            if let Event::Seq {
                bytes, overflow, ..
            } = e
            {
                seen = Some((bytes.len(), overflow));
            }
        });
        assert_eq!(seen, Some((300, true)));
    }

    #[test]
    fn csi_parse() {
        let c = Csi::parse(b"\x1b[?1049h").unwrap();
        assert_eq!(c.prefix, Some(b'?'));
        assert_eq!(c.numbers().collect::<Vec<_>>(), vec![1049]);
        let c = Csi::parse(b"\x1b[2 q").unwrap();
        assert_eq!(c.intermediates, b" ");
        assert_eq!(c.final_byte, b'q');
        let c = Csi::parse(b"\x1b[;99999r").unwrap();
        assert_eq!(c.numbers().collect::<Vec<_>>(), vec![0, u16::MAX]);
    }
}
