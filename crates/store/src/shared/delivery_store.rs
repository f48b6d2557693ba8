//! [`DeliveryStore`](harness_core::deliveries::DeliveryStore) once for both
//! backends: the durable delivery queue (migration 0004). Claiming is one
//! batch (`run_batch`: expired WRITING rows → UNVERIFIED, then lease due
//! rows), both statements the engine's generic ones (`shared::work`); on
//! PostgreSQL the claim's sub-select also locks its rows (`FOR UPDATE SKIP
//! LOCKED`, [`Dialect`](crate::shared::Dialect)).

/// `impl DeliveryStore for $store`, reading from `self.$read`, writing on
/// `self.$write` (one-statement writes) or in `self.write_tx()`; `$dialect`
/// ([`crate::shared::Dialect`]) fills in what differs.
macro_rules! delivery_store {
    ($store:ty, $read:ident, $write:ident, $dialect:expr) => {
        const _: () = {
            #[allow(dead_code)]
            const DIALECT: $crate::shared::Dialect = $dialect;
            #[allow(dead_code)]
            const SKIP_LOCKED: &str = DIALECT.skip_locked;
            use chrono::{DateTime, Utc};
            use harness_core::{
                deliveries::{Claimed, Delivery, DeliveryState, DeliveryStore, NewInput},
                store::StoreResult,
            };
            use sqlx::{AssertSqlSafe, Row};
            use $crate::shared::deliveries::TASK_DELIVERIES;
            use $crate::shared::deliveries::{
                ADVANCE_DELIVERY, COMPLETE_DELIVERY, INPUT_BY_KEY, INSERT_INPUT, MARK_DELIVERY_DELIVERED,
            };
            use $crate::{
                error::map,
                shared::{
                    Bind, bind_all, marks,
                    deliveries::{CLAIMABLE, DELIVERY_COLUMNS, delivery, state_list},
                    ms,
                },
            };


            impl $store {
                /// One conditional UPDATE … RETURNING in its own transaction.
                async fn update_one(&self, sql: String, binds: Vec<Bind>) -> StoreResult<Option<Delivery>> {
                    let mut tx = self.write_tx().await?;
                    let query = bind_all(sqlx::query(AssertSqlSafe(sql)), binds);
                    let row = query.fetch_optional(&mut *tx).await.map_err(map)?;
                    let out = row.as_ref().map(delivery).transpose()?;
                    tx.commit().await.map_err(map)?;
                    Ok(out)
                }

                async fn read_one(&self, filter: &str, value: &str) -> StoreResult<Option<Delivery>> {
                    let sql = format!("SELECT {DELIVERY_COLUMNS} FROM deliveries WHERE {filter} = $1");
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(value)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?
                        .as_ref()
                        .map(delivery)
                        .transpose()
                }
            }

            #[async_trait::async_trait]
            impl DeliveryStore for $store {
                async fn enqueue_input(&self, input: NewInput) -> StoreResult<(Delivery, bool)> {
                    let mut tx = self.write_tx().await?;
                    let sql = INSERT_INPUT.to_string();
                    let inserted = sqlx::query(AssertSqlSafe(sql))
                        .bind(&input.id)
                        .bind(&input.task_id)
                        .bind(&input.node_id)
                        .bind(&input.text)
                        .bind(i64::from(input.submit))
                        .bind(&input.dedup_key)
                        .bind(ms(input.now))
                        .bind(i64::from(input.resume))
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?;
                    let out = match inserted {
                        Some(row) => (delivery(&row)?, true),
                        None => {
                            let sql = INPUT_BY_KEY.to_string();
                            let row = sqlx::query(AssertSqlSafe(sql))
                                .bind(&input.task_id)
                                .bind(&input.dedup_key)
                                .fetch_one(&mut *tx)
                                .await
                                .map_err(map)?;
                            (delivery(&row)?, false)
                        }
                    };
                    tx.commit().await.map_err(map)?;
                    Ok(out)
                }

                async fn claim_deliveries(
                    &self,
                    owner: &str,
                    node: &str,
                    unbound: bool,
                    now: DateTime<Utc>,
                    lease_until: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Claimed> {
                    // The generic statements (`shared::work`): expired
                    // WRITING rows → UNVERIFIED, then lease due rows.
                    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
                        use harness_core::store::DELIVERIES;
                        use $crate::shared::work::{ClaimParams, Whose, claim, unverify};
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
                            DIALECT,
                            params,
                            "",
                            "",
                            &format!("'claimed' AS what, {DELIVERY_COLUMNS}"),
                        );
                        format!("{expire}; {lease}")
                    });
                    let sql = SQL.as_str();
                    let (owner, node) = (owner.to_owned(), node.to_owned());
                    // Leases by `$6` (`lease_clock`), due times by `$3`.
                    let clock = self.lease_clock(now, lease_until).await?;
                    let rows = self
                        .run_batch(
                            sql,
                            vec![
                                Bind::Text(owner),
                                Bind::Int(clock.until),
                                Bind::Int(clock.now),
                                Bind::Text(node),
                                Bind::Int(i64::from(limit)),
                                Bind::Int(clock.lease_now),
                                Bind::Int(i64::from(unbound)),
                            ],
                        )
                        .await?;
                    let mut claimed = Claimed::default();
                    for row in &rows {
                        let what: String = row.try_get("what").map_err(map)?;
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

                async fn advance_delivery(
                    &self,
                    id: &str,
                    owner: &str,
                    state: DeliveryState,
                    lease_until: DateTime<Utc>,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    let sql = ADVANCE_DELIVERY.to_string();
                    let clock = self.lease_clock(now, lease_until).await?;
                    let (now, lease_until) = (clock.now, clock.until);
                    self.update_one(
                        sql,
                        vec![
                            Bind::Text(state.as_str().into()),
                            Bind::Int(lease_until),
                            Bind::Int(now),
                            Bind::Text(id.into()),
                            Bind::Text(owner.into()),
                        ],
                    )
                    .await
                }

                async fn complete_delivery(
                    &self,
                    id: &str,
                    owner: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    let sql = COMPLETE_DELIVERY.to_string();
                    self.update_one(
                        sql,
                        vec![
                            Bind::Int(ms(now)),
                            Bind::Text(id.into()),
                            Bind::Text(owner.into()),
                        ],
                    )
                    .await
                }

                async fn fail_delivery(
                    &self,
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
                    self.update_one(
                        sql,
                        vec![
                            Bind::OptInt(next),
                            Bind::Text(error.chars().take(2000).collect()),
                            Bind::Int(ms(now)),
                            Bind::Text(id.into()),
                            Bind::Text(owner.into()),
                        ],
                    )
                    .await
                }

                async fn release_delivery(&self, id: &str, owner: &str) -> StoreResult<()> {
                    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
                        use harness_core::store::DELIVERIES;
                        use $crate::shared::work::{Whose, release};
                        release(&DELIVERIES, Whose::Owner("$2"), Some("($1)"), "$3", "", DELIVERY_COLUMNS)
                            .unwrap_or_default()
                    });
                    let now = ms(Utc::now());
                    self.update_one(
                        SQL.clone(),
                        vec![Bind::Text(id.into()), Bind::Text(owner.into()), Bind::Int(now)],
                    )
                    .await
                    .map(|_| ())
                }

                async fn requeue_delivery(
                    &self,
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
                    self.update_one(sql, vec![Bind::Int(ms(now)), Bind::Text(id.into())])
                        .await
                }

                async fn mark_delivery_delivered(
                    &self,
                    id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Delivery>> {
                    let sql = MARK_DELIVERY_DELIVERED.to_string();
                    self.update_one(sql, vec![Bind::Int(ms(now)), Bind::Text(id.into())])
                        .await
                }

                async fn get_delivery(&self, id: &str) -> StoreResult<Option<Delivery>> {
                    self.read_one("id", id).await
                }

                async fn delivery_for_message(&self, message_id: &str) -> StoreResult<Option<Delivery>> {
                    self.read_one("message_id", message_id).await
                }

                async fn deliveries_for_messages(&self, message_ids: &[String]) -> StoreResult<Vec<Delivery>> {
                    if message_ids.is_empty() {
                        return Ok(Vec::new());
                    }
                    let marks = marks(1, message_ids.len());
                    let hint = DIALECT.indexed_by("deliveries_message");
                    let sql = format!(
                        "SELECT {DELIVERY_COLUMNS} FROM deliveries {hint} \
                         WHERE message_id IN ({marks})"
                    );
                    let mut query = sqlx::query(AssertSqlSafe(sql));
                    for id in message_ids {
                        query = query.bind(id);
                    }
                    query
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(delivery)
                        .collect()
                }

                async fn task_deliveries(&self, task_id: &str, limit: u32) -> StoreResult<Vec<Delivery>> {
                    let sql = TASK_DELIVERIES.to_string();
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(task_id)
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(delivery)
                        .collect()
                }
            }
        };
    };
}
pub(crate) use delivery_store;
