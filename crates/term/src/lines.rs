//! The visible screen as lines, each rendered only when it is read: for a
//! reader of a few lines (the agent watcher's recognisers read the rows
//! around the CLI's input box) instead of the whole screen's text.

use std::sync::Mutex;

use crate::TerminalModel;

/// What a reader rendered of a screen's rows, kept between its looks: a
/// row whose contents are the same as at the last look
/// (`vt100::Screen::row_key`) is not rendered again — its text is taken
/// from here. One per screen a reader looks at again and again (the agent
/// watcher keeps one per agent); it holds the rows that were read.
#[derive(Debug, Default)]
pub struct RowTexts {
    rows: Vec<Option<((u64, u64), String)>>,
}

impl RowTexts {
    /// Rows whose text is kept.
    pub fn kept(&self) -> usize {
        self.rows.iter().flatten().count()
    }
}

/// The lines of [`TerminalModel::text`], rendered one at a time: line `i`
/// here is line `i` of the text (a row that wrapped onto the next is one
/// line with it). Where the text ends in blank lines (it drops them), these
/// lines may go on with blank ones.
pub struct ScreenLines<'a> {
    screen: &'a vt100::Screen,
    /// The first row of each line, top to bottom.
    starts: Vec<u16>,
    rows: u16,
    /// The texts kept from an earlier look ([`TerminalModel::lines_with`]).
    /// (A mutex rather than a cell: a reader may share the lines with a
    /// `Sync` closure; it is never contended.)
    kept: Option<Mutex<&'a mut RowTexts>>,
}

impl TerminalModel {
    /// The visible screen's lines, rendered when read
    /// ([`ScreenLines::line`]). Finding where the lines start reads each
    /// row's wrap flag, and the text of a row only below a row that wrapped.
    pub fn lines(&self) -> ScreenLines<'_> {
        self.lines_of(None)
    }

    /// [`Self::lines`], with the texts `kept` from the last look at this
    /// screen: a row unchanged since then is not rendered again, and what
    /// is rendered now is kept for the next look.
    pub fn lines_with<'a>(&'a self, kept: &'a mut RowTexts) -> ScreenLines<'a> {
        self.lines_of(Some(kept))
    }

    fn lines_of<'a>(&'a self, kept: Option<&'a mut RowTexts>) -> ScreenLines<'a> {
        let screen = self.screen();
        let (rows, _) = self.size();
        let mut lines = ScreenLines {
            screen,
            starts: Vec::with_capacity(usize::from(rows)),
            rows,
            kept: kept.map(Mutex::new),
        };
        for row in 0..rows {
            // A new line unless the row above wrapped onto this one; an
            // empty row below a wrapped one still breaks the line (the text
            // has a newline there).
            let joined = row > 0
                && screen.row_wrapped(row - 1)
                && lines.row_text(row).is_some_and(|t| !t.is_empty());
            if !joined {
                lines.starts.push(row);
            }
        }
        lines
    }
}

impl ScreenLines<'_> {
    /// How many lines.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when the screen has no line (never: a screen has a row).
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The text of line `i` as [`TerminalModel::text`] has it ("" past the
    /// end).
    pub fn line(&self, i: usize) -> String {
        let Some(&first) = self.starts.get(i) else {
            return String::new();
        };
        let end = self.starts.get(i + 1).copied().unwrap_or(self.rows);
        if end <= first + 1 {
            // One row (the usual line): its text as rendered, not copied.
            return self.row_text(first).unwrap_or_default();
        }
        let mut text = String::new();
        for row in first..end {
            if let Some(t) = self.row_text(row) {
                text.push_str(&t);
            }
        }
        text
    }

    /// Row `row`'s text: kept from the last look while the row is the
    /// same, else rendered (and kept).
    fn row_text(&self, row: u16) -> Option<String> {
        let Some(kept) = &self.kept else {
            return self.screen.row_text(row);
        };
        let key = self.screen.row_key(row)?;
        let mut kept = kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let i = usize::from(row);
        if let Some(Some((k, text))) = kept.rows.get(i)
            && *k == key
        {
            return Some(text.clone());
        }
        let text = self.screen.row_text(row)?;
        if kept.rows.len() <= i {
            kept.rows.resize(i + 1, None);
        }
        kept.rows[i] = Some((key, text.clone()));
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines, joined, are the text (up to the blank lines it drops).
    fn same(model: &TerminalModel) {
        let lines = model.lines();
        let mut joined: Vec<String> = (0..lines.len()).map(|i| lines.line(i)).collect();
        while joined.last().is_some_and(String::is_empty) {
            joined.pop();
        }
        assert_eq!(joined.join("\n"), model.text());
    }

    fn fed(rows: u16, cols: u16, bytes: &[u8]) -> TerminalModel {
        let mut m = TerminalModel::new(rows, cols);
        m.feed(bytes);
        m
    }

    #[test]
    fn lines_are_the_texts_lines() {
        same(&fed(6, 10, b""));
        same(&fed(6, 10, b"one\r\ntwo\r\n\r\nfour"));
        // Wrapped: 25 characters on rows of 10 are one line of the text.
        let m = fed(6, 10, b"abcdefghijklmnopqrstuvwxy\r\nnext");
        assert_eq!(m.lines().line(0), "abcdefghijklmnopqrstuvwxy");
        assert_eq!(m.lines().line(1), "next");
        same(&m);
        // A wrapped row whose next row was erased: the text breaks there.
        same(&fed(6, 10, b"abcdefghijkl\x1b[2;1H\x1b[2Kafter\x1b[4;1Hz"));
        let m = fed(6, 10, b"abcdefghijkl\x1b[2;1H\x1b[2K\x1b[5;1Hz");
        assert!(m.screen().row_wrapped(0), "the first row wrapped");
        assert_eq!(
            (m.lines().line(0).as_str(), m.lines().line(1).as_str()),
            ("abcdefghij", "")
        );
        same(&m);
        // Wide characters, cursor-positioned rows, a full screen scrolled.
        same(&fed(4, 10, "表格表格表格\x1b[3;4H● x\r\n".as_bytes()));
        let many: Vec<u8> = (0..30)
            .flat_map(|i| format!("row {i}\r\n").into_bytes())
            .collect();
        same(&fed(5, 12, &many));
        // The alternate screen.
        same(&fed(5, 12, b"below\x1b[?1049h\x1b[2;3Hon top abcdefghij"));
    }

    /// The lines read with the texts kept from earlier looks are the
    /// lines read afresh, look after look, while the screen changes.
    #[test]
    fn kept_texts_give_the_same_lines_as_rendering_afresh() {
        let mut m = TerminalModel::new(6, 12);
        let mut kept = RowTexts::default();
        let steps: &[&[u8]] = &[
            b"one\r\ntwo\r\nthree",
            b"\x1b[2;1H\x1b[2Kchanged",
            b"abcdefghijklmnopqrstuvwxy\r\n",
            b"\x1b[6;1H\r\n\r\nscrolled up",
            "表格 wide\x1b[4;3H● x".as_bytes(),
            b"\x1b[?1049hon the alternate screen",
            b"\x1b[?1049l",
            b"\x1b[1;1H\x1b[J",
        ];
        for step in steps {
            m.feed(step);
            let fresh = m.lines();
            let want: Vec<String> = (0..fresh.len()).map(|i| fresh.line(i)).collect();
            // Twice: the second look takes every row from what was kept.
            for _ in 0..2 {
                let cached = m.lines_with(&mut kept);
                let got: Vec<String> = (0..cached.len()).map(|i| cached.line(i)).collect();
                assert_eq!(got, want, "after {:?}", String::from_utf8_lossy(step));
            }
            assert!(kept.kept() > 0);
        }
    }

    #[test]
    fn past_the_end_is_blank() {
        let m = fed(3, 10, b"a");
        assert_eq!(m.lines().line(7), "");
    }
}
