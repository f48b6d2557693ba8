//! The receipt's own rows (`answer_screens`, migration 0043 on both
//! backends; an added `ask_evidence` row; `ask_gateway_answers` read) once
//! for both: the SQL and the implementation of
//! [`harness_core::store::ReceiptStore`] ([`receipt_store`], expanded per
//! backend).

/// `$1` message, `$2` delivery, `$3` screen, `$4` captured at.
pub(crate) const INSERT_ANSWER_SCREEN: &str = "INSERT INTO answer_screens \
     (message_id, delivery_id, screen, captured_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (message_id) DO NOTHING";

pub(crate) const ANSWER_SCREEN: &str = "SELECT message_id, delivery_id, screen, captured_at \
     FROM answer_screens WHERE message_id = $1";

/// `$1` message, `$2` screen, `$3` now.
pub(crate) const ADD_ASK_EVIDENCE: &str = "INSERT INTO ask_evidence \
     (message_id, screen, created_at) VALUES ($1, $2, $3) \
     ON CONFLICT (message_id) DO NOTHING";

pub(crate) const ANSWERED_IN_CHAT: &str =
    "SELECT answered_at FROM ask_gateway_answers WHERE message_id = $1";

/// `impl ReceiptStore for $store`: reads on `self.$read`, each write one
/// statement in `self.write_tx()`. A message deleted meanwhile (its foreign
/// key) is "nothing stored", not an error.
macro_rules! receipt_store {
    ($store:ty, $read:ident) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{AnswerScreen, ReceiptStore, StoreError, StoreResult};
            use $crate::{
                error::map,
                shared::{ms, receipts as sql, time},
            };

            /// Rows written, or none when the message is gone.
            fn stored(done: StoreResult<u64>) -> StoreResult<bool> {
                match done {
                    Ok(n) => Ok(n > 0),
                    Err(StoreError::MissingReference(_)) => Ok(false),
                    Err(e) => Err(e),
                }
            }

            #[async_trait::async_trait]
            impl ReceiptStore for $store {
                async fn record_answer_screen(&self, s: AnswerScreen) -> StoreResult<bool> {
                    let done = async {
                        let mut tx = self.write_tx().await?;
                        let n = sqlx::query(sql::INSERT_ANSWER_SCREEN)
                            .bind(&s.message_id)
                            .bind(&s.delivery_id)
                            .bind(&s.screen)
                            .bind(ms(s.captured_at))
                            .execute(&mut *tx)
                            .await
                            .map_err(map)?
                            .rows_affected();
                        tx.commit().await.map_err(map)?;
                        Ok(n)
                    }
                    .await;
                    stored(done)
                }

                async fn answer_screen(
                    &self,
                    message_id: &str,
                ) -> StoreResult<Option<AnswerScreen>> {
                    let row: Option<(String, String, String, i64)> =
                        sqlx::query_as(sql::ANSWER_SCREEN)
                            .bind(message_id)
                            .fetch_optional(&self.$read)
                            .await
                            .map_err(map)?;
                    row.map(|(message_id, delivery_id, screen, at)| {
                        Ok(AnswerScreen {
                            message_id,
                            delivery_id,
                            screen,
                            captured_at: time(at)?,
                        })
                    })
                    .transpose()
                }

                async fn add_ask_evidence(
                    &self,
                    message_id: &str,
                    screen: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    let done = async {
                        let mut tx = self.write_tx().await?;
                        let n = sqlx::query(sql::ADD_ASK_EVIDENCE)
                            .bind(message_id)
                            .bind(screen)
                            .bind(ms(now))
                            .execute(&mut *tx)
                            .await
                            .map_err(map)?
                            .rows_affected();
                        tx.commit().await.map_err(map)?;
                        Ok(n)
                    }
                    .await;
                    stored(done)
                }

                async fn answered_in_chat(
                    &self,
                    message_id: &str,
                ) -> StoreResult<Option<DateTime<Utc>>> {
                    let at: Option<i64> = sqlx::query_scalar(sql::ANSWERED_IN_CHAT)
                        .bind(message_id)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?;
                    at.map(time).transpose()
                }
            }
        };
    };
}
pub(crate) use receipt_store;
