-- Escalation of an unanswered ask (issue 32 point 2): after its last
-- reminder (or at once when its chat can no longer be reached) the ask goes
-- to the escalation targets of its scope. One row per target reached,
-- written ONCE per ask (all targets in one transaction with their outbound
-- rows, only while the ask is OPEN); `notice` is the short "answered" text
-- every chat reached gets when the ask is answered.
CREATE TABLE ask_escalations (
    message_id   TEXT NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    seq          BIGINT NOT NULL CHECK (seq >= 1),
    target       TEXT NOT NULL,
    outbound_id  TEXT NOT NULL UNIQUE,
    reason       TEXT NOT NULL CHECK (reason IN ('schedule', 'unreachable')),
    notice       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (message_id, seq)
);

-- The first answer from anyone wins (the ask leaves OPEN once); in the SAME
-- transaction as that answer — whichever path wrote it — every chat the
-- escalated ask reached (its first row and each escalation row that was
-- sent) gets one "answered" notice, an outbound row the outbox sends.
CREATE FUNCTION ask_escalations_answered() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    at BIGINT := COALESCE(NEW.replied_at, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT);
BEGIN
    INSERT INTO harness_outbound (id, dedup_key, dedup_base, task_id, execution_id,
        harness_message_id, gateway, downstream, dest, requested_to, profile, scope,
        expect_reply, message, presentation, state, attempts, next_attempt_at,
        created_at, updated_at)
    SELECT 'answered-' || NEW.id || '-' || x.n, 'answered:' || NEW.id || ':' || x.n, NULL,
        x.task_id, x.execution_id, NULL, x.gateway, x.downstream, x.dest, x.requested_to,
        x.profile, x.scope, 0, n1.notice, NULL, 'PENDING', 0, at, at, at
    FROM (SELECT 0::BIGINT AS n, o.task_id, o.execution_id, o.gateway, o.downstream, o.dest,
                 o.requested_to, o.profile, o.scope, o.state
            FROM harness_outbound o WHERE o.harness_message_id = NEW.id
          UNION ALL
          SELECT e.seq, o.task_id, o.execution_id, o.gateway, o.downstream, o.dest,
                 o.requested_to, o.profile, o.scope, o.state
            FROM ask_escalations e JOIN harness_outbound o ON o.id = e.outbound_id
            WHERE e.message_id = NEW.id) x
    JOIN ask_escalations n1 ON n1.message_id = NEW.id AND n1.seq = 1
    WHERE x.state IN ('DELIVERED', 'SENT_UNVERIFIED')
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE TRIGGER ask_escalations_answered AFTER UPDATE OF state ON harness_messages
FOR EACH ROW WHEN (OLD.state = 'OPEN' AND NEW.state = 'ANSWERED')
EXECUTE FUNCTION ask_escalations_answered();

-- Reachability (point 4): when the person of a chat last wrote.
CREATE INDEX gateway_inbound_chat_recent
    ON gateway_inbound(gateway, platform, chat_id, created_at DESC);
