#!/usr/bin/env bash
# Build the browser side: the hydrate wasm, its JS glue, CSS and static files,
# into $TARGET/site (where `harness serve` looks for them by default).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
SITE="$TARGET/site"
cargo build --locked -p frontend --target wasm32-unknown-unknown --profile wasm-release
mkdir -p "$SITE/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$SITE/pkg" --out-name harness \
  "$TARGET/wasm32-unknown-unknown/wasm-release/frontend.wasm"
cp style/main.css "$SITE/pkg/harness.css"
cp -r public/. "$SITE/"
