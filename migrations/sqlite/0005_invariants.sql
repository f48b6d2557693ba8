-- Invariants in the schema, not in a single writer or an in-process lock:
-- at most one OPEN ask per task and at most one live (RUNNING or PAUSED)
-- execution per task, whoever writes (several processes, a second backend).
--
-- Existing data may break them (a crash between statements of an older
-- version, a manual edit): repair first, so this migration cannot fail on a
-- user's database. The newest row (created_at, then id) wins.

-- Older OPEN asks of a task are superseded, as a new ask would do.
UPDATE harness_messages SET state = 'CANCELLED'
WHERE kind = 'ask' AND state = 'OPEN'
  AND id <> (
    SELECT o.id FROM harness_messages o
    WHERE o.task_id = harness_messages.task_id AND o.kind = 'ask' AND o.state = 'OPEN'
    ORDER BY o.created_at DESC, o.id DESC LIMIT 1
  );

-- Older live executions of a task lost their process long ago: FAILED,
-- interrupted, like the executions a server restart finds.
UPDATE executions
SET status = 'FAILED',
    end_reason = 'interrupted',
    ended_at = COALESCE(ended_at, CAST(strftime('%s', 'now') AS INTEGER) * 1000)
WHERE status IN ('RUNNING', 'PAUSED')
  AND id <> (
    SELECT x.id FROM executions x
    WHERE x.task_id = executions.task_id AND x.status IN ('RUNNING', 'PAUSED')
    ORDER BY x.created_at DESC, x.id DESC LIMIT 1
  );

CREATE UNIQUE INDEX harness_messages_one_open_ask
    ON harness_messages(task_id) WHERE kind = 'ask' AND state = 'OPEN';

CREATE UNIQUE INDEX executions_one_live
    ON executions(task_id) WHERE status IN ('RUNNING', 'PAUSED');
