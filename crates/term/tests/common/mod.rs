//! Helpers shared by the integration tests.
#![allow(dead_code)]

use harness_term::TerminalModel;

pub const FIXTURES: &[&str] = &[
    "vim",
    "vim_scroll",
    "less",
    "top",
    "top_batch",
    "tmux",
    "colors",
    "bash",
];

pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}.bin", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn fed(bytes: &[u8]) -> TerminalModel {
    let mut m = TerminalModel::new(24, 80);
    m.feed(bytes);
    m
}

/// Everything a viewer can see or that changes how the next bytes render.
pub fn visible_state(m: &TerminalModel) -> String {
    let s = m.screen();
    format!(
        "{:?}|{:?}|alt={} paste={} hidden={} keypad={} appcur={} mouse={:?}/{:?}\n{}",
        m.size(),
        m.cursor_position(),
        m.alternate_screen(),
        m.bracketed_paste_enabled(),
        m.cursor_hidden(),
        s.application_keypad(),
        s.application_cursor(),
        s.mouse_protocol_mode(),
        s.mouse_protocol_encoding(),
        s.contents_formatted().replace('\x1b', "^"),
    )
}

/// A model that received only `a`'s snapshot.
pub fn from_snapshot(a: &TerminalModel) -> TerminalModel {
    let (rows, cols) = a.size();
    let mut b = TerminalModel::new(rows, cols);
    b.feed(&a.snapshot());
    b
}
