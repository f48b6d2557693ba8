-- harness_record_ask takes the store's write lock itself (the key of
-- store/src/postgres/mod.rs WRITE_LOCK), so an ask is one statement in its
-- own transaction: one round trip instead of BEGIN + lock, the call and
-- COMMIT. Called inside a write transaction that holds the lock already
-- (an ask with choices, an approval's ask) it takes it again, which an
-- advisory lock allows. Each statement after the lock sees what the
-- previous holders committed (READ COMMITTED: a snapshot per statement).
CREATE OR REPLACE FUNCTION harness_record_ask(p_task TEXT, p_id TEXT, p_question TEXT, p_now BIGINT, p_key TEXT)
RETURNS TABLE (what TEXT, id TEXT, execution_id TEXT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    PERFORM pg_advisory_xact_lock(29380541684216691);
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
