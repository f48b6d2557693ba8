-- Harness schema on PostgreSQL: one migration equivalent to every SQLite
-- migration up to 0013 (migrations/sqlite/). Never edit a shipped
-- migration; add a new one (and its SQLite twin).
--
-- The model is the SQLite model, column for column: times are BIGINT
-- milliseconds since the Unix epoch (UTC), taken from the core's clock
-- (never a SQL default); counters are BIGINT; flags are BIGINT 0/1 with
-- the same CHECKs; JSON is TEXT as the core writes it. Invariants are
-- partial unique indexes, as on SQLite.

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);

CREATE TABLE projects (
    id            TEXT PRIMARY KEY NOT NULL,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    path          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE tasks (
    id              TEXT PRIMARY KEY NOT NULL,
    project_id      TEXT REFERENCES projects(id) ON DELETE CASCADE,
    title           TEXT NOT NULL,
    description     TEXT,
    parent_task_id  TEXT,
    status          TEXT NOT NULL DEFAULT 'TODO'
                    CHECK (status IN ('TODO','IN_PROGRESS','IN_REVIEW','DONE','CANCELLED')),
    unattended      BIGINT NOT NULL DEFAULT 0 CHECK (unattended IN (0, 1)),
    agent_config    TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX tasks_project ON tasks(project_id);
CREATE INDEX tasks_parent ON tasks(parent_task_id);
CREATE INDEX tasks_created ON tasks(created_at DESC, id DESC);

CREATE TABLE executions (
    id            TEXT PRIMARY KEY NOT NULL,
    task_id       TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    status        TEXT NOT NULL
                  CHECK (status IN ('RUNNING','PAUSED','COMPLETED','FAILED','STOPPED')),
    session_id    TEXT,
    exit_code     BIGINT,
    token_hash    TEXT NOT NULL UNIQUE,
    created_at    BIGINT NOT NULL,
    ended_at      BIGINT,
    end_reason    TEXT,
    node_id       TEXT,
    last_turn_at  BIGINT,
    summary       TEXT
);
CREATE INDEX executions_task_status ON executions(task_id, status, created_at DESC);
CREATE UNIQUE INDEX executions_one_live
    ON executions(task_id) WHERE status IN ('RUNNING', 'PAUSED');

CREATE TABLE harness_messages (
    id               TEXT PRIMARY KEY NOT NULL,
    task_id          TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id     TEXT,
    kind             TEXT NOT NULL CHECK (kind IN ('ask','notify')),
    state            TEXT NOT NULL CHECK (state IN ('OPEN','ANSWERED','IGNORED','CANCELLED',
                         'EXPIRED','CLOSED','PENDING_DELIVERY')),
    content          TEXT NOT NULL,
    reply_text       TEXT,
    replied_at       BIGINT,
    created_at       BIGINT NOT NULL,
    idempotency_key  TEXT
);
CREATE INDEX harness_messages_task_kind_state
    ON harness_messages(task_id, kind, state, created_at DESC);
CREATE INDEX harness_messages_created ON harness_messages(created_at DESC, id DESC);
CREATE INDEX harness_messages_open_asks
    ON harness_messages(created_at DESC, id DESC) WHERE kind = 'ask' AND state = 'OPEN';
CREATE INDEX harness_messages_answered_asks
    ON harness_messages(created_at DESC, id DESC) WHERE kind = 'ask' AND state = 'ANSWERED';
CREATE UNIQUE INDEX harness_messages_one_open_ask
    ON harness_messages(task_id) WHERE kind = 'ask' AND state = 'OPEN';
CREATE UNIQUE INDEX harness_messages_idempotency
    ON harness_messages(task_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE settings (
    key         TEXT PRIMARY KEY NOT NULL,
    value       TEXT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE TABLE deliveries (
    id                TEXT PRIMARY KEY NOT NULL,
    task_id           TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('reply', 'input')),
    message_id        TEXT,
    node_id           TEXT,
    text              TEXT NOT NULL,
    question          TEXT,
    submit            BIGINT NOT NULL DEFAULT 1 CHECK (submit IN (0, 1)),
    dedup_key         TEXT,
    state             TEXT NOT NULL CHECK (state IN ('QUEUED', 'WAITING_BOUNDARY', 'RESUMING',
                          'WRITING', 'DELIVERED', 'FAILED', 'UNVERIFIED')),
    attempts          BIGINT NOT NULL DEFAULT 0,
    next_attempt_at   BIGINT,
    lease_owner       TEXT,
    lease_expires_at  BIGINT,
    last_error        TEXT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    done_at           BIGINT,
    resume            BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX deliveries_dedup ON deliveries(task_id, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE UNIQUE INDEX deliveries_message ON deliveries(message_id) WHERE message_id IS NOT NULL;
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX deliveries_task ON deliveries(task_id, created_at DESC, id DESC);
CREATE INDEX deliveries_writing ON deliveries(lease_expires_at) WHERE state = 'WRITING';

CREATE TABLE harness_sessions (
    id_hash     TEXT PRIMARY KEY NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);

CREATE TABLE harness_outbound (
    id                  TEXT PRIMARY KEY NOT NULL,
    dedup_key           TEXT NOT NULL UNIQUE,
    dedup_base          TEXT,
    task_id             TEXT REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id        TEXT,
    harness_message_id  TEXT UNIQUE REFERENCES harness_messages(id) ON DELETE CASCADE,
    gateway             TEXT NOT NULL CHECK (gateway IN ('hermes', 'openclaw')),
    downstream          TEXT,
    dest                TEXT,
    requested_to        TEXT,
    profile             TEXT,
    scope               TEXT NOT NULL CHECK (scope IN ('work', 'unattended')),
    expect_reply        BIGINT NOT NULL DEFAULT 0 CHECK (expect_reply IN (0, 1)),
    message             TEXT NOT NULL,
    presentation        TEXT,
    state               TEXT NOT NULL CHECK (state IN ('PENDING', 'SENDING', 'DELIVERED',
                            'SENT_UNVERIFIED', 'FAILED', 'DEAD')),
    attempts            BIGINT NOT NULL DEFAULT 0,
    next_attempt_at     BIGINT,
    lease_owner         TEXT,
    lease_expires_at    BIGINT,
    platform            TEXT,
    platform_chat_id    TEXT,
    platform_message_id TEXT,
    last_error          TEXT,
    delivered_at        BIGINT,
    settled_by          TEXT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    claimed_from        TEXT CHECK (claimed_from IS NULL OR claimed_from IN ('PENDING', 'FAILED'))
);
CREATE INDEX harness_outbound_due ON harness_outbound(next_attempt_at, id)
    WHERE state IN ('PENDING', 'FAILED');
CREATE INDEX harness_outbound_sending ON harness_outbound(lease_expires_at) WHERE state = 'SENDING';
CREATE INDEX harness_outbound_base ON harness_outbound(dedup_base, created_at DESC, id DESC)
    WHERE dedup_base IS NOT NULL;
CREATE INDEX harness_outbound_task ON harness_outbound(task_id, created_at DESC, id DESC);
CREATE INDEX harness_outbound_created ON harness_outbound(created_at DESC, id DESC);

-- The delivery mapping: its key is '<platform>:<platformMessageId>'.
CREATE TABLE harness_delivery_map (
    id                   TEXT PRIMARY KEY NOT NULL,
    harness_message_id   TEXT,
    task_id              TEXT,
    outbound_id          TEXT,
    platform             TEXT NOT NULL,
    chat_id              TEXT NOT NULL DEFAULT '',
    platform_message_id  TEXT NOT NULL,
    scope                TEXT NOT NULL,
    expect_reply         BIGINT NOT NULL DEFAULT 0,
    created_at           BIGINT NOT NULL
);
CREATE INDEX harness_delivery_map_task ON harness_delivery_map(task_id);

CREATE TABLE workbench_events (
    id                    TEXT PRIMARY KEY NOT NULL,
    parent_task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    source_task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id          TEXT,
    kind                  TEXT NOT NULL CHECK (kind IN ('CHILD_REVIEW_REQUIRED',
                              'CHILD_DECISION_REQUIRED', 'CHILD_EXECUTION_FAILED')),
    priority              TEXT NOT NULL CHECK (priority IN ('HIGH', 'NORMAL')),
    dedup_key             TEXT NOT NULL UNIQUE,
    execution_review_key  TEXT UNIQUE,
    batch_id              TEXT,
    payload               TEXT NOT NULL,
    state                 TEXT NOT NULL CHECK (state IN ('PENDING', 'PROCESSING',
                              'DELIVERED', 'CONSUMED')),
    claim_token           TEXT,
    claim_owner           TEXT,
    claimed_at            BIGINT,
    lease_expires_at      BIGINT,
    attempts              BIGINT NOT NULL DEFAULT 0,
    last_error            TEXT,
    consumed_at           BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX workbench_events_parent ON workbench_events(parent_task_id, state, created_at, id);
CREATE INDEX workbench_events_source ON workbench_events(source_task_id, created_at DESC);
CREATE INDEX workbench_events_batch ON workbench_events(batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX workbench_events_claims ON workbench_events(lease_expires_at) WHERE state = 'PROCESSING';

CREATE TABLE workbench_batches (
    id                TEXT PRIMARY KEY NOT NULL,
    parent_task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id      TEXT,
    event_ids         TEXT NOT NULL,
    prompt            TEXT NOT NULL,
    state             TEXT NOT NULL CHECK (state IN ('CLAIMED', 'DISPATCHED', 'ACKED',
                          'RESOLVED', 'FAILED')),
    lease_token       TEXT,
    lease_expires_at  BIGINT,
    dispatch_attempts BIGINT NOT NULL DEFAULT 0,
    last_error        TEXT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    dispatched_at     BIGINT,
    acked_at          BIGINT,
    resolved_at       BIGINT
);
CREATE INDEX workbench_batches_parent ON workbench_batches(parent_task_id, state, created_at DESC);
CREATE INDEX workbench_batches_claimed ON workbench_batches(id) WHERE state = 'CLAIMED';

CREATE TABLE task_messages (
    id            TEXT PRIMARY KEY NOT NULL,
    task_id       TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id  TEXT,
    role          TEXT NOT NULL CHECK (role IN ('USER', 'ASSISTANT', 'SYSTEM')),
    content       TEXT NOT NULL,
    metadata      TEXT,
    created_at    BIGINT NOT NULL
);
CREATE INDEX task_messages_task ON task_messages(task_id, created_at DESC);

CREATE TABLE project_workbenches (
    project_id  TEXT PRIMARY KEY NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL UNIQUE REFERENCES tasks(id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL
);

CREATE TABLE ask_choices (
    message_id        TEXT PRIMARY KEY NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    options           TEXT NOT NULL DEFAULT '[]',
    multi_select      BIGINT NOT NULL DEFAULT 0 CHECK (multi_select IN (0, 1)),
    default_label     TEXT,
    deadline_at       BIGINT,
    urgency           TEXT NOT NULL DEFAULT 'normal' CHECK (urgency IN ('low', 'normal', 'high')),
    answered_by       TEXT CHECK (answered_by IN ('default_after_deadline')),
    answered_options  TEXT
);
CREATE INDEX ask_choices_due ON ask_choices(deadline_at)
    WHERE default_label IS NOT NULL AND deadline_at IS NOT NULL AND answered_by IS NULL;
