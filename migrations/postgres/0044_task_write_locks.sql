-- The store's write lock narrowed for the two writes every node repeats
-- under load: an ask (harness_record_ask) and the activation of a sent ask
-- in a sender's turn. Both change only their own task's rows, so instead of
-- the store-wide lock (key 29380541684216691, store/src/postgres/mod.rs
-- WRITE_LOCK) held exclusively, they hold it SHARED plus an exclusive lock
-- per task (two-key advisory locks of class 1751216755, "hars"): writes of
-- different tasks, and their commits, run side by side; two writes of one
-- task still go one after the other; every other write transaction still
-- holds the store lock exclusively, so it excludes them all as before.

-- Exclusive locks on the tasks `p_tasks`, taken in one order (the keys
-- sorted) so two transactions locking overlapping sets cannot deadlock.
-- Returns no row (a statement of a batch whose rows are read by kind).
CREATE OR REPLACE FUNCTION harness_lock_tasks(p_tasks TEXT[])
RETURNS TABLE (what TEXT, id TEXT, extra TEXT)
LANGUAGE plpgsql AS $$
DECLARE
    k INTEGER;
BEGIN
    FOR k IN SELECT DISTINCT hashtext(t) FROM unnest(p_tasks) AS t WHERE t IS NOT NULL ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(1751216755, k);
    END LOOP;
    RETURN;
END
$$;

-- As migration 0022, under the store lock shared and the task's own lock.
-- Called inside a write transaction that holds the store lock exclusively
-- (an ask with choices, an approval's ask), the shared request is granted
-- at once: a session's own locks never conflict with each other.
CREATE OR REPLACE FUNCTION harness_record_ask(p_task TEXT, p_id TEXT, p_question TEXT, p_now BIGINT, p_key TEXT)
RETURNS TABLE (what TEXT, id TEXT, execution_id TEXT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    PERFORM pg_advisory_xact_lock_shared(29380541684216691);
    PERFORM harness_lock_tasks(ARRAY[p_task]);
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
