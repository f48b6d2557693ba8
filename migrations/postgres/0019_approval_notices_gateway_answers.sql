-- The "answered" notices (0017, 0018) of an escalated approval: its first
-- chat is reached by the approval's push (`approval:<id>`, written without a
-- message id), not by a row of the ask's own, so that push is the first row
-- (n = 0) too. Without it the chat that was asked first was never told.
CREATE OR REPLACE FUNCTION ask_escalations_answered() RETURNS trigger LANGUAGE plpgsql AS $$
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
               OR o.dedup_key IN (SELECT 'approval:' || a.id FROM approvals a WHERE a.request_id = NEW.id)
          UNION ALL
          SELECT e.seq, o.task_id, o.execution_id, o.gateway, o.downstream, o.dest,
                 o.requested_to, o.profile, o.scope, o.state
            FROM ask_escalations e JOIN harness_outbound o ON o.id = e.outbound_id
            WHERE e.message_id = NEW.id) x
    JOIN ask_escalations n1 ON n1.message_id = NEW.id AND n1.seq = 1
    WHERE x.state IN ('SENDING', 'DELIVERED', 'SENT_UNVERIFIED')
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- Asks answered through a gateway (issue 32 point 4): the person wrote in
-- the chat, so its delivery window (e.g. WeChat's 24 h) starts again. An
-- answer on the web is not one of them.
CREATE TABLE ask_gateway_answers (
    message_id   TEXT PRIMARY KEY NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    answered_at  BIGINT NOT NULL
);
