-- The ungated-run watch (crates/core/src/ungated): every pre-tool check the
-- server saw, per task and call, and at most one flag per execution whose
-- CLI ran a tool without one.
--
-- `call_key` is the CLI's own call id (Claude Code's tool_use id, Codex's
-- call_id), which its transcript or session file also records; without one,
-- a digest of what the call does (crates/core/src/ungated/mod.rs call_key).
CREATE TABLE tool_checks (
    task_id      TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    call_key     TEXT NOT NULL,
    execution_id TEXT,
    tool         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (task_id, call_key)
);

-- One row per flagged execution (the primary key makes the flag, and so its
-- alert, once). The alert is written in the same transaction: a CLOSED
-- notify of the task (`message_id`, shown on /harness) and, when a chat
-- channel is configured, its push (`outbound_id`, key `ungated:<execution>`).
CREATE TABLE ungated_runs (
    execution_id TEXT PRIMARY KEY NOT NULL,
    task_id      TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    tool         TEXT NOT NULL,
    call_key     TEXT NOT NULL,
    evidence     TEXT NOT NULL CHECK (evidence IN ('transcript', 'post-tool', 'typed')),
    detail       TEXT NOT NULL,
    message_id   TEXT,
    outbound_id  TEXT,
    created_at   INTEGER NOT NULL
);
CREATE INDEX ungated_runs_task ON ungated_runs (task_id, created_at);
