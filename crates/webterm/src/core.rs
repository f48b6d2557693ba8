//! The browser terminal without the browser: model, protocol, flow control,
//! keys, scrollback view and frame diffing as a plain state machine. The
//! web glue (`web.rs`) feeds it DOM and WebSocket events and sends what it
//! puts in the [outbox](Core::take_outbox).
//!
//! Nothing the application prints can make the core send anything: the
//! outbox is written only by [`Core::key`], [`Core::paste`],
//! [`Core::text_input`], [`Core::wheel`] (user actions), and by the
//! protocol itself (`resize`, `ack`). The model answers no queries.

use harness_term::TerminalModel;

use crate::{
    backoff::Backoff,
    flow::AckCounter,
    keys::{KeyInput, KeyModes, KeyOptions, encode_key, encode_paste},
    protocol::{ClientMsg, CloseAction, ServerMsg, close_action},
    render::{RowCache, cursor_cell},
};

/// Rows of scrollback the browser keeps.
pub const SCROLLBACK: usize = 2000;
/// Lines scrolled per wheel notch.
pub const WHEEL_LINES: i32 = 3;

/// Connection state, shown in the status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Waiting for the first connection.
    Connecting,
    /// Connected and drawn.
    Connected,
    /// Disconnected; the next attempt is in `delay_ms`.
    Reconnecting {
        /// Milliseconds until the next attempt.
        delay_ms: u32,
    },
    /// The process exited: no reconnecting.
    Exited(i32),
}

impl Status {
    /// The status-line text (empty when connected).
    pub fn text(&self) -> String {
        match self {
            Self::Connecting => "connecting…".to_owned(),
            Self::Connected => String::new(),
            Self::Reconnecting { .. } => "reconnecting…".to_owned(),
            Self::Exited(code) => format!("[process exited with code {code}]"),
        }
    }

    /// Value of the root's `data-state` attribute.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Reconnecting { .. } => "reconnecting",
            Self::Exited(_) => "exited",
        }
    }
}

/// What the glue should do with a key event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyOutcome {
    /// Handled (input queued or view scrolled): prevent the default action.
    Handled,
    /// Leave the event to the browser (copy, paste, ⌘ shortcuts, dead keys).
    Browser,
}

/// The terminal state machine.
pub struct Core {
    model: TerminalModel,
    scrollback: usize,
    acks: AckCounter,
    /// The next binary frame is a snapshot: start from a fresh model.
    fresh: bool,
    connected: bool,
    status: Status,
    exited: Option<i32>,
    error: Option<String>,
    backoff: Backoff,
    /// How many rows the view is scrolled back (0 = live).
    offset: usize,
    cache: RowCache,
    dirty: bool,
    outbox: Vec<ClientMsg>,
    key_options: KeyOptions,
    /// The size that fits the container: this viewer's `resize` vote.
    fit: (u16, u16),
    /// The server told the PTY's size: the model follows it, not `fit`.
    pty_sized: bool,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("model", &self.model)
            .field("status", &self.status)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl Core {
    /// A blank `rows` × `cols` terminal keeping `scrollback` rows.
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Self {
        Self {
            model: TerminalModel::with_scrollback(rows, cols, scrollback),
            scrollback,
            acks: AckCounter::new(),
            fresh: true,
            connected: false,
            status: Status::Connecting,
            exited: None,
            error: None,
            backoff: Backoff::new(),
            offset: 0,
            cache: RowCache::new(),
            dirty: true,
            outbox: Vec::new(),
            key_options: KeyOptions::default(),
            fit: harness_term::clamp_size(rows, cols),
            pty_sized: false,
        }
    }

    /// Platform key behaviour (macOS Option).
    pub fn set_key_options(&mut self, opts: KeyOptions) {
        self.key_options = opts;
    }

    /// The model.
    pub fn model(&self) -> &TerminalModel {
        &self.model
    }

    /// `(rows, cols)`.
    pub fn size(&self) -> (u16, u16) {
        self.model.size()
    }

    /// Connection state.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The last `error` message from the server, until the next snapshot.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The status-line text.
    pub fn status_text(&self) -> String {
        match (&self.status, &self.error) {
            (Status::Exited(_), _) | (_, None) => self.status.text(),
            (Status::Connected, Some(e)) => e.clone(),
            (s, Some(e)) => format!("{} {e}", s.text()),
        }
    }

    /// True once the process exited (the socket must not reconnect).
    pub fn exited(&self) -> bool {
        self.exited.is_some()
    }

    /// Rows scrolled back from the live screen.
    pub fn scroll_offset(&self) -> usize {
        self.offset
    }

    /// Whether something changed since the last [`frame`](Self::frame).
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Messages to send, oldest first.
    pub fn take_outbox(&mut self) -> Vec<ClientMsg> {
        std::mem::take(&mut self.outbox)
    }

    fn send(&mut self, msg: ClientMsg) {
        self.outbox.push(msg);
    }

    fn send_input(&mut self, data: String) {
        if data.is_empty() || !self.connected || self.exited.is_some() {
            // Keystrokes typed while disconnected are dropped, not replayed
            // later into whatever the application shows by then.
            return;
        }
        self.send(ClientMsg::Input { data });
        self.scroll_to_bottom();
    }

    // ---- connection -------------------------------------------------------

    /// The socket opened: the next binary frame is a snapshot; tell the
    /// server our size.
    pub fn on_open(&mut self) {
        self.connected = true;
        self.fresh = true;
        self.acks = AckCounter::new();
        let (rows, cols) = self.fit;
        self.send(ClientMsg::Resize { rows, cols });
    }

    /// A binary frame: output bytes (a snapshot when it is the first one).
    pub fn on_binary(&mut self, bytes: &[u8]) {
        if self.fresh {
            self.fresh = false;
            let (rows, cols) = self.size();
            self.model = TerminalModel::with_scrollback(rows, cols, self.scrollback);
            self.cache.invalidate();
            self.offset = 0;
            self.error = None;
            self.backoff.reset();
            if self.exited.is_none() {
                self.status = Status::Connected;
            }
        }
        self.feed(bytes);
        if let Some(bytes) = self.acks.processed(bytes.len()) {
            self.send(ClientMsg::Ack { bytes });
        }
    }

    /// Feeds output to the model, keeping a scrolled-back view on the same
    /// lines while the scrollback grows.
    pub fn feed(&mut self, bytes: &[u8]) {
        let before = self.model.screen().scrollback_len();
        self.model.feed(bytes);
        if self.offset > 0 {
            let screen = self.model.screen();
            let after = screen.scrollback_len();
            self.offset = if screen.alternate_screen() {
                0
            } else {
                (self.offset + after.saturating_sub(before)).min(after)
            };
        }
        self.dirty = true;
    }

    /// A text frame (JSON control message).
    pub fn on_text(&mut self, text: &str) {
        match ServerMsg::parse(text) {
            ServerMsg::Exit { code } => {
                self.exited = Some(code);
                self.status = Status::Exited(code);
                self.dirty = true;
            }
            ServerMsg::Lagged => self.fresh = true,
            ServerMsg::Size { rows, cols } => {
                self.pty_sized = true;
                self.set_model_size(rows, cols);
            }
            ServerMsg::Error { message } => {
                self.error = Some(message);
                self.dirty = true;
            }
            ServerMsg::Unknown => {}
        }
    }

    /// The client is idle: acknowledge everything processed.
    pub fn on_idle(&mut self) {
        if let Some(bytes) = self.acks.idle() {
            self.send(ClientMsg::Ack { bytes });
        }
    }

    /// The socket closed with `code` (or failed to connect: pass 1006).
    /// Returns the reconnect delay in milliseconds, or `None` when the
    /// process exited. `random` in `[0, 1)` jitters the delay.
    pub fn on_close(&mut self, code: u16, random: f64) -> Option<u32> {
        self.connected = false;
        self.outbox.clear();
        if let CloseAction::Exited(exit) = close_action(code) {
            self.exited.get_or_insert(exit);
        }
        if let Some(exit) = self.exited {
            self.status = Status::Exited(exit);
            self.dirty = true;
            return None;
        }
        let delay_ms = self.backoff.next_ms(random);
        self.status = Status::Reconnecting { delay_ms };
        self.dirty = true;
        Some(delay_ms)
    }

    // ---- input ------------------------------------------------------------

    /// A key press. `has_selection` is true when text in the terminal is
    /// selected (Ctrl+C then copies instead of interrupting).
    pub fn key(&mut self, k: &KeyInput<'_>, has_selection: bool) -> KeyOutcome {
        let lower = k.key.to_ascii_lowercase();
        let primary = k.ctrl || k.meta;
        // Copy: Ctrl/⌘+C with a selection, and Ctrl+Shift+C always.
        if lower == "c" && ((primary && has_selection) || (k.ctrl && k.shift)) {
            return KeyOutcome::Browser;
        }
        // Paste: Ctrl/⌘+V, Ctrl+Shift+V and Shift+Insert arrive as a paste
        // event.
        if (primary && lower == "v") || (k.shift && k.key == "Insert") {
            return KeyOutcome::Browser;
        }
        // Scrollback: Shift+PageUp/PageDown.
        if k.shift && !k.ctrl && !k.alt && !k.meta {
            let page = i32::from(self.size().0.saturating_sub(1).max(1));
            match k.key {
                "PageUp" => {
                    self.scroll_by(page);
                    return KeyOutcome::Handled;
                }
                "PageDown" => {
                    self.scroll_by(-page);
                    return KeyOutcome::Handled;
                }
                _ => {}
            }
        }
        let modes = KeyModes {
            application_cursor: self.model.screen().application_cursor(),
        };
        match encode_key(k, modes, self.key_options) {
            Some(data) => {
                self.send_input(data);
                KeyOutcome::Handled
            }
            None => KeyOutcome::Browser,
        }
    }

    /// Pasted text (wrapped in bracketed-paste markers when the application
    /// enabled them).
    pub fn paste(&mut self, text: &str) {
        let data = encode_paste(text, self.model.bracketed_paste_enabled());
        self.send_input(data);
    }

    /// Text typed through the input element (IME composition results,
    /// mobile keyboards): sent as is.
    pub fn text_input(&mut self, text: &str) {
        self.send_input(text.to_owned());
    }

    /// Mouse wheel: `lines` > 0 scrolls up (back). On the alternate screen
    /// (no scrollback) it sends arrow keys instead, like xterm's
    /// alternate-scroll mode, so pagers and editors scroll.
    pub fn wheel(&mut self, lines: i32) {
        if lines == 0 {
            return;
        }
        if self.model.alternate_screen() {
            let app = self.model.screen().application_cursor();
            let arrow = match (lines > 0, app) {
                (true, false) => "\x1b[A",
                (true, true) => "\x1bOA",
                (false, false) => "\x1b[B",
                (false, true) => "\x1bOB",
            };
            let n = lines.unsigned_abs().min(100) as usize;
            self.send_input(arrow.repeat(n));
        } else {
            self.scroll_by(lines);
        }
    }

    /// Scrolls the view `lines` back (negative: forward).
    pub fn scroll_by(&mut self, lines: i32) {
        let max = self.model.screen().scrollback_len();
        let target = if lines >= 0 {
            self.offset.saturating_add(lines.unsigned_abs() as usize)
        } else {
            self.offset.saturating_sub(lines.unsigned_abs() as usize)
        };
        let target = target.min(max);
        if target != self.offset {
            self.offset = target;
            self.dirty = true;
        }
    }

    /// Back to the live screen.
    pub fn scroll_to_bottom(&mut self) {
        if self.offset != 0 {
            self.offset = 0;
            self.dirty = true;
        }
    }

    /// The container's size changed to `rows` × `cols`: this viewer's vote
    /// for the PTY's size. The model keeps the PTY's size once the server
    /// told it (a smaller viewer scrolls; see `harness_pty` sizing).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let fit = harness_term::clamp_size(rows, cols);
        if fit == self.fit {
            return;
        }
        self.fit = fit;
        if !self.pty_sized {
            self.set_model_size(fit.0, fit.1);
        }
        if self.connected {
            self.send(ClientMsg::Resize {
                rows: fit.0,
                cols: fit.1,
            });
        }
    }

    fn set_model_size(&mut self, rows: u16, cols: u16) {
        let before = self.size();
        self.model.resize(rows, cols);
        if self.size() != before {
            self.offset = 0;
            self.dirty = true;
            self.cache.invalidate();
        }
    }

    // ---- drawing ----------------------------------------------------------

    /// Draws a frame: calls `draw(row, html)` for each visible row that
    /// changed since the last frame. Returns the cursor's cell (`None`
    /// when hidden or scrolled back).
    pub fn frame(&mut self, draw: impl FnMut(usize, &str)) -> Option<(u16, u16)> {
        self.dirty = false;
        if self.offset == 0 {
            let screen = self.model.screen();
            let cursor = cursor_cell(screen);
            self.cache.frame(screen, cursor, draw);
            cursor.map(|c| (c.row, c.col))
        } else {
            // vt100 shows scrollback through a view offset on the screen;
            // the model is shared, so draw from a copy.
            let mut screen = self.model.screen().clone();
            screen.set_scrollback(self.offset);
            self.cache.frame(&screen, None, draw);
            None
        }
    }

    /// Forgets the drawn rows: the next frame redraws everything.
    pub fn invalidate(&mut self) {
        self.cache.invalidate();
        self.dirty = true;
    }
}

#[cfg(test)]
mod tests;
