//! Property tests: arbitrary bytes never panic, chunking never matters, and
//! the snapshot/filter invariants hold on generated terminal traffic.

mod common;

use common::{from_snapshot, visible_state};
use harness_term::{QueryFilter, TerminalModel, is_query, strip_queries};
use proptest::prelude::*;

/// Bytes biased towards escape-sequence material.
fn noisy_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => any::<u8>(),
        3 => prop::sample::select(b"\x1b[];?0123456789mHJKhlrtcnqp$\x07\\P_ \r\n\x18".to_vec()),
        1 => Just(0xe4u8), // start of a 3-byte UTF-8 char
    ];
    prop::collection::vec(byte, 0..1500)
}

/// Well-formed traffic built from real sequences and text.
fn tokens() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        "[a-zA-Z0-9 ]{1,12}".prop_map(String::into_bytes),
        Just("中文".as_bytes().to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\x08".to_vec()),
        (1u16..30, 1u16..90).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        (0u8..8).prop_map(|c| format!("\x1b[3{c};1m").into_bytes()),
        (0u8..=255, 0u8..=255).prop_map(|(a, b)| format!("\x1b[38;2;{a};{b};7m").into_bytes()),
        Just(b"\x1b[m".to_vec()),
        Just(b"\x1b[2J".to_vec()),
        Just(b"\x1b[K".to_vec()),
        (1u16..12, 12u16..26).prop_map(|(t, b)| format!("\x1b[{t};{b}r").into_bytes()),
        Just(b"\x1b[r".to_vec()),
        Just(b"\x1b[?1049h".to_vec()),
        Just(b"\x1b[?1049l".to_vec()),
        Just(b"\x1b[?2004h".to_vec()),
        Just(b"\x1b[?2004l".to_vec()),
        Just(b"\x1b[?25l".to_vec()),
        Just(b"\x1b[?25h".to_vec()),
        Just(b"\x1bM".to_vec()),
        Just(b"\x1b[3L".to_vec()),
        Just(b"\x1b[2M".to_vec()),
        Just(b"\x1b[6n".to_vec()),
        Just(b"\x1b[>c".to_vec()),
        Just(b"\x1b]11;?\x07".to_vec()),
        Just(b"\x1b]0;title\x07".to_vec()),
        Just(b"\x1b]52;c;?\x1b\\".to_vec()),
    ];
    prop::collection::vec(token, 0..120).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in noisy_bytes(), rows in 0u16..300, cols in 0u16..300) {
        let mut m = TerminalModel::new(rows, cols);
        m.feed(&bytes);
        m.resize(cols, rows);
        m.feed(&bytes);
        let _ = m.text();
        let _ = m.snapshot_with_history(50);
        let snap = m.snapshot();
        let mut b = TerminalModel::new(rows, cols);
        b.feed(&snap);
        let _ = strip_queries(&bytes);
    }

    #[test]
    fn chunking_does_not_matter(bytes in noisy_bytes(), cuts in prop::collection::vec(0usize..1500, 0..20)) {
        let whole = { let mut m = TerminalModel::new(24, 80); m.feed(&bytes); m };
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= bytes.len()).collect();
        cuts.sort_unstable();
        let mut split = TerminalModel::new(24, 80);
        let mut filter = QueryFilter::new();
        let mut filtered = Vec::new();
        let mut prev = 0;
        for c in cuts.into_iter().chain([bytes.len()]) {
            split.feed(&bytes[prev..c]);
            filter.filter_into(&bytes[prev..c], &mut filtered);
            prev = c;
        }
        prop_assert_eq!(visible_state(&whole), visible_state(&split));
        prop_assert_eq!(whole.snapshot(), split.snapshot());
        prop_assert_eq!(filtered, strip_queries(&bytes));
    }

    #[test]
    fn utf8_split_anywhere(text in "[a-zé中ȴ�\\x1b\\[m ]{0,40}", cut in 0usize..200) {
        // vte 0.15 loses characters when a chunk ends inside a multi-byte
        // character; the model must not.
        let bytes = text.as_bytes();
        let cut = cut.min(bytes.len());
        let mut whole = TerminalModel::new(4, 80);
        whole.feed(bytes);
        let mut split = TerminalModel::new(4, 80);
        split.feed(&bytes[..cut]);
        split.feed(&bytes[cut..]);
        prop_assert_eq!(whole.text(), split.text());
        prop_assert_eq!(whole.cursor_position(), split.cursor_position());
    }

    #[test]
    fn snapshot_round_trips_and_continues(bytes in tokens(), cut in 0usize..4000) {
        let cut = cut.min(bytes.len());
        let a = { let mut m = TerminalModel::new(24, 80); m.feed(&bytes[..cut]); m };
        let b = from_snapshot(&a);
        prop_assert_eq!(visible_state(&a), visible_state(&b));
        // Continue both with the rest of the stream (filtered, as a viewer
        // would receive it).
        let mut filter = QueryFilter::new();
        filter.filter(&bytes[..cut]);
        let rest = filter.filter(&bytes[cut..]);
        let mut a = a;
        let mut b = b;
        a.feed(&bytes[cut..]);
        b.feed(&rest);
        prop_assert_eq!(visible_state(&a), visible_state(&b));
    }

    #[test]
    fn filtered_output_has_no_queries(bytes in tokens()) {
        let out = strip_queries(&bytes);
        // Re-filtering is the identity: nothing query-like is left.
        prop_assert_eq!(strip_queries(&out), out.clone());
        for q in [&b"\x1b[6n"[..], b"\x1b[>c", b"\x1b]11;?", b"\x1b]52;c;?"] {
            prop_assert!(!out.windows(q.len()).any(|w| w == q));
        }
        prop_assert!(!is_query(b"\x1b[m"));
    }
}

/// Found by `snapshot_round_trips_and_continues` (CI, 2026-12-04): the cursor
/// saved by 1049 with bold attributes, then a pending wrap in the last
/// column of a row the reverse index cleared. The snapshot redrew that
/// cell with the saved attributes instead of its own.
#[test]
fn snapshot_of_a_pending_wrap_after_a_saved_cursor_keeps_the_cells_attributes() {
    let bytes = b"\x1b[1;80H\x1b[?1049h\x1b[30;1m\x1b[?1049h\x1b[?1049lA\x1bM";
    let a = common::fed(bytes);
    let b = from_snapshot(&a);
    assert_eq!(visible_state(&a), visible_state(&b));
}
