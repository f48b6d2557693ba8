//! A terminal screen as the recognisers read it: its visible rows.

/// The visible rows of a terminal screen (the `text` of the terminal
/// model's `ScreenText`: rows joined with `\n`). Non-breaking spaces read as
/// spaces and trailing blanks are dropped, so a row compares as it looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    rows: Vec<String>,
}

impl Screen {
    /// The screen whose rows are the lines of `text`.
    pub fn from_text(text: &str) -> Self {
        Self {
            rows: text
                .split('\n')
                .map(|r| r.replace('\u{a0}', " ").trim_end().to_string())
                .collect(),
        }
    }

    /// The rows, top to bottom.
    pub fn rows(&self) -> &[String] {
        &self.rows
    }

    /// The row at `i` ("" past the end).
    pub fn row(&self, i: usize) -> &str {
        self.rows.get(i).map(String::as_str).unwrap_or("")
    }

    /// The index of the last row for which `f` holds.
    pub fn last_row(&self, f: impl Fn(&str) -> bool) -> Option<usize> {
        self.rows.iter().rposition(|r| f(r))
    }

    /// The index of the nearest non-blank row above `i`.
    pub fn nonblank_above(&self, i: usize) -> Option<usize> {
        self.rows[..i.min(self.rows.len())]
            .iter()
            .rposition(|r| !r.trim().is_empty())
    }
}

/// A horizontal rule drawn with box characters across the screen (Claude
/// Code's input box edges).
pub(crate) fn is_rule(row: &str) -> bool {
    row.chars().count() >= 20 && row.chars().all(|c| c == '─')
}
