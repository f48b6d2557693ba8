//! Screen rows → HTML, and the row cache that decides which rows changed.
//!
//! A row is drawn as `<span>` runs of equal style (text with the default
//! style needs no span). Wide (CJK) characters get a span of their own,
//! `display:inline-block;width:2ch`, so they take exactly two cells
//! whatever the fallback font's glyph width. The cursor cell is a span with
//! class `ht-cursor`. Trailing blanks are left out.
//!
//! Text is HTML-escaped (`&`, `<`, `>`; control characters become spaces)
//! and style attributes are built only from numbers and fixed keywords, so
//! nothing the application prints can become markup.

use harness_term::vt100;

use crate::style::CellStyle;

/// A run of cells drawn with one span.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Drawing attributes.
    pub style: CellStyle,
    /// The text (one character per cell; a wide character is one run).
    pub text: String,
    /// A wide character: two cells.
    pub wide: bool,
    /// This cell is the cursor.
    pub cursor: bool,
}

/// Where to draw the cursor in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CursorCell {
    /// Visible row.
    pub row: u16,
    /// Column (moved to the first half of a wide character).
    pub col: u16,
}

/// The cursor cell to draw on `screen`, or `None` when the application hid
/// the cursor. The column is clamped into the screen and moved from the
/// right half of a wide character to its left half.
pub fn cursor_cell(screen: &vt100::Screen) -> Option<CursorCell> {
    if screen.hide_cursor() {
        return None;
    }
    let (row, col) = screen.cursor_position();
    let (_, cols) = screen.size();
    let mut col = col.min(cols.get() - 1);
    if col > 0
        && screen
            .cell(row, col)
            .is_some_and(vt100::Cell::is_wide_continuation)
    {
        col -= 1;
    }
    Some(CursorCell { row, col })
}

fn is_blank(cell: &vt100::Cell) -> bool {
    let c = cell.contents();
    (c.is_empty() || c == " ") && CellStyle::of(cell).is_invisible_when_blank()
}

/// Builds the runs of visible row `row` into `out` (cleared first).
/// `cursor` is the cursor column when the cursor is on this row.
pub fn row_runs(screen: &vt100::Screen, row: u16, cursor: Option<u16>, out: &mut Vec<Run>) {
    out.clear();
    let cols = screen.size().1.get();
    let mut end = cols;
    while end > 0 && screen.cell(row, end - 1).is_none_or(is_blank) {
        end -= 1;
    }
    if let Some(c) = cursor {
        end = end.max(c.saturating_add(1)).min(cols);
    }
    for col in 0..end {
        let Some(cell) = screen.cell(row, col) else {
            break;
        };
        if cell.is_wide_continuation() {
            continue;
        }
        let style = CellStyle::of(cell);
        let text = match cell.contents() {
            "" => " ",
            t => t,
        };
        let is_cursor = cursor == Some(col);
        let wide = cell.is_wide();
        if !wide
            && !is_cursor
            && let Some(last) = out.last_mut()
            && !last.wide
            && !last.cursor
            && last.style == style
        {
            last.text.push_str(text);
            continue;
        }
        out.push(Run {
            style,
            text: text.to_owned(),
            wide,
            cursor: is_cursor,
        });
    }
}

/// Appends `text` to `out`, HTML-escaped; control characters become spaces.
pub fn escape_into(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
}

/// The inner HTML of a row.
pub fn runs_html(runs: &[Run], out: &mut String) {
    out.clear();
    let mut css = String::new();
    for run in runs {
        css.clear();
        run.style.write_css(run.cursor, &mut css);
        if run.wide {
            css.push_str("display:inline-block;width:2ch;");
        }
        if css.is_empty() && !run.cursor {
            escape_into(&run.text, out);
            continue;
        }
        out.push_str("<span");
        if run.cursor {
            out.push_str(" class=\"ht-cursor\"");
        }
        if !css.is_empty() {
            out.push_str(" style=\"");
            out.push_str(&css);
            out.push('"');
        }
        out.push('>');
        escape_into(&run.text, out);
        out.push_str("</span>");
    }
}

/// What a row looked like when it was last drawn: its cells and the cursor
/// column on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct RowKey {
    cells: Vec<vt100::Cell>,
    cursor: Option<u16>,
}

/// The last drawn state of every visible row; [`RowCache::frame`] reports
/// only the rows whose cells (or cursor) changed since.
#[derive(Debug, Default)]
pub struct RowCache {
    rows: Vec<Option<RowKey>>,
    scratch_key: RowKey,
    scratch_runs: Vec<Run>,
    html: String,
}

impl RowCache {
    /// An empty cache (everything is redrawn on the first frame).
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every row: the next frame redraws all of them.
    pub fn invalidate(&mut self) {
        self.rows.clear();
    }

    /// Compares `screen` (with `cursor`) with the last frame and calls
    /// `draw(row, html)` for every row that changed. Returns how many rows
    /// were drawn.
    pub fn frame(
        &mut self,
        screen: &vt100::Screen,
        cursor: Option<CursorCell>,
        mut draw: impl FnMut(usize, &str),
    ) -> usize {
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get(), cols.get());
        self.rows.resize(usize::from(rows), None);
        let mut drawn = 0;
        for row in 0..rows {
            let cursor_col = cursor.filter(|c| c.row == row).map(|c| c.col);
            let key = &mut self.scratch_key;
            key.cells.clear();
            key.cells
                .extend((0..cols).filter_map(|col| screen.cell(row, col)).cloned());
            key.cursor = cursor_col;
            let slot = &mut self.rows[usize::from(row)];
            if slot.as_ref() == Some(key) {
                continue;
            }
            row_runs(screen, row, cursor_col, &mut self.scratch_runs);
            runs_html(&self.scratch_runs, &mut self.html);
            draw(usize::from(row), &self.html);
            drawn += 1;
            match slot {
                Some(old) => std::mem::swap(old, key),
                None => *slot = Some(key.clone()),
            }
        }
        drawn
    }
}

#[cfg(test)]
mod tests {
    use harness_term::TerminalModel;
    use vt100::Color;

    use super::*;

    fn model(rows: u16, cols: u16, bytes: &[u8]) -> TerminalModel {
        let mut m = TerminalModel::with_scrollback(rows, cols, 0);
        m.feed(bytes);
        m
    }

    fn html_of(m: &TerminalModel, row: u16, cursor: Option<u16>) -> String {
        let mut runs = Vec::new();
        row_runs(m.screen(), row, cursor, &mut runs);
        let mut out = String::new();
        runs_html(&runs, &mut out);
        out
    }

    #[test]
    fn plain_text_needs_no_spans() {
        let m = model(2, 20, b"hello world");
        assert_eq!(html_of(&m, 0, None), "hello world");
        assert_eq!(html_of(&m, 1, None), "");
    }

    #[test]
    fn runs_group_cells_of_one_style() {
        let m = model(2, 30, b"a\x1b[31mred\x1b[1mbold\x1b[0m b");
        let mut runs = Vec::new();
        row_runs(m.screen(), 0, None, &mut runs);
        let texts: Vec<&str> = runs.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, ["a", "red", "bold", " b"]);
        assert_eq!(runs[1].style.fg, Color::Idx(1));
        assert!(runs[2].style.bold);
        assert_eq!(
            html_of(&m, 0, None),
            "a<span style=\"color:var(--ht-c1,#cc0000);\">red</span>\
             <span style=\"color:var(--ht-c9,#ef2929);font-weight:bold;\">bold</span> b"
        );
    }

    #[test]
    fn truecolor_background_and_trailing_blanks() {
        // Coloured blanks are kept; default blanks at the end are not.
        let m = model(2, 20, b"x\x1b[48;2;10;20;30m  \x1b[m   ");
        assert_eq!(
            html_of(&m, 0, None),
            "x<span style=\"background:#0a141e;\">  </span>"
        );
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let m = model(2, 10, "a中b".as_bytes());
        let mut runs = Vec::new();
        row_runs(m.screen(), 0, None, &mut runs);
        assert_eq!(runs.len(), 3);
        assert!(runs[1].wide);
        assert_eq!(runs[1].text, "中");
        assert_eq!(
            html_of(&m, 0, None),
            "a<span style=\"display:inline-block;width:2ch;\">中</span>b"
        );
        // The b is in column 3.
        assert_eq!(m.screen().cell(0, 3).unwrap().contents(), "b");
    }

    #[test]
    fn cursor_is_a_span_even_past_the_text() {
        let m = model(2, 10, b"ab");
        let c = cursor_cell(m.screen()).unwrap();
        assert_eq!(c, CursorCell { row: 0, col: 2 });
        assert_eq!(
            html_of(&m, 0, Some(2)),
            "ab<span class=\"ht-cursor\" style=\"color:var(--ht-bg,#1e1e1e);\
             background:var(--ht-fg,#d3d7cf);\"> </span>"
        );
        let m = model(2, 10, b"ab\x1b[H");
        assert!(html_of(&m, 0, Some(0)).starts_with("<span class=\"ht-cursor\""));
    }

    #[test]
    fn hidden_cursor_is_not_drawn() {
        let m = model(2, 10, b"ab\x1b[?25l");
        assert_eq!(cursor_cell(m.screen()), None);
    }

    #[test]
    fn cursor_on_right_half_of_wide_char_moves_left() {
        let m = model(2, 10, "中\x1b[1;2H".as_bytes());
        assert_eq!(cursor_cell(m.screen()), Some(CursorCell { row: 0, col: 0 }));
    }

    #[test]
    fn text_is_escaped() {
        let m = model(2, 60, b"<script>alert('x')</script> & \"q\"");
        let html = html_of(&m, 0, None);
        assert_eq!(html, "&lt;script&gt;alert('x')&lt;/script&gt; &amp; \"q\"");
        let mut out = String::new();
        escape_into("a\u{7}b\u{1b}c\u{85}<", &mut out);
        assert_eq!(out, "a b c &lt;");
    }

    #[test]
    fn row_cache_redraws_only_changed_rows() {
        let mut m = model(4, 10, b"one\r\ntwo\r\nthree");
        let mut cache = RowCache::new();
        let mut drawn = Vec::new();
        let n = cache.frame(m.screen(), cursor_cell(m.screen()), |r, html| {
            drawn.push((r, html.to_owned()));
        });
        assert_eq!(n, 4);
        assert_eq!(drawn[1], (1, "two".to_owned()));

        // Nothing changed: nothing is drawn.
        let n = cache.frame(m.screen(), cursor_cell(m.screen()), |_, _| panic!());
        assert_eq!(n, 0);

        // Change row 1 only (the cursor stays on row 2).
        m.feed(b"\x1b7\x1b[2;1H\x1b[32mTWO\x1b8");
        let mut drawn = Vec::new();
        cache.frame(m.screen(), cursor_cell(m.screen()), |r, _| drawn.push(r));
        assert_eq!(drawn, [1]);

        // Moving the cursor redraws the row it left and the row it entered.
        m.feed(b"\x1b[1;1H");
        let mut drawn = Vec::new();
        cache.frame(m.screen(), cursor_cell(m.screen()), |r, _| drawn.push(r));
        assert_eq!(drawn, [0, 2]);

        // A style-only change is a change.
        m.feed(b"\x1b[4;1H\x1b[7m \x1b[m\x1b[1;1H");
        let mut drawn = Vec::new();
        cache.frame(m.screen(), cursor_cell(m.screen()), |r, _| drawn.push(r));
        assert_eq!(drawn, [3]);

        // Scrolling changes every row.
        m.feed(b"\x1b[4;1H\r\n\r\n");
        let mut drawn = Vec::new();
        cache.frame(m.screen(), cursor_cell(m.screen()), |r, _| drawn.push(r));
        assert_eq!(drawn, [0, 1, 2, 3]);

        // Invalidation redraws all.
        cache.invalidate();
        assert_eq!(cache.frame(m.screen(), None, |_, _| {}), 4);
    }

    #[test]
    fn row_cache_follows_resizes() {
        let mut m = model(3, 10, b"abc");
        let mut cache = RowCache::new();
        cache.frame(m.screen(), None, |_, _| {});
        m.resize(5, 10);
        let mut drawn = Vec::new();
        cache.frame(m.screen(), None, |r, _| drawn.push(r));
        // The new rows are drawn; the old ones did not change.
        assert_eq!(drawn, [3, 4]);
        m.resize(2, 10);
        assert_eq!(cache.frame(m.screen(), None, |_, _| {}), 0);
    }
}
