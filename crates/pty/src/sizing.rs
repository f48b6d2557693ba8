//! The PTY's size when several viewers watch one terminal.
//!
//! Rule: **the PTY takes the size of the largest attached viewer**: the
//! widest one (most columns; among equally wide ones, the most rows). One
//! viewer's whole size is used, never a mix of two (a tall phone must not add
//! rows a desktop then has to scroll). A smaller viewer (a phone) never
//! shrinks or rewraps the agent's terminal for the others: it draws the PTY's
//! grid at the PTY's size and scrolls. When a
//! viewer leaves, the size is recomputed from the viewers left, so the
//! desktop's size comes back when a larger viewer closes and stays when a
//! smaller one does. With no viewer left the last size is kept (the agent is
//! not redrawn for nobody). Every viewer learns the effective size through
//! [`PtySession::size_watch`] (the WebSocket sends it as a `size` frame).

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use tokio::sync::watch;

use crate::{PtyError, PtySession};

/// The viewers' size votes of one session.
pub(crate) struct ViewerSizes {
    board: Mutex<Board>,
    tx: watch::Sender<(u16, u16)>,
}

#[derive(Default)]
struct Board {
    next: u64,
    votes: BTreeMap<u64, (u16, u16)>,
}

impl Board {
    /// The largest viewer's size (most columns, then most rows), `None`
    /// without votes.
    fn effective(&self) -> Option<(u16, u16)> {
        self.votes
            .values()
            .copied()
            .max_by_key(|&(rows, cols)| (cols, rows))
    }
}

impl ViewerSizes {
    pub(crate) fn new(rows: u16, cols: u16) -> Self {
        Self {
            board: Mutex::new(Board::default()),
            tx: watch::channel((rows, cols)).0,
        }
    }
}

/// One viewer's say in the PTY's size; dropping it withdraws the vote
/// (and restores the size the remaining viewers need).
pub struct SizeVote {
    session: Arc<PtySession>,
    id: u64,
}

impl std::fmt::Debug for SizeVote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SizeVote").field("id", &self.id).finish()
    }
}

impl PtySession {
    /// Join the viewers whose sizes decide the PTY's size (see the module
    /// docs). The vote counts once [`SizeVote::set`] is called.
    pub fn size_vote(self: &Arc<Self>) -> SizeVote {
        let sizes = &self.sizes;
        let mut board = sizes.board.lock().unwrap_or_else(|p| p.into_inner());
        board.next += 1;
        SizeVote {
            session: self.clone(),
            id: board.next,
        }
    }

    /// The PTY's current size `(rows, cols)`, updated on every change.
    pub fn size_watch(&self) -> watch::Receiver<(u16, u16)> {
        self.sizes.tx.subscribe()
    }

    /// Apply the board's effective size (under its lock, so two viewers
    /// changing at once cannot leave a stale size applied).
    fn apply_votes(
        &self,
        change: impl FnOnce(&mut BTreeMap<u64, (u16, u16)>),
    ) -> Result<(), PtyError> {
        let sizes = &self.sizes;
        let mut board = sizes.board.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut board.votes);
        let Some((rows, cols)) = board.effective() else {
            return Ok(());
        };
        if *sizes.tx.borrow() == (rows, cols) {
            return Ok(());
        }
        self.resize(rows, cols)?;
        sizes.tx.send_replace((rows, cols));
        Ok(())
    }
}

impl SizeVote {
    /// This viewer's size (rows × cols in character cells); the PTY is
    /// resized when the largest size changes.
    pub fn set(&self, rows: u16, cols: u16) -> Result<(), PtyError> {
        let id = self.id;
        self.session.apply_votes(|votes| {
            votes.insert(id, harness_term::clamp_size(rows, cols));
        })
    }
}

impl Drop for SizeVote {
    fn drop(&mut self) {
        let id = self.id;
        if let Err(err) = self.session.apply_votes(|votes| {
            votes.remove(&id);
        }) {
            tracing::debug!(%err, "resize after a viewer left failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Board;

    #[test]
    fn the_widest_viewer_decides() {
        let mut b = Board::default();
        assert_eq!(b.effective(), None);
        b.votes.insert(1, (40, 160));
        // A taller but narrow phone adds no rows.
        b.votes.insert(2, (50, 43));
        assert_eq!(b.effective(), Some((40, 160)));
        b.votes.insert(3, (45, 160));
        assert_eq!(b.effective(), Some((45, 160)));
        b.votes.remove(&1);
        b.votes.remove(&3);
        assert_eq!(b.effective(), Some((50, 43)));
    }
}
