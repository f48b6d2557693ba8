//! `OutboxStore` on PostgreSQL (migration 0008): the enqueue batch in
//! PostgreSQL's spelling, run in one transaction under the store's write
//! lock (`run_batch`); the rest of the port is shared
//! (`crate::shared::outbox_store`).

use super::PgStore;
use crate::shared::outbox::{ALLOWED, COLUMNS};

/// The enqueue batch (`?1` explicit key or NULL, `?2` implicit base or
/// NULL, `?3` task, `?4` outbound id, `?5` message id, `?6` expect reply,
/// `?7` text, `?8` now, `?9`…`?15` the row's fields, `?16`…`?20` the ask's
/// choices: options JSON or NULL, multi-select, default, deadline, urgency —
/// written with the message); each statement is sent with all the
/// parameters (`batch::run`). The message and the row are written only if
/// [`ALLOWED`]; the last statement answers the new row or the one the dedup
/// rule reuses (no row: the task does not exist). A later implicit cycle
/// gets the key `<base>:cycle:<n>`.
pub(super) static ENQUEUE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "\
     INSERT INTO harness_messages (id, task_id, execution_id, kind, state, content, created_at) \
     SELECT $5, $3, (SELECT x.id FROM executions x WHERE x.task_id = $3 AND x.status = 'RUNNING' \
         ORDER BY x.created_at DESC, x.id DESC LIMIT 1), \
       CASE WHEN $6 = 1 THEN 'ask' ELSE 'notify' END, 'PENDING_DELIVERY', $7, $8 \
     WHERE $5 IS NOT NULL AND $3 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM harness_outbound i WHERE i.id = $4) \
       AND {ALLOWED}; \
     INSERT INTO harness_outbound (id, dedup_key, dedup_base, task_id, execution_id, \
       harness_message_id, gateway, downstream, dest, requested_to, profile, scope, \
       expect_reply, message, presentation, state, attempts, next_attempt_at, created_at, updated_at) \
     SELECT $4, COALESCE($1, CASE WHEN c.n = 0 THEN $2 ELSE $2 || ':cycle:' || (c.n + 1) END), \
       CASE WHEN $1 IS NULL THEN $2 END, $3, \
       (SELECT x.id FROM executions x WHERE x.task_id = $3 AND x.status = 'RUNNING' \
         ORDER BY x.created_at DESC, x.id DESC LIMIT 1), \
       CASE WHEN $3 IS NOT NULL THEN $5 END, $9, $10, $11, $12, $13, $14, $6, $7, $15, 'PENDING', 0, $8, $8, $8 \
     FROM (SELECT COUNT(*) AS n FROM harness_outbound cc WHERE cc.dedup_base = $2) c \
     WHERE {ALLOWED}; \
     INSERT INTO ask_choices (message_id, options, multi_select, default_label, deadline_at, urgency, answered_by) \
     SELECT $5, $16, $17, $18, $19, $20, NULL \
     WHERE $16 IS NOT NULL AND $5 IS NOT NULL \
       AND EXISTS (SELECT 1 FROM harness_outbound i WHERE i.id = $4 AND i.harness_message_id = $5); \
     SELECT {COLUMNS}, m.state AS message_state, o.id = $4 AS inserted \
     FROM harness_outbound o LEFT JOIN harness_messages m ON m.id = o.harness_message_id \
     WHERE (o.id = $4 OR o.dedup_key = $1 OR o.dedup_base = $2) AND ($3 IS NULL OR o.task_id IS NOT DISTINCT FROM $3) \
     ORDER BY o.id = $4 DESC, o.dedup_key IS NOT DISTINCT FROM $1 DESC, o.created_at DESC, o.id DESC LIMIT 1"
    )
});

crate::shared::outbox_store::outbox_store!(PgStore);
