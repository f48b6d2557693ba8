//! The statements of [`super::inbox`] (one text for both dialects).

use std::sync::LazyLock;

use super::inbox_rows::BATCH_COLUMNS;

/// Run by `add_workbench_event`.
pub(crate) static EVENT_BY_KEY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {EVENT_COLUMNS} FROM workbench_events WHERE dedup_key = $1",
        EVENT_COLUMNS = super::inbox_rows::EVENT_COLUMNS
    )
});

/// Run by `add_workbench_event`.
pub(crate) static EVENT_BY_REVIEW_KEY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {EVENT_COLUMNS} FROM workbench_events WHERE execution_review_key = $1",
        EVENT_COLUMNS = super::inbox_rows::EVENT_COLUMNS
    )
});

/// Run by `add_workbench_event`.
pub(crate) static INSERT_EVENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO workbench_events (id, parent_task_id, source_task_id, execution_id, kind, \
               priority, dedup_key, execution_review_key, payload, state, attempts, created_at, updated_at, \
               next_attempt_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'PENDING', 0, $10, $10, $10) \
             RETURNING {EVENT_COLUMNS}",
        EVENT_COLUMNS = super::inbox_rows::EVENT_COLUMNS
    )
});

/// Run by `record_turn_end`.
pub(crate) const RECORD_TURN_END: &str =
    "UPDATE executions SET last_turn_at = $1, summary = COALESCE($2, summary) WHERE id = $3";

/// Run by `claim_workbench_events`.
pub(crate) const CLAIM_WORKBENCH_EVENTS: &str = "UPDATE workbench_events SET state = 'CONSUMED', consumed_at = $1, updated_at = $1, \
               last_error = 'superseded: a newer review of this execution, or the child is closed' \
             WHERE parent_task_id = $2 AND state = 'PENDING' AND kind = 'CHILD_REVIEW_REQUIRED' AND ( \
               source_task_id IN (SELECT id FROM tasks WHERE status IN ('DONE', 'CANCELLED')) \
               OR (execution_id IS NOT NULL AND EXISTS (SELECT 1 FROM workbench_events n \
                 WHERE n.parent_task_id = workbench_events.parent_task_id AND n.state = 'PENDING' \
                 AND n.kind = 'CHILD_REVIEW_REQUIRED' \
                 AND n.source_task_id = workbench_events.source_task_id \
                 AND n.execution_id = workbench_events.execution_id \
                 AND (n.created_at > workbench_events.created_at \
                   OR (n.created_at = workbench_events.created_at AND n.id > workbench_events.id)))))";

/// Run by `store_workbench_batch`.
pub(crate) const CLAIM_HELD: &str =
    "SELECT COUNT(*) FROM workbench_events WHERE claim_token = $1 AND state = 'PROCESSING'";

/// Run by `store_workbench_batch`.
pub(crate) static UPSERT_BATCH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO workbench_batches (id, parent_task_id, execution_id, event_ids, prompt, state, \
               lease_token, lease_expires_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, 'CLAIMED', $6, $7, $8, $8) \
             ON CONFLICT (id) DO UPDATE SET state = 'CLAIMED', execution_id = excluded.execution_id, \
               event_ids = excluded.event_ids, prompt = excluded.prompt, \
               lease_token = excluded.lease_token, lease_expires_at = excluded.lease_expires_at, \
               last_error = NULL, dispatched_at = NULL, acked_at = NULL, resolved_at = NULL, \
               updated_at = excluded.updated_at \
             RETURNING {BATCH_COLUMNS}",
        BATCH_COLUMNS = super::inbox_rows::BATCH_COLUMNS
    )
});

/// Run by `store_workbench_batch`: the batch holds the events now (the
/// claim's start mark), and the claim's lease ends.
pub(crate) const LINK_BATCH: &str = "UPDATE workbench_events SET batch_id = $1, updated_at = $2, \
     lease_owner = NULL, lease_expires_at = NULL WHERE claim_token = $3";

/// Run by `store_workbench_batch`.
pub(crate) const UPSERT_BATCH_MESSAGE: &str = "INSERT INTO task_messages (id, task_id, execution_id, role, content, metadata, created_at) \
             VALUES ($1, $2, $3, 'SYSTEM', $4, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET content = excluded.content, \
               execution_id = excluded.execution_id, metadata = excluded.metadata";

/// Run by `store_workbench_batch`.
pub(crate) static UPSERT_BATCH_DELIVERY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO deliveries (id, task_id, kind, node_id, text, submit, dedup_key, state, \
               attempts, next_attempt_at, created_at, updated_at, resume) \
             VALUES ($1, $2, 'input', $3, $4, 1, $5, 'QUEUED', 0, $6, $6, $6, 1) \
             ON CONFLICT (id) DO UPDATE SET state = 'QUEUED', text = excluded.text, \
               next_attempt_at = excluded.next_attempt_at, lease_owner = NULL, \
               lease_expires_at = NULL, updated_at = excluded.updated_at \
             WHERE deliveries.state = 'FAILED' \
             RETURNING {DELIVERY_COLUMNS}",
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});

/// Run by `store_workbench_batch`.
pub(crate) static DELIVERY_BY_ID: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE id = $1",
        DELIVERY_COLUMNS = super::deliveries::DELIVERY_COLUMNS
    )
});

/// Run by `take_workbench_start`: `$1` task, `$2` owner, `$3` the
/// database's now, `$4` the throttle's end. Taken when no try holds it.
pub(crate) const TAKE_WORKBENCH_START: &str = "INSERT INTO workbench_starts (task_id, lease_owner, \
     tried_at, lease_expires_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (task_id) DO UPDATE SET lease_owner = excluded.lease_owner, \
       tried_at = excluded.tried_at, lease_expires_at = excluded.lease_expires_at \
     WHERE workbench_starts.lease_expires_at <= excluded.tried_at";

/// Run by `settle_workbench_batches`.
pub(crate) const ANY_CLAIMED_BATCH: &str =
    "SELECT EXISTS (SELECT 1 FROM workbench_batches WHERE state = 'CLAIMED')";

/// Run by `workbench_batch_in_flight`.
pub(crate) const WORKBENCH_BATCH_IN_FLIGHT: &str = "SELECT COUNT(*) FROM workbench_batches b LEFT JOIN deliveries d ON d.id = b.id \
             WHERE b.parent_task_id = $1 AND b.state = 'CLAIMED' \
               AND (d.state IS NULL OR d.state <> 'UNVERIFIED')";

/// Run by `transition_workbench_batch`.
pub(crate) const TRANSITION_WORKBENCH_BATCH: &str = "UPDATE workbench_events SET state = 'CONSUMED', consumed_at = $1, updated_at = $1 \
                 WHERE batch_id = $2 AND state IN ('PROCESSING', 'DELIVERED')";

/// Run by `project_workbench`.
pub(crate) const PROJECT_WORKBENCH: &str =
    "SELECT task_id FROM project_workbenches WHERE project_id = $1";

/// Run by `is_workbench`.
pub(crate) const IS_WORKBENCH: &str = "SELECT COUNT(*) FROM project_workbenches WHERE task_id = $1";

/// Run by `create_project_workbench`.
pub(crate) const INSERT_WORKBENCH_TASK: &str = "INSERT INTO tasks (id, project_id, title, description, parent_task_id, status, unattended, \
             agent_config, created_at, updated_at) VALUES ($1, $2, $3, $4, NULL, 'TODO', 0, $5, $6, $6)";

/// Run by `create_project_workbench`.
pub(crate) const INSERT_PROJECT_WORKBENCH: &str =
    "INSERT INTO project_workbenches (project_id, task_id, created_at) VALUES ($1, $2, $3)";

/// Run by `get_workbench_batch`.
pub(crate) static GET_WORKBENCH_BATCH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {BATCH_COLUMNS} FROM workbench_batches WHERE id = $1",
        BATCH_COLUMNS = super::inbox_rows::BATCH_COLUMNS
    )
});

/// Run by `child_task_ids`.
pub(crate) const CHILD_TASK_IDS: &str =
    "SELECT id FROM tasks WHERE parent_task_id = $1 ORDER BY created_at, id LIMIT 500";

/// Run by `workbench_parents_pending`.
pub(crate) const WORKBENCH_PARENTS_PENDING: &str = "SELECT parent_task_id FROM workbench_events WHERE state = 'PENDING' \
             GROUP BY parent_task_id ORDER BY MIN(created_at) LIMIT +$1";

/// Run by `child_executions_missing_events`.
pub(crate) const CHILD_EXECUTIONS_MISSING_EVENTS: &str = "SELECT e.task_id, e.id, e.status, e.exit_code FROM executions e \
             JOIN tasks t ON t.id = e.task_id \
             WHERE t.parent_task_id IS NOT NULL AND e.status IN ('COMPLETED', 'FAILED') \
               AND e.ended_at >= $1 \
               AND NOT EXISTS (SELECT 1 FROM workbench_events w WHERE w.execution_id = e.id) \
             ORDER BY e.ended_at, e.id LIMIT +$2";

/// Run by `list_workbench_events`.
pub(crate) static LIST_WORKBENCH_EVENTS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {EVENT_COLUMNS} FROM workbench_events WHERE parent_task_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT +$2",
        EVENT_COLUMNS = super::inbox_rows::EVENT_COLUMNS
    )
});

/// Run by `list_workbench_batches`.
pub(crate) static LIST_WORKBENCH_BATCHES: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {BATCH_COLUMNS} FROM workbench_batches WHERE parent_task_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT +$2",
        BATCH_COLUMNS = super::inbox_rows::BATCH_COLUMNS
    )
});

/// Run by `list_task_messages`.
pub(crate) const LIST_TASK_MESSAGES: &str = "SELECT id, task_id, execution_id, role, content, metadata, created_at FROM task_messages \
             WHERE task_id = $1 ORDER BY created_at DESC, id DESC LIMIT +$2";

/// Run by `settle_workbench_batches` as one batch (`$1` now, `$2` the ack
/// lease's end): a CLAIMED batch whose delivery arrived → DISPATCHED (its
/// events DELIVERED); a FAILED delivery of a CLAIMED batch (its lease
/// free) is not retried: the batch → FAILED with the delivery's error, its
/// events PENDING and due again.
pub(crate) static SETTLE_WORKBENCH_BATCHES: LazyLock<String> = LazyLock::new(|| {
    format!(
        "\
         UPDATE workbench_events SET state = 'DELIVERED', lease_expires_at = NULL, updated_at = $1 \
         WHERE state = 'PROCESSING' AND batch_id IN (SELECT b.id FROM workbench_batches b \
           JOIN deliveries d ON d.id = b.id WHERE b.state = 'CLAIMED' AND d.state = 'DELIVERED'); \
         UPDATE workbench_batches SET state = 'DISPATCHED', dispatched_at = $1, \
           dispatch_attempts = dispatch_attempts + 1, lease_expires_at = $2, updated_at = $1 \
         WHERE state = 'CLAIMED' AND id IN (SELECT id FROM deliveries WHERE state = 'DELIVERED') \
         RETURNING {BATCH_COLUMNS}; \
         UPDATE deliveries SET next_attempt_at = NULL, updated_at = $1 \
         WHERE state = 'FAILED' AND next_attempt_at IS NOT NULL \
           AND (lease_expires_at IS NULL OR lease_expires_at < $1) \
           AND id IN (SELECT id FROM workbench_batches WHERE state = 'CLAIMED'); \
         UPDATE workbench_events SET state = 'PENDING', batch_id = NULL, claim_token = NULL, \
           lease_owner = NULL, claimed_at = NULL, lease_expires_at = NULL, updated_at = $1, \
           next_attempt_at = $1, \
           last_error = (SELECT d.last_error FROM deliveries d WHERE d.id = workbench_events.batch_id) \
         WHERE state = 'PROCESSING' AND batch_id IN (SELECT b.id FROM workbench_batches b \
           JOIN deliveries d ON d.id = b.id WHERE b.state = 'CLAIMED' AND d.state = 'FAILED' \
           AND d.next_attempt_at IS NULL); \
         UPDATE workbench_batches SET state = 'FAILED', lease_expires_at = NULL, updated_at = $1, \
           last_error = (SELECT d.last_error FROM deliveries d WHERE d.id = workbench_batches.id) \
         WHERE state = 'CLAIMED' AND id IN (SELECT id FROM deliveries WHERE state = 'FAILED' \
           AND next_attempt_at IS NULL) \
         RETURNING {BATCH_COLUMNS}"
    )
});

/// Run by `resolve_dispatched_batches` as one batch (`$1` now, `$2` the
/// parent): its DISPATCHED / ACKED batches → RESOLVED, their events
/// CONSUMED.
pub(crate) static RESOLVE_DISPATCHED_BATCHES: LazyLock<String> = LazyLock::new(|| {
    format!(
        "\
         UPDATE workbench_events SET state = 'CONSUMED', consumed_at = $1, updated_at = $1 \
         WHERE state IN ('PROCESSING', 'DELIVERED') AND batch_id IN (SELECT id FROM \
           workbench_batches WHERE parent_task_id = $2 AND state IN ('DISPATCHED', 'ACKED')); \
         UPDATE workbench_batches SET state = 'RESOLVED', resolved_at = $1, \
           lease_expires_at = NULL, updated_at = $1 \
         WHERE parent_task_id = $2 AND state IN ('DISPATCHED', 'ACKED') \
         RETURNING {BATCH_COLUMNS}"
    )
});
