//! Unit tests of [`Core`](super::Core): connection states, flow control,
//! keys, resize and rendering without a browser.

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
