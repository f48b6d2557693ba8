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
            fit: (
                rows.max(harness_term::MIN_SIZE),
                cols.max(harness_term::MIN_SIZE),
            ),
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
        let fit = (
            rows.max(harness_term::MIN_SIZE),
            cols.max(harness_term::MIN_SIZE),
        );
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
mod tests {
    use super::*;
    use crate::flow::ACK_EVERY;

    fn connected() -> Core {
        let mut c = Core::new(5, 20, 100);
        c.on_open();
        c.on_binary(b"\x1bc$ ");
        c.take_outbox();
        c
    }

    fn key(k: &'static str) -> KeyInput<'static> {
        KeyInput {
            key: k,
            ..KeyInput::default()
        }
    }

    fn inputs(c: &mut Core) -> Vec<String> {
        c.take_outbox()
            .into_iter()
            .filter_map(|m| match m {
                ClientMsg::Input { data } => Some(data),
                _ => None,
            })
            .collect()
    }

    fn rows_drawn(c: &mut Core) -> Vec<usize> {
        let mut v = Vec::new();
        c.frame(|r, _| v.push(r));
        v
    }

    #[test]
    fn open_sends_size_and_snapshot_starts_fresh() {
        let mut c = Core::new(24, 80, 100);
        assert_eq!(c.status(), &Status::Connecting);
        c.on_open();
        assert_eq!(c.take_outbox(), [ClientMsg::Resize { rows: 24, cols: 80 }]);
        c.on_binary(b"old screen");
        assert!(c.model().text().starts_with("old screen"));
        assert_eq!(c.status(), &Status::Connected);
        // Reconnect: the snapshot is fed into a fresh model.
        assert_eq!(c.on_close(1006, 0.0), Some(500));
        assert_eq!(c.status_text(), "reconnecting…");
        c.on_open();
        c.on_binary(b"new");
        assert_eq!(c.model().text(), "new");
    }

    #[test]
    fn lagged_resets_before_the_next_snapshot() {
        let mut c = connected();
        c.on_binary(b"abc");
        c.on_text(r#"{"type":"lagged"}"#);
        c.on_binary(b"xyz");
        assert_eq!(c.model().text(), "xyz");
        c.on_binary(b"!");
        assert_eq!(c.model().text(), "xyz!");
    }

    #[test]
    fn acks_count_every_binary_byte_per_connection() {
        let mut c = Core::new(5, 20, 0);
        c.on_open();
        c.take_outbox();
        let chunk = vec![b'x'; 40_000];
        c.on_binary(&chunk);
        assert!(c.take_outbox().is_empty());
        c.on_binary(&chunk);
        assert_eq!(c.take_outbox(), [ClientMsg::Ack { bytes: 80_000 }]);
        c.on_binary(b"12345");
        c.on_idle();
        assert_eq!(c.take_outbox(), [ClientMsg::Ack { bytes: 80_005 }]);
        c.on_idle();
        assert!(c.take_outbox().is_empty());
        // A new connection counts from zero.
        c.on_close(1006, 0.0);
        c.on_open();
        c.take_outbox();
        c.on_binary(b"snap");
        c.on_idle();
        assert_eq!(c.take_outbox(), [ClientMsg::Ack { bytes: 4 }]);
        let big = vec![b'y'; ACK_EVERY as usize * 3];
        c.on_binary(&big);
        assert_eq!(
            c.take_outbox(),
            [ClientMsg::Ack {
                bytes: 4 + 3 * ACK_EVERY
            }]
        );
    }

    #[test]
    fn exit_frame_and_close_code_stop_reconnecting() {
        let mut c = connected();
        c.on_text(r#"{"type":"exit","code":2}"#);
        assert_eq!(c.status_text(), "[process exited with code 2]");
        assert_eq!(c.on_close(4002, 0.5), None);
        assert!(c.exited());

        let mut c = connected();
        assert_eq!(c.on_close(4000, 0.5), None);
        assert_eq!(c.status(), &Status::Exited(0));
        assert_eq!(c.status_text(), "[process exited with code 0]");
        // Exited: keys are not sent.
        c.key(&key("a"), false);
        assert!(inputs(&mut c).is_empty());

        // An exit frame followed by an abnormal close still does not
        // reconnect.
        let mut c = connected();
        c.on_text(r#"{"type":"exit","code":0}"#);
        assert_eq!(c.on_close(1006, 0.5), None);
    }

    #[test]
    fn reconnect_backs_off_and_resets_after_a_snapshot() {
        let mut c = connected();
        let delays: Vec<_> = (0..6).map(|_| c.on_close(1006, 0.0).unwrap()).collect();
        assert_eq!(delays, [500, 1000, 2000, 4000, 8000, 8000]);
        c.on_open();
        // Opened but no snapshot yet: still backing off.
        assert_eq!(c.on_close(1011, 0.0), Some(8000));
        c.on_open();
        c.on_binary(b"snap");
        assert_eq!(c.on_close(1001, 0.0), Some(500));
    }

    #[test]
    fn error_messages_show_in_the_status() {
        let mut c = connected();
        c.on_text(r#"{"type":"error","message":"PTY gone"}"#);
        assert_eq!(c.error(), Some("PTY gone"));
        assert_eq!(c.status_text(), "PTY gone");
    }

    #[test]
    fn typing_sends_input_and_disconnected_typing_is_dropped() {
        let mut c = connected();
        for k in ["l", "s", "Enter"] {
            assert_eq!(c.key(&key(k), false), KeyOutcome::Handled);
        }
        assert_eq!(inputs(&mut c), ["l", "s", "\r"]);
        c.on_close(1006, 0.0);
        c.key(&key("x"), false);
        c.paste("y");
        assert!(inputs(&mut c).is_empty());
    }

    #[test]
    fn application_cursor_mode_comes_from_the_model() {
        let mut c = connected();
        c.key(&key("ArrowUp"), false);
        c.on_binary(b"\x1b[?1h");
        c.key(&key("ArrowUp"), false);
        c.on_binary(b"\x1b[?1l");
        c.key(&key("ArrowUp"), false);
        assert_eq!(inputs(&mut c), ["\x1b[A", "\x1bOA", "\x1b[A"]);
    }

    #[test]
    fn copy_and_paste_keys_go_to_the_browser() {
        let mut c = connected();
        let ctrl_c = KeyInput {
            key: "c",
            code: "KeyC",
            ctrl: true,
            ..KeyInput::default()
        };
        assert_eq!(c.key(&ctrl_c, true), KeyOutcome::Browser);
        assert!(inputs(&mut c).is_empty());
        assert_eq!(c.key(&ctrl_c, false), KeyOutcome::Handled);
        assert_eq!(inputs(&mut c), ["\x03"]);
        let cmd_c = KeyInput {
            meta: true,
            ..ctrl_c
        };
        let cmd_c = KeyInput {
            ctrl: false,
            ..cmd_c
        };
        assert_eq!(c.key(&cmd_c, true), KeyOutcome::Browser);
        let ctrl_shift_c = KeyInput {
            key: "C",
            shift: true,
            ..ctrl_c
        };
        assert_eq!(c.key(&ctrl_shift_c, false), KeyOutcome::Browser);
        for paste in [
            KeyInput {
                key: "v",
                ctrl: true,
                ..KeyInput::default()
            },
            KeyInput {
                key: "V",
                ctrl: true,
                shift: true,
                ..KeyInput::default()
            },
            KeyInput {
                key: "v",
                meta: true,
                ..KeyInput::default()
            },
            KeyInput {
                key: "Insert",
                shift: true,
                ..KeyInput::default()
            },
        ] {
            assert_eq!(c.key(&paste, false), KeyOutcome::Browser, "{paste:?}");
        }
        assert!(inputs(&mut c).is_empty());
    }

    #[test]
    fn paste_follows_bracketed_paste_mode() {
        let mut c = connected();
        c.paste("a\nb");
        c.on_binary(b"\x1b[?2004h");
        c.paste("x\x1b[201~\nrm -rf /\n");
        c.on_binary(b"\x1b[?2004l");
        c.paste("z");
        assert_eq!(
            inputs(&mut c),
            ["a\rb", "\x1b[200~x\rrm -rf /\r\x1b[201~", "z"]
        );
    }

    #[test]
    fn terminal_queries_never_produce_replies() {
        let mut c = connected();
        // DA1/DA2, DSR/CPR, title report, window size report, DECRQM,
        // DECRQSS, XTGETTCAP, OSC 52 read, OSC colour queries, ENQ,
        // XTVERSION, kitty keyboard query.
        let queries: &[&[u8]] = &[
            b"\x1b[c",
            b"\x1b[>c",
            b"\x1b[5n",
            b"\x1b[6n",
            b"\x1b[21t",
            b"\x1b[18t",
            b"\x1b[?2004$p",
            b"\x1bP$qm\x1b\\",
            b"\x1bP+q544e\x1b\\",
            b"\x1b]52;c;?\x07",
            b"\x1b]10;?\x07",
            b"\x1b]11;?\x1b\\",
            b"\x1b]4;1;?\x07",
            b"\x05",
            b"\x1b[>q",
            b"\x1b[?u",
            b"\x1b]2;evil title\x07\x1b[21t",
        ];
        for q in queries {
            c.on_binary(q);
            c.frame(|_, _| {});
            let out = c.take_outbox();
            assert!(
                out.iter().all(|m| matches!(m, ClientMsg::Ack { .. })),
                "{q:?} → {out:?}"
            );
        }
        c.on_idle();
        assert!(
            c.take_outbox()
                .iter()
                .all(|m| matches!(m, ClientMsg::Ack { .. }))
        );
    }

    #[test]
    fn frames_redraw_only_changed_rows() {
        let mut c = connected();
        assert_eq!(rows_drawn(&mut c), [0, 1, 2, 3, 4]);
        assert!(!c.is_dirty());
        assert!(rows_drawn(&mut c).is_empty());
        c.on_binary(b"ls");
        assert!(c.is_dirty());
        assert_eq!(rows_drawn(&mut c), [0]);
        c.on_binary(b"\r\nfile");
        assert_eq!(rows_drawn(&mut c), [0, 1]);
        // A snapshot after reconnecting redraws everything.
        c.on_close(1006, 0.0);
        c.on_open();
        c.on_binary(b"\x1bc");
        assert_eq!(rows_drawn(&mut c), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn scrollback_view_and_return_on_input() {
        let mut c = connected();
        for i in 0..30 {
            c.on_binary(format!("line {i}\r\n").as_bytes());
        }
        c.frame(|_, _| {});
        let shift_pgup = KeyInput {
            key: "PageUp",
            shift: true,
            ..KeyInput::default()
        };
        assert_eq!(c.key(&shift_pgup, false), KeyOutcome::Handled);
        assert_eq!(c.scroll_offset(), 4);
        let mut html = Vec::new();
        let cursor = c.frame(|r, h| html.push((r, h.to_owned())));
        assert_eq!(cursor, None);
        assert_eq!(html[0].1, "line 22");
        // More output keeps the view on the same lines.
        c.on_binary(b"line 30\r\n");
        assert_eq!(c.scroll_offset(), 5);
        assert!(c.frame(|_, _| {}).is_none());
        // Wheel down, clamped at the live screen.
        c.wheel(-100);
        assert_eq!(c.scroll_offset(), 0);
        c.wheel(1000);
        assert_eq!(c.scroll_offset(), c.model().screen().scrollback_len());
        // Typing returns to the bottom.
        c.key(&key("x"), false);
        assert_eq!(c.scroll_offset(), 0);
        assert!(c.frame(|_, _| {}).is_some());
        assert_eq!(inputs(&mut c), ["x"]);
    }

    #[test]
    fn wheel_on_alternate_screen_sends_arrows() {
        let mut c = connected();
        c.on_binary(b"\x1b[?1049h");
        c.wheel(WHEEL_LINES);
        c.wheel(-1);
        c.on_binary(b"\x1b[?1h");
        c.wheel(1);
        assert_eq!(inputs(&mut c), ["\x1b[A\x1b[A\x1b[A", "\x1b[B", "\x1bOA"]);
        assert_eq!(c.scroll_offset(), 0);
    }

    #[test]
    fn the_pty_size_from_the_server_wins_over_the_container() {
        let mut c = Core::new(24, 43, 0);
        c.on_open();
        assert_eq!(c.take_outbox(), [ClientMsg::Resize { rows: 24, cols: 43 }]);
        // A larger viewer holds the PTY at 40 × 160: draw that, keep voting.
        c.on_text(r#"{"type":"size","rows":40,"cols":160}"#);
        assert_eq!(c.size(), (40, 160));
        c.on_binary(b"snapshot");
        assert_eq!(c.size(), (40, 160));
        c.resize(20, 40);
        assert_eq!(
            c.size(),
            (40, 160),
            "the container does not resize the model"
        );
        assert_eq!(c.take_outbox(), [ClientMsg::Resize { rows: 20, cols: 40 }]);
        c.on_text(r#"{"type":"size","rows":20,"cols":40}"#);
        assert_eq!(c.size(), (20, 40));
    }

    #[test]
    fn resize_tells_the_server_when_connected() {
        let mut c = Core::new(24, 80, 0);
        c.resize(30, 100);
        assert!(c.take_outbox().is_empty());
        c.on_open();
        assert_eq!(
            c.take_outbox(),
            [ClientMsg::Resize {
                rows: 30,
                cols: 100
            }]
        );
        c.resize(30, 100);
        assert!(c.take_outbox().is_empty());
        c.resize(1, 1);
        assert_eq!(c.take_outbox(), [ClientMsg::Resize { rows: 2, cols: 2 }]);
        // A snapshot after a resize keeps the new size.
        c.on_binary(b"x");
        assert_eq!(c.size(), (2, 2));
    }
}
