-- An ask's three statements (supersede the task's other OPEN asks, insert
-- the ask bound to its newest RUNNING execution, park the task's RUNNING
-- executions) in one server-side call: one round trip instead of three per
-- ask (shared/messages.rs RECORD_ASK is the same text, run statement by
-- statement on SQLite). Rows as RECORD_ASK returns them: (what, id,
-- execution_id). Runs inside the caller's transaction (and its write lock).
CREATE FUNCTION harness_record_ask(p_task TEXT, p_id TEXT, p_question TEXT, p_now BIGINT, p_key TEXT)
RETURNS TABLE (what TEXT, id TEXT, execution_id TEXT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        UPDATE harness_messages AS m SET state = 'CANCELLED'
        WHERE m.task_id = p_task AND m.kind = 'ask' AND m.state = 'OPEN' AND m.id <> p_id
        RETURNING 'cancelled'::TEXT, m.id, NULL::TEXT;
    RETURN QUERY
        INSERT INTO harness_messages AS m (id, task_id, execution_id, kind, state, content, created_at,
            idempotency_key)
        VALUES (p_id, p_task, (SELECT x.id FROM executions x WHERE x.task_id = p_task AND x.status = 'RUNNING'
            ORDER BY x.created_at DESC, x.id DESC LIMIT 1), 'ask', 'OPEN', p_question, p_now, p_key)
        RETURNING 'asked'::TEXT, m.id, m.execution_id;
    RETURN QUERY
        UPDATE executions AS e SET status = 'PAUSED' WHERE e.task_id = p_task AND e.status = 'RUNNING'
        RETURNING 'paused'::TEXT, e.id, NULL::TEXT;
END
$$;
