//! A sender's turn on PostgreSQL: the attempts that ended are settled and the
//! next due rows leased, in one `BEGIN IMMEDIATE` transaction sent as one
//! batch (one round trip to the writer however many rows it carries).
//!
//! The settles travel as one JSON array (`?2`, read with `json_each`), so
//! every statement is set-based. Only rows this batch finished as sent get
//! its token in `settled_by` (`?1`); the activation statements act on those
//! rows alone.

use harness_core::{
    model::MessageState,
    outbox::Outbound,
    store::{OUTBOX, Settle, SettleBatch, Settled, SettledBatch, StoreResult},
};
use serde_json::json;
use sqlx::Row;

use super::{
    PgStore,
    batch::{self, args},
};
use crate::{
    error::map,
    shared::{
        ms,
        outbox::{outbound, returning},
        work::{ClaimParams, Whose, claim, release},
    },
};
use std::sync::LazyLock;

/// Finish the rows (parameters: see [`batch_sql`]).
const SETTLE: &str = "\
     UPDATE harness_outbound AS o SET state = j.j_state, lease_owner = NULL, lease_expires_at = NULL, \
       next_attempt_at = j.j_next, \
       platform = CASE WHEN j.j_sent THEN lower(COALESCE(j.j_platform, o.downstream, o.gateway)) ELSE o.platform END, \
       platform_chat_id = CASE WHEN j.j_sent THEN COALESCE(j.j_chat, o.requested_to, o.dest, '') \
         ELSE o.platform_chat_id END, \
       platform_message_id = CASE WHEN j.j_sent THEN j.j_pmid ELSE o.platform_message_id END, \
       delivered_at = CASE WHEN j.j_state = 'DELIVERED' THEN $3 WHEN j.j_sent THEN NULL ELSE o.delivered_at END, \
       last_error = j.j_error, updated_at = $3, \
       settled_by = CASE WHEN j.j_sent THEN $1 ELSE o.settled_by END \
     FROM (SELECT value ->> 'id' AS j_id, value ->> 'state' AS j_state, \
         (value ->> 'next')::bigint AS j_next, \
         value ->> 'error' AS j_error, value ->> 'platform' AS j_platform, value ->> 'chat' AS j_chat, \
         value ->> 'pmid' AS j_pmid, value ->> 'state' IN ('DELIVERED', 'SENT_UNVERIFIED') AS j_sent \
       FROM jsonb_array_elements($2::jsonb) AS e(value)) AS j \
     WHERE o.id = j.j_id AND o.state = 'SENDING' AND o.lease_owner = $4 \
       AND ($5 IS NULL OR o.lease_expires_at < $5) \
     RETURNING 'row' AS what, {ROW};";

/// For the rows this batch sent: cancel the other OPEN asks of each task
/// whose ask it sent, open those asks / close those notifies, park the
/// tasks' RUNNING executions, record platform message id → task (one row
/// per key: two rows of the turn with one platform message id would make
/// `ON CONFLICT DO UPDATE` touch a row twice; the greater outbound id wins,
/// as on SQLite, which applies them in id order).
const ACTIVATE: &str = "\
     UPDATE harness_messages SET state = 'CANCELLED' \
     WHERE kind = 'ask' AND state = 'OPEN' \
       AND task_id IN (SELECT o.task_id FROM harness_outbound o JOIN harness_messages p ON p.id = o.harness_message_id \
         WHERE o.id IN {IDS} AND o.settled_by = $1 AND o.expect_reply = 1 AND p.state = 'PENDING_DELIVERY') \
       AND id NOT IN (SELECT o.harness_message_id FROM harness_outbound o \
         WHERE o.id IN {IDS} AND o.harness_message_id IS NOT NULL) \
     RETURNING 'cancelled' AS what, id AS id, task_id AS extra; \
     UPDATE harness_messages SET state = CASE WHEN o.expect_reply = 1 THEN 'OPEN' ELSE 'CLOSED' END \
     FROM harness_outbound o \
     WHERE o.id IN {IDS} AND o.settled_by = $1 AND harness_messages.id = o.harness_message_id \
       AND harness_messages.state = 'PENDING_DELIVERY' \
     RETURNING 'message' AS what, harness_messages.id AS id, harness_messages.state AS extra; \
     UPDATE executions SET status = 'PAUSED' \
     WHERE status = 'RUNNING' AND task_id IN (SELECT o.task_id FROM harness_outbound o \
       JOIN harness_messages m ON m.id = o.harness_message_id \
       WHERE o.id IN {IDS} AND o.settled_by = $1 AND o.expect_reply = 1 AND m.state = 'OPEN') \
     RETURNING 'paused' AS what, id AS id, task_id AS extra; \
     INSERT INTO harness_delivery_map (id, gateway, harness_message_id, task_id, outbound_id, platform, \
       chat_id, platform_message_id, scope, expect_reply, created_at) \
     SELECT DISTINCT ON (lower(o.gateway), o.platform, COALESCE(o.platform_chat_id, ''), o.platform_message_id) \
       o.id, lower(o.gateway), o.harness_message_id, o.task_id, o.id, o.platform, \
       COALESCE(o.platform_chat_id, ''), o.platform_message_id, o.scope, o.expect_reply, $3 \
     FROM harness_outbound o WHERE o.id IN {IDS} AND o.settled_by = $1 AND o.platform_message_id IS NOT NULL \
     ORDER BY lower(o.gateway), o.platform, COALESCE(o.platform_chat_id, ''), o.platform_message_id, o.id DESC \
     ON CONFLICT (gateway, platform, chat_id, platform_message_id) DO UPDATE SET id = excluded.id, \
       harness_message_id = excluded.harness_message_id, task_id = excluded.task_id, \
       outbound_id = excluded.outbound_id, scope = excluded.scope, expect_reply = excluded.expect_reply;";

/// Rows leased ahead and never started (`$8`, a JSON array of ids): back to
/// the state they were claimed from, due now, the claim's attempt undone —
/// never a row whose attempt was marked started (the database decides).
/// The engine's generic release (`shared::work`)
static RELEASE: LazyLock<String> = LazyLock::new(|| {
    let ids = "(SELECT jsonb_array_elements_text($8::jsonb))";
    let tail = "";
    let release = release(
        &OUTBOX,
        Whose::Owner("$4"),
        Some(ids),
        "$3",
        tail,
        "'released' AS what, {ROW}",
    );
    format!("{};", release.unwrap_or_default())
});

/// Lease up to `$7` due rows (the state each was claimed from is kept for
/// a release): the engine's generic claim (`shared::work`).
static CLAIM: LazyLock<String> = LazyLock::new(|| {
    let params = ClaimParams {
        owner: "$4",
        until: "$6",
        now: "$3",
        lease_now: "$3",
        limit: "$7",
        node: None,
    };
    let tail = "";
    let claim = claim(
        &OUTBOX,
        super::DIALECT,
        params,
        "$7 > 0 AND ",
        tail,
        "'claimed' AS what, {ROW}",
    );
    format!("{claim};")
});

const SETTLED_IDS: &str = "(SELECT e ->> 'id' FROM jsonb_array_elements($2::jsonb) AS e)";

/// The statements of a turn, in one transaction: `[SETTLE] [ACTIVATE]
/// [RELEASE] [CLAIM]`, without the statements that cannot match (nothing
/// settled, nothing sent, nothing released, no free slot); each shape is
/// built once, and sqlx caches its prepared statements. Parameters: `?1`
/// token, `?2` settles JSON, `?3` now, `?4` owner, `?5` expired-before or
/// NULL, `?6` lease until, `?7` limit, `?8` released ids JSON (JSON
/// arrays read with `jsonb_array_elements`); every statement is sent with
/// all eight (`batch::run`).
fn batch_sql(settles: bool, sent: bool, releases: bool, claims: bool) -> &'static str {
    // In this order: the release before the lease, so a released row can be
    // leased again by the same turn.
    static SHAPES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        let parts: [(u8, &str); 4] = [(1, SETTLE), (2, ACTIVATE), (8, &RELEASE), (4, &CLAIM)];
        (0..16u8)
            .map(|bits| {
                let mut sql = String::new();
                for (bit, statement) in parts {
                    if bits & bit != 0 {
                        sql.push_str(statement);
                        sql.push(' ');
                    }
                }
                sql.replace("{ROW}", &returning())
                    .replace("{IDS}", SETTLED_IDS)
            })
            .collect()
    });
    let bits = usize::from(settles)
        | usize::from(settles && sent) << 1
        | usize::from(claims) << 2
        | usize::from(releases) << 3;
    &SHAPES[bits]
}

/// Error texts kept on a row.
const MAX_ERROR_CHARS: usize = 2000;

fn settle_json(id: &str, settle: &Settle) -> serde_json::Value {
    let cut = |s: &str| s.chars().take(MAX_ERROR_CHARS).collect::<String>();
    match settle {
        Settle::Failed { error, next } => json!({
            "id": id,
            "state": if next.is_some() { "FAILED" } else { "DEAD" },
            "next": next.map(ms),
            "error": cut(error),
        }),
        Settle::Sent {
            state,
            platform,
            chat_id,
            platform_message_id,
            note,
        } => json!({
            "id": id,
            "state": state.as_str(),
            "platform": platform,
            "chat": chat_id,
            "pmid": platform_message_id,
            "error": note.as_deref().map(cut),
        }),
    }
}

impl PgStore {
    pub(super) async fn settle_and_claim(&self, batch: SettleBatch) -> StoreResult<SettledBatch> {
        if batch.settles.is_empty() && batch.limit == 0 && batch.released.is_empty() {
            return Ok(SettledBatch::default());
        }
        let settles = serde_json::Value::Array(
            batch
                .settles
                .iter()
                .map(|(id, s)| settle_json(id, s))
                .collect(),
        )
        .to_string();
        let token = harness_core::ids::new_id();
        let sent = batch
            .settles
            .iter()
            .any(|(_, s)| matches!(s, Settle::Sent { .. }));
        let released = serde_json::Value::from(batch.released.clone()).to_string();
        let sql = batch_sql(
            !batch.settles.is_empty(),
            sent,
            !batch.released.is_empty(),
            batch.limit > 0,
        );
        // Leases on the database's clock: the caller's lease times keep only
        // their distances from its `now` (`lease_clock`); due times are the
        // caller's.
        let clock = self.lease_clock(batch.now, batch.lease_until).await?;
        let (now, until) = (clock.now, clock.until);
        let expired = batch
            .expired_before
            .map(|e| clock.lease_now.saturating_add(ms(e).saturating_sub(now)));
        let owner = batch.owner.clone();
        let limit = i64::from(batch.limit);
        let rows = self
            .batch_tx(move |conn| {
                Box::pin(async move {
                    batch::run(
                        conn,
                        sql,
                        &args!(token, settles, now, owner, expired, until, limit, released),
                    )
                    .await
                })
            })
            .await?;
        let mut settled: Vec<Settled> = Vec::new();
        let mut claimed: Vec<Outbound> = Vec::new();
        let mut released: Vec<Outbound> = Vec::new();
        let mut side: Vec<(String, String, String)> = Vec::new();
        for r in &rows {
            let what: String = r.try_get("what").map_err(map)?;
            match what.as_str() {
                "row" => settled.push(Settled {
                    row: outbound(r)?,
                    message_state: None,
                    cancelled: Vec::new(),
                    paused: Vec::new(),
                }),
                "claimed" => claimed.push(outbound(r)?),
                "released" => released.push(outbound(r)?),
                _ => side.push((
                    what,
                    r.try_get("id").map_err(map)?,
                    r.try_get::<Option<String>, _>("extra")
                        .map_err(map)?
                        .unwrap_or_default(),
                )),
            }
        }
        // Hand each side effect to the row it belongs to: the message by
        // its id, cancelled asks and parked executions by the task (one sent
        // ask per task per batch).
        for (what, id, extra) in side {
            let owner = settled.iter_mut().find(|s| match what.as_str() {
                "message" => s.row.message_id.as_deref() == Some(id.as_str()),
                _ => {
                    s.row.expect_reply
                        && s.row.state.sent()
                        && s.row.task_id.as_deref() == Some(extra.as_str())
                }
            });
            let Some(s) = owner else { continue };
            match what.as_str() {
                "message" => s.message_state = MessageState::parse(&extra),
                "cancelled" => s.cancelled.push(id),
                "paused" => s.paused.push(id),
                _ => {}
            }
        }
        let order = |id: &str| batch.settles.iter().position(|(s, _)| s == id);
        settled.sort_by_key(|s| order(&s.row.id));
        claimed.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(SettledBatch {
            settled,
            claimed,
            released,
        })
    }
}
