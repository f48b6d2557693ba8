//! A terminal screen as the recognisers read it: its visible rows.

use std::cell::OnceCell;

/// The visible rows of a terminal screen (the lines of the terminal
/// model's `ScreenText` text, rows joined with `\n`). Non-breaking spaces
/// read as spaces and trailing blanks are dropped, so a row compares as it
/// looks.
///
/// Built from the whole text ([`Screen::from_text`]) or from a source that
/// renders one row when it is first read ([`Screen::lazy`]): a recogniser
/// reads the rows around the CLI's input box, not the conversation above
/// it, so a look at a live terminal renders those rows only
/// (`docs/agent-states.md`, "In the server").
pub struct Screen<'a> {
    rows: Vec<OnceCell<String>>,
    source: Option<&'a (dyn Fn(usize) -> String + Sync)>,
}

impl std::fmt::Debug for Screen<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("rows", &self.rows.len())
            .field("lazy", &self.source.is_some())
            .finish_non_exhaustive()
    }
}

/// `row` with non-breaking spaces as spaces and no trailing blanks, in
/// place (a row is rendered once per look: no copy of it).
fn clean(mut row: String) -> String {
    if row.contains('\u{a0}') {
        row = row.replace('\u{a0}', " ");
    }
    let len = row.trim_end().len();
    row.truncate(len);
    row
}

impl Screen<'static> {
    /// The screen whose rows are the lines of `text`.
    pub fn from_text(text: &str) -> Self {
        Self {
            rows: text
                .split('\n')
                .map(|r| OnceCell::from(clean(r.to_string())))
                .collect(),
            source: None,
        }
    }
}

impl<'a> Screen<'a> {
    /// A screen of `len` rows whose row `i` is `row(i)`, called at most once
    /// per row and only for the rows read.
    pub fn lazy(len: usize, row: &'a (dyn Fn(usize) -> String + Sync)) -> Self {
        Self {
            rows: (0..len).map(|_| OnceCell::new()).collect(),
            source: Some(row),
        }
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when the screen has no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Every row, top to bottom (renders a lazy screen's every row).
    pub fn rows(&self) -> Vec<String> {
        (0..self.len()).map(|i| self.row(i).to_string()).collect()
    }

    /// The row at `i` ("" past the end).
    pub fn row(&self, i: usize) -> &str {
        match self.rows.get(i) {
            Some(cell) => cell.get_or_init(|| self.source.map(|f| clean(f(i))).unwrap_or_default()),
            None => "",
        }
    }

    /// The index of the last row for which `f` holds.
    pub fn last_row(&self, f: impl Fn(&str) -> bool) -> Option<usize> {
        self.last_row_above(self.len(), f)
    }

    /// The index of the last row above row `i` for which `f` holds.
    pub fn last_row_above(&self, i: usize, f: impl Fn(&str) -> bool) -> Option<usize> {
        (0..i.min(self.len())).rev().find(|&r| f(self.row(r)))
    }

    /// The index of the nearest non-blank row above `i`.
    pub fn nonblank_above(&self, i: usize) -> Option<usize> {
        self.last_row_above(i, |r| !r.trim().is_empty())
    }
}

/// A horizontal rule drawn with box characters across the screen (Claude
/// Code's input box edges).
pub(crate) fn is_rule(row: &str) -> bool {
    row.chars().count() >= 20 && row.chars().all(|c| c == '─')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lazy_screen_renders_only_the_rows_read() {
        let read = std::sync::Mutex::new(Vec::new());
        let source = |i: usize| {
            read.lock().unwrap().push(i);
            format!("row {i}\u{a0}\u{a0}")
        };
        let screen = Screen::lazy(40, &source);
        assert_eq!(
            screen.last_row(|r| r.ends_with('7') && r.len() > 5),
            Some(37)
        );
        assert_eq!(screen.row(39), "row 39");
        assert_eq!(screen.row(40), "");
        assert_eq!(
            *read.lock().unwrap(),
            vec![39, 38, 37],
            "each row once, from the bottom"
        );
        let text = Screen::from_text("a\u{a0}b  \n\nc");
        assert_eq!(text.rows(), vec!["a b", "", "c"]);
        assert_eq!(text.nonblank_above(2), Some(0));
    }
}
