//! `Screen::row_text` (one row's text, the agent watcher's read) is the
//! row's line of `Screen::contents` for every kind of cell: ASCII, gaps,
//! two-, three- and four-byte characters, wide characters, combining
//! characters, blank rows.

#[test]
fn a_rows_text_is_its_line_of_the_contents() {
    let size = |n: u16| std::num::NonZeroU16::new(n).expect("not zero");
    let mut p = harness_vt100::Parser::new(size(8), size(20), 0);
    p.process("plain  ascii   text".as_bytes());
    p.process("\x1b[2;1H────────────────────".as_bytes());
    p.process("\x1b[3;3Hé ß\x1b[3;12H❯ ✻ x".as_bytes());
    p.process("\x1b[5;1H表格 😀 e\u{301} a\u{308}\u{323}b".as_bytes());
    p.process("\x1b[6;5H⎿  ◐ medium".as_bytes());
    p.process("\x1b[8;20Hz".as_bytes());
    let screen = p.screen();
    let contents = screen.contents();
    let lines: Vec<&str> = contents.split('\n').collect();
    for row in 0..8u16 {
        let want = lines.get(usize::from(row)).copied().unwrap_or("");
        assert_eq!(screen.row_text(row).as_deref(), Some(want), "row {row}");
    }
    assert_eq!(screen.row_text(1).as_deref(), Some("─".repeat(20).as_str()));
    assert_eq!(screen.row_text(3).as_deref(), Some(""));
    assert_eq!(
        screen.row_text(4).as_deref(),
        Some("表格 😀 e\u{301} a\u{308}\u{323}b")
    );
    assert_eq!(screen.row_text(8), None);
}

/// `Screen::row_key` names a row's contents: whenever a key is seen again,
/// the row's text is the same as when it was first seen — across writes,
/// clears, inserted and deleted cells and lines, scrolling, scrollback,
/// the alternate screen, wide characters and resizes — and a row that
/// changed is never given an old key.
#[test]
fn a_rows_key_changes_with_its_contents_and_only_then() {
    use std::collections::HashMap;
    let size = |n: u16| std::num::NonZeroU16::new(n).expect("not zero");
    let mut p = harness_vt100::Parser::new(size(6), size(12), 50);
    let chunks: &[&str] = &[
        "hello\r\nworld",
        "\x1b[3;4Habc",
        "\x1b[2K",
        "\x1b[1;1H\x1b[2@xy",
        "\x1b[1;3H\x1b[3P",
        "\x1b[6;1H\r\n\r\nscrolled",
        "\x1b[2;1H\x1b[L",
        "\x1b[4;1H\x1b[2M",
        "表格wide\x1b[5;11H表",
        "\x1b[?1049hALT\x1b[2;2Hscreen",
        "\x1b[?1049l",
        "\x1b[5;1H0123456789ABCDEF",
        "\x1b[J",
        "\x1b[1;1H\x1b[1J",
        "\x1b[3;5H\x1b[1K",
        "\x1b[2;1H\x1b[X\x1b[3X",
        "line\r\nline\r\nline\r\nline\r\nline\r\nline\r\nline",
    ];
    let mut seen: HashMap<(u64, u64), String> = HashMap::new();
    let mut check = |p: &harness_vt100::Parser, step: &str| {
        let screen = p.screen();
        for row in 0..screen.size().0.get() {
            let key = screen.row_key(row).expect("a visible row");
            let text = screen.row_text(row).expect("a visible row");
            match seen.get(&key) {
                Some(before) => {
                    assert_eq!(before, &text, "row {row} after {step:?}")
                }
                None => {
                    seen.insert(key, text);
                }
            }
        }
    };
    check(&p, "start");
    for round in 0..3 {
        for chunk in chunks {
            p.process(chunk.as_bytes());
            check(&p, chunk);
        }
        // Scrolled back into the history and forward again.
        p.screen_mut().set_scrollback(3);
        check(&p, "scrolled back");
        p.screen_mut().set_scrollback(0);
        check(&p, "scrolled forward");
        p.set_size(size(5 + round), size(10 + 3 * round));
        check(&p, "resized");
    }
    // An unchanged row keeps its key while another row changes.
    let before = p.screen().row_key(0);
    p.process(b"\x1b[3;1Hxyz");
    assert_eq!(p.screen().row_key(0), before);
    // A clone's rows are rows of their own.
    let clone = p.screen().clone();
    assert_ne!(clone.row_key(0), p.screen().row_key(0));
}
