#!/usr/bin/env bash
# Runs the nginx configuration of docs/reverse-proxy.md (extracted verbatim,
# only names, ports and certificate paths substituted) in front of a real
# `harness serve`, and checks login over TLS, the Secure cookie, a page, a
# same-origin server function and a refused cross-origin one.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
BIN="$TARGET/debug/harness"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$NGINX" ] || { echo "proxy-test: nginx not installed (scripts/setup.sh test)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "proxy-test: $BIN not built" >&2; exit 2; }
WORK="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
APP="$(free_port)"; TLS="$(free_port)"; NAME="harness.example.test"
cleanup() {
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  [ -n "${SERVER:-}" ] && { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$NAME" \
  -addext "subjectAltName=DNS:$NAME" -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
"$BIN" serve --bind "127.0.0.1:$APP" --data-dir "$WORK/data" --allowed-host "$NAME:$TLS" >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$APP/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
sed -n '/^# BEGIN harness.conf/,/^# END harness.conf/p' docs/reverse-proxy.md \
  | sed -e "s#listen 443 ssl#listen 127.0.0.1:$TLS ssl#" -e "s#harness.example.com#$NAME#" \
        -e "s#/etc/ssl/harness/fullchain.pem#$WORK/cert.pem#" -e "s#/etc/ssl/harness/privkey.pem#$WORK/key.pem#" \
        -e "s#127.0.0.1:7700#127.0.0.1:$APP#" > "$WORK/site.conf"
cat > "$WORK/nginx.conf" <<CONF
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events {}
http {
  access_log off;
  client_body_temp_path $WORK/tmp; proxy_temp_path $WORK/tmp; fastcgi_temp_path $WORK/tmp;
  uwsgi_temp_path $WORK/tmp; scgi_temp_path $WORK/tmp;
  include $WORK/site.conf;
}
CONF
mkdir -p "$WORK/tmp"
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" -e "$WORK/error.log"
BASE="https://$NAME:$TLS"
C=(curl -sS --cacert "$WORK/cert.pem" --resolve "$NAME:$TLS:127.0.0.1" -o /dev/null -w '%{http_code}')
for _ in $(seq 1 50); do [ "$("${C[@]}" "$BASE/healthz" || true)" = 200 ] && break; sleep 0.1; done
TOKEN="$(cat "$WORK/data/secrets/admin.token")"
fail() { echo "proxy-test: $*" >&2; tail -20 "$WORK/server.log" >&2; cat "$WORK/error.log" >&2; exit 1; }
headers="$(curl -sS --cacert "$WORK/cert.pem" --resolve "$NAME:$TLS:127.0.0.1" -D - -o /dev/null "$BASE/login?token=$TOKEN")"
grep -q '^HTTP/1.1 303' <<<"$headers" || fail "login did not redirect: $headers"
cookie="$(grep -i '^set-cookie: harness_session=' <<<"$headers" | tr -d '\r')"
grep -q '; Secure' <<<"$cookie" || fail "the session cookie is not Secure over TLS: $cookie"
session="$(sed -e 's/^[Ss]et-[Cc]ookie: //' -e 's/;.*//' <<<"$cookie")"
[ "$("${C[@]}" -H "Cookie: $session" "$BASE/harness")" = 200 ] || fail "the page did not load through the proxy"
[ "$("${C[@]}" -X POST -H "Cookie: $session" -H "Origin: $BASE" "$BASE/sfn/overview")" = 200 ] \
  || fail "a same-origin server function was refused through the proxy"
[ "$("${C[@]}" -X POST -H "Cookie: $session" -H "Origin: https://evil.example" "$BASE/sfn/overview")" = 403 ] \
  || fail "a cross-origin server function was not refused"
[ "$("${C[@]}" -X POST -H "Cookie: $session" -H "Origin: http://$NAME:$TLS" "$BASE/sfn/overview")" = 403 ] \
  || fail "an http:// origin was accepted over TLS"
[ "$("${C[@]}" "$BASE/harness")" = 303 ] || fail "a page without a session was not sent to the login"
echo "proxy-test: nginx + TLS in front of harness: ok"
