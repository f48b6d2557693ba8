//! The `hold` entry point for this crate's tests and measurements:
//! `harness-hold-test <hold args>` does what `harness hold <hold args>`
//! does.

fn main() -> std::process::ExitCode {
    harness_holder::hold::run(
        std::env::args_os().skip(1),
        concat!("harness-hold-test ", env!("CARGO_PKG_VERSION")),
    )
}
