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
