//! Native parse rate on a recorded stream (24×80, 64 KiB chunks, best of 5):
//! the vt100 fork this crate uses (`harness-vt100`), upstream vt100 0.18.1
//! side by side, and the terminal model on top of the fork.
//! `cargo run --release -p harness-term --example parse_rate -- [FILE]`
use std::num::NonZeroU16;
use std::time::Instant;

fn best(mut run: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "crates/webterm/www/data/ls-lR.bin".into());
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let mb = data.len() as f64 / 1e6;
    let chunks = || data.chunks(64 * 1024);
    println!("{mb:.1} MB of {path}, 24x80, MB/s (best of 5):");
    for sb in [2000, 0] {
        let fork = mb
            / best(|| {
                let mut p = vt100::Parser::new(nz(24), nz(80), sb);
                chunks().for_each(|c| p.process(c));
            });
        let upstream = mb
            / best(|| {
                let mut p = vt100_upstream::Parser::new(nz(24), nz(80), sb);
                chunks().for_each(|c| p.process(c));
            });
        let model = mb
            / best(|| {
                let mut m = harness_term::TerminalModel::with_scrollback(24, 80, sb);
                chunks().for_each(|c| m.feed(c));
            });
        println!(
            "  scrollback {sb:>4}: harness-vt100 {fork:6.1}  vt100 0.18.1 {upstream:6.1}  \
             (fork/upstream {:.2})  TerminalModel {model:6.1}",
            fork / upstream
        );
    }
}

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v).unwrap_or(NonZeroU16::MIN)
}
