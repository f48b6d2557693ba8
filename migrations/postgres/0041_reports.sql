-- The morning report (crates/core/src/report, docs/morning-report.md): each
-- report built for a person, with its numbered waiting items, so that a
-- later reply maps its numbers to exactly the items they stood for (an item
-- answered meanwhile is refused, never applied to a newer question). The
-- same columns as SQLite's 0041.
-- `channel`: where it was shown ('chat' moves the default window's start:
-- the next report covers from this one's `until_at`). `scope`: 'all', or
-- 'task:<id>' (an agent's own task and its children).
CREATE TABLE reports (
    id          TEXT PRIMARY KEY NOT NULL,
    channel     TEXT NOT NULL CHECK (channel IN ('chat', 'web', 'api', 'cli', 'mcp')),
    scope       TEXT NOT NULL,
    since_at    BIGINT NOT NULL,
    until_at    BIGINT NOT NULL,
    content     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX reports_channel_scope ON reports(channel, scope, until_at DESC);

-- Item `number` of a report: an open question (its ask), a pending approval
-- (the approval's id) or an agent that needs a person (its execution).
CREATE TABLE report_items (
    report_id  TEXT NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
    number     BIGINT NOT NULL CHECK (number >= 1),
    kind       TEXT NOT NULL CHECK (kind IN ('question', 'approval', 'agent')),
    ref_id     TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    PRIMARY KEY (report_id, number)
);
