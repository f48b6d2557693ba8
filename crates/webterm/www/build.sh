#!/usr/bin/env bash
# Builds the wasm bundle of the browser terminal (with the `bench` exports)
# into www/pkg for index.html and check.mjs, and records the benchmark
# stream (`ls -lR /usr/lib` with PTY line endings) into www/data when absent.
#   PROFILE=wasm-release www/build.sh   # the site's size-optimised profile
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
profile="${PROFILE:-release}"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
cd "$root"
cargo build -p harness-webterm --target wasm32-unknown-unknown --profile "$profile" --features bench
wasm-bindgen --target web --out-dir "$here/pkg" \
  "$target_dir/wasm32-unknown-unknown/$profile/harness_webterm.wasm"
mkdir -p "$here/data"
if [ ! -s "$here/data/ls-lR.bin" ]; then
  # What a PTY would deliver: \n → \r\n (onlcr).
  LC_ALL=C ls -lR /usr/lib 2>/dev/null | sed 's/$/\r/' > "$here/data/ls-lR.bin" || true
fi
ls -l "$here/pkg" "$here/data"
