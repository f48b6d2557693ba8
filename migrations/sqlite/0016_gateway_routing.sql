-- Gateway routing (issue 28, route_gateway_message; tower-messaging.md §2.4,
-- §2.7, §8.2, §8.5).
--
-- 1. Sessions: a chat thread (or root message), else a chat + sender,
--    bound to a project and its Workbench. Threadless sessions are the
--    sender's recent project context for 7 days (last_activity_at).
CREATE TABLE gateway_sessions (
    id                 TEXT PRIMARY KEY NOT NULL,
    binding_key        TEXT NOT NULL UNIQUE,   -- gateway-session:<sha256 hex>
    gateway            TEXT NOT NULL,
    platform           TEXT NOT NULL,
    chat_id            TEXT NOT NULL,
    thread_id          TEXT,
    root_message_id    TEXT,
    sender_id          TEXT,
    status             TEXT NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'CLOSED')),
    project_id         TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    workbench_task_id  TEXT REFERENCES tasks(id) ON DELETE SET NULL,
    last_activity_at   INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX gateway_sessions_thread ON gateway_sessions(gateway, platform, chat_id, status);
CREATE INDEX gateway_sessions_sender ON gateway_sessions(sender_id, last_activity_at);

-- 2. The child task created for an inbound work request (one each way):
--    written with the task, so a crash between creating the task and
--    confirming it never creates a second one.
CREATE TABLE gateway_task_links (
    inbound_id  TEXT PRIMARY KEY NOT NULL REFERENCES gateway_inbound(id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL UNIQUE REFERENCES tasks(id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL
);

CREATE INDEX gateway_inbound_session ON gateway_inbound(session_id, state, created_at);
CREATE INDEX gateway_inbound_recent ON gateway_inbound(gateway, platform, chat_id, created_at);
CREATE INDEX gateway_inbound_state ON gateway_inbound(state, created_at);

-- 3. Workbench events of gateway requests (discussion, work): the kind
--    check is widened (SQLite: the table is rebuilt; nothing references it).
CREATE TABLE workbench_events_widened (
    id                    TEXT PRIMARY KEY NOT NULL,
    parent_task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    source_task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id          TEXT,
    kind                  TEXT NOT NULL CHECK (kind IN ('CHILD_REVIEW_REQUIRED',
                              'CHILD_DECISION_REQUIRED', 'CHILD_EXECUTION_FAILED',
                              'GATEWAY_DISCUSSION_REQUEST', 'GATEWAY_WORK_REQUEST')),
    priority              TEXT NOT NULL CHECK (priority IN ('HIGH', 'NORMAL')),
    dedup_key             TEXT NOT NULL UNIQUE,
    execution_review_key  TEXT UNIQUE,
    batch_id              TEXT,
    payload               TEXT NOT NULL,
    state                 TEXT NOT NULL CHECK (state IN ('PENDING', 'PROCESSING',
                              'DELIVERED', 'CONSUMED')),
    claim_token           TEXT,
    claim_owner           TEXT,
    claimed_at            INTEGER,
    lease_expires_at      INTEGER,
    attempts              INTEGER NOT NULL DEFAULT 0,
    last_error            TEXT,
    consumed_at           INTEGER,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
INSERT INTO workbench_events_widened SELECT id, parent_task_id, source_task_id, execution_id,
    kind, priority, dedup_key, execution_review_key, batch_id, payload, state, claim_token,
    claim_owner, claimed_at, lease_expires_at, attempts, last_error, consumed_at, created_at,
    updated_at FROM workbench_events;
DROP TABLE workbench_events;
ALTER TABLE workbench_events_widened RENAME TO workbench_events;
CREATE INDEX workbench_events_parent ON workbench_events(parent_task_id, state, created_at, id);
CREATE INDEX workbench_events_source ON workbench_events(source_task_id, created_at DESC);
CREATE INDEX workbench_events_batch ON workbench_events(batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX workbench_events_claims ON workbench_events(lease_expires_at) WHERE state = 'PROCESSING';

-- 4. Gateway replies of a created task (TASK_CREATED).
CREATE TABLE gateway_replies_widened (
    id                   TEXT PRIMARY KEY NOT NULL,
    inbound_id           TEXT NOT NULL REFERENCES gateway_inbound(id),
    kind                 TEXT NOT NULL
        CHECK (kind IN ('QUEUED_ACK', 'TASK_CREATED', 'DISCUSSION_REPLY', 'FINAL_RESULT')),
    content              TEXT NOT NULL,
    dedup_key            TEXT NOT NULL UNIQUE,
    gateway              TEXT NOT NULL,
    platform             TEXT NOT NULL,
    chat_id              TEXT NOT NULL,
    reply_to_message_id  TEXT NOT NULL,
    thread_id            TEXT,
    state                TEXT NOT NULL DEFAULT 'PENDING'
        CHECK (state IN ('PENDING', 'SENDING', 'DELIVERED', 'SENT_UNVERIFIED', 'FAILED', 'DEAD')),
    attempts             INTEGER NOT NULL DEFAULT 0,
    next_attempt_at      INTEGER,
    lease_owner          TEXT,
    lease_expires_at     INTEGER,
    last_error           TEXT,
    platform_message_id  TEXT,
    delivered_at         INTEGER,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
);
INSERT INTO gateway_replies_widened SELECT id, inbound_id, kind, content, dedup_key, gateway,
    platform, chat_id, reply_to_message_id, thread_id, state, attempts, next_attempt_at,
    lease_owner, lease_expires_at, last_error, platform_message_id, delivered_at, created_at,
    updated_at FROM gateway_replies;
DROP TABLE gateway_replies;
ALTER TABLE gateway_replies_widened RENAME TO gateway_replies;
CREATE INDEX gateway_replies_due ON gateway_replies(next_attempt_at);
CREATE INDEX gateway_replies_inbound ON gateway_replies(inbound_id, created_at);
CREATE INDEX gateway_replies_message ON gateway_replies(platform_message_id);
