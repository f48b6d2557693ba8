-- The durable outbox (issue 13): task → human messages sent through a
-- gateway CLI (Hermes / OpenClaw). The message row (PENDING_DELIVERY) and its
-- outbound row are written in one transaction; the outbox worker sends.
--
-- 1. harness_messages.state gains PENDING_DELIVERY. Widening a CHECK list
--    does not change the stored format, so the table is not rebuilt (a
--    rebuild would have to name every column, including ones another
--    migration may add): the constraint text is edited in place, as the
--    SQLite documentation describes for CHECK changes, and the schema is
--    reloaded (RESET).
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''EXPIRED'',''CLOSED'')', '''EXPIRED'',''CLOSED'',''PENDING_DELIVERY'')')
 WHERE type = 'table' AND name = 'harness_messages'
   AND instr(sql, 'PENDING_DELIVERY') = 0;
PRAGMA writable_schema = RESET;

-- 2. The outbox. States: PENDING → SENDING → DELIVERED | SENT_UNVERIFIED;
--    SENDING → FAILED (due again at next_attempt_at) → … → DEAD (gave up).
--    SENT_UNVERIFIED (exit 0 without an id, an error with an id, or a lease
--    that expired mid-send) is never sent again automatically (D7).
CREATE TABLE harness_outbound (
    id                  TEXT PRIMARY KEY NOT NULL,
    dedup_key           TEXT NOT NULL UNIQUE,   -- harness:<taskId>:<key> | <base>[:cycle:<n>]
    dedup_base          TEXT,                   -- implicit key without its cycle suffix
    task_id             TEXT REFERENCES tasks(id) ON DELETE CASCADE,   -- NULL: a settings test message
    execution_id        TEXT,
    harness_message_id  TEXT UNIQUE REFERENCES harness_messages(id) ON DELETE CASCADE,
    gateway             TEXT NOT NULL CHECK (gateway IN ('hermes', 'openclaw')),
    downstream          TEXT,
    dest                TEXT,
    requested_to        TEXT,
    profile             TEXT,
    scope               TEXT NOT NULL CHECK (scope IN ('work', 'unattended')),
    expect_reply        INTEGER NOT NULL DEFAULT 0 CHECK (expect_reply IN (0, 1)),
    message             TEXT NOT NULL,
    presentation        TEXT,
    state               TEXT NOT NULL CHECK (state IN ('PENDING', 'SENDING', 'DELIVERED',
                            'SENT_UNVERIFIED', 'FAILED', 'DEAD')),
    attempts            INTEGER NOT NULL DEFAULT 0,
    next_attempt_at     INTEGER,                -- due from (PENDING / FAILED); NULL otherwise
    lease_owner         TEXT,                   -- '<node id>:<boot id>' of the sending worker
    lease_expires_at    INTEGER,
    platform            TEXT,
    platform_chat_id    TEXT,
    platform_message_id TEXT,
    last_error          TEXT,
    delivered_at        INTEGER,
    settled_by          TEXT,                   -- id of the settle that ended the last attempt
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
CREATE INDEX harness_outbound_due ON harness_outbound(next_attempt_at, id)
    WHERE state IN ('PENDING', 'FAILED');
CREATE INDEX harness_outbound_sending ON harness_outbound(lease_expires_at) WHERE state = 'SENDING';
CREATE INDEX harness_outbound_base ON harness_outbound(dedup_base, created_at DESC, id DESC)
    WHERE dedup_base IS NOT NULL;
CREATE INDEX harness_outbound_task ON harness_outbound(task_id, created_at DESC, id DESC);
CREATE INDEX harness_outbound_created ON harness_outbound(created_at DESC, id DESC);

-- 3. Platform message id → task (the reference's HarnessDelivery): a reply
--    to a message Harness sent is attributed through this row.
CREATE TABLE harness_delivery_map (
    id                   TEXT PRIMARY KEY NOT NULL,   -- '<platform>:<platformMessageId>'
    harness_message_id   TEXT,
    task_id              TEXT,
    outbound_id          TEXT,
    platform             TEXT NOT NULL,
    chat_id              TEXT NOT NULL DEFAULT '',
    platform_message_id  TEXT NOT NULL,
    scope                TEXT NOT NULL,
    expect_reply         INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL
);
CREATE INDEX harness_delivery_map_task ON harness_delivery_map(task_id);
