-- Harness schema v1 (SQLite). Never edit a shipped migration; add a new one.
-- Times are INTEGER milliseconds since the Unix epoch (UTC).

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);

CREATE TABLE projects (
    id            TEXT PRIMARY KEY NOT NULL,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    path          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE tasks (
    id              TEXT PRIMARY KEY NOT NULL,
    project_id      TEXT REFERENCES projects(id) ON DELETE CASCADE,
    title           TEXT NOT NULL,
    description     TEXT,
    parent_task_id  TEXT,              -- bare id, like the reference (no FK)
    status          TEXT NOT NULL DEFAULT 'TODO'
                    CHECK (status IN ('TODO','IN_PROGRESS','IN_REVIEW','DONE','CANCELLED')),
    unattended      INTEGER NOT NULL DEFAULT 0 CHECK (unattended IN (0, 1)),
    agent_config    TEXT NOT NULL,     -- JSON {provider, command?, cwd?, env?}
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX tasks_project ON tasks(project_id);
CREATE INDEX tasks_parent ON tasks(parent_task_id);
CREATE INDEX tasks_created ON tasks(created_at DESC, id DESC);

CREATE TABLE executions (
    id          TEXT PRIMARY KEY NOT NULL,
    task_id     TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    status      TEXT NOT NULL
                CHECK (status IN ('RUNNING','PAUSED','COMPLETED','FAILED','STOPPED')),
    session_id  TEXT,
    exit_code   INTEGER,
    token_hash  TEXT NOT NULL UNIQUE,  -- sha256 hex of the agent token; never the token
    created_at  INTEGER NOT NULL,
    ended_at    INTEGER
);
CREATE INDEX executions_task_status ON executions(task_id, status, created_at DESC);

CREATE TABLE harness_messages (
    id            TEXT PRIMARY KEY NOT NULL,
    task_id       TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id  TEXT,                -- RUNNING execution at creation (not a FK)
    kind          TEXT NOT NULL CHECK (kind IN ('ask','notify')),
    state         TEXT NOT NULL
                  CHECK (state IN ('OPEN','ANSWERED','IGNORED','CANCELLED','EXPIRED','CLOSED')),
    content       TEXT NOT NULL,
    reply_text    TEXT,
    replied_at    INTEGER,
    created_at    INTEGER NOT NULL
);
-- open/latest ask of a task
CREATE INDEX harness_messages_task_kind_state ON harness_messages(task_id, kind, state, created_at DESC);
-- notification center views, newest first, keyset paging on (created_at, id)
CREATE INDEX harness_messages_created ON harness_messages(created_at DESC, id DESC);
CREATE INDEX harness_messages_kind_state_created ON harness_messages(kind, state, created_at DESC, id DESC);

CREATE TABLE settings (
    key         TEXT PRIMARY KEY NOT NULL,
    value       TEXT NOT NULL,         -- JSON
    updated_at  INTEGER NOT NULL
);
