#!/usr/bin/env bash
# Build the browser side into $TARGET/site, which the server embeds at compile
# time (server/build.rs) and `HARNESS_SITE_ROOT` can point at in development:
#   1. two wasm modules (profile wasm-release, linked with --emit-relocs so
#      the hydrate module can be split): the hydrate bundle of every page
#      (`frontend`), and the browser terminal (`harness-webterm`), which only
#      a page showing a terminal imports (app/src/terminal.rs);
#   2. wasm-split-cli (scripts/setup.sh) cuts the hydrate module at its lazy
#      routes (app/src/lazy_pages.rs) — before wasm-bindgen, as cargo-leptos
#      does: the main module, one `split_*.wasm` per lazy page, `chunk_*.wasm`
#      for code several pages share, and the loader `__wasm_split.js`, which
#      imports the main module as `./harness.js` (pack.mjs rewrites the names);
#   3. wasm-bindgen (JS glue) of the main module and of the terminal;
#   4. wasm-opt -Oz (npm binaryen, installed by scripts/setup.sh; Debian's
#      binaryen 108 breaks this module), one per core at a time. The result is cached by the input's
#      hash, so an unchanged wasm costs nothing the second time;
#   5. frontend/tools/pack.mjs: content-hashed names (harness-<hash>*),
#      Brotli + gzip copies, the size table, and the size budget of every
#      file (frontend/size-budget.txt): over budget, the build fails.
# HARNESS_WASM_OPT=0 skips step 4 (a bigger bundle, for quick local loops;
# the budget is not checked). HARNESS_PACK_FAST=1 uses a fast Brotli level
# (bigger .br files; only the raw sizes are checked).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
SITE="$TARGET/site"
STAGE="$TARGET/site-build"
WASM_OPT="$PWD/frontend/tools/node_modules/.bin/wasm-opt"
# The wasm features of the binaryen tools (one list, merge-pack.mjs reads it too).
mapfile -t WASM_FEATURES < <(grep -v '^#' frontend/tools/wasm-features.txt)

command -v wasm-split-cli >/dev/null || { echo "build-site: wasm-split-cli missing: run scripts/setup.sh" >&2; exit 2; }
wasm_build=(--locked --target wasm32-unknown-unknown --profile wasm-release)
cargo build "${wasm_build[@]}" -p harness-webterm
# wasm-split needs the linker's relocations; passed to the frontend crate's own
# rustc (it links the module) only, so the dependencies and the terminal are
# built as before (binaryen refuses to optimise a module that keeps them).
cargo rustc "${wasm_build[@]}" -p frontend --lib -- -C link-arg=--emit-relocs
WASM="$TARGET/wasm32-unknown-unknown/wasm-release"
mkdir -p "$STAGE"
rm -rf "$STAGE"/harness*.js "$STAGE"/harness*.wasm "$STAGE"/__wasm_split.js "$STAGE"/split_*.wasm \
  "$STAGE"/chunk_*.wasm "$STAGE/split"
mkdir "$STAGE/split"
wasm-split-cli --target web --out-name harness "$WASM/frontend.wasm" "$STAGE/split"
mv "$STAGE/split"/__wasm_split.js "$STAGE/split"/split_*.wasm "$STAGE"
mv "$STAGE/split"/chunk_*.wasm "$STAGE" 2>/dev/null || true # only when pages share code
# The split modules with their names, for `node frontend/tools/wasm-top.mjs
# <target>/site-build/main-named.wasm` (what the main module is made of) and
# <target>/site-build/named/<split or chunk>.wasm (what a lazy page's code is).
cp "$STAGE/split/harness.wasm" "$STAGE/main-named.wasm"
rm -rf "$STAGE/named" && mkdir "$STAGE/named"
cp "$STAGE"/split_*.wasm "$STAGE/named/"
cp "$STAGE"/chunk_*.wasm "$STAGE/named/" 2>/dev/null || true
# --keep-lld-exports: the chunks import the main module's functions by those names.
bindgen() { # <input wasm> <out name> [flags]
  local input="$1" name="$2"
  shift 2
  wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section "$@" \
    --out-dir "$STAGE" --out-name "$name" "$input"
}
bindgen "$STAGE/split/harness.wasm" harness --keep-lld-exports
bindgen "$WASM/harness_webterm.wasm" harness_term
rm -rf "$STAGE/split"

optimise() { # <staged wasm>: replaced by its wasm-opt -Oz output (cached)
  local wasm="$1" key cached start before
  key="$(sha256sum "$wasm" | cut -c1-32)"
  cached="$STAGE/opt-$(basename "$wasm" .wasm)-$key.wasm"
  if [ ! -s "$cached" ]; then
    rm -f "$STAGE/opt-$(basename "$wasm" .wasm)"-*.wasm
    start=$(date +%s)
    before=$(stat -c %s "$wasm")
    "$WASM_OPT" -Oz "${WASM_FEATURES[@]}" "$wasm" -o "$cached.tmp"
    mv "$cached.tmp" "$cached"
    echo "wasm-opt -Oz $(basename "$wasm"): $before → $(stat -c %s "$cached") bytes in $(( $(date +%s) - start )) s" >&2
  fi
  cp "$cached" "$wasm"
}
budget=(--budget frontend/size-budget.txt)
if [ "${HARNESS_WASM_OPT:-1}" != 0 ]; then
  [ -x "$WASM_OPT" ] || { echo "build-site: $WASM_OPT missing: run scripts/setup.sh" >&2; exit 2; }
  # One wasm-opt per core at a time: npm's wasm-opt runs in Node, one
  # thread, and most of the ~170 modules are small (its start-up is most of
  # their time): serially ~330 s of a cold build, on 2 cores about half.
  jobs_max="$(nproc 2>/dev/null || echo 2)"
  rm -f "$STAGE/opt-failed"
  for wasm in "$STAGE"/harness_bg.wasm "$STAGE"/harness_term_bg.wasm "$STAGE"/split_*.wasm "$STAGE"/chunk_*.wasm; do
    [ -e "$wasm" ] || continue
    (optimise "$wasm" || { echo "build-site: wasm-opt failed on $wasm" >&2; touch "$STAGE/opt-failed"; }) &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  done
  wait
  [ ! -e "$STAGE/opt-failed" ] || exit 1
else
  budget=()
fi
cp style/main.css "$STAGE/harness.css"
node frontend/tools/pack.mjs "$STAGE" public "$SITE" ${HARNESS_PACK_FAST:+--fast} "${budget[@]}"
