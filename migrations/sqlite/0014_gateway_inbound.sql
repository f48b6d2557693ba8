-- Gateway inbound (issue 28).
--
-- 1. The delivery mapping is per chat: a platform message id is unique only
--    within its chat (Telegram), so the key is (gateway, platform, chat,
--    platform message id) and a message in another chat never takes a
--    mapping over. Rows mapped before keep their id ('<platform>:<id>') and
--    get the gateway of their outbound row ('' when it is gone).
CREATE TABLE harness_delivery_map_per_chat (
    id                   TEXT NOT NULL,               -- the outbound row's id
    gateway              TEXT NOT NULL DEFAULT '',
    harness_message_id   TEXT,
    task_id              TEXT,
    outbound_id          TEXT,
    platform             TEXT NOT NULL,
    chat_id              TEXT NOT NULL DEFAULT '',
    platform_message_id  TEXT NOT NULL,
    scope                TEXT NOT NULL,
    expect_reply         INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL,
    PRIMARY KEY (gateway, platform, chat_id, platform_message_id)
);
INSERT INTO harness_delivery_map_per_chat (id, gateway, harness_message_id, task_id, outbound_id,
    platform, chat_id, platform_message_id, scope, expect_reply, created_at)
SELECT m.id, COALESCE(lower(o.gateway), ''), m.harness_message_id, m.task_id, m.outbound_id,
    m.platform, m.chat_id, m.platform_message_id, m.scope, m.expect_reply, m.created_at
FROM harness_delivery_map m LEFT JOIN harness_outbound o ON o.id = m.outbound_id
WHERE true
ON CONFLICT DO NOTHING;
DROP TABLE harness_delivery_map;
ALTER TABLE harness_delivery_map_per_chat RENAME TO harness_delivery_map;
CREATE INDEX harness_delivery_map_task ON harness_delivery_map(task_id);
CREATE INDEX harness_delivery_map_message
    ON harness_delivery_map(platform, platform_message_id, created_at DESC);

-- 2. Nonces of signed gateway requests (x-tower-nonce), kept until their
--    timestamp's window has passed: a replay is refused after a restart too.
CREATE TABLE gateway_nonces (
    nonce       TEXT PRIMARY KEY NOT NULL,
    expires_at  INTEGER NOT NULL
);
CREATE INDEX gateway_nonces_expiry ON gateway_nonces(expires_at);

-- 3. One row per inbound platform message (the reference's GatewayInbound).
CREATE TABLE gateway_inbound (
    id                   TEXT PRIMARY KEY NOT NULL,
    dedup_key            TEXT NOT NULL UNIQUE,
    session_id           TEXT,
    gateway              TEXT NOT NULL,
    platform             TEXT NOT NULL,
    chat_id              TEXT NOT NULL,
    sender_id            TEXT,
    platform_message_id  TEXT NOT NULL,
    thread_id            TEXT,
    root_message_id      TEXT,
    reply_to_message_id  TEXT,
    intent               TEXT NOT NULL
        CHECK (intent IN ('DIRECT', 'TOWER', 'PROJECT_DISCUSSION', 'PROJECT_WORK')),
    content              TEXT NOT NULL,
    state                TEXT NOT NULL DEFAULT 'RECEIVED'
        CHECK (state IN ('RECEIVED', 'QUEUED', 'PROCESSING', 'PROCESSED', 'FAILED')),
    created_task_id      TEXT,
    response             TEXT,
    attempts             INTEGER NOT NULL DEFAULT 0,
    last_error           TEXT,
    processed_at         INTEGER,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
);
CREATE INDEX gateway_inbound_message ON gateway_inbound(platform, chat_id, platform_message_id);
CREATE INDEX gateway_inbound_sender ON gateway_inbound(sender_id, processed_at);

-- 4. Gateway replies (the reference's GatewayDelivery, owed work on the
--    engine): the acknowledgement of a queued continuation, a discussion
--    answer, the result of work, each sent once through the gateway CLI as
--    a native reply to its inbound message where the gateway can reply.
--    The destination is copied from the inbound row when the reply is
--    written. A crash mid-send is SENT_UNVERIFIED, never resent blindly.
CREATE TABLE gateway_replies (
    id                   TEXT PRIMARY KEY NOT NULL,
    inbound_id           TEXT NOT NULL REFERENCES gateway_inbound(id),
    kind                 TEXT NOT NULL
        CHECK (kind IN ('QUEUED_ACK', 'DISCUSSION_REPLY', 'FINAL_RESULT')),
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
CREATE INDEX gateway_replies_due ON gateway_replies(next_attempt_at);
CREATE INDEX gateway_replies_inbound ON gateway_replies(inbound_id, created_at);
