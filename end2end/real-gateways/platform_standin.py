#!/usr/bin/env python3
"""A stand-in of the chat platforms the real gateway CLIs send to, for
server/tests/real_gateways.rs: the Telegram Bot API (what OpenClaw's Telegram
channel calls, through its `apiRoot` setting) and an ntfy server (what
`hermes send --to ntfy:<topic>` posts to, through `NTFY_SERVER_URL`).

It records and answers: every request (but Telegram's getUpdates long
polls) is appended as one JSON line to the record file, a sent message gets a
fresh id, and a Telegram send to the chat -100999 fails with Telegram's
"chat not found".

A test makes a person write to the bot with `POST /_standin/telegram/updates`
and a Telegram Update without its `update_id` as the body (for example
`{"message": {"message_id": 7, "chat": {...}, "from": {...}, "text": "…",
"reply_to_message": {...}}}`): the stand-in numbers it and the gateway's
next `getUpdates` (from its `offset`) gets it, once the gateway confirms it
by asking from a higher offset it is gone. The answer is `{"update_id": n}`.

    platform_standin.py <record.jsonl> <port file> [port]

It binds 127.0.0.1 on a free port (or on [port], to come back after a
stop), writes the port to <port file> once it listens, and serves until
killed. Standard library only.
"""

import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORD = sys.argv[1]
PORT_FILE = sys.argv[2]
LOCK = threading.Lock()
NEXT_ID = [4240]
# Queued incoming Telegram updates (update_id ascending), and a wake-up for
# the long polls waiting on them.
UPDATES = []
NEXT_UPDATE = [1000]
ARRIVED = threading.Condition(LOCK)
# Sends to this Telegram chat fail as Telegram does for a chat the bot is not in.
FAIL_CHAT = "-100999"
BOT = {"id": 123456, "is_bot": True, "first_name": "Harness test bot",
       "username": "harness_test_bot", "can_join_groups": True,
       "can_read_all_group_messages": False, "supports_inline_queries": False}


def fresh_id():
    with LOCK:
        NEXT_ID[0] += 1
        return NEXT_ID[0]


def record(entry):
    entry["at"] = time.time()
    with LOCK, open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def params(self):
        url = urllib.parse.urlparse(self.path)
        out = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        kind = self.headers.get("Content-Type", "")
        if body and "json" in kind:
            try:
                out.update(json.loads(body))
            except ValueError:
                out["_body"] = body.decode("utf-8", "replace")
        elif body and "x-www-form-urlencoded" in kind:
            for k, v in urllib.parse.parse_qs(body.decode("utf-8", "replace")).items():
                out[k] = v[-1]
        elif body:
            out["_body"] = body.decode("utf-8", "replace")
        return url.path, out

    def answer(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def handle_any(self):
        path, params = self.params()
        parts = path.strip("/").split("/")
        if path == "/_standin/telegram/updates" and self.command == "POST":
            self.inject(params)
        elif len(parts) == 2 and parts[0].startswith("bot"):
            self.telegram(parts[1], params)
        elif len(parts) == 1 and parts[0] and self.command == "POST":
            self.ntfy(parts[0], params)
        else:
            record({"platform": "unknown", "method": self.command, "path": path})
            self.answer(404, {"ok": False, "description": "Not Found"})

    def inject(self, update):
        with ARRIVED:
            NEXT_UPDATE[0] += 1
            update = dict(update, update_id=NEXT_UPDATE[0])
            UPDATES.append(update)
            ARRIVED.notify_all()
        record({"platform": "telegram", "method": "_incoming", "update": update})
        self.answer(200, {"update_id": update["update_id"]})

    def updates(self, params):
        """Telegram's getUpdates: the queued updates from `offset` on (a
        higher offset confirms and drops the ones before it), waiting up to
        the poll's timeout (at most 1 s, so a stop is quick) for one."""
        offset = int(params.get("offset") or 0)
        deadline = time.time() + min(float(params.get("timeout") or 0), 1.0)
        with ARRIVED:
            UPDATES[:] = [u for u in UPDATES if u["update_id"] >= offset]
            while not UPDATES and time.time() < deadline:
                ARRIVED.wait(max(deadline - time.time(), 0))
            due = list(UPDATES)
        self.answer(200, {"ok": True, "result": due})

    def telegram(self, method, params):
        if method == "getUpdates":
            self.updates(params)
            return
        entry = {"platform": "telegram", "method": method, "params": params}
        chat_id = params.get("chat_id")
        if str(chat_id) == FAIL_CHAT and method.startswith("send"):
            # A chat the bot is not in: Telegram's permanent error.
            record(entry)
            self.answer(400, {"ok": False, "error_code": 400,
                              "description": "Bad Request: chat not found"})
            return
        if method == "getMe":
            result = BOT
        elif method == "sendMessage":
            result = {"message_id": fresh_id(), "date": int(time.time()),
                      "from": BOT, "text": params.get("text", ""),
                      "chat": {"id": int(chat_id) if str(chat_id).lstrip("-").isdigit() else chat_id,
                               "type": "supergroup", "title": "Harness test group"}}
            if params.get("message_thread_id"):
                result["message_thread_id"] = int(params["message_thread_id"])
        elif method == "getChat":
            result = {"id": chat_id, "type": "supergroup", "title": "Harness test group"}
        elif method in ("getMyCommands",):
            result = []
        else:
            result = True
        if method == "sendMessage":
            entry["message_id"] = result["message_id"]
        record(entry)
        self.answer(200, {"ok": True, "result": result})

    def ntfy(self, topic, params):
        message_id = "nt%d" % fresh_id()
        record({"platform": "ntfy", "topic": topic, "id": message_id,
                "text": params.get("_body", ""),
                "headers": {k: v for k, v in self.headers.items() if k.lower().startswith("x-")}})
        self.answer(200, {"id": message_id, "time": int(time.time()), "event": "message",
                          "topic": topic, "message": params.get("_body", "")})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that hung up (a long poll cut short) is not an error.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    server = Server(("127.0.0.1", port), Handler)
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
