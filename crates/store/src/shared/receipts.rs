//! The receipt's own rows (`answer_screens`, migration 0043 on both
//! backends; an added `ask_evidence` row; `ask_gateway_answers` read) once
//! for both: the SQL, one generic function per method of
//! [`harness_core::store::ReceiptStore`] over [`Backend`], and
//! [`receipt_store!`] that implements the port with them. Reads on the
//! readers; each write is one statement in its own write transaction. A
//! message deleted meanwhile (its foreign key) is "nothing stored", not an
//! error.

use chrono::{DateTime, Utc};
use harness_core::store::{AnswerScreen, StoreError, StoreResult};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, read_optional},
    ms, time,
};

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

/// Rows written, or none when the message is gone.
fn stored(done: StoreResult<u64>) -> StoreResult<bool> {
    match done {
        Ok(n) => Ok(n > 0),
        Err(StoreError::MissingReference(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// One statement in its own write transaction: the rows it wrote.
async fn write_one<S: Backend>(store: &S, sql: &str, binds: Vec<Bind>) -> StoreResult<u64> {
    let mut tx = store.write_tx().await?;
    let n = execute::<S>(&mut tx, sql, binds).await?;
    S::commit(tx).await?;
    Ok(n)
}

pub(crate) async fn record_answer_screen<S: Backend>(
    store: &S,
    s: AnswerScreen,
) -> StoreResult<bool> {
    let binds = vec![
        Bind::Text(s.message_id),
        Bind::Text(s.delivery_id),
        Bind::Text(s.screen),
        Bind::Int(ms(s.captured_at)),
    ];
    stored(write_one(store, INSERT_ANSWER_SCREEN, binds).await)
}

pub(crate) async fn answer_screen<S: Backend>(
    store: &S,
    message_id: &str,
) -> StoreResult<Option<AnswerScreen>> {
    let binds = vec![Bind::Text(message_id.to_owned())];
    let Some(row) = read_optional(store, ANSWER_SCREEN, binds).await? else {
        return Ok(None);
    };
    Ok(Some(AnswerScreen {
        message_id: row.at(0)?,
        delivery_id: row.at(1)?,
        screen: row.at(2)?,
        captured_at: time(row.at(3)?)?,
    }))
}

pub(crate) async fn add_ask_evidence<S: Backend>(
    store: &S,
    message_id: &str,
    screen: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let binds = vec![
        Bind::Text(message_id.to_owned()),
        Bind::Text(screen.to_owned()),
        Bind::Int(ms(now)),
    ];
    stored(write_one(store, ADD_ASK_EVIDENCE, binds).await)
}

pub(crate) async fn answered_in_chat<S: Backend>(
    store: &S,
    message_id: &str,
) -> StoreResult<Option<DateTime<Utc>>> {
    let binds = vec![Bind::Text(message_id.to_owned())];
    let at: Option<i64> = read_optional(store, ANSWERED_IN_CHAT, binds)
        .await?
        .map(|r| r.at(0))
        .transpose()?;
    at.map(time).transpose()
}

/// `impl ReceiptStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! receipt_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{AnswerScreen, ReceiptStore, StoreResult};
            use $crate::shared::receipts as r;

            #[async_trait::async_trait]
            impl ReceiptStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_answer_screen(&self, s: AnswerScreen) -> StoreResult<bool> {
                    r::record_answer_screen(self, s).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn answer_screen(
                    &self,
                    message_id: &str,
                ) -> StoreResult<Option<AnswerScreen>> {
                    r::answer_screen(self, message_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn add_ask_evidence(
                    &self,
                    message_id: &str,
                    screen: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    r::add_ask_evidence(self, message_id, screen, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn answered_in_chat(
                    &self,
                    message_id: &str,
                ) -> StoreResult<Option<DateTime<Utc>>> {
                    r::answered_in_chat(self, message_id).await
                }
            }
        };
    };
}
pub(crate) use receipt_store;
