//! The holder binary: `harness-hold [hold] <hold args>` does what
//! `harness hold <hold args>` does, from a binary of a few hundred kB
//! instead of the whole server. `harness` embeds it and writes it into its
//! private directory at start (`server/src/private_exe`); the server starts
//! it as `<it> hold …`, so a holder's command line reads the same either
//! way. This crate's tests run it without the `hold`.

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "hold") {
        args.next();
    }
    harness_holder::hold::run(args, concat!("harness-hold ", env!("CARGO_PKG_VERSION")))
}
