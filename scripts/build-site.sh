#!/usr/bin/env bash
# Build the browser side into $TARGET/site, which the server embeds at compile
# time (server/build.rs) and `HARNESS_SITE_ROOT` can point at in development:
#   1. two wasm modules (profile wasm-release) and their JS glue
#      (wasm-bindgen): the hydrate bundle of every page (`frontend`), and the
#      browser terminal (`harness-webterm`), which only a page showing a
#      terminal imports (app/src/terminal.rs);
#   2. wasm-opt -Oz (npm binaryen, installed by scripts/setup.sh; Debian's
#      binaryen 108 breaks this module). The result is cached by the input's
#      hash, so an unchanged wasm costs nothing the second time;
#   3. frontend/tools/pack.mjs: content-hashed names (harness-<hash>.*),
#      Brotli + gzip copies, the size table, and the size budget of every
#      file (frontend/size-budget.txt): over budget, the build fails.
# HARNESS_WASM_OPT=0 skips step 2 (a bigger bundle, for quick local loops;
# the budget is not checked). HARNESS_PACK_FAST=1 uses a fast Brotli level
# (bigger .br files; only the raw sizes are checked).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
SITE="$TARGET/site"
STAGE="$TARGET/site-build"
WASM_OPT="$PWD/frontend/tools/node_modules/.bin/wasm-opt"

cargo build --locked -p frontend -p harness-webterm --target wasm32-unknown-unknown --profile wasm-release
mkdir -p "$STAGE"
rm -f "$STAGE"/harness*.js "$STAGE"/harness*.wasm
for module in frontend:harness harness_webterm:harness_term; do
  wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section \
    --out-dir "$STAGE" --out-name "${module#*:}" \
    "$TARGET/wasm32-unknown-unknown/wasm-release/${module%%:*}.wasm"
done

optimise() { # <staged wasm>: replaced by its wasm-opt -Oz output (cached)
  local wasm="$1" key cached start before
  key="$(sha256sum "$wasm" | cut -c1-32)"
  cached="$STAGE/opt-$(basename "$wasm" .wasm)-$key.wasm"
  if [ ! -s "$cached" ]; then
    rm -f "$STAGE/opt-$(basename "$wasm" .wasm)"-*.wasm
    start=$(date +%s)
    before=$(stat -c %s "$wasm")
    # The features wasm-bindgen 0.2.130's output uses (reference types etc.).
    "$WASM_OPT" -Oz --enable-reference-types --enable-bulk-memory --enable-sign-ext \
      --enable-mutable-globals --enable-nontrapping-float-to-int --enable-multivalue \
      "$wasm" -o "$cached.tmp"
    mv "$cached.tmp" "$cached"
    echo "wasm-opt -Oz $(basename "$wasm"): $before → $(stat -c %s "$cached") bytes in $(( $(date +%s) - start )) s" >&2
  fi
  cp "$cached" "$wasm"
}
budget=(--budget frontend/size-budget.txt)
if [ "${HARNESS_WASM_OPT:-1}" != 0 ]; then
  [ -x "$WASM_OPT" ] || { echo "build-site: $WASM_OPT missing: run scripts/setup.sh" >&2; exit 2; }
  optimise "$STAGE/harness_bg.wasm"
  optimise "$STAGE/harness_term_bg.wasm"
else
  budget=()
fi
cp style/main.css "$STAGE/harness.css"
node frontend/tools/pack.mjs "$STAGE" public "$SITE" ${HARNESS_PACK_FAST:+--fast} "${budget[@]}"
