#!/usr/bin/env bash
# Run every test: Rust unit + integration tests of the whole workspace, then
# the Playwright end-to-end suite in Debian's Chromium against a real server.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A clean build gains nothing from incremental caches, and they more than
# double target/ (CI once ran out of disk in the test build).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
start=$(date +%s)
step() { printf '\033[1m==> [%4ss] %s\033[0m\n' "$(( $(date +%s) - start ))" "$*" >&2; }

step "setup"
# A full test build (wasm, the site, the test binaries) takes about 9 GB under target/.
free_gb=$(df -Pk . | awk 'NR==2 {print int($4 / 1048576)}')
if [ "${free_gb:-0}" -lt 10 ]; then
  echo "warning: only ${free_gb} GB free on $(df -P . | awk 'NR==2 {print $6}'); the test build needs ~6 GB" >&2
fi
scripts/setup.sh test
step "house rules: cargo fmt --check, clippy -D warnings"
cargo fmt --all --check || { echo "test.sh: run 'cargo fmt --all'" >&2; exit 1; }
# The browser crate builds for wasm only (its app/hydrate side needs the web
# terminal's wasm APIs): linted for that target, everything else for the host.
cargo clippy --locked --workspace --exclude frontend --all-targets -- -D warnings
cargo clippy --locked -p frontend --target wasm32-unknown-unknown -- -D warnings
# The adapters never reach the store port (`Harness::store` needs the core's
# `test-support` feature, which the tests unify in): checked without tests.
cargo check --locked -p server --lib --bins
step "building the browser bundle (wasm)"
scripts/build-site.sh
step "building the tests and the harness binary"
cargo test --locked --workspace --exclude frontend --no-run
step "Rust tests"
# The tests with the real Claude Code / Codex / OpenClaw / Hermes / MCP SDK
# skip (and pass) when a registry install was skipped: each notes here whether
# it ran, printed at the end (HARNESS_REQUIRE_REAL_CLIS=1 fails them instead).
export HARNESS_REAL_CLI_REPORT="${HARNESS_REAL_CLI_REPORT:-$(mktemp)}"
real_cli_report() {
  local r="$HARNESS_REAL_CLI_REPORT"
  [ -s "$r" ] || { echo "test.sh: no test with a real CLI reported (not reached)" >&2; return 0; }
  echo "test.sh: tests with the real CLIs / gateways / MCP SDK:" >&2
  sort -u "$r" | sed 's/^/  /' >&2
  local ran skipped
  ran=$(sort -u "$r" | grep -c '^ran ' || true)
  skipped=$(sort -u "$r" | grep -c '^skipped ' || true)
  if [ "$skipped" -gt 0 ]; then
    echo "test.sh: real CLIs: $ran ran, $skipped SKIPPED (not installed; HARNESS_REQUIRE_REAL_CLIS=1 makes a skip fail)" >&2
  else
    echo "test.sh: real CLIs: all $ran ran" >&2
  fi
}
trap real_cli_report EXIT
(u="${HARNESS_TEST_POSTGRES_URL:-}"; if [ -n "$u" ] || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then echo "test.sh: PostgreSQL reachable ($([ -n "$u" ] && echo HARNESS_TEST_POSTGRES_URL || echo 127.0.0.1:5432)): the store conformance suite runs on it too"; else echo "test.sh: PostgreSQL NOT reachable: postgres_conformance cases are SKIPPED"; fi)
cargo test --locked --workspace --exclude frontend --no-fail-fast
step "server tests on PostgreSQL (every *_on_postgres case: kill/restart, deliveries, outbox, workbench, gateway replies, the 50-reply race, migrate-db, doctor, metrics)"
pg_url="${HARNESS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
if [ -n "${HARNESS_TEST_POSTGRES_URL:-}" ] || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
  HARNESS_TEST_POSTGRES_URL="$pg_url" cargo test --locked --workspace --exclude frontend --no-fail-fast --test integration -- on_postgres
else echo "test.sh: PostgreSQL NOT reachable: the server durability tests on PostgreSQL are SKIPPED"; fi
step "end-to-end tests (Playwright, Chromium)"
scripts/e2e.sh
step "API contract (schemathesis)"
scripts/schemathesis.sh
step "reverse proxy (nginx + TLS, docs/reverse-proxy.md)"
scripts/proxy-test.sh
step "all tests passed"
