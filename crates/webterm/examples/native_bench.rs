//! Native throughput of the model and of the frame diffing, on a recorded
//! stream: `cargo run --release -p harness-webterm --example native_bench -- FILE`.
use std::time::Instant;

use harness_term::TerminalModel;
use harness_webterm::core::Core;

fn main() {
    let path = std::env::args().nth(1).expect("usage: native_bench FILE");
    let base = std::fs::read(path).expect("read");
    let mut data = Vec::new();
    while data.len() < 32_000_000 {
        data.extend_from_slice(&base);
    }
    let mb = data.len() as f64 / 1e6;
    for sb in [0usize, 2000] {
        let t = Instant::now();
        let mut p = harness_term::vt100::Parser::new(
            std::num::NonZeroU16::new(24).unwrap(),
            std::num::NonZeroU16::new(80).unwrap(),
            sb,
        );
        for c in data.chunks(65536) {
            p.process(c);
        }
        println!(
            "vt100 raw sb={sb}: {:.1} MB/s",
            mb / t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        let mut m = TerminalModel::with_scrollback(24, 80, sb);
        for c in data.chunks(65536) {
            m.feed(c);
        }
        println!(
            "TerminalModel sb={sb}: {:.1} MB/s",
            mb / t.elapsed().as_secs_f64()
        );
    }
    let t = Instant::now();
    let mut core = Core::new(24, 80, 2000);
    core.on_open();
    let mut n = 0;
    for c in data.chunks(65536) {
        core.on_binary(c);
        core.frame(|_, h| n += h.len());
        core.take_outbox();
    }
    println!(
        "Core feed+frame: {:.1} MB/s ({n} html bytes)",
        mb / t.elapsed().as_secs_f64()
    );
}
