#!/usr/bin/env python3
"""Lines of durable-work code per kind and layer at one or more revisions.

    python3 scripts/durable-work-lines.py [REV ...]   (default: HEAD)

Counts the non-blank lines that are not comments (`//`, `//!`, `///`, SQL
`--`) of the modules each kind of owed work is written in — its store
statements and port, its core rules, its server worker — stopping at a
file's `#[cfg(test)]` module; `*_tests.rs` files are left out. A module
missing at a revision counts 0. The engine's own modules (the generic
claim / lease / release / recovery, the kinds' definitions, the worker
skeleton) are a row of their own. Whole modules are counted, so a module
that also holds other code of its kind (e.g. the outbox's dedup rule) is
counted whole: compare a row across revisions, not rows with each other.
"""
import subprocess
import sys

KINDS = {
    "deliveries": {
        "store": ["crates/store/src/shared/deliveries.rs", "crates/store/src/shared/delivery_store.rs",
                  "crates/store/src/sqlite/deliveries.rs", "crates/store/src/postgres/deliveries.rs",
                  "crates/core/src/store/deliveries.rs"],
        "core": ["crates/core/src/deliveries.rs", "crates/core/src/delivery_attempt.rs"],
        "server": ["server/src/workers/deliveries.rs", "server/src/terminals/deliver.rs"],
    },
    "outbox (sending)": {
        "store": ["crates/store/src/shared/outbox_settle.rs", "crates/store/src/shared/outbox_store.rs",
                  "crates/store/src/sqlite/outbox_settle.rs", "crates/store/src/postgres/outbox_settle.rs",
                  "crates/store/src/sqlite/outbox.rs", "crates/store/src/postgres/outbox.rs",
                  "crates/store/src/shared/outbox.rs", "crates/core/src/store/outbox.rs"],
        "core": ["crates/core/src/outbox/sender.rs"],
        "server": ["server/src/workers/outbox.rs", "server/src/workers/start_marks.rs"],
    },
    "parent inbox": {
        "store": ["crates/store/src/shared/inbox.rs", "crates/store/src/shared/inbox_rows.rs",
                  "crates/store/src/shared/inbox_sql.rs", "crates/store/src/sqlite/inbox.rs",
                  "crates/store/src/postgres/inbox.rs", "crates/core/src/store/inbox.rs"],
        "core": ["crates/core/src/inbox_lease.rs", "crates/core/src/inbox_ready.rs"],
        "server": ["server/src/workers/inbox.rs"],
    },
    "gateway replies": {
        "store": ["crates/store/src/shared/gateway_replies.rs", "crates/core/src/store/gateway_replies.rs"],
        "core": ["crates/core/src/gateway/replies.rs"],
        "server": ["server/src/workers/gateway_replies.rs"],
    },
    "timed agent actions": {
        "store": ["crates/store/src/shared/agent_actions.rs", "crates/store/src/sqlite/agent_actions.rs",
                  "crates/store/src/postgres/agent_actions.rs", "crates/core/src/store/agent_actions.rs"],
        "core": ["crates/core/src/agent_actions/mod.rs"],
        "server": ["server/src/workers/agent_actions.rs"],
    },
    "the engine (every kind)": {
        "store": ["crates/store/src/shared/work.rs", "crates/core/src/store/work.rs"],
        "core": ["crates/core/src/work.rs", "crates/core/src/work/mod.rs", "crates/core/src/work/recovery.rs",
                 "crates/core/src/work/kinds.rs", "crates/core/src/work/wait.rs"],
        "server": ["server/src/workers/engine.rs", "server/src/workers/mod.rs"],
    },
}


def show(rev, path):
    done = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def count(text):
    n = 0
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#[cfg(test)]"):
            break
        if not s or s.startswith("//") or s.startswith("--"):
            continue
        n += 1
    return n


def measure(rev):
    out = {}
    for kind, layers in KINDS.items():
        for layer, paths in layers.items():
            total = 0
            for p in dict.fromkeys(paths):
                text = show(rev, p)
                if text is not None:
                    total += count(text)
            out[(kind, layer)] = total
    return out


def main():
    revs = sys.argv[1:] or ["HEAD"]
    figures = [measure(r) for r in revs]
    print("| kind | layer | " + " | ".join(revs) + " |")
    print("|---|---|" + "---|" * len(revs))
    for kind, layers in KINDS.items():
        for layer in layers:
            print(f"| {kind} | {layer} | " + " | ".join(str(f[(kind, layer)]) for f in figures) + " |")
        print(f"| {kind} | **all** | " + " | ".join(
            str(sum(f[(kind, l)] for l in layers)) for f in figures) + " |")


if __name__ == "__main__":
    main()
