-- Approvals of risky tool calls (issue 31): one row per held call — the
-- audit record (rule matched, exact call, who decided, when, from where,
-- what the agent did next) and the one-time grant for exactly that call
-- (task + input_hash), used once (consumed_at). The question itself is an
-- ask (harness_messages, request_id) with the options Approve / Deny.
CREATE TABLE approvals (
    id           TEXT PRIMARY KEY NOT NULL,
    task_id      TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id TEXT,
    request_id   TEXT NOT NULL UNIQUE,
    tool         TEXT NOT NULL,
    input        TEXT NOT NULL,
    input_hash   TEXT NOT NULL,
    cwd          TEXT,
    rule         TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('PENDING', 'APPROVED', 'DENIED', 'CANCELLED', 'EXPIRED')),
    parked       INTEGER NOT NULL DEFAULT 0 CHECK (parked IN (0, 1)),
    decided_by   TEXT,
    decided_via  TEXT,
    decided_at   INTEGER,
    reason       TEXT,
    consumed_at  INTEGER,
    outcome      TEXT,
    created_at   INTEGER NOT NULL
);
-- The hook's lookups: a pending approval of this call, a decision not used yet.
CREATE INDEX approvals_call ON approvals (task_id, input_hash, state, created_at);
CREATE INDEX approvals_created ON approvals (created_at DESC, id DESC);
-- A PENDING approval ends with its ask: the ask cancelled (stop task, a
-- newer ask, an outbox activation) or expired (TTL) ends the approval in
-- the same statement's transaction, whichever code path changed the ask.
CREATE TRIGGER approvals_end_with_ask AFTER UPDATE OF state ON harness_messages
WHEN NEW.state IN ('CANCELLED', 'EXPIRED') AND OLD.state <> NEW.state
BEGIN
    UPDATE approvals SET state = NEW.state, decided_by = 'harness', decided_via = 'ask',
        decided_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
        outcome = COALESCE(outcome, 'held')
    WHERE request_id = NEW.id AND state = 'PENDING';
END;
