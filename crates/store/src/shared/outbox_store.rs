//! `impl OutboxStore` once for both backends ([`outbox_store!`]): the turn
//! ([`super::outbox_settle`]), the started marks, a person's retry and
//! mark, and the reads. Only the enqueue batch is the backend's own
//! (`enqueue_once`: the dedup rule's spelling differs).

/// `impl OutboxStore for $store`, reading from `self.$read`, the started
/// marks on `self.$marks` (one statement, its own transaction), the other
/// writes in `self.write_tx()`.
macro_rules! outbox_store {
    ($store:ty, $read:ident, $marks:ident) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                outbox::{Outbound, OutboundState},
                store::{
                    Enqueued, NewOutbound, OutboxStore, SettleBatch, SettledBatch, StoreError,
                    StoreResult,
                },
                work::{ManualAction, ManualActions},
            };
            use sqlx::AssertSqlSafe;
            use $crate::{
                error::map,
                shared::{
                    Bind, SqlRow, bind_all, marks, ms,
                    outbox::{COLUMNS, outbound, returning},
                },
            };

            /// A person's `action` on one row (`$1` now, `$2` its id), only
            /// from the states the core's rule lets it accept.
            fn decide_sql(action: ManualAction) -> String {
                let set = match action {
                    ManualAction::Retry => "state = 'PENDING', next_attempt_at = $1",
                    ManualAction::MarkDelivered => "state = 'DELIVERED', delivered_at = $1",
                };
                let from = $crate::shared::quoted_list(
                    OutboundState::accepted_by(action)
                        .iter()
                        .map(|s| s.as_str()),
                );
                format!(
                    "UPDATE harness_outbound SET {set}, updated_at = $1 \
                     WHERE id = $2 AND state IN {from} RETURNING {}",
                    returning()
                )
            }

            impl $store {
                async fn read_outbound(
                    &self,
                    filter: &str,
                    binds: Vec<Bind>,
                    tail: &str,
                ) -> StoreResult<Vec<Outbound>> {
                    let sql =
                        format!("SELECT {COLUMNS} FROM harness_outbound o WHERE {filter} {tail}");
                    bind_all(sqlx::query(AssertSqlSafe(sql)), binds)
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(outbound)
                        .collect()
                }

                /// One conditional update (`$1` now, `$2` id) in its own
                /// transaction.
                async fn update_outbound(
                    &self,
                    sql: String,
                    now: i64,
                    id: &str,
                ) -> StoreResult<Option<Outbound>> {
                    let mut tx = self.write_tx().await?;
                    let row = sqlx::query(AssertSqlSafe(sql))
                        .bind(now)
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?;
                    let out = row.as_ref().map(outbound).transpose()?;
                    tx.commit().await.map_err(map)?;
                    Ok(out)
                }
            }

            #[async_trait::async_trait]
            impl OutboxStore for $store {
                async fn enqueue_outbound(&self, new: NewOutbound) -> StoreResult<Enqueued> {
                    match self.enqueue_once(&new).await {
                        // A concurrent writer (another backend or process)
                        // inserted the same key first: the dedup rule runs
                        // again and finds its row.
                        Err(StoreError::Duplicate(_)) => self.enqueue_once(&new).await,
                        other => other,
                    }
                }

                async fn settle_and_claim_outbound(
                    &self,
                    batch: SettleBatch,
                ) -> StoreResult<SettledBatch> {
                    $crate::shared::outbox_settle::settle_and_claim(self, batch).await
                }

                async fn mark_outbound_started(
                    &self,
                    owner: &str,
                    marks: &[(String, u32)],
                ) -> StoreResult<Vec<String>> {
                    if marks.is_empty() {
                        return Ok(Vec::new());
                    }
                    // One statement, its own transaction (on PostgreSQL not
                    // under the store's write lock: the statement is
                    // conditional on each row's lease by itself, and the
                    // marks of several nodes must not queue on one lock).
                    let (sql, binds) = $crate::shared::outbox::mark_started(owner, marks);
                    let rows = bind_all(sqlx::query(AssertSqlSafe(sql)), binds)
                        .fetch_all(&self.$marks)
                        .await
                        .map_err(map)?;
                    rows.iter().map(|row| row.col::<String>("id")).collect()
                }

                async fn retry_outbound(
                    &self,
                    id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Outbound>> {
                    let sql = decide_sql(ManualAction::Retry);
                    self.update_outbound(sql, ms(now), id).await
                }

                async fn mark_outbound_delivered(
                    &self,
                    id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Outbound>> {
                    let sql = decide_sql(ManualAction::MarkDelivered);
                    self.update_outbound(sql, ms(now), id).await
                }

                async fn get_outbound(&self, id: &str) -> StoreResult<Option<Outbound>> {
                    Ok(self
                        .read_outbound("o.id = $1", vec![Bind::Text(id.into())], "")
                        .await?
                        .into_iter()
                        .next())
                }

                async fn outbound_for_messages(
                    &self,
                    message_ids: &[String],
                ) -> StoreResult<Vec<Outbound>> {
                    if message_ids.is_empty() {
                        return Ok(Vec::new());
                    }
                    let filter =
                        format!("o.harness_message_id IN ({})", marks(1, message_ids.len()));
                    let binds = message_ids.iter().cloned().map(Bind::Text).collect();
                    self.read_outbound(&filter, binds, "").await
                }

                async fn list_outbound(
                    &self,
                    task_id: Option<&str>,
                    limit: u32,
                ) -> StoreResult<Vec<Outbound>> {
                    let limit = Bind::Int(i64::from(limit));
                    match task_id {
                        Some(t) => {
                            self.read_outbound(
                                "o.task_id = $1",
                                vec![Bind::Text(t.into()), limit],
                                "ORDER BY o.created_at DESC, o.id DESC LIMIT +$2",
                            )
                            .await
                        }
                        None => {
                            self.read_outbound(
                                "1 = 1",
                                vec![limit],
                                "ORDER BY o.created_at DESC, o.id DESC LIMIT +$1",
                            )
                            .await
                        }
                    }
                }
            }
        };
    };
}
pub(crate) use outbox_store;
