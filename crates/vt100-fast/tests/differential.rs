//! Differential test: this fork against upstream vt100 0.18.1, fed the same
//! byte streams (random mixes of text, controls and escape sequences, split
//! into chunks at random points, with resizes in between, and the recorded
//! fixtures of `harness-term`). After every step both must agree on
//! everything observable: the full `Debug` dump of the screen (every cell's
//! bytes and flags, cursor, saved cursor, scroll region, modes, scrollback),
//! the formatted and plain contents, diffs against the previous state,
//! every cell through the public API, the modes, the callbacks they fired
//! (title, icon name, clipboard, bells, scrolled-off rows, unhandled
//! sequences), and the same at several scrollback offsets.

use std::fmt::Write as _;
use std::num::NonZeroU16;
use std::panic::{AssertUnwindSafe, catch_unwind};

use proptest::prelude::*;

/// Generates, for one crate, a callbacks recorder and a snapshot function
/// that renders every observable piece of state into one string.
macro_rules! harness_for {
    ($m:ident, $krate:ident) => {
        mod $m {
            use std::fmt::Write as _;

            use $krate as vt;

            #[derive(Default)]
            pub struct Rec {
                pub log: String,
                scroll: vt::capture::BasicFormattedCaptureState,
            }

            impl vt::Callbacks for Rec {
                fn audible_bell(&mut self, _: &mut vt::Screen) {
                    self.log.push_str("bell\n");
                }
                fn visual_bell(&mut self, _: &mut vt::Screen) {
                    self.log.push_str("vbell\n");
                }
                fn resize(&mut self, _: &mut vt::Screen, r: (u16, u16)) {
                    let _ = writeln!(self.log, "resize {r:?}");
                }
                fn set_window_icon_name(&mut self, _: &mut vt::Screen, s: &[u8]) {
                    let _ = writeln!(self.log, "icon {s:?}");
                }
                fn set_window_title(&mut self, _: &mut vt::Screen, s: &[u8]) {
                    let _ = writeln!(self.log, "title {s:?}");
                }
                fn copy_to_clipboard(&mut self, _: &mut vt::Screen, ty: &[u8], d: &[u8]) {
                    let _ = writeln!(self.log, "copy {ty:?} {d:?}");
                }
                fn paste_from_clipboard(&mut self, _: &mut vt::Screen, ty: &[u8]) {
                    let _ = writeln!(self.log, "paste {ty:?}");
                }
                fn unhandled_char(&mut self, _: &mut vt::Screen, c: char) {
                    let _ = writeln!(self.log, "char {c:?}");
                }
                fn unhandled_control(&mut self, _: &mut vt::Screen, b: u8) {
                    let _ = writeln!(self.log, "ctl {b}");
                }
                fn unhandled_escape(
                    &mut self,
                    _: &mut vt::Screen,
                    i1: Option<u8>,
                    i2: Option<u8>,
                    b: u8,
                ) {
                    let _ = writeln!(self.log, "esc {i1:?} {i2:?} {b}");
                }
                fn unhandled_csi(
                    &mut self,
                    _: &mut vt::Screen,
                    i1: Option<u8>,
                    i2: Option<u8>,
                    p: &[&[u16]],
                    c: char,
                ) {
                    let _ = writeln!(self.log, "csi {i1:?} {i2:?} {p:?} {c:?}");
                }
                fn unhandled_osc(&mut self, _: &mut vt::Screen, p: &[&[u8]]) {
                    let _ = writeln!(self.log, "osc {p:?}");
                }
                fn on_scroll(&mut self, row: vt::capture::RowContents<'_>, alt: bool) {
                    let mut s = String::new();
                    row.write_formatted_basic(&mut s, &mut self.scroll).unwrap();
                    let _ = writeln!(self.log, "scroll {alt} {s:?}");
                }
            }

            pub type Parser = vt::Parser<Rec>;

            pub fn new(rows: u16, cols: u16, sb: usize) -> Parser {
                vt::Parser::new_with_callbacks(super::nz(rows), super::nz(cols), sb, Rec::default())
            }

            pub fn set_size(p: &mut Parser, rows: u16, cols: u16) {
                p.set_size(super::nz(rows), super::nz(cols));
            }

            /// The visible screen through the public API.
            fn visible(s: &vt::Screen, out: &mut String) {
                let (rows, cols) = s.size();
                let (rows, cols) = (rows.get(), cols.get());
                let _ = writeln!(out, "contents {:?}", s.contents());
                let _ = writeln!(out, "formatted {:?}", s.contents_formatted());
                let _ = writeln!(out, "basic {:?}", s.contents_formatted_basic());
                let _ = writeln!(out, "rows {:?}", s.rows(0, cols).collect::<Vec<_>>());
                let _ = writeln!(out, "rows1 {:?}", s.rows(1, cols / 2).collect::<Vec<_>>());
                let _ = writeln!(
                    out,
                    "rowsf {:?}",
                    s.rows_formatted(0, cols).collect::<Vec<_>>()
                );
                let _ = writeln!(
                    out,
                    "between {:?}",
                    s.contents_between(0, 1, rows / 2, cols / 2)
                );
                for r in 0..rows {
                    let _ = write!(out, "{}", u8::from(s.row_wrapped(r)));
                    for c in 0..cols {
                        match s.cell(r, c) {
                            None => out.push('-'),
                            Some(cell) => {
                                let _ = write!(
                                    out,
                                    "[{:?} {}{}{} {:?} {:?} {}{}{}{}{}]",
                                    cell.contents(),
                                    u8::from(cell.has_contents()),
                                    u8::from(cell.is_wide()),
                                    u8::from(cell.is_wide_continuation()),
                                    cell.fgcolor(),
                                    cell.bgcolor(),
                                    u8::from(cell.bold()),
                                    u8::from(cell.dim()),
                                    u8::from(cell.italic()),
                                    u8::from(cell.underline()),
                                    u8::from(cell.inverse()),
                                );
                            }
                        }
                    }
                    out.push('\n');
                }
            }

            /// Everything observable; `prev` is the state at the previous
            /// snapshot (for the diff methods). Views scrollback at several
            /// offsets and returns to the live screen (offset 0), as the
            /// embedders do.
            pub fn snapshot(p: &mut Parser, prev: &vt::Screen, deep: bool) -> String {
                let mut out = String::new();
                let s = p.screen();
                if deep {
                    let _ = writeln!(out, "debug {s:?}");
                }
                let _ = writeln!(
                    out,
                    "size {:?} cursor {:?} sb {} {} {}",
                    s.size(),
                    s.cursor_position(),
                    s.scrollback(),
                    s.scrollback_len(),
                    s.scrollback_capacity()
                );
                let _ = writeln!(
                    out,
                    "modes alt={} keypad={} appcur={} hide={} paste={} mouse={:?}/{:?} style={:?}",
                    s.alternate_screen(),
                    s.application_keypad(),
                    s.application_cursor(),
                    s.hide_cursor(),
                    s.bracketed_paste(),
                    s.mouse_protocol_mode(),
                    s.mouse_protocol_encoding(),
                    s.cursor_style(),
                );
                let _ = writeln!(
                    out,
                    "attrs {:?} {:?} {}{}{}{}{} {:?}",
                    s.fgcolor(),
                    s.bgcolor(),
                    u8::from(s.bold()),
                    u8::from(s.dim()),
                    u8::from(s.italic()),
                    u8::from(s.underline()),
                    u8::from(s.inverse()),
                    s.attributes_formatted(),
                );
                let _ = writeln!(out, "state {:?}", s.state_formatted());
                let _ = writeln!(out, "input {:?}", s.input_mode_formatted());
                let _ = writeln!(out, "cursor {:?}", s.cursor_state_formatted());
                let _ = writeln!(out, "state_diff {:?}", s.state_diff(prev));
                let _ = writeln!(out, "contents_diff {:?}", s.contents_diff(prev));
                let _ = writeln!(out, "input_diff {:?}", s.input_mode_diff(prev));
                let _ = writeln!(
                    out,
                    "rows_diff {:?}",
                    s.rows_diff(prev, 0, s.size().1.get()).collect::<Vec<_>>()
                );
                let mut full = String::new();
                s.write_contents_formatted_basic(
                    &mut full,
                    vt::capture::BasicFormattedCaptureRange::Full(&mut Default::default()),
                )
                .unwrap();
                let _ = writeln!(out, "full {full:?}");
                visible(s, &mut out);
                let _ = writeln!(
                    out,
                    "callbacks\n{}",
                    std::mem::take(&mut p.callbacks_mut().log)
                );

                let len = p.screen().scrollback_len();
                let rows = usize::from(p.screen().size().0.get());
                let all = [
                    1,
                    2,
                    rows / 2 + 1,
                    len / 2,
                    len.saturating_sub(1),
                    len,
                    len + 5,
                ];
                for off in if deep { &all[..] } else { &all[5..6] } {
                    let off = *off;
                    if off == 0 {
                        continue;
                    }
                    p.screen_mut().set_scrollback(off);
                    let _ = writeln!(out, "== scrollback {off} -> {}", p.screen().scrollback());
                    visible(p.screen(), &mut out);
                }
                p.screen_mut().set_scrollback(0);
                if deep {
                    let _ = writeln!(out, "debug after views {:?}", p.screen());
                }
                out
            }
        }
    };
}

harness_for!(fork, harness_vt100);
harness_for!(upstream, vt100_upstream);

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN)
}

/// One step of a run.
#[derive(Clone, Debug)]
enum Op {
    /// Bytes, handed to `process` in pieces split at these offsets.
    Feed(Vec<u8>, Vec<usize>),
    Resize(u16, u16),
}

/// Both parsers side by side; panics (with both outputs) on any difference.
struct Pair {
    f: fork::Parser,
    u: upstream::Parser,
    prev_f: harness_vt100::Screen,
    prev_u: vt100_upstream::Screen,
    /// Set once both panicked on the same step: the run ends there.
    dead: bool,
    checks: usize,
}

impl Pair {
    fn new(rows: u16, cols: u16, sb: usize) -> Self {
        let f = fork::new(rows, cols, sb);
        let u = upstream::new(rows, cols, sb);
        let prev_f = f.screen().clone();
        let prev_u = u.screen().clone();
        Self {
            f,
            u,
            prev_f,
            prev_u,
            dead: false,
            checks: 0,
        }
    }

    /// Applies `op` to both; a panic must happen in both or in neither.
    fn apply(&mut self, op: &Op, ctx: &str) {
        if self.dead {
            return;
        }
        let run_f =
            catch_unwind(AssertUnwindSafe(|| apply_fork(&mut self.f, op)));
        let run_u = catch_unwind(AssertUnwindSafe(|| {
            apply_upstream(&mut self.u, op)
        }));
        match (run_f.is_ok(), run_u.is_ok()) {
            (true, true) => {}
            (false, false) => self.dead = true,
            (f, u) => panic!("{ctx}: fork ok={f}, upstream ok={u} on {op:?}"),
        }
    }

    fn check(&mut self, ctx: &str) {
        if self.dead {
            return;
        }
        // The full `Debug` dump (every byte of every cell, scrollback
        // included) is costly on big screens: always on small ones, every
        // 8th check otherwise. The public views are compared every time.
        let s = self.f.screen();
        let cells = (usize::from(s.size().0.get()) + s.scrollback_len())
            * usize::from(s.size().1.get());
        let deep = (cells <= 10_000 && self.checks.is_multiple_of(2))
            || self.checks.is_multiple_of(8);
        self.checks += 1;
        let a = fork::snapshot(&mut self.f, &self.prev_f, deep);
        let b = upstream::snapshot(&mut self.u, &self.prev_u, deep);
        if a != b {
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            let show = |s: &str| -> String {
                let l = line.unwrap_or(0);
                s.lines().nth(l).unwrap_or("").chars().take(3000).collect()
            };
            panic!(
                "{ctx}: fork and upstream differ (line {line:?})\nfork:     {}\nupstream: {}",
                show(&a),
                show(&b)
            );
        }
        self.prev_f = self.f.screen().clone();
        self.prev_u = self.u.screen().clone();
    }
}

fn apply_fork(p: &mut fork::Parser, op: &Op) {
    match op {
        Op::Feed(bytes, cuts) => feed(bytes, cuts, |c| p.process(c)),
        Op::Resize(r, c) => fork::set_size(p, *r, *c),
    }
}

fn apply_upstream(p: &mut upstream::Parser, op: &Op) {
    match op {
        Op::Feed(bytes, cuts) => feed(bytes, cuts, |c| p.process(c)),
        Op::Resize(r, c) => upstream::set_size(p, *r, *c),
    }
}

fn feed(bytes: &[u8], cuts: &[usize], mut f: impl FnMut(&[u8])) {
    let mut at = 0;
    for &cut in cuts {
        let cut = cut.min(bytes.len()).max(at);
        f(&bytes[at..cut]);
        at = cut;
    }
    f(&bytes[at..]);
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const TEXT: &[&str] = &[
    "a",
    "hello world",
    "x",
    " ",
    "~",
    "0123456789",
    "é",
    "ü",
    "ß",
    "Ω",
    "中",
    "文字",
    "😀",
    "👍🏽",
    "\u{301}",
    "e\u{301}",
    "\u{20dd}",
    "\u{200d}",
    "\u{fe0f}",
    "❤\u{fe0f}",
    "\u{17d8}",
    "\u{ff21}",
    "\u{85}",
    "\u{9b}",
    "\u{fffd}",
    "\u{a0}",
    "\u{ad}",
    "한",
    "ｱ",
    "\u{1f1fa}\u{1f1f8}",
    "\u{300}\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}",
];
const CONTROLS: &[u8] = &[
    0, 1, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x18, 0x1a, 0x1c, 0x7f,
];
const CSI_FINALS: &[char] = &[
    '@', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'f', 'J', 'K', 'L', 'M',
    'P', 'S', 'T', 'X', '`', 'b', 'd', 'm', 'r', 't', 'n', 'c', 'h', 'l',
    's', 'u', 'Z', 'g', 'q',
];
const MODES: &[u16] = &[
    1, 3, 5, 6, 7, 9, 12, 25, 47, 1000, 1002, 1003, 1004, 1005, 1006, 1015,
    1047, 1048, 1049, 2004,
];
const SGR: &[&str] = &[
    "",
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "22",
    "23",
    "24",
    "27",
    "30",
    "31",
    "37",
    "39",
    "40",
    "44",
    "49",
    "90",
    "97",
    "100",
    "107",
    "38;5;196",
    "48;5;17",
    "38;2;1;2;3",
    "48;2;255;0;128",
    "38:5:3",
    "38:2::1:2:3",
    "1;4;31;42",
    "5",
    "8",
    "9",
    "21",
    "53",
    "38;5",
    "38;2;1",
];

fn param(r: &mut Rng) -> String {
    match r.below(6) {
        0 => String::new(),
        1 => "0".into(),
        2 => "1".into(),
        3 => r.below(10).to_string(),
        4 => r.below(120).to_string(),
        _ => r.below(70000).to_string(),
    }
}

/// One random piece of terminal output.
fn token(r: &mut Rng, out: &mut Vec<u8>) {
    match r.below(100) {
        // Plain ASCII runs dominate real output.
        0..=29 => {
            let max = if r.chance(20) { 300 } else { 40 };
            let n = 1 + r.below(max);
            for _ in 0..n {
                out.push(b' ' + r.below(95) as u8);
            }
        }
        30..=39 => out.extend_from_slice(r.pick(TEXT).as_bytes()),
        40..=47 => {
            out.extend_from_slice(if r.chance(70) { b"\r\n" } else { b"\n" })
        }
        48..=53 => out.push(*r.pick(CONTROLS)),
        54..=71 => {
            // CSI with parameters
            out.extend_from_slice(b"\x1b[");
            match r.below(10) {
                0 => out.push(b'?'),
                1 => out.push(b'>'),
                _ => {}
            }
            let n = r.below(4);
            for i in 0..n {
                if i > 0 {
                    out.push(b';');
                }
                out.extend_from_slice(param(r).as_bytes());
            }
            if r.chance(5) {
                out.push(b' ');
            }
            let mut buf = [0; 4];
            out.extend_from_slice(
                r.pick(CSI_FINALS).encode_utf8(&mut buf).as_bytes(),
            );
        }
        72..=77 => {
            let _ = write!(
                Bytes(out),
                "\x1b[{}{}",
                r.pick(SGR),
                if r.chance(95) { "m" } else { "" }
            );
        }
        78..=81 => {
            let set = if r.chance(50) { 'h' } else { 'l' };
            let _ = write!(Bytes(out), "\x1b[?{}{set}", r.pick(MODES));
        }
        82..=84 => {
            // scroll region, often followed by moves
            let top = r.below(30);
            let bottom = r.below(30);
            let _ = write!(Bytes(out), "\x1b[{top};{bottom}r");
        }
        85..=88 => {
            let esc: &[&[u8]] = &[
                b"\x1b7", b"\x1b8", b"\x1b=", b"\x1b>", b"\x1bM", b"\x1bD",
                b"\x1bE", b"\x1bH", b"\x1bg", b"\x1b(B", b"\x1b(0",
                b"\x1b#8", b"\x1b%G", b"\x1bc", b"\x1b\\", b"\x1b",
            ];
            // a full reset is rare, so the screen has time to fill up
            let e = r.pick(esc);
            if *e != b"\x1bc" || r.chance(10) {
                out.extend_from_slice(e);
            }
        }
        89..=92 => {
            let osc: &[&str] = &[
                "\x1b]0;title\x07",
                "\x1b]2;other title\x1b\\",
                "\x1b]1;icon\x07",
                "\x1b]52;c;aGVsbG8=\x07",
                "\x1b]52;c;?\x07",
                "\x1b]52;z;!!\x07",
                "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
                "\x1b]11;?\x07",
                "\x1b]0;中文\x07",
                "\x1bP$qm\x1b\\",
                "\x1bPq#0;2;0;0;0\x1b\\",
                "\x1b_apc\x1b\\",
                "\x1b]0;unterminated",
            ];
            out.extend_from_slice(r.pick(osc).as_bytes());
        }
        93..=95 => {
            // invalid or truncated UTF-8
            let bad: &[&[u8]] = &[
                b"\xff",
                b"\xc3",
                b"\xe4\xb8",
                b"\x80",
                b"\xf0\x9f\x98",
                b"\xc0\xaf",
                b"\xed\xa0\x80",
            ];
            let b: &&[u8] = r.pick(bad);
            out.extend_from_slice(b);
        }
        _ => {
            // cursor to a random place (often the last columns, where
            // wrapping and wide characters interact)
            let row = r.below(30);
            let col = if r.chance(50) {
                75 + r.below(10)
            } else {
                r.below(100)
            };
            let _ = write!(Bytes(out), "\x1b[{row};{col}H");
        }
    }
}

struct Bytes<'a>(&'a mut Vec<u8>);
impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

fn random_cuts(r: &mut Rng, len: usize) -> Vec<usize> {
    let n = r.below(6);
    let mut cuts: Vec<usize> =
        (0..n).map(|_| r.below(len as u64 + 1) as usize).collect();
    cuts.sort_unstable();
    cuts
}

/// A seeded run: random size and scrollback, random ops, checked after each.
/// Returns the number of steps compared (both parsers may panic on the same
/// input, e.g. in upstream's debug assertions; the run stops there).
fn run_seed(seed: u64, steps: usize) -> usize {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let sizes = [
        (24, 80),
        (5, 10),
        (2, 2),
        (1, 1),
        (3, 1),
        (1, 5),
        (10, 40),
        (30, 100),
        (4, 3),
    ];
    let (rows, cols) = *r.pick(&sizes);
    let sb = *r.pick(&[0usize, 1, 3, 10, 100]);
    let mut pair = Pair::new(rows, cols, sb);
    for step in 0..steps {
        let op = if r.chance(8) {
            let (rows, cols) = if r.chance(50) {
                *r.pick(&sizes)
            } else {
                (1 + r.below(40) as u16, 1 + r.below(120) as u16)
            };
            Op::Resize(rows, cols)
        } else {
            let mut bytes = Vec::new();
            for _ in 0..1 + r.below(30) {
                token(&mut r, &mut bytes);
            }
            let cuts = random_cuts(&mut r, bytes.len());
            Op::Feed(bytes, cuts)
        };
        let ctx = format!("seed {seed} step {step} ({rows}x{cols} sb {sb})");
        pair.apply(&op, &ctx);
        pair.check(&ctx);
        if pair.dead {
            return step;
        }
    }
    steps
}

#[test]
fn seeded_random_streams() {
    // DIFF_SEEDS=2000 (best with --release) for a longer soak.
    let seeds: u64 = std::env::var("DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let steps = 40;
    let compared: usize = (0..seeds).map(|seed| run_seed(seed, steps)).sum();
    // Most runs must go the distance, or the test is not testing much.
    assert!(
        compared * 10 >= seeds as usize * steps * 7,
        "only {compared} steps compared"
    );
    eprintln!(
        "{seeds} seeds: {compared} of {} steps compared",
        seeds as usize * steps
    );
}

/// Long runs at the usual size: text-heavy, so the screen scrolls and the
/// scrollback fills and recycles its rows many times over.
#[test]
fn long_scrolling_runs() {
    for seed in 0..4u64 {
        let mut r = Rng(seed + 1000);
        let sb = [0, 1, 50, 200][seed as usize % 4];
        let mut pair = Pair::new(24, 80, sb);
        for step in 0..100 {
            let mut bytes = Vec::new();
            for _ in 0..200 {
                if r.chance(70) {
                    let n = r.below(100);
                    for _ in 0..n {
                        bytes.push(b' ' + r.below(95) as u8);
                    }
                    bytes.extend_from_slice(b"\r\n");
                } else {
                    token(&mut r, &mut bytes);
                }
            }
            let cuts = random_cuts(&mut r, bytes.len());
            let ctx = format!("long seed {seed} step {step}");
            pair.apply(&Op::Feed(bytes, cuts), &ctx);
            if step % 10 == 9 {
                pair.check(&ctx);
            }
        }
        pair.checks = 0;
        pair.check(&format!("long seed {seed} end"));
    }
}

/// The recorded sessions of `harness-term` (bash, vim, less, top, tmux, …)
/// and the benchmark stream when present, at a few sizes, in random chunks.
#[test]
fn recorded_fixtures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../term/tests/fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "fixtures missing in {}", dir.display());
    for (i, path) in files.iter().enumerate() {
        let data = std::fs::read(path).unwrap();
        for (rows, cols, sb) in [(24, 80, 1000), (10, 33, 5), (50, 132, 0)] {
            let mut r = Rng(i as u64 * 7 + u64::from(cols));
            let mut pair = Pair::new(rows, cols, sb);
            let mut at = 0;
            let mut n = 0;
            while at < data.len() {
                let max = if r.chance(30) { 8 } else { 4096 };
                let len = 1 + r.below(max) as usize;
                let end = (at + len).min(data.len());
                let ctx = format!("{} {rows}x{cols} at {at}", path.display());
                pair.apply(&Op::Feed(data[at..end].to_vec(), vec![]), &ctx);
                n += 1;
                if n % 16 == 0 {
                    pair.check(&ctx);
                }
                at = end;
            }
            pair.checks = 0;
            pair.check(&format!("{} {rows}x{cols} end", path.display()));
        }
    }
    let bench = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../webterm/www/data/ls-lR.bin");
    if let Ok(data) = std::fs::read(&bench) {
        let data = &data[..data.len().min(600_000)];
        let mut pair = Pair::new(24, 80, 300);
        for (k, chunk) in data.chunks(64 * 1024 + 7).enumerate() {
            pair.apply(
                &Op::Feed(chunk.to_vec(), vec![chunk.len() / 3]),
                "ls-lR",
            );
            if k % 4 == 3 {
                pair.check(&format!("ls-lR chunk {k}"));
            }
        }
        pair.checks = 0;
        pair.check("ls-lR end");
    }
}

fn arb_token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => proptest::collection::vec(0x20u8..0x7f, 1..100),
        2 => any::<u64>().prop_map(|s| {
            let mut r = Rng(s | 1);
            let mut out = Vec::new();
            token(&mut r, &mut out);
            out
        }),
        1 => proptest::collection::vec(any::<u8>(), 1..8),
        1 => Just(b"\r\n".to_vec()),
    ]
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        9 => (proptest::collection::vec(arb_token(), 1..20), proptest::collection::vec(0usize..400, 0..4))
            .prop_map(|(toks, mut cuts)| {
                cuts.sort_unstable();
                Op::Feed(toks.concat(), cuts)
            }),
        1 => (1u16..30, 1u16..100).prop_map(|(r, c)| Op::Resize(r, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn proptest_streams(
        rows in 1u16..30,
        cols in 1u16..100,
        sb in prop_oneof![Just(0usize), Just(2), Just(20)],
        ops in proptest::collection::vec(arb_op(), 1..12),
    ) {
        let mut pair = Pair::new(rows, cols, sb);
        for (i, op) in ops.iter().enumerate() {
            let ctx = format!("op {i}");
            pair.apply(op, &ctx);
            pair.check(&ctx);
        }
    }
}
