-- The one durable delivery queue (issue 10): every write into an agent's
-- terminal that the system owes somebody is a row here, written in the same
-- transaction as its cause and done by the delivery worker. The row id is the
-- injection id. States: QUEUED → WAITING_BOUNDARY → RESUMING → WRITING →
-- DELIVERED; FAILED (due again at next_attempt_at, NULL = gave up);
-- UNVERIFIED (found WRITING after a crash: never written again automatically).
CREATE TABLE deliveries (
    id                TEXT PRIMARY KEY NOT NULL,
    task_id           TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('reply', 'input')),
    message_id        TEXT,             -- the answered ask (kind 'reply')
    node_id           TEXT,             -- only this node may do it (owns the PTY); NULL = any node
    text              TEXT NOT NULL,
    question          TEXT,             -- reply: shown before the text when the agent is restarted
    submit            INTEGER NOT NULL DEFAULT 1 CHECK (submit IN (0, 1)),
    dedup_key         TEXT,             -- input: the caller's idempotency key
    state             TEXT NOT NULL CHECK (state IN ('QUEUED', 'WAITING_BOUNDARY', 'RESUMING',
                          'WRITING', 'DELIVERED', 'FAILED', 'UNVERIFIED')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   INTEGER,          -- due from; NULL = not due (done, unverified, gave up)
    lease_owner       TEXT,             -- '<node id>:<boot id>' of the worker holding it
    lease_expires_at  INTEGER,
    last_error        TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    done_at           INTEGER
);
CREATE UNIQUE INDEX deliveries_dedup ON deliveries(task_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE UNIQUE INDEX deliveries_message ON deliveries(message_id) WHERE message_id IS NOT NULL;
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX deliveries_task ON deliveries(task_id, created_at DESC, id DESC);

-- The node (process identity, stable in its data directory) that spawned the execution.
ALTER TABLE executions ADD COLUMN node_id TEXT;
-- Rows in flight, for the expired-lease check of every claim.
CREATE INDEX deliveries_writing ON deliveries(lease_expires_at) WHERE state = 'WRITING';
