//! Thin test/driver binary: `harness-plan-cli <subcommand> ...` calls
//! [`harness_plan::cli::cli_main`] exactly as the `harness` binary does.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(harness_plan::cli::cli_main(args));
}
