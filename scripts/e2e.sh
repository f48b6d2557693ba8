#!/usr/bin/env bash
# Run the Playwright suite against a real `harness serve` on a free port with a
# throw-away data directory. Expects the server binary and the site to be built.
# The suite runs against the built site in $TARGET/site (HARNESS_SITE_ROOT);
# onefile.spec.ts starts a copy of the binary alone to check the embedded one.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
BIN="$TARGET/debug/harness"
[ -x "$BIN" ] || { echo "e2e: $BIN not built" >&2; exit 2; }
DATA="$(mktemp -d)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
LOG="$DATA/server.log"
# Debug logs of our own crates and every request: the secrets check below
# reads them all.
HARNESS_LOG="${HARNESS_LOG:-info,harness_server=debug,harness_core=debug,tower_http=debug}" \
HARNESS_SITE_ROOT="$TARGET/site" HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS=120 "$BIN" serve --bind "127.0.0.1:$PORT" --data-dir "$DATA/data" >"$DATA/stdout" 2>"$LOG" &
SERVER=$!
# Agents outlive a stopped server in their holders: end them with the run.
cleanup() {
  kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true
  pkill -KILL -f -- "--run-dir $DATA/data/holders/" 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
  sleep 0.1
done
cd end2end
{ [ -d node_modules/@playwright/test ] && [ -d node_modules/@axe-core/playwright ]; } || npm ci --no-audit --no-fund
# The gateway CLI double (outbox.spec.ts configures it as the OpenClaw CLI).
export HARNESS_GATEWAY_DOUBLE="${HARNESS_GATEWAY_DOUBLE:-$TARGET/debug/harness-gateway-double}"
status=0
HARNESS_BIN="$BIN" BASE_URL="http://127.0.0.1:$PORT" HARNESS_DATA_DIR="$DATA/data" npx playwright test "$@" || status=$?
if [ $status -ne 0 ]; then echo "--- server log ---" >&2; tail -50 "$LOG" >&2; fi
# Secrets never reach the log: the admin and metrics tokens, agent tokens
# (hxa_…), browser session ids (hs_…), login links and the fake key
# evidence.spec.ts plants on an agent's screen (E2EPLANTED).
ADMIN_TOKEN="$(cat "$DATA/data/secrets/admin.token")"
METRICS_TOKEN="$(cat "$DATA/data/secrets/metrics.token")"
if grep -F -e "$ADMIN_TOKEN" -e "$METRICS_TOKEN" "$LOG" >/dev/null \
  || grep -E 'hxa_[0-9a-f]{16}|hs_[0-9a-f]{16}|token=hx|E2EPLANTED' "$LOG" >/dev/null; then
  echo "e2e: a secret appears in the server log ($(wc -l <"$LOG") lines), e.g. at line(s):" >&2
  { grep -n -F -e "$ADMIN_TOKEN" -e "$METRICS_TOKEN" "$LOG"
    grep -n -E 'hxa_[0-9a-f]{16}|hs_[0-9a-f]{16}|token=hx|E2EPLANTED' "$LOG"; } | cut -d: -f1 | head -5 >&2
  status=1
else
  echo "e2e: no secret in the server log ($(wc -l <"$LOG") lines checked)" >&2
fi
exit $status
