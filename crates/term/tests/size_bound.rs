//! the model's size is bounded (a resize to
//! 10000 × 10000 once allocated 2.1 GB) and a shrink gives the memory back.

use harness_term::{MAX_COLS, MAX_ROWS, MIN_SIZE, TerminalModel, clamp_size};

#[test]
fn sizes_are_clamped_by_one_rule() {
    assert_eq!(clamp_size(10000, 10000), (MAX_ROWS, MAX_COLS));
    assert_eq!(clamp_size(0, 1), (MIN_SIZE, MIN_SIZE));
    assert_eq!(clamp_size(24, 80), (24, 80));
    assert_eq!(
        TerminalModel::new(u16::MAX, u16::MAX).size(),
        (MAX_ROWS, MAX_COLS)
    );
}

#[test]
fn a_huge_resize_is_clamped_and_a_shrink_frees_the_cells() {
    let mut m = TerminalModel::new(24, 80);
    m.feed(b"hello\r\n");
    let small = m.allocated_cells();
    m.resize(10000, 10000);
    assert_eq!(m.size(), (MAX_ROWS, MAX_COLS));
    // The alternate screen too (it is allocated when entered).
    m.feed(b"\x1b[?1049hfull screen app\x1b[?1049l");
    let big = m.allocated_cells();
    let bound = 2 * usize::from(MAX_ROWS) * usize::from(MAX_COLS);
    assert!(
        big <= bound,
        "{big} cells for a {MAX_ROWS} × {MAX_COLS} terminal"
    );
    m.feed(b"\x1b[500;1HX at the bottom\r\n");
    m.resize(24, 80);
    assert_eq!(m.size(), (24, 80));
    let after = m.allocated_cells();
    eprintln!("cells: {small} at 24 × 80, {big} at the maximum, {after} after the shrink");
    assert!(
        after < 8 * small + 64 * 1024,
        "the shrink kept {after} cells (was {small} before the growth)"
    );
    assert!(m.text().contains("X at the bottom"), "{}", m.text());
}
