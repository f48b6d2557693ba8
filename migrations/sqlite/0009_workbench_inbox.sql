-- The parent's durable inbox (issue 14; tower-workbench.md §1.4–§1.5, §2):
-- a derived child's turn end, decision or failure is a workbench_events row
-- in its parent's inbox, written before the Stop hook is answered; at the
-- parent's provider-confirmed turn end up to 50 PENDING events are claimed
-- (lease) into one batch whose id is a digest of their sorted dedup keys.
-- The batch is stored as a SYSTEM task_messages row and typed into the
-- parent by the delivery queue (deliveries.id = batch id), all in one
-- transaction.
CREATE TABLE workbench_events (
    id                    TEXT PRIMARY KEY NOT NULL,
    parent_task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    source_task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id          TEXT,             -- producing execution (not a FK)
    kind                  TEXT NOT NULL CHECK (kind IN ('CHILD_REVIEW_REQUIRED',
                              'CHILD_DECISION_REQUIRED', 'CHILD_EXECUTION_FAILED')),
    priority              TEXT NOT NULL CHECK (priority IN ('HIGH', 'NORMAL')),
    dedup_key             TEXT NOT NULL UNIQUE,
    execution_review_key  TEXT UNIQUE,      -- one review per execution (stop hook vs exit fallback)
    batch_id              TEXT,             -- set when claimed into a batch
    payload               TEXT NOT NULL,    -- JSON
    state                 TEXT NOT NULL CHECK (state IN ('PENDING', 'PROCESSING',
                              'DELIVERED', 'CONSUMED')),
    claim_token           TEXT,
    claim_owner           TEXT,             -- '<node id>:<boot id>' of the claimer
    claimed_at            INTEGER,
    lease_expires_at      INTEGER,
    attempts              INTEGER NOT NULL DEFAULT 0,
    last_error            TEXT,
    consumed_at           INTEGER,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
CREATE INDEX workbench_events_parent ON workbench_events(parent_task_id, state, created_at, id);
CREATE INDEX workbench_events_source ON workbench_events(source_task_id, created_at DESC);
CREATE INDEX workbench_events_batch ON workbench_events(batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX workbench_events_claims ON workbench_events(lease_expires_at) WHERE state = 'PROCESSING';

CREATE TABLE workbench_batches (
    id                TEXT PRIMARY KEY NOT NULL,   -- digest of the sorted dedup keys; = deliveries.id
    parent_task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id      TEXT,                        -- the parent's execution at claim time
    event_ids         TEXT NOT NULL,               -- JSON array
    prompt            TEXT NOT NULL,
    state             TEXT NOT NULL CHECK (state IN ('CLAIMED', 'DISPATCHED', 'ACKED',
                          'RESOLVED', 'FAILED')),
    lease_token       TEXT,
    lease_expires_at  INTEGER,
    dispatch_attempts INTEGER NOT NULL DEFAULT 0,
    last_error        TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    dispatched_at     INTEGER,
    acked_at          INTEGER,
    resolved_at       INTEGER
);
CREATE INDEX workbench_batches_parent ON workbench_batches(parent_task_id, state, created_at DESC);

-- A task's conversation log; a workbench batch is a SYSTEM row whose id is the batch id.
CREATE TABLE task_messages (
    id            TEXT PRIMARY KEY NOT NULL,
    task_id       TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id  TEXT,
    role          TEXT NOT NULL CHECK (role IN ('USER', 'ASSISTANT', 'SYSTEM')),
    content       TEXT NOT NULL,
    metadata      TEXT,             -- JSON
    created_at    INTEGER NOT NULL
);
CREATE INDEX task_messages_task ON task_messages(task_id, created_at DESC);

-- Work owed to a derived child or a parent: when its terminal is gone the
-- delivery worker resumes the agent first (decision D4).
ALTER TABLE deliveries ADD COLUMN resume INTEGER NOT NULL DEFAULT 0;
-- The last provider turn end reported for the execution (Stop hook) and its reply.
ALTER TABLE executions ADD COLUMN last_turn_at INTEGER;
ALTER TABLE executions ADD COLUMN summary TEXT;

-- The resident Workbench of a project: one long-lived, parentless supervisor
-- task (started with the Workbench directive); at most one per project.
CREATE TABLE project_workbenches (
    project_id  TEXT PRIMARY KEY NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL UNIQUE REFERENCES tasks(id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL
);
-- Batches on their way (the worker's idle check and its settle step).
CREATE INDEX workbench_batches_claimed ON workbench_batches(id) WHERE state = 'CLAIMED';
