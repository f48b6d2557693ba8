//! [`DeliveryStore`](harness_core::deliveries::DeliveryStore) once for both
//! backends: the durable delivery queue (migration 0004), one generic
//! function per method over [`Backend`], and [`delivery_store!`] that
//! implements the port with them. Claiming is one batch (`run_batch`:
//! expired WRITING rows → UNVERIFIED, then lease due rows), both statements
//! the engine's generic ones (`shared::work`); on PostgreSQL the claim's
//! sub-select also locks its rows (`FOR UPDATE SKIP LOCKED`,
//! [`Dialect`](crate::shared::Dialect)).

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use harness_core::{
    deliveries::{Claimed, Delivery, DeliveryState, NewInput},
    store::{DELIVERIES, StoreResult},
};

use super::{
    Bind, Dialect, SqlRow,
    backend::{Backend, PerDialect, fetch_one, fetch_optional, read_optional},
    deliveries::{
        ADVANCE_DELIVERY, CLAIMABLE, COMPLETE_DELIVERY, DELIVERY_COLUMNS, INPUT_BY_KEY,
        INSERT_INPUT, MARK_DELIVERY_DELIVERED, TASK_DELIVERIES, delivery, state_list,
    },
    marks, ms,
    work::{ClaimParams, Whose, claim, release, unverify},
};

/// One conditional UPDATE … RETURNING in its own transaction.
async fn update_one<S: Backend>(
    store: &S,
    sql: &str,
    binds: Vec<Bind>,
) -> StoreResult<Option<Delivery>> {
    let mut tx = store.write_tx().await?;
    let row = fetch_optional::<S>(&mut tx, sql, binds).await?;
    let out = row.as_ref().map(delivery).transpose()?;
    S::commit(tx).await?;
    Ok(out)
}

async fn read_one<S: Backend>(
    store: &S,
    filter: &str,
    value: &str,
) -> StoreResult<Option<Delivery>> {
    let sql = format!("SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE {filter} = $1");
    read_optional(store, &sql, vec![Bind::Text(value.to_owned())])
        .await?
        .as_ref()
        .map(delivery)
        .transpose()
}

pub(crate) async fn enqueue_input<S: Backend>(
    store: &S,
    input: NewInput,
) -> StoreResult<(Delivery, bool)> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(input.id),
        Bind::Text(input.task_id.clone()),
        Bind::OptText(input.node_id),
        Bind::Text(input.text),
        Bind::Int(i64::from(input.submit)),
        Bind::Text(input.dedup_key.clone()),
        Bind::Int(ms(input.now)),
        Bind::Int(i64::from(input.resume)),
    ];
    let inserted = fetch_optional::<S>(&mut tx, INSERT_INPUT.as_str(), binds).await?;
    let out = match inserted {
        Some(row) => (delivery(&row)?, true),
        None => {
            let binds = vec![Bind::Text(input.task_id), Bind::Text(input.dedup_key)];
            let row = fetch_one::<S>(&mut tx, INPUT_BY_KEY.as_str(), binds).await?;
            (delivery(&row)?, false)
        }
    };
    S::commit(tx).await?;
    Ok(out)
}

/// The claim's batch: the generic statements (`shared::work`), expired
/// WRITING rows → UNVERIFIED, then lease due rows.
fn claim_sql(dialect: Dialect) -> String {
    let expire = unverify(
        &DELIVERIES,
        Whose::Expired("$6"),
        "$3",
        &format!("'unverified' AS what, {DELIVERY_COLUMNS}"),
    );
    let params = ClaimParams {
        owner: "$1",
        until: "$2",
        now: "$3",
        lease_now: "$6",
        limit: "$5",
        node: Some(("$4", "$7")),
        within: "",
        set: "",
    };
    let lease = claim(
        &DELIVERIES,
        dialect,
        params,
        "",
        "",
        &format!("'claimed' AS what, {DELIVERY_COLUMNS}"),
    );
    format!("{expire}; {lease}")
}

static CLAIM: PerDialect = PerDialect::new();

pub(crate) async fn claim_deliveries<S: Backend>(
    store: &S,
    owner: &str,
    node: &str,
    unbound: bool,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Claimed> {
    let sql = CLAIM.get(S::DIALECT, claim_sql);
    // Leases by `$6` (`lease_clock`), due times by `$3`.
    let clock = store.lease_clock(now, lease_until).await?;
    let binds = vec![
        Bind::Text(owner.to_owned()),
        Bind::Int(clock.until),
        Bind::Int(clock.now),
        Bind::Text(node.to_owned()),
        Bind::Int(i64::from(limit)),
        Bind::Int(clock.lease_now),
        Bind::Int(i64::from(unbound)),
    ];
    let rows = store.run_batch(sql, binds).await?;
    let mut claimed = Claimed::default();
    for row in &rows {
        let what: String = row.col("what")?;
        let d = delivery(row)?;
        if what == "claimed" {
            claimed.rows.push(d);
        } else {
            claimed.unverified.push(d);
        }
    }
    claimed
        .rows
        .sort_by(|a, b| (a.next_attempt_at, &a.id).cmp(&(b.next_attempt_at, &b.id)));
    Ok(claimed)
}

pub(crate) async fn advance_delivery<S: Backend>(
    store: &S,
    id: &str,
    owner: &str,
    state: DeliveryState,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> StoreResult<Option<Delivery>> {
    let clock = store.lease_clock(now, lease_until).await?;
    let binds = vec![
        Bind::Text(state.as_str().into()),
        Bind::Int(clock.until),
        Bind::Int(clock.now),
        Bind::Text(id.into()),
        Bind::Text(owner.into()),
    ];
    update_one(store, &ADVANCE_DELIVERY, binds).await
}

pub(crate) async fn complete_delivery<S: Backend>(
    store: &S,
    id: &str,
    owner: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<Delivery>> {
    let binds = vec![
        Bind::Int(ms(now)),
        Bind::Text(id.into()),
        Bind::Text(owner.into()),
    ];
    update_one(store, &COMPLETE_DELIVERY, binds).await
}

pub(crate) async fn fail_delivery<S: Backend>(
    store: &S,
    id: &str,
    owner: &str,
    error: &str,
    next: Option<DateTime<Utc>>,
    unverified: bool,
    now: DateTime<Utc>,
) -> StoreResult<Option<Delivery>> {
    let (state, from) = if unverified {
        ("UNVERIFIED", "('WRITING')")
    } else {
        ("FAILED", CLAIMABLE)
    };
    let sql = format!(
        "UPDATE deliveries SET state = '{state}', attempts = attempts + 1, \
           next_attempt_at = $1, lease_owner = NULL, lease_expires_at = NULL, \
           last_error = $2, updated_at = $3 \
         WHERE id = $4 AND lease_owner = $5 AND state IN {from} \
         RETURNING {DELIVERY_COLUMNS}"
    );
    let next = if unverified { None } else { next.map(ms) };
    let binds = vec![
        Bind::OptInt(next),
        Bind::Text(error.chars().take(2000).collect()),
        Bind::Int(ms(now)),
        Bind::Text(id.into()),
        Bind::Text(owner.into()),
    ];
    update_one(store, &sql, binds).await
}

/// The owner giving back a claim it never started (`shared::work`).
static RELEASE: LazyLock<String> = LazyLock::new(|| {
    release(
        &DELIVERIES,
        Whose::Owner("$2"),
        Some("($1)"),
        "$3",
        "",
        DELIVERY_COLUMNS,
    )
    .unwrap_or_default()
});

pub(crate) async fn release_delivery<S: Backend>(
    store: &S,
    id: &str,
    owner: &str,
) -> StoreResult<()> {
    let binds = vec![
        Bind::Text(id.into()),
        Bind::Text(owner.into()),
        Bind::Int(ms(Utc::now())),
    ];
    update_one(store, &RELEASE, binds).await.map(|_| ())
}

pub(crate) async fn requeue_delivery<S: Backend>(
    store: &S,
    id: &str,
    from: &[DeliveryState],
    now: DateTime<Utc>,
) -> StoreResult<Option<Delivery>> {
    if from.is_empty() {
        return Ok(None);
    }
    let sql = format!(
        "UPDATE deliveries SET state = 'QUEUED', next_attempt_at = $1, lease_owner = NULL, \
           lease_expires_at = NULL, updated_at = $1 \
         WHERE id = $2 AND state IN {} RETURNING {DELIVERY_COLUMNS}",
        state_list(from)
    );
    update_one(store, &sql, vec![Bind::Int(ms(now)), Bind::Text(id.into())]).await
}

pub(crate) async fn mark_delivery_delivered<S: Backend>(
    store: &S,
    id: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<Delivery>> {
    let binds = vec![Bind::Int(ms(now)), Bind::Text(id.into())];
    update_one(store, &MARK_DELIVERY_DELIVERED, binds).await
}

pub(crate) async fn get_delivery<S: Backend>(store: &S, id: &str) -> StoreResult<Option<Delivery>> {
    read_one(store, "id", id).await
}

pub(crate) async fn delivery_for_message<S: Backend>(
    store: &S,
    message_id: &str,
) -> StoreResult<Option<Delivery>> {
    read_one(store, "message_id", message_id).await
}

pub(crate) async fn deliveries_for_messages<S: Backend>(
    store: &S,
    message_ids: &[String],
) -> StoreResult<Vec<Delivery>> {
    if message_ids.is_empty() {
        return Ok(Vec::new());
    }
    let marks = marks(1, message_ids.len());
    let hint = S::DIALECT.indexed_by("deliveries_message");
    let sql = format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries {hint} \
         WHERE message_id IN ({marks})"
    );
    let binds = message_ids.iter().cloned().map(Bind::Text).collect();
    store
        .read(&sql, binds)
        .await?
        .iter()
        .map(delivery)
        .collect()
}

pub(crate) async fn task_deliveries<S: Backend>(
    store: &S,
    task_id: &str,
    limit: u32,
) -> StoreResult<Vec<Delivery>> {
    let binds = vec![Bind::Text(task_id.to_owned()), Bind::Int(i64::from(limit))];
    store
        .read(&TASK_DELIVERIES, binds)
        .await?
        .iter()
        .map(delivery)
        .collect()
}

/// `impl DeliveryStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! delivery_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                deliveries::{Claimed, Delivery, DeliveryState, DeliveryStore, NewInput},
                store::StoreResult,
            };
            use $crate::shared::delivery_store as d;

            #[async_trait::async_trait]
            impl DeliveryStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn enqueue_input(&self, input: NewInput) -> StoreResult<(Delivery, bool)> {
                    d::enqueue_input(self, input).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn claim_deliveries(
                    &self,
                    owner: &str,
                    node: &str,
                    unbound: bool,
                    now: DateTime<Utc>,
                    lease_until: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Claimed> {
                    d::claim_deliveries(self, owner, node, unbound, now, lease_until, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn advance_delivery(
                    &self,
                    id: &str,
                    owner: &str,
                    state: DeliveryState,
                    lease_until: DateTime<Utc>,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    d::advance_delivery(self, id, owner, state, lease_until, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn complete_delivery(
                    &self,
                    id: &str,
                    owner: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    d::complete_delivery(self, id, owner, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn fail_delivery(
                    &self,
                    id: &str,
                    owner: &str,
                    error: &str,
                    next: Option<DateTime<Utc>>,
                    unverified: bool,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    d::fail_delivery(self, id, owner, error, next, unverified, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn release_delivery(&self, id: &str, owner: &str) -> StoreResult<()> {
                    d::release_delivery(self, id, owner).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn requeue_delivery(
                    &self,
                    id: &str,
                    from: &[DeliveryState],
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    d::requeue_delivery(self, id, from, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn mark_delivery_delivered(
                    &self,
                    id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    d::mark_delivery_delivered(self, id, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_delivery(&self, id: &str) -> StoreResult<Option<Delivery>> {
                    d::get_delivery(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn delivery_for_message(
                    &self,
                    message_id: &str,
                ) -> StoreResult<Option<Delivery>> {
                    d::delivery_for_message(self, message_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn deliveries_for_messages(
                    &self,
                    message_ids: &[String],
                ) -> StoreResult<Vec<Delivery>> {
                    d::deliveries_for_messages(self, message_ids).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn task_deliveries(
                    &self,
                    task_id: &str,
                    limit: u32,
                ) -> StoreResult<Vec<Delivery>> {
                    d::task_deliveries(self, task_id, limit).await
                }
            }
        };
    };
}
pub(crate) use delivery_store;
