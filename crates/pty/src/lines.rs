//! The screen read a few lines at a time (the agent watcher's looks).

use harness_term::{RowTexts, ScreenLines};

use crate::PtySession;

impl PtySession {
    /// `f` over the visible screen's lines, each rendered only when `f`
    /// reads it: the lines of [`screen_text`](Self::screen_text)'s text,
    /// of the same moment (the model stays locked while `f` runs, so keep
    /// `f` short). Read-only.
    pub fn read_lines<R>(&self, f: impl FnOnce(&ScreenLines<'_>) -> R) -> R {
        let model = self.shared.current_model();
        f(&model.lines())
    }

    /// [`Self::read_lines`], with the row texts `kept` from the last look
    /// at this session's screen: rows unchanged since are not rendered
    /// again (`harness_term::RowTexts`). Keep one `kept` per session.
    pub fn read_lines_with<R>(
        &self,
        kept: &mut RowTexts,
        f: impl FnOnce(&ScreenLines<'_>) -> R,
    ) -> R {
        let model = self.shared.current_model();
        f(&model.lines_with(kept))
    }
}
