-- Gateway inbound (issue 28); the same schema as migrations/sqlite/0014.
--
-- 1. The delivery mapping is per chat: (gateway, platform, chat, platform
--    message id). Rows mapped before keep their id and get the gateway of
--    their outbound row ('' when it is gone).
ALTER TABLE harness_delivery_map ADD COLUMN gateway TEXT NOT NULL DEFAULT '';
UPDATE harness_delivery_map m SET gateway = lower(o.gateway)
    FROM harness_outbound o WHERE o.id = m.outbound_id;
ALTER TABLE harness_delivery_map DROP CONSTRAINT harness_delivery_map_pkey;
ALTER TABLE harness_delivery_map
    ADD PRIMARY KEY (gateway, platform, chat_id, platform_message_id);
CREATE INDEX harness_delivery_map_message
    ON harness_delivery_map(platform, platform_message_id, created_at DESC);

-- 2. Nonces of signed gateway requests.
CREATE TABLE gateway_nonces (
    nonce       TEXT PRIMARY KEY NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX gateway_nonces_expiry ON gateway_nonces(expires_at);

-- 3. One row per inbound platform message.
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
    attempts             BIGINT NOT NULL DEFAULT 0,
    last_error           TEXT,
    processed_at         BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
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
    attempts             BIGINT NOT NULL DEFAULT 0,
    next_attempt_at      BIGINT,
    lease_owner          TEXT,
    lease_expires_at     BIGINT,
    last_error           TEXT,
    platform_message_id  TEXT,
    delivered_at         BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX gateway_replies_due ON gateway_replies(next_attempt_at);
CREATE INDEX gateway_replies_inbound ON gateway_replies(inbound_id, created_at);
