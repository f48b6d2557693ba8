#!/usr/bin/env bash
# Build the browser side into $TARGET/site, which the server embeds at compile
# time (server/build.rs) and `HARNESS_SITE_ROOT` can point at in development:
#   1. the hydrate wasm (profile wasm-release) and its JS glue (wasm-bindgen);
#   2. wasm-opt -Oz (npm binaryen, installed by scripts/setup.sh; Debian's
#      binaryen 108 breaks this module). The result is cached by the input's
#      hash, so an unchanged wasm costs nothing the second time;
#   3. frontend/tools/pack.mjs: content-hashed names (harness-<hash>.*),
#      Brotli + gzip copies, the size table.
# HARNESS_WASM_OPT=0 skips step 2 (a bigger bundle, for quick local loops).
# HARNESS_PACK_FAST=1 uses a fast Brotli level (bigger .br files).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
SITE="$TARGET/site"
STAGE="$TARGET/site-build"
WASM_OPT="$PWD/frontend/tools/node_modules/.bin/wasm-opt"

cargo build --locked -p frontend --target wasm32-unknown-unknown --profile wasm-release
mkdir -p "$STAGE"
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section \
  --out-dir "$STAGE" --out-name harness \
  "$TARGET/wasm32-unknown-unknown/wasm-release/frontend.wasm"

if [ "${HARNESS_WASM_OPT:-1}" != 0 ]; then
  [ -x "$WASM_OPT" ] || { echo "build-site: $WASM_OPT missing: run scripts/setup.sh" >&2; exit 2; }
  key="$(sha256sum "$STAGE/harness_bg.wasm" | cut -c1-32)"
  cached="$STAGE/opt-$key.wasm"
  if [ ! -s "$cached" ]; then
    rm -f "$STAGE"/opt-*.wasm
    start=$(date +%s)
    before=$(stat -c %s "$STAGE/harness_bg.wasm")
    # The features wasm-bindgen 0.2.130's output uses (reference types etc.).
    "$WASM_OPT" -Oz --enable-reference-types --enable-bulk-memory --enable-sign-ext \
      --enable-mutable-globals --enable-nontrapping-float-to-int --enable-multivalue \
      "$STAGE/harness_bg.wasm" -o "$cached.tmp"
    mv "$cached.tmp" "$cached"
    echo "wasm-opt -Oz: $before → $(stat -c %s "$cached") bytes in $(( $(date +%s) - start )) s" >&2
  fi
  cp "$cached" "$STAGE/harness_bg.wasm"
fi
cp style/main.css "$STAGE/harness.css"
node frontend/tools/pack.mjs "$STAGE" public "$SITE" ${HARNESS_PACK_FAST:+--fast}
