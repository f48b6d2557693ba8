//! Log output of the `harness` binary (stderr): human-readable text by
//! default, JSON lines with `HARNESS_LOG_FORMAT=json`; ANSI colours only when
//! stderr is a terminal.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub fn init(filter: EnvFilter) {
    let json = std::env::var("HARNESS_LOG_FORMAT")
        .map(|v| v.trim().eq_ignore_ascii_case("json"))
        .unwrap_or(false);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init();
    } else {
        builder.with_ansi(std::io::stderr().is_terminal()).init();
    }
}
