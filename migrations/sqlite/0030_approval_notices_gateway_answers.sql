-- The "answered" notices (0028, 0029) of an escalated approval: its first
-- chat is reached by the approval's push (`approval:<id>`, written without a
-- message id), not by a row of the ask's own, so that push is the first row
-- (n = 0) too. Without it the chat that was asked first was never told.
DROP TRIGGER ask_escalations_answered;
CREATE TRIGGER ask_escalations_answered AFTER UPDATE OF state ON harness_messages
WHEN OLD.state = 'OPEN' AND NEW.state = 'ANSWERED'
    AND EXISTS (SELECT 1 FROM ask_escalations e WHERE e.message_id = NEW.id)
BEGIN
    INSERT INTO harness_outbound (id, dedup_key, dedup_base, task_id, execution_id,
        harness_message_id, gateway, downstream, dest, requested_to, profile, scope,
        expect_reply, message, presentation, state, attempts, next_attempt_at,
        created_at, updated_at)
    SELECT 'answered-' || NEW.id || '-' || x.n, 'answered:' || NEW.id || ':' || x.n, NULL,
        x.task_id, x.execution_id, NULL, x.gateway, x.downstream, x.dest, x.requested_to,
        x.profile, x.scope, 0, n1.notice, NULL, 'PENDING', 0, x.at, x.at, x.at
    FROM (SELECT 0 AS n, o.*, COALESCE(NEW.replied_at, CAST(strftime('%s', 'now') AS INTEGER) * 1000) AS at
            FROM harness_outbound o WHERE o.harness_message_id = NEW.id
               OR o.dedup_key IN (SELECT 'approval:' || a.id FROM approvals a WHERE a.request_id = NEW.id)
          UNION ALL
          SELECT e.seq AS n, o.*, COALESCE(NEW.replied_at, CAST(strftime('%s', 'now') AS INTEGER) * 1000) AS at
            FROM ask_escalations e JOIN harness_outbound o ON o.id = e.outbound_id
            WHERE e.message_id = NEW.id) x
    JOIN ask_escalations n1 ON n1.message_id = NEW.id AND n1.seq = 1
    WHERE x.state IN ('SENDING', 'DELIVERED', 'SENT_UNVERIFIED')
    ON CONFLICT DO NOTHING;
END;

-- Asks answered through a gateway (issue 32 point 4): the person wrote in
-- the chat, so its delivery window (e.g. WeChat's 24 h) starts again. An
-- answer on the web is not one of them.
CREATE TABLE ask_gateway_answers (
    message_id   TEXT PRIMARY KEY NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    answered_at  INTEGER NOT NULL
);
