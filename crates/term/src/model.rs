//! The terminal model: a `vt100` screen plus the little state `vt100` keeps
//! private but a redraw needs (scroll regions, the primary screen behind the
//! alternate one).

use std::num::NonZeroU16;

use serde::{Deserialize, Serialize};

use crate::scan::{Csi, Event, Scanner, SeqKind};

/// Smallest accepted size: `vt100` misbehaves below 2×2 (vt100#37).
pub const MIN_SIZE: u16 = 2;
/// Largest accepted number of rows (a resize to
/// 10000×10000 once added 2.1 GB). Every size — a viewer's WebSocket resize,
/// a spawn size, the PTY, this model — is clamped by [`clamp_size`].
pub const MAX_ROWS: u16 = 500;
/// Largest accepted number of columns (see [`MAX_ROWS`]): at most
/// 500 × 1000 cells of 32 bytes, 16 MB, per screen.
pub const MAX_COLS: u16 = 1000;

/// `(rows, cols)` clamped to [`MIN_SIZE`]..=[`MAX_ROWS`] / [`MAX_COLS`]: the
/// one rule for every terminal size.
pub fn clamp_size(rows: u16, cols: u16) -> (u16, u16) {
    (
        rows.clamp(MIN_SIZE, MAX_ROWS),
        cols.clamp(MIN_SIZE, MAX_COLS),
    )
}
/// Default number of scrollback rows kept by [`TerminalModel::new`].
pub const DEFAULT_SCROLLBACK: usize = 1000;

/// The screen as text: what `GET /api/tasks/{id}/screen` answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenText {
    /// Width in columns.
    pub cols: u16,
    /// Height in rows.
    pub rows: u16,
    /// Visible rows joined with `\n`, trailing blanks trimmed per row.
    pub text: String,
}

/// A scroll region as 0-based inclusive rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Region {
    top: u16,
    bottom: u16,
}

/// A terminal screen model fed with a PTY's output.
pub struct TerminalModel {
    parser: vt100::Parser,
    scanner: Scanner,
    /// Scroll region of the primary and the alternate screen (`None` = full).
    regions: [Option<Region>; 2],
    /// Cursor saved by `ESC 7` (or `CSI ? 1049 h`) per screen; `None` is the
    /// power-on default (top left).
    saved: [Option<(u16, u16)>; 2],
    /// Drawing attributes saved with the cursor (shared by both screens, as
    /// in vt100), as an SGR string.
    saved_attrs: Option<String>,
    /// The primary screen, redrawn as bytes, captured when the application
    /// switched to the alternate screen.
    primary: Option<Vec<u8>>,
    /// Whether the alternate screen was entered with 1049 (vs 47).
    entered_with_1049: bool,
    /// An incomplete UTF-8 character at the end of the last chunk.
    carry: Vec<u8>,
    bytes_fed: u64,
}

impl std::fmt::Debug for TerminalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.size();
        f.debug_struct("TerminalModel")
            .field("rows", &rows)
            .field("cols", &cols)
            .field("alternate_screen", &self.alternate_screen())
            .field("bytes_fed", &self.bytes_fed)
            .finish_non_exhaustive()
    }
}

fn dims(rows: u16, cols: u16) -> (NonZeroU16, NonZeroU16) {
    let (rows, cols) = clamp_size(rows, cols);
    let dim = |n: u16| NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN);
    (dim(rows), dim(cols))
}

impl TerminalModel {
    /// A blank terminal of `rows` × `cols` (each clamped to at least 2) with
    /// [`DEFAULT_SCROLLBACK`] rows of scrollback.
    pub fn new(rows: u16, cols: u16) -> Self {
        Self::with_scrollback(rows, cols, DEFAULT_SCROLLBACK)
    }

    /// A blank terminal keeping up to `scrollback` rows of history.
    pub fn with_scrollback(rows: u16, cols: u16, scrollback: usize) -> Self {
        Self {
            parser: {
                let (rows, cols) = dims(rows, cols);
                vt100::Parser::new(rows, cols, scrollback)
            },
            // The model only inspects CSI/ESC sequences; strings can stay short.
            scanner: Scanner::new(0),
            regions: [None, None],
            saved: [None, None],
            saved_attrs: None,
            primary: None,
            entered_with_1049: false,
            carry: Vec::new(),
            bytes_fed: 0,
        }
    }

    /// Feeds output from the application. Never panics, whatever the bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.bytes_fed += bytes.len() as u64;
        if self.carry.is_empty() {
            self.feed_inner(bytes);
        } else {
            // The carried bytes were already scanned as text; scanning them
            // again in the ground state is harmless.
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            self.feed_inner(&joined);
        }
    }

    fn feed_inner(&mut self, bytes: &[u8]) {
        // Split the input only where a tracked sequence completes, so the
        // state vt100 keeps private can be mirrored exactly.
        let mut tracked: Vec<(usize, Tracked)> = Vec::new();
        self.scanner.advance(bytes, |event| {
            if let Event::Seq {
                kind,
                bytes: seq,
                overflow: false,
                end,
            } = event
                && let Some(t) = Tracked::from_seq(kind, seq)
            {
                tracked.push((end, t));
            }
        });
        // vte 0.15 drops characters when a chunk ends inside a UTF-8
        // character and the next chunk continues with more multi-byte text
        // (its partial-UTF-8 path skips past the first character). Never
        // hand it a chunk that ends mid-character: carry the tail over.
        let keep = if self.scanner.in_sequence() {
            bytes.len()
        } else {
            bytes.len() - incomplete_utf8_tail(bytes)
        };
        let mut fed = 0;
        for (end, t) in tracked {
            // A tracked sequence is CSI or ESC; its final byte is in this
            // chunk (`end >= 1`). Process everything before the final byte,
            // look at the state, then process the final byte.
            let Some(last) = end.checked_sub(1).filter(|&l| l >= fed) else {
                continue;
            };
            self.parser.process(&bytes[fed..last]);
            self.before(&t);
            self.parser.process(&bytes[last..end]);
            fed = end;
            self.after(&t);
        }
        let keep = keep.max(fed);
        self.parser.process(&bytes[fed..keep]);
        self.carry.extend_from_slice(&bytes[keep..]);
    }

    fn screen_index(&self) -> usize {
        usize::from(self.alternate_screen())
    }

    /// Called just before the final byte of a tracked sequence is processed.
    fn before(&mut self, t: &Tracked) {
        if let Tracked::EnterAlternate { clears } = *t {
            if !self.alternate_screen() {
                self.primary = Some(self.redraw_current());
                self.entered_with_1049 = clears;
            }
            if clears {
                // 1049 saves the cursor (DECSC) before switching.
                self.save_cursor();
            }
        }
    }

    fn save_cursor(&mut self) {
        let i = self.screen_index();
        let screen = self.parser.screen();
        self.saved[i] = Some(screen.cursor_position());
        self.saved_attrs = Some(screen.attributes_formatted());
    }

    /// Called just after the final byte of a tracked sequence is processed.
    fn after(&mut self, t: &Tracked) {
        let rows = self.size().0;
        match *t {
            Tracked::ScrollRegion { top, bottom } => {
                let top = top.max(1) - 1;
                let bottom = if bottom == 0 { rows } else { bottom };
                let bottom = (bottom - 1).min(rows - 1);
                let region = (top < bottom && !(top == 0 && bottom == rows - 1))
                    .then_some(Region { top, bottom });
                let i = self.screen_index();
                self.regions[i] = region;
            }
            Tracked::SaveCursor => self.save_cursor(),
            Tracked::EnterAlternate { clears } => {
                if clears {
                    // The alternate grid was cleared: its region and saved
                    // cursor are back to defaults.
                    self.regions[1] = None;
                    self.saved[1] = None;
                }
                if !self.alternate_screen() {
                    self.primary = None;
                }
            }
            Tracked::ExitAlternate => {
                if !self.alternate_screen() {
                    self.primary = None;
                }
            }
            Tracked::Reset => {
                self.regions = [None, None];
                self.saved = [None, None];
                self.saved_attrs = None;
                self.primary = None;
            }
        }
    }

    /// The current screen drawn as bytes, with its scroll region and saved
    /// cursor (no input modes).
    fn redraw_current(&self) -> Vec<u8> {
        let screen = self.parser.screen();
        let mut out = screen.contents_formatted().into_bytes();
        let i = self.screen_index();
        let mut restore = false;
        if let Some(r) = self.regions[i] {
            out.extend_from_slice(format!("\x1b[{};{}r", r.top + 1, r.bottom + 1).as_bytes());
            restore = true;
        }
        if self.saved[i].is_some() || self.saved_attrs.is_some() {
            let (row, col) = self.saved[i].unwrap_or((0, 0));
            out.extend_from_slice(format!("\x1b[{};{}H", row + 1, col + 1).as_bytes());
            match &self.saved_attrs {
                Some(attrs) => out.extend_from_slice(attrs.as_bytes()),
                None => out.extend_from_slice(b"\x1b[m"),
            }
            out.extend_from_slice(b"\x1b7");
            restore = true;
        }
        if restore {
            // `cursor_state_formatted` assumes default attributes (it may
            // redraw the last column's cell to get a pending wrap back); the
            // receiving terminal has the saved or the last cell's ones.
            out.extend_from_slice(b"\x1b[m");
            out.extend_from_slice(screen.cursor_state_formatted().as_bytes());
            out.extend_from_slice(screen.attributes_formatted().as_bytes());
        }
        out
    }

    /// Resizes the terminal (clamped by [`clamp_size`]). Like xterm, a
    /// resize resets the scroll regions. Shrinking gives the memory of the
    /// larger screen back.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let before = self.size();
        let (rows, cols) = dims(rows, cols);
        self.parser.set_size(rows, cols);
        if self.size() != before {
            self.regions = [None, None];
            let (rows, cols) = self.size();
            for (row, col) in self.saved.iter_mut().flatten() {
                *row = (*row).min(rows - 1);
                *col = (*col).min(cols - 1);
            }
        }
    }

    /// Character cells the model holds (both screens and the scrollback),
    /// for memory accounting.
    pub fn allocated_cells(&self) -> usize {
        self.parser.screen().allocated_cells()
    }

    /// `(rows, cols)`.
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    /// The visible screen as text (rows joined by `\n`).
    pub fn text(&self) -> String {
        self.parser.screen().contents()
    }

    /// The visible screen as text with its size.
    pub fn screen_text(&self) -> ScreenText {
        let (rows, cols) = self.size();
        ScreenText {
            cols,
            rows,
            text: self.text(),
        }
    }

    /// Bytes that redraw the current state on a fresh xterm-compatible
    /// terminal of the same size: a reset, the primary screen (when the
    /// application is on the alternate screen, the primary behind it too),
    /// scroll region, cursor position and visibility, SGR attributes and
    /// input modes (application keypad/cursor, bracketed paste, mouse,
    /// cursor style), and last the first bytes of a UTF-8 character whose
    /// rest has not arrived yet. Contains no terminal queries: it is
    /// generated from the model, never replayed from the stream.
    pub fn snapshot(&self) -> Vec<u8> {
        self.snapshot_with_history(0)
    }

    /// Like [`snapshot`](Self::snapshot), preceded by up to `lines` rows of
    /// scrollback printed so that they scroll into the receiving terminal's
    /// own scrollback.
    pub fn snapshot_with_history(&self, lines: usize) -> Vec<u8> {
        let screen = self.parser.screen();
        let mut out = b"\x1bc".to_vec();
        let alternate = self.alternate_screen();
        if lines > 0 && !alternate {
            self.write_history(lines, &mut out);
        }
        if alternate {
            match &self.primary {
                Some(primary) => out.extend_from_slice(primary),
                None => out.extend_from_slice(b"\x1b[H\x1b[2J"),
            }
            if self.entered_with_1049 {
                out.extend_from_slice(b"\x1b[?1049h");
            } else {
                out.extend_from_slice(b"\x1b[?47h");
            }
        }
        out.extend_from_slice(&self.redraw_current());
        out.extend_from_slice(screen.input_mode_formatted().as_bytes());
        // A character whose first bytes arrived but not its last: the live
        // stream after the snapshot starts with the rest of it, so the
        // receiving terminal needs its beginning too.
        out.extend_from_slice(&self.carry);
        out
    }

    fn write_history(&self, lines: usize, out: &mut Vec<u8>) {
        let mut screen = self.parser.screen().clone();
        screen.set_scrollback(usize::MAX);
        let available = screen.scrollback();
        let take = available.min(lines);
        if take == 0 {
            return;
        }
        let (rows, cols) = self.size();
        // Walk the history a screenful at a time, oldest first.
        let mut offset = take;
        while offset > 0 {
            screen.set_scrollback(offset);
            let count = offset.min(usize::from(rows));
            for row in screen.rows_formatted(0, cols).take(count) {
                out.extend_from_slice(b"\x1b[m");
                out.extend_from_slice(row.as_bytes());
                out.extend_from_slice(b"\x1b[m\r\n");
            }
            offset -= count;
        }
        // Push the last history rows off the visible screen: the cursor is on
        // the line below them, `rows - 1` more lines scroll them all out.
        for _ in 1..rows {
            out.extend_from_slice(b"\r\n");
        }
    }

    /// True when the application enabled bracketed paste (`CSI ? 2004 h`).
    pub fn bracketed_paste_enabled(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// True while the application is on the alternate screen.
    pub fn alternate_screen(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// True when the application hid the cursor.
    pub fn cursor_hidden(&self) -> bool {
        self.parser.screen().hide_cursor()
    }

    /// Cursor `(row, col)`, 0-based.
    pub fn cursor_position(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// True while the bytes fed so far end inside an escape sequence or a
    /// UTF-8 character (the next bytes complete it).
    pub fn in_sequence(&self) -> bool {
        self.scanner.in_sequence() || !self.carry.is_empty()
    }

    /// Total bytes fed so far.
    pub fn bytes_fed(&self) -> u64 {
        self.bytes_fed
    }

    /// The underlying `vt100` screen, for callers that need cells/colours.
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }
}

/// Length of an incomplete (but so far valid) UTF-8 character at the end of
/// `bytes`, 0 if there is none.
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    let from = bytes.len().saturating_sub(3);
    (from..bytes.len())
        .rev()
        .find(|&p| bytes[p] & 0xc0 != 0x80)
        .filter(|&p| {
            std::str::from_utf8(&bytes[p..])
                .is_err_and(|e| e.valid_up_to() == 0 && e.error_len().is_none())
        })
        .map_or(0, |p| bytes.len() - p)
}

/// Sequences whose effect the model mirrors.
#[derive(Debug)]
enum Tracked {
    /// `CSI top ; bottom r` (DECSTBM).
    ScrollRegion { top: u16, bottom: u16 },
    /// `ESC 7` (DECSC).
    SaveCursor,
    /// `CSI ? 47 h` / `CSI ? 1049 h` (which also clears the alternate grid
    /// and its scroll region).
    EnterAlternate { clears: bool },
    /// `CSI ? 47 l` / `CSI ? 1049 l`.
    ExitAlternate,
    /// `ESC c`.
    Reset,
}

impl Tracked {
    fn from_seq(kind: SeqKind, seq: &[u8]) -> Option<Self> {
        match kind {
            SeqKind::Esc if seq == b"\x1bc" => Some(Self::Reset),
            SeqKind::Esc if seq == b"\x1b7" => Some(Self::SaveCursor),
            SeqKind::Csi => {
                let csi = Csi::parse(seq)?;
                if !csi.intermediates.is_empty() {
                    return None;
                }
                match (csi.prefix, csi.final_byte) {
                    (None, b'r') => {
                        let mut n = csi.numbers();
                        let top = n.next().unwrap_or(0);
                        let bottom = n.next().unwrap_or(0);
                        Some(Self::ScrollRegion { top, bottom })
                    }
                    (Some(b'?'), b'h') => {
                        let mut found = None;
                        for p in csi.numbers() {
                            match p {
                                1049 => found = Some(Self::EnterAlternate { clears: true }),
                                47 if found.is_none() => {
                                    found = Some(Self::EnterAlternate { clears: false });
                                }
                                _ => {}
                            }
                        }
                        found
                    }
                    (Some(b'?'), b'l') => csi
                        .numbers()
                        .any(|p| p == 47 || p == 1049)
                        .then_some(Self::ExitAlternate),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_tail() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail("aé".as_bytes()), 0);
        assert_eq!(incomplete_utf8_tail(&"aé".as_bytes()[..2]), 1);
        assert_eq!(incomplete_utf8_tail(&"中".as_bytes()[..2]), 2);
        assert_eq!(incomplete_utf8_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_utf8_tail(b"a\xf5"), 0); // invalid, not partial
    }

    #[test]
    fn multibyte_split_does_not_lose_text() {
        // The exact case vte 0.15 gets wrong on its own.
        let s = "ȴaé".as_bytes();
        let mut m = TerminalModel::new(2, 10);
        m.feed(&s[..1]);
        m.feed(&s[1..]);
        assert_eq!(m.text(), "ȴaé");
    }
}
