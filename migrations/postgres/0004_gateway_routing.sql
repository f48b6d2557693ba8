-- Gateway routing (issue 28): the same schema as sqlite/0016_gateway_routing.sql.
CREATE TABLE gateway_sessions (
    id                 TEXT PRIMARY KEY NOT NULL,
    binding_key        TEXT NOT NULL UNIQUE,
    gateway            TEXT NOT NULL,
    platform           TEXT NOT NULL,
    chat_id            TEXT NOT NULL,
    thread_id          TEXT,
    root_message_id    TEXT,
    sender_id          TEXT,
    status             TEXT NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'CLOSED')),
    project_id         TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    workbench_task_id  TEXT REFERENCES tasks(id) ON DELETE SET NULL,
    last_activity_at   BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX gateway_sessions_thread ON gateway_sessions(gateway, platform, chat_id, status);
CREATE INDEX gateway_sessions_sender ON gateway_sessions(sender_id, last_activity_at);

CREATE TABLE gateway_task_links (
    inbound_id  TEXT PRIMARY KEY NOT NULL REFERENCES gateway_inbound(id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL UNIQUE REFERENCES tasks(id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL
);

CREATE INDEX gateway_inbound_session ON gateway_inbound(session_id, state, created_at);
CREATE INDEX gateway_inbound_recent ON gateway_inbound(gateway, platform, chat_id, created_at);
CREATE INDEX gateway_inbound_state ON gateway_inbound(state, created_at);

ALTER TABLE workbench_events DROP CONSTRAINT workbench_events_kind_check;
ALTER TABLE workbench_events ADD CONSTRAINT workbench_events_kind_check CHECK (kind IN (
    'CHILD_REVIEW_REQUIRED', 'CHILD_DECISION_REQUIRED', 'CHILD_EXECUTION_FAILED',
    'GATEWAY_DISCUSSION_REQUEST', 'GATEWAY_WORK_REQUEST'));

ALTER TABLE gateway_replies DROP CONSTRAINT gateway_replies_kind_check;
ALTER TABLE gateway_replies ADD CONSTRAINT gateway_replies_kind_check CHECK (kind IN (
    'QUEUED_ACK', 'TASK_CREATED', 'DISCUSSION_REPLY', 'FINAL_RESULT'));
CREATE INDEX gateway_replies_message ON gateway_replies(platform_message_id);
