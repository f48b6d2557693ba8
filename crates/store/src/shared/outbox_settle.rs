//! A sender's turn, once for both backends: the attempts that ended are
//! settled and the next due rows leased, in one write transaction sent as
//! one batch (one round trip to the writer however many rows it carries).
//!
//! The settles travel as one JSON array (`$2`), so every statement is
//! set-based. Only rows this batch finished as sent get its token in
//! `settled_by` (`$1`); the activation statements act on those rows alone.
//! The release and the lease are the engine's generic statements
//! (`shared::work`). What the dialects spell differently — how a JSON array
//! is read, the delivery mapping's one row per key — is a [`TurnSql`] in
//! each backend; the rest, and the Rust around it, is here
//! ([`settle_and_claim`] over [`OutboxBackend`]).

use std::future::Future;

use harness_core::{
    model::MessageState,
    outbox::Outbound,
    store::{OUTBOX, Settle, SettleBatch, Settled, SettledBatch, StoreResult},
};
use serde_json::json;

use super::{
    Bind, Dialect, SqlRow,
    backend::Backend,
    ms,
    outbox::{outbound, returning},
    work::{ClaimParams, Whose, claim, release},
};

/// What the dialects spell differently in a turn.
#[derive(Debug)]
pub(crate) struct TurnSql {
    pub(crate) dialect: Dialect,
    /// The settles (`$2`) as rows with a `value` column.
    pub(crate) settles: &'static str,
    /// A settle's `next` as an integer.
    pub(crate) next: &'static str,
    /// The settled ids, a sub-select over `$2`.
    pub(crate) settled_ids: &'static str,
    /// The released ids (`$8`), a sub-select.
    pub(crate) released_ids: &'static str,
    /// The activated message's id and state in its `RETURNING`.
    pub(crate) message_returning: &'static str,
    /// The head of the delivery mapping's `SELECT` and its `ORDER BY`: one
    /// row per key (two rows of a turn with one platform message id would
    /// make `ON CONFLICT DO UPDATE` touch a row twice; the greater outbound
    /// id wins on both).
    pub(crate) map_select: &'static str,
    pub(crate) map_order: &'static str,
    /// Conditions appended to the release and the lease (SQLite: no-ops so
    /// each statement uses a prefix of the parameters — sqlx binds a
    /// statement's numbered parameters only up to its first gap).
    pub(crate) release_tail: &'static str,
    pub(crate) claim_tail: &'static str,
    /// The statement (returning no row) that locks the tasks whose asks
    /// this batch sent, before the activation changes their rows
    /// (PostgreSQL: a turn holds the store lock shared, see
    /// `postgres/tx.rs`); empty where the writer is single (SQLite).
    pub(crate) lock_tasks: &'static str,
}

/// Finish the rows (parameters: see [`shapes`]).
fn settle_sql(t: &TurnSql) -> String {
    format!(
        "UPDATE harness_outbound AS o SET state = j.j_state, lease_owner = NULL, \
           lease_expires_at = NULL, next_attempt_at = j.j_next, \
           platform = CASE WHEN j.j_sent THEN lower(COALESCE(j.j_platform, o.downstream, o.gateway)) ELSE o.platform END, \
           platform_chat_id = CASE WHEN j.j_sent THEN COALESCE(j.j_chat, o.requested_to, o.dest, '') \
             ELSE o.platform_chat_id END, \
           platform_message_id = CASE WHEN j.j_sent THEN j.j_pmid ELSE o.platform_message_id END, \
           delivered_at = CASE WHEN j.j_state = 'DELIVERED' THEN $3 WHEN j.j_sent THEN NULL ELSE o.delivered_at END, \
           last_error = j.j_error, updated_at = $3, \
           settled_by = CASE WHEN j.j_sent THEN $1 ELSE o.settled_by END \
         FROM (SELECT value ->> 'id' AS j_id, value ->> 'state' AS j_state, {next} AS j_next, \
             value ->> 'error' AS j_error, value ->> 'platform' AS j_platform, value ->> 'chat' AS j_chat, \
             value ->> 'pmid' AS j_pmid, value ->> 'state' IN ('DELIVERED', 'SENT_UNVERIFIED') AS j_sent \
           FROM {settles}) AS j \
         WHERE o.id = j.j_id AND o.state = 'SENDING' AND o.lease_owner = $4 \
           AND ($5 IS NULL OR o.lease_expires_at < $5) \
         RETURNING 'row' AS what, {row}",
        next = t.next,
        settles = t.settles,
        row = returning(),
    )
}

/// For the rows this batch sent: cancel the other OPEN asks of each task
/// whose ask it sent, open those asks / close those notifies, park the
/// tasks' RUNNING executions, record platform message id → task.
fn activate_sql(t: &TurnSql) -> Vec<String> {
    let ids = t.settled_ids;
    let lock = (!t.lock_tasks.is_empty()).then(|| {
        t.lock_tasks.replace(
            "{tasks}",
            &format!(
                "SELECT o.task_id FROM harness_outbound o \
                 WHERE o.id IN {ids} AND o.settled_by = $1 AND o.expect_reply = 1"
            ),
        )
    });
    let activate = [
        format!(
            "UPDATE harness_messages SET state = 'CANCELLED' \
             WHERE kind = 'ask' AND state = 'OPEN' \
               AND task_id IN (SELECT o.task_id FROM harness_outbound o JOIN harness_messages p ON p.id = o.harness_message_id \
                 WHERE o.id IN {ids} AND o.settled_by = $1 AND o.expect_reply = 1 AND p.state = 'PENDING_DELIVERY') \
               AND id NOT IN (SELECT o.harness_message_id FROM harness_outbound o \
                 WHERE o.id IN {ids} AND o.harness_message_id IS NOT NULL) \
             RETURNING 'cancelled' AS what, id AS id, task_id AS extra"
        ),
        format!(
            "UPDATE harness_messages SET state = CASE WHEN o.expect_reply = 1 THEN 'OPEN' ELSE 'CLOSED' END \
             FROM harness_outbound o \
             WHERE o.id IN {ids} AND o.settled_by = $1 AND harness_messages.id = o.harness_message_id \
               AND harness_messages.state = 'PENDING_DELIVERY' \
             RETURNING 'message' AS what, {message}",
            message = t.message_returning,
        ),
        format!(
            "UPDATE executions SET status = 'PAUSED' \
             WHERE status = 'RUNNING' AND task_id IN (SELECT o.task_id FROM harness_outbound o \
               JOIN harness_messages m ON m.id = o.harness_message_id \
               WHERE o.id IN {ids} AND o.settled_by = $1 AND o.expect_reply = 1 AND m.state = 'OPEN') \
             RETURNING 'paused' AS what, id AS id, task_id AS extra"
        ),
        format!(
            "INSERT INTO harness_delivery_map (id, gateway, harness_message_id, task_id, outbound_id, platform, \
               chat_id, platform_message_id, scope, expect_reply, created_at) \
             {select} o.id, lower(o.gateway), o.harness_message_id, o.task_id, o.id, o.platform, \
               COALESCE(o.platform_chat_id, ''), o.platform_message_id, o.scope, o.expect_reply, $3 \
             FROM harness_outbound o WHERE o.id IN {ids} AND o.settled_by = $1 AND o.platform_message_id IS NOT NULL \
             ORDER BY {order} \
             ON CONFLICT (gateway, platform, chat_id, platform_message_id) DO UPDATE SET id = excluded.id, \
               harness_message_id = excluded.harness_message_id, task_id = excluded.task_id, \
               outbound_id = excluded.outbound_id, scope = excluded.scope, expect_reply = excluded.expect_reply",
            select = t.map_select,
            order = t.map_order,
        ),
    ];
    lock.into_iter().chain(activate).collect()
}

/// Rows leased ahead and never started (`$8`): back to the state they were
/// claimed from, due now, the claim's attempt undone — never a row whose
/// attempt was marked started (the database decides).
fn release_sql(t: &TurnSql) -> String {
    let owner = Whose::Owner("$4");
    let returning = format!("'released' AS what, {}", returning());
    release(
        &OUTBOX,
        owner,
        Some(t.released_ids),
        "$3",
        t.release_tail,
        &returning,
    )
    .unwrap_or_default()
}

/// Lease up to `$7` due rows (the state each was claimed from is kept for
/// a release).
fn claim_sql(t: &TurnSql) -> String {
    let params = ClaimParams {
        owner: "$4",
        until: "$6",
        now: "$3",
        lease_now: "$3",
        limit: "$7",
        node: None,
        within: "",
        set: "",
    };
    let returning = format!("'claimed' AS what, {}", returning());
    claim(
        &OUTBOX,
        t.dialect,
        params,
        "$7 > 0 AND ",
        t.claim_tail,
        &returning,
    )
}

/// Every shape of a turn's batch: `[SETTLE] [ACTIVATE] [RELEASE] [CLAIM]`,
/// without the statements that cannot match (nothing settled, nothing sent,
/// nothing released, no free slot), indexed by [`shape`]; each built once
/// per backend, and sqlx caches its prepared statements. Parameters: `$1`
/// token, `$2` settles JSON, `$3` now, `$4` owner, `$5` expired-before or
/// NULL, `$6` lease until, `$7` limit, `$8` released ids JSON.
pub(crate) fn shapes(t: &TurnSql) -> Vec<String> {
    let settle = vec![settle_sql(t)];
    let activate = activate_sql(t);
    let release = vec![release_sql(t)];
    let claim = vec![claim_sql(t)];
    // In this order: the release before the lease, so a released row can be
    // leased again by the same turn.
    let parts: [(u8, &Vec<String>); 4] = [(1, &settle), (2, &activate), (8, &release), (4, &claim)];
    (0..16u8)
        .map(|bits| {
            let statements: Vec<&str> = parts
                .iter()
                .filter(|(bit, _)| bits & bit != 0)
                .flat_map(|(_, s)| s.iter().map(String::as_str))
                .collect();
            statements.join("; ")
        })
        .collect()
}

/// The index into [`shapes`] of a turn.
fn shape(settles: bool, sent: bool, releases: bool, claims: bool) -> usize {
    usize::from(settles)
        | usize::from(settles && sent) << 1
        | usize::from(claims) << 2
        | usize::from(releases) << 3
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

/// What a backend spells its own way in the outbox: the turn's statements
/// ([`shapes`] of its [`TurnSql`], built once) and the enqueue batch
/// (`outbox_store::enqueue_once`: the dedup rule's spelling differs).
pub(crate) trait OutboxBackend: Backend {
    /// The backend's [`shapes`], built once.
    fn shapes(&self) -> &'static [String];
    /// The enqueue batch's statements (binds: `outbox_store::enqueue_binds`),
    /// run in one write transaction ([`Backend::run_batch`]); the last one
    /// answers the new row or the one the dedup rule reuses.
    fn enqueue_sql(&self) -> &'static str;
    /// A turn's batch ([`shapes`]) in one write transaction, under the
    /// narrowest lock the backend has: on PostgreSQL the store's lock
    /// shared, the batch locking the tasks whose asks it sent
    /// ([`TurnSql::lock_tasks`]); SQLite's one writer otherwise.
    fn run_turn(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;
}

/// The turn ([`SettleBatch`]) on `store`, one transaction.
pub(crate) async fn settle_and_claim<S: OutboxBackend>(
    store: &S,
    batch: SettleBatch,
) -> StoreResult<SettledBatch> {
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
    let sql = &store.shapes()[shape(
        !batch.settles.is_empty(),
        sent,
        !batch.released.is_empty(),
        batch.limit > 0,
    )];
    // Leases on the lease clock (the database's on PostgreSQL): the
    // caller's lease times keep only their distances from its `now`; due
    // times are the caller's.
    let clock = store.lease_clock(batch.now, batch.lease_until).await?;
    let (now, until) = (clock.now, clock.until);
    let expired = batch
        .expired_before
        .map(|e| clock.lease_now.saturating_add(ms(e).saturating_sub(now)));
    let binds = vec![
        Bind::Text(token),
        Bind::Text(settles),
        Bind::Int(now),
        Bind::Text(batch.owner.clone()),
        Bind::OptInt(expired),
        Bind::Int(until),
        Bind::Int(i64::from(batch.limit)),
        Bind::Text(released),
    ];
    let rows = store.run_turn(sql, binds).await?;
    let mut settled: Vec<Settled> = Vec::new();
    let mut claimed: Vec<Outbound> = Vec::new();
    let mut released: Vec<Outbound> = Vec::new();
    let mut side: Vec<(String, String, String)> = Vec::new();
    for r in &rows {
        let what: String = r.col("what")?;
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
                r.col("id")?,
                r.col::<Option<String>>("extra")?.unwrap_or_default(),
            )),
        }
    }
    // Hand each side effect to the row it belongs to: the message by its
    // id, cancelled asks and parked executions by the task (one sent ask
    // per task per batch).
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
