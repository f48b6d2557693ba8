//! The engine's half in the store, once for both backends and every kind of
//! owed work: the statements that claim due rows, expire and recover lapsed
//! leases and release unstarted rows, built from the core's definition of
//! the kind ([`KindDef`]: its states) and the kind's table ([`Table`]: its
//! name and the few columns a kind adds). The dialect fills in what differs
//! (`FOR UPDATE SKIP LOCKED`, planner hints). A kind's own store methods
//! call these builders with their parameter numbers and add their payload;
//! [`work_store!`] implements the generic port
//! ([`harness_core::store::WorkStore`]) on them.
//!
//! Adding a kind here is one [`Table`] (13 lines) and one arm of [`table`].

use chrono::{DateTime, Utc};
use harness_core::store::{Kind, KindDef, Lapsed, Recovered, RecoveredAs, StoreResult};

use super::{Bind, Dialect, SqlRow, backend::Backend};

/// What the engine needs of a kind's table besides the core's states.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) name: &'static str,
    /// The column naming the only node that may do a row (work done in a
    /// node's own terminals); a row without one is any node's.
    pub(crate) node: Option<&'static str>,
    /// The column keeping the state a row was claimed from, for a release.
    pub(crate) claimed_from: Option<&'static str>,
    /// What a claim sets besides the state, the attempt and the lease
    /// (`col = value, `).
    pub(crate) on_claim: &'static str,
    /// The condition (on the row) that its in-flight attempt started, for a
    /// kind with a start mark ([`KindDef::start_mark`]), and its negation
    /// (spelled out: a missing mark is NULL).
    pub(crate) started: &'static str,
    pub(crate) not_started: &'static str,
    /// The index of due rows, for a planner hint where the dialect has them.
    pub(crate) due_index: Option<&'static str>,
    /// The claim's order of due rows (`c.` the table; none: oldest due first).
    pub(crate) order: Option<&'static str>,
    /// What a release sets besides (`col = value, `): the kind's own claim
    /// columns cleared.
    pub(crate) on_release: &'static str,
    /// A row the recovery released gets the kind's [`KindDef::lost`] as its
    /// `last_error`.
    pub(crate) note_released: bool,
}

const DELIVERY_TABLE: Table = Table {
    name: "deliveries",
    node: Some("node_id"),
    claimed_from: None,
    on_claim: "",
    started: "",
    not_started: "",
    due_index: None,
    order: None,
    on_release: "",
    note_released: false,
};

const OUTBOX_TABLE: Table = Table {
    name: "harness_outbound",
    node: None,
    claimed_from: Some("claimed_from"),
    on_claim: "claimed_from = state, ",
    started: "started_attempt = attempts",
    not_started: "(started_attempt IS NULL OR started_attempt <> attempts)",
    due_index: Some("harness_outbound_due"),
    order: None,
    on_release: "",
    note_released: false,
};

const REPLY_TABLE: Table = Table {
    name: "gateway_replies",
    node: None,
    claimed_from: None,
    on_claim: "last_error = NULL, ",
    started: "",
    not_started: "",
    due_index: None,
    order: None,
    on_release: "",
    note_released: false,
};

/// The parent's inbox: its events, claimed per parent (the caller's
/// condition), HIGH first; a claim's token and time cleared on release; its
/// start mark the batch holding it.
const INBOX_TABLE: Table = Table {
    name: "workbench_events",
    node: None,
    claimed_from: None,
    on_claim: "batch_id = NULL, last_error = NULL, ",
    started: "batch_id IS NOT NULL",
    not_started: "batch_id IS NULL",
    due_index: None,
    order: Some("CASE c.priority WHEN 'HIGH' THEN 0 ELSE 1 END, c.created_at, c.id"),
    on_release: "claim_token = NULL, claimed_at = NULL, ",
    note_released: true,
};

/// Timed actions on agents: claimed by the node their row names (a key
/// pressed in its terminal) or by any node; a leased row counts as started.
const ACTION_TABLE: Table = Table {
    name: "agent_actions",
    node: Some("node_id"),
    claimed_from: None,
    on_claim: "last_error = NULL, ",
    started: "",
    not_started: "",
    due_index: None,
    order: None,
    on_release: "",
    note_released: false,
};

/// The table of a kind.
pub(crate) fn table(kind: Kind) -> &'static Table {
    match kind {
        Kind::Deliveries => &DELIVERY_TABLE,
        Kind::Outbox => &OUTBOX_TABLE,
        Kind::GatewayReplies => &REPLY_TABLE,
        Kind::Inbox => &INBOX_TABLE,
        Kind::AgentActions => &ACTION_TABLE,
    }
}

/// `('A', 'B')`.
fn states(list: &[&str]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| format!("'{s}'")).collect();
    format!("({})", quoted.join(", "))
}

/// A literal for a fixed text.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn def_table(def: &KindDef) -> &'static Table {
    table(def.kind)
}

/// Whose leases a statement acts on: SQL on the row's columns.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Whose<'a> {
    /// Leased to this owner (a parameter).
    Owner(&'a str),
    /// Leases that ended before `lease_now` (a parameter).
    Expired(&'a str),
    /// Leases of the node (a parameter) under any owner but `current` (a
    /// parameter): the node's other boots.
    OtherBoots { node: &'a str, current: &'a str },
}

impl Whose<'_> {
    fn sql(self) -> String {
        match self {
            Whose::Owner(owner) => format!("lease_owner = {owner}"),
            Whose::Expired(lease_now) => format!("lease_expires_at < {lease_now}"),
            Whose::OtherBoots { node, current } => format!(
                "substr(lease_owner, 1, length({node}) + 1) = {node} || ':' \
                 AND lease_owner <> {current}"
            ),
        }
    }
}

/// The parameters of a claim (SQL expressions, usually `$N`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClaimParams<'a> {
    pub(crate) owner: &'a str,
    pub(crate) until: &'a str,
    /// Due times and stamps.
    pub(crate) now: &'a str,
    /// Judges leases of rows claimed in their due state (a kind whose claim
    /// does not start the attempt).
    pub(crate) lease_now: &'a str,
    pub(crate) limit: &'a str,
    /// The node claiming and whether it also takes rows bound to no node
    /// (`1` / `0`), for node-bound kinds.
    pub(crate) node: Option<(&'a str, &'a str)>,
    /// One more condition on the due rows (` AND c.col = $N`; empty: none).
    pub(crate) within: &'a str,
    /// What the claim sets besides (`col = $N, `; empty: nothing).
    pub(crate) set: &'a str,
}

/// Lease up to `limit` due rows to `owner`, oldest due first: the claim
/// starts the attempt where the kind says so (its in-flight state, the
/// attempt counted), else only leases the row in its due state. `guard`: a
/// condition before the sub-select (`$7 > 0 AND `); `tail`: one after it.
pub(crate) fn claim(
    def: &KindDef,
    dialect: Dialect,
    p: ClaimParams<'_>,
    guard: &str,
    tail: &str,
    returning: &str,
) -> String {
    let t = def_table(def);
    let start = if def.claim_starts {
        format!(
            "state = '{}', attempts = attempts + 1, next_attempt_at = NULL, {}",
            def.in_flight, t.on_claim
        )
    } else {
        t.on_claim.to_string()
    };
    // A row claimed in its due state may still hold a lapsed lease.
    let free = if def.claim_starts {
        String::new()
    } else {
        format!(
            " AND (c.lease_expires_at IS NULL OR c.lease_expires_at < {})",
            p.lease_now
        )
    };
    let node = match (t.node, p.node) {
        (Some(col), Some((node, unbound))) => {
            format!(" AND (c.{col} = {node} OR (c.{col} IS NULL AND {unbound} = 1))")
        }
        _ => String::new(),
    };
    let hint = t
        .due_index
        .map(|i| format!(" {}", dialect.indexed_by(i)))
        .unwrap_or_default();
    format!(
        "UPDATE {table} SET {start}{set}lease_owner = {owner}, lease_expires_at = {until}, \
           updated_at = {now} \
         WHERE {guard}id IN (SELECT c.id FROM {table} c{hint} WHERE c.state IN {due} \
           AND c.next_attempt_at <= {now}{free}{node}{within} \
           ORDER BY {order} LIMIT +{limit}{skip}){tail} \
         RETURNING {returning}",
        set = p.set,
        within = p.within,
        order = t.order.unwrap_or("c.next_attempt_at, c.id"),
        table = t.name,
        owner = p.owner,
        until = p.until,
        now = p.now,
        due = states(def.due),
        limit = p.limit,
        skip = dialect.skip_locked,
    )
}

/// The condition that a row is in flight and its attempt started.
fn started(def: &KindDef) -> String {
    let t = def_table(def);
    if def.start_mark && !t.started.is_empty() {
        format!("state = '{}' AND {}", def.in_flight, t.started)
    } else {
        format!("state = '{}'", def.in_flight)
    }
}

/// The condition that a leased row never started its attempt. `trusted`:
/// its owner says so (a worker giving back what it never began); others
/// need the evidence in the row.
fn unstarted(def: &KindDef, trusted: bool) -> Option<String> {
    let t = def_table(def);
    if !def.claim_starts {
        // Leased in a due state (and due: a row given up carries no lease).
        Some(format!(
            "state IN {} AND next_attempt_at IS NOT NULL",
            states(def.due)
        ))
    } else if def.start_mark && !t.started.is_empty() {
        Some(format!("state = '{}' AND {}", def.in_flight, t.not_started))
    } else if trusted {
        Some(format!("state = '{}'", def.in_flight))
    } else {
        // No evidence: a claimed row counts as started.
        None
    }
}

/// In-flight rows of `whose` whose attempt started → the kind's unverified
/// state, never due again by itself. `now`: the stamp.
pub(crate) fn unverify(def: &KindDef, whose: Whose<'_>, now: &str, returning: &str) -> String {
    format!(
        "UPDATE {table} SET state = '{unverified}', next_attempt_at = NULL, lease_owner = NULL, \
           lease_expires_at = NULL, updated_at = {now}, last_error = {lost} \
         WHERE {started} AND {whose} RETURNING {returning}",
        table = def_table(def).name,
        unverified = def.unverified,
        lost = literal(def.lost),
        started = started(def),
        whose = whose.sql(),
    )
}

/// In-flight rows of `whose` whose attempt started, unchanged (a kind with
/// a settle hook settles them itself).
pub(crate) fn select_started(def: &KindDef, whose: Whose<'_>, returning: &str) -> String {
    format!(
        "SELECT {returning} FROM {table} WHERE {started} AND {whose} \
         ORDER BY lease_expires_at, id",
        table = def_table(def).name,
        started = started(def),
        whose = whose.sql(),
    )
}

/// Rows of `whose` leased and never started (and, with `ids`, among them:
/// `id IN …`; `tail`: one more condition, ` AND …`): due again at `now`
/// (never later than they were), the claim's
/// attempt undone, the state they were claimed from restored. `None`: no
/// row of `whose` can be known unstarted (a kind whose claim is its start,
/// without a start mark, recovered from another owner).
pub(crate) fn release(
    def: &KindDef,
    whose: Whose<'_>,
    ids: Option<&str>,
    now: &str,
    tail: &str,
    returning: &str,
) -> Option<String> {
    release_with(def, whose, ids, now, tail, "", returning)
}

/// [`release`] setting `set` besides (`col = value, `: the reason a caller
/// gives back its claim).
pub(crate) fn release_with(
    def: &KindDef,
    whose: Whose<'_>,
    ids: Option<&str>,
    now: &str,
    tail: &str,
    set: &str,
    returning: &str,
) -> Option<String> {
    let t = def_table(def);
    let unstarted = unstarted(def, matches!(whose, Whose::Owner(_)))?;
    let ids = ids
        .map(|ids| format!("id IN {ids} AND "))
        .unwrap_or_default();
    let undo = if def.claim_starts {
        let back = format!(
            "CASE WHEN attempts > 1 THEN '{}' ELSE '{}' END",
            def.failed,
            def.due.first().copied().unwrap_or(def.failed)
        );
        let back = match t.claimed_from {
            Some(col) => format!("COALESCE({col}, {back})"),
            None => back,
        };
        let forget = t
            .claimed_from
            .map(|col| format!("{col} = NULL, "))
            .unwrap_or_default();
        format!(
            "state = {back}, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, \
             {forget}next_attempt_at = {now}, "
        )
    } else {
        format!(
            "next_attempt_at = CASE WHEN next_attempt_at < {now} THEN next_attempt_at ELSE {now} END, "
        )
    };
    Some(format!(
        "UPDATE {table} SET {undo}{set}{own}lease_owner = NULL, lease_expires_at = NULL, \
           updated_at = {now} \
         WHERE {ids}{unstarted} AND {whose}{tail} RETURNING {returning}",
        own = t.on_release,
        table = t.name,
        whose = whose.sql(),
    ))
}

/// The batch of [`harness_core::store::WorkStore::recover_work`] and its
/// binds' meaning: `$1` now, then `$2` the lease clock (`Expired`) or `$2`
/// node, `$3` current owner (`Node`). Every statement uses a prefix of the
/// parameters (SQLite binds a statement's numbered parameters only up to
/// its first gap).
pub(crate) fn recover_sql(def: &KindDef, expired: bool) -> String {
    let whose = if expired {
        Whose::Expired("$2")
    } else {
        Whose::OtherBoots {
            node: "$2",
            current: "$3",
        }
    };
    let mut parts = Vec::new();
    if def.settle_hook {
        // `$1 IS NOT NULL`: the statement uses `$1` as its siblings do.
        parts.push(format!(
            "{} ",
            select_started(def, whose, "'settle' AS what, id, lease_owner")
        ));
        let last = parts.len() - 1;
        parts[last] = parts[last].replace(" ORDER BY", " AND $1 IS NOT NULL ORDER BY");
    } else {
        parts.push(unverify(
            def,
            whose,
            "$1",
            "'unverified' AS what, id, lease_owner",
        ));
    }
    let note = if def_table(def).note_released {
        format!("last_error = {}, ", literal(def.lost))
    } else {
        String::new()
    };
    parts.extend(release_with(
        def,
        whose,
        None,
        "$1",
        "",
        &note,
        "'released' AS what, id, lease_owner",
    ));
    parts.join("; ")
}

/// [`harness_core::store::WorkStore::recover_work`]: the lapsed leases of
/// `kind` settled, made unverified or released, in one batch.
pub(crate) async fn recover_work<S: Backend>(
    store: &S,
    kind: &KindDef,
    lapsed: Lapsed<'_>,
    now: DateTime<Utc>,
) -> StoreResult<Vec<Recovered>> {
    let clock = store.lease_clock(now, now).await?;
    let (sql, binds) = match lapsed {
        Lapsed::Expired => (
            recover_sql(kind, true),
            vec![Bind::Int(clock.now), Bind::Int(clock.lease_now)],
        ),
        Lapsed::Node {
            node,
            current_owner,
        } => (
            recover_sql(kind, false),
            vec![
                Bind::Int(clock.now),
                Bind::Text(node.to_string()),
                Bind::Text(current_owner.to_string()),
            ],
        ),
    };
    let rows = store.run_batch(&sql, binds).await?;
    rows.iter()
        .map(|row| {
            let what: String = row.col("what")?;
            Ok(Recovered {
                id: row.col("id")?,
                lease_owner: row.col("lease_owner")?,
                what: match what.as_str() {
                    "unverified" => RecoveredAs::Unverified,
                    "released" => RecoveredAs::Released,
                    _ => RecoveredAs::ToSettle,
                },
            })
        })
        .collect()
}

/// `impl WorkStore for $store` with [`recover_work`], in its own span.
macro_rules! work_store {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl harness_core::store::WorkStore for $store {
            #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
            async fn recover_work(
                &self,
                kind: &harness_core::store::KindDef,
                lapsed: harness_core::store::Lapsed<'_>,
                now: chrono::DateTime<chrono::Utc>,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::Recovered>> {
                $crate::shared::work::recover_work(self, kind, lapsed, now).await
            }
        }
    };
}
pub(crate) use work_store;

#[cfg(test)]
mod tests {
    use harness_core::store::{DELIVERIES, GATEWAY_REPLIES, INBOX, OUTBOX};

    use super::*;
    use crate::sqlite::DIALECT;

    #[test]
    fn every_kind_has_its_own_table() {
        let names: std::collections::HashSet<_> =
            Kind::ALL.iter().map(|k| table(*k).name).collect();
        assert_eq!(names.len(), Kind::ALL.len());
    }

    #[test]
    fn the_inbox_claims_one_parents_events_high_first_and_never_releases_a_batched_one() {
        let p = ClaimParams {
            owner: "$2",
            until: "$4",
            now: "$3",
            lease_now: "$3",
            limit: "$6",
            node: None,
            within: " AND c.parent_task_id = $5",
            set: "claim_token = $1, claimed_at = $3, ",
        };
        let sql = claim(&INBOX, DIALECT, p, "", "", "id");
        assert!(
            sql.contains("state = 'PROCESSING', attempts = attempts + 1"),
            "{sql}"
        );
        assert!(
            sql.contains("AND c.parent_task_id = $5 ORDER BY CASE c.priority"),
            "{sql}"
        );
        assert!(
            sql.contains("claim_token = $1, claimed_at = $3, lease_owner = $2"),
            "{sql}"
        );
        let recover = recover_sql(&INBOX, true);
        assert!(recover.contains("AND batch_id IS NULL"), "{recover}");
        assert!(
            recover.contains("last_error = 'claim lease expired"),
            "{recover}"
        );
        assert!(
            recover.starts_with("SELECT 'settle'"),
            "batched claims are their batch's: {recover}"
        );
    }

    #[test]
    fn the_claim_starts_the_attempt_only_where_the_kind_says() {
        let p = ClaimParams {
            owner: "$1",
            until: "$2",
            now: "$3",
            lease_now: "$6",
            limit: "$4",
            node: Some(("$5", "$7")),
            within: "",
            set: "",
        };
        let replies = claim(&GATEWAY_REPLIES, DIALECT, p, "", "", "id");
        assert!(replies.contains("state = 'SENDING', attempts = attempts + 1"));
        assert!(!replies.contains("node_id"));
        let deliveries = claim(&DELIVERIES, DIALECT, p, "", "", "id");
        assert!(!deliveries.contains("SET state"));
        assert!(deliveries.contains("c.lease_expires_at < $6"));
        assert!(deliveries.contains("c.node_id = $5"));
        let outbox = claim(&OUTBOX, DIALECT, p, "$4 > 0 AND ", "", "id");
        assert!(outbox.contains("INDEXED BY harness_outbound_due"));
        assert!(outbox.contains("claimed_from = state"));
    }

    #[test]
    fn a_started_row_is_never_released_and_a_claim_without_evidence_is_started() {
        let whose = Whose::Owner("$2");
        let outbox = release(&OUTBOX, whose, None, "$1", "", "id").unwrap();
        assert!(outbox.contains("(started_attempt IS NULL OR started_attempt <> attempts)"));
        assert!(outbox.contains("COALESCE(claimed_from,"));
        assert!(release(&GATEWAY_REPLIES, Whose::Expired("$2"), None, "$1", "", "id").is_none());
        let own = release(&GATEWAY_REPLIES, whose, Some("($3)"), "$1", "", "id").unwrap();
        assert!(own.contains("id IN ($3) AND state = 'SENDING' AND lease_owner = $2"));
        let unverify = unverify(&DELIVERIES, whose, "$1", "id");
        assert!(unverify.contains("state = 'WRITING'"));
        assert!(
            unverify
                .contains("'the process died while writing; the text may or may not have arrived'")
        );
    }
}
