#!/usr/bin/env bash
# Build and run Harness on the embedded SQLite default:
#   ./run.sh                      → http://127.0.0.1:7700, data in ~/.harness
#   ./run.sh --bind 127.0.0.1:8080 --data-dir /tmp/h
# Extra arguments go to `harness serve` (see docs/configuration.md for the options).
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
scripts/setup.sh build
scripts/build-site.sh
cargo build --locked -p server --release
exec "$CARGO_TARGET_DIR/release/harness" serve "$@"
