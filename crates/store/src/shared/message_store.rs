//! [`MessageStore`](harness_core::store::MessageStore) once for both
//! backends: one generic function per method over [`Backend`], and
//! [`message_store!`] that implements the port with them. An ask and an
//! answer also park / resume the task's executions in the same
//! transaction; every write is one write transaction.

use chrono::{DateTime, Utc};
use harness_core::{
    model::{Message, MessageQuery, MessageRow, MessageView},
    store::{Answered, AskRecorded, DeliveryClaim, Dismissed, NewAsk, StoreResult},
};

use super::{
    Bind, SqlRow,
    backend::{Backend, Step, answer_steps, only},
    messages::{
        ANSWER_OPEN_ASK, ASK_BY_KEY, ASK_EVIDENCE, CANCEL_OPEN_ASKS, DISMISS_MESSAGE,
        EXPIRE_ASKS_BEFORE, IGNORE_ASK, MESSAGE_BY_ID, RECORD_NOTIFY, RESUME, answered_from,
        ask_binds, ask_recorded, finish_answer, from_chat, handoff, insert_evidence, newest_ask,
    },
    ms,
    rows::{self, MESSAGE_ROW_SELECT},
};

/// The first message `sql` reads, if any.
async fn one_message<S: Backend>(
    store: &S,
    sql: &str,
    binds: Vec<Bind>,
) -> StoreResult<Option<Message>> {
    store
        .read(sql, binds)
        .await?
        .first()
        .map(rows::message)
        .transpose()
}

/// The `id` column of each row.
fn ids<R: SqlRow>(rows: &[R]) -> StoreResult<Vec<String>> {
    rows.iter().map(|r| r.col("id")).collect()
}

pub(crate) async fn record_ask<S: Backend>(store: &S, ask: NewAsk) -> StoreResult<AskRecorded> {
    // Supersede the task's other OPEN asks (first: at most one OPEN ask per
    // task is a unique index), insert the ask bound to its newest RUNNING
    // execution, park its RUNNING executions: one write transaction in one
    // round trip. Every statement answers rows of the same shape. The key
    // is a column of the insert: a second ask with the key of an existing
    // one breaks the unique index and rolls the whole ask back.
    let mut binds = ask_binds(&ask);
    let returned = match &ask.evidence {
        // The screen when it asked ($6), in the same transaction.
        Some(screen) => {
            binds.push(Bind::Text(screen.clone()));
            let sql = format!("{}; {}", S::ASKS.record_ask, insert_evidence(6));
            store.ask_batch(&sql, binds).await?
        }
        None => store.ask_alone(binds).await?,
    };
    ask_recorded(ask, &returned)
}

pub(crate) async fn ask_evidence<S: Backend>(
    store: &S,
    message_id: &str,
) -> StoreResult<Option<String>> {
    store
        .read(ASK_EVIDENCE, vec![Bind::Text(message_id.to_owned())])
        .await?
        .first()
        .map(|r| r.col("screen"))
        .transpose()
}

pub(crate) async fn ask_by_key<S: Backend>(
    store: &S,
    task_id: &str,
    key: &str,
) -> StoreResult<Option<Message>> {
    let binds = vec![Bind::Text(task_id.to_owned()), Bind::Text(key.to_owned())];
    one_message(store, &ASK_BY_KEY, binds).await
}

pub(crate) async fn record_notify<S: Backend>(store: &S, n: NewAsk) -> StoreResult<Message> {
    let binds = vec![
        Bind::Text(n.id),
        Bind::Text(n.task_id.clone()),
        Bind::Text(n.task_id),
        Bind::Text(n.question),
        Bind::Int(ms(n.now)),
    ];
    let returned = store.run_batch(&RECORD_NOTIFY, binds).await?;
    rows::message(&only(returned, "the notify's insert")?)
}

pub(crate) async fn answer_open_ask<S: Backend>(
    store: &S,
    task_id: &str,
    text: &str,
    delivery_id: &str,
    claim: Option<&DeliveryClaim>,
    now: DateTime<Utc>,
    chat: bool,
) -> StoreResult<Option<Answered>> {
    // The conditional OPEN → ANSWERED, then — only if it won — the record
    // that it came through a gateway, the resume and the reply's delivery
    // row, in one transaction: answered ⇔ owed to the agent. A reply that
    // finds no OPEN ask writes nothing.
    let (task_id, text, now) = (task_id.to_owned(), text.to_owned(), ms(now));
    let delivery_id = delivery_id.to_owned();
    let handoff = handoff(claim);
    let first = Step::new(
        ANSWER_OPEN_ASK.as_str(),
        vec![
            Bind::Text(task_id.clone()),
            Bind::Text(text.clone()),
            Bind::Int(now),
        ],
    );
    let done = answer_steps(store, first, move |row: &S::Row| {
        let mut steps = Vec::new();
        if chat {
            steps.push(from_chat(row, now)?);
        }
        steps.push(finish_answer(
            row,
            &task_id,
            &delivery_id,
            &text,
            now,
            handoff,
        )?);
        Ok(steps)
    })
    .await?;
    let Some((row, after)) = done else {
        return Ok(None);
    };
    answered_from(&row, &after, None).map(Some)
}

pub(crate) async fn resume_executions<S: Backend>(
    store: &S,
    task_id: &str,
) -> StoreResult<(Vec<String>, bool)> {
    let returned = store
        .run_batch(RESUME, vec![Bind::Text(task_id.to_owned())])
        .await?;
    let mut resumed = Vec::new();
    for row in &returned {
        if row.col::<String>("what")? == "resumed" {
            resumed.push(row.col("id")?);
        }
    }
    // A resumed execution is running now; else one that already ran.
    Ok((resumed, !returned.is_empty()))
}

pub(crate) async fn newest<S: Backend>(
    store: &S,
    task_id: &str,
    open_only: bool,
) -> StoreResult<Option<Message>> {
    let sql = newest_ask(open_only);
    one_message(store, &sql, vec![Bind::Text(task_id.to_owned())]).await
}

pub(crate) async fn get_message<S: Backend>(store: &S, id: &str) -> StoreResult<Option<Message>> {
    one_message(store, &MESSAGE_BY_ID, vec![Bind::Text(id.to_owned())]).await
}

pub(crate) async fn ignore_ask<S: Backend>(store: &S, id: &str) -> StoreResult<Option<Message>> {
    store
        .run_batch(&IGNORE_ASK, vec![Bind::Text(id.to_owned())])
        .await?
        .first()
        .map(rows::message)
        .transpose()
}

pub(crate) async fn dismiss_message<S: Backend>(store: &S, id: &str) -> StoreResult<Dismissed> {
    let returned = store
        .run_batch(&DISMISS_MESSAGE, vec![Bind::Text(id.to_owned())])
        .await?;
    for row in &returned {
        if row.col::<String>("what")? == "deleted" {
            return Ok(Dismissed::Deleted(rows::message(row)?));
        }
    }
    // Not deleted: an ask if it exists.
    Ok(if returned.is_empty() {
        Dismissed::NotFound
    } else {
        Dismissed::IsAsk
    })
}

pub(crate) async fn cancel_open_asks<S: Backend>(
    store: &S,
    task_id: &str,
) -> StoreResult<Vec<String>> {
    let binds = vec![Bind::Text(task_id.to_owned())];
    ids(&store.run_batch(CANCEL_OPEN_ASKS, binds).await?)
}

pub(crate) async fn expire_asks_before<S: Backend>(
    store: &S,
    cutoff: DateTime<Utc>,
) -> StoreResult<Vec<String>> {
    let binds = vec![Bind::Int(ms(cutoff))];
    ids(&store.run_batch(EXPIRE_ASKS_BEFORE, binds).await?)
}

/// `value` bound as the next parameter; its placeholder.
fn param(binds: &mut Vec<Bind>, value: Bind) -> String {
    binds.push(value);
    format!("${}", binds.len())
}

pub(crate) async fn list_messages<S: Backend>(
    store: &S,
    q: &MessageQuery,
) -> StoreResult<Vec<MessageRow>> {
    let mut sql = format!("{MESSAGE_ROW_SELECT} WHERE 1 = 1");
    let mut binds = Vec::new();
    match q.view {
        MessageView::Pending => sql.push_str(" AND m.kind = 'ask' AND m.state = 'OPEN'"),
        MessageView::Answered => sql.push_str(" AND m.kind = 'ask' AND m.state = 'ANSWERED'"),
        MessageView::All => {}
    }
    if let Some(task_id) = &q.task_id {
        let p = param(&mut binds, Bind::Text(task_id.clone()));
        sql.push_str(&format!(" AND m.task_id = {p}"));
    }
    if q.from_children {
        sql.push_str(" AND t.parent_task_id IS NOT NULL");
    }
    if let Some(cursor) = &q.cursor {
        let at = param(&mut binds, Bind::Int(cursor.created_at_ms));
        let id = param(&mut binds, Bind::Text(cursor.id.clone()));
        sql.push_str(&format!(" AND (m.created_at, m.id) < ({at}, {id})"));
    }
    if let Some(search) = &q.search {
        let escaped = search
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let p = param(&mut binds, Bind::Text(format!("%{escaped}%")));
        let like = S::ASKS.like;
        sql.push_str(&format!(
            " AND (t.title {like} {p} ESCAPE '\\' OR m.content {like} {p} ESCAPE '\\' \
             OR m.reply_text {like} {p} ESCAPE '\\')"
        ));
    }
    let limit = param(&mut binds, Bind::Int(i64::from(q.limit)));
    sql.push_str(&format!(
        " ORDER BY m.created_at DESC, m.id DESC LIMIT +{limit}"
    ));
    store
        .read(&sql, binds)
        .await?
        .iter()
        .map(rows::message_row)
        .collect()
}

pub(crate) async fn message_row<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<MessageRow>> {
    let sql = format!("{MESSAGE_ROW_SELECT} WHERE m.id = $1");
    store
        .read(&sql, vec![Bind::Text(id.to_owned())])
        .await?
        .first()
        .map(rows::message_row)
        .transpose()
}

pub(crate) async fn pending_count<S: Backend>(store: &S) -> StoreResult<u64> {
    let sql = format!(
        "SELECT COUNT(*) FROM harness_messages {} WHERE kind = 'ask' AND state = 'OPEN'",
        S::DIALECT.indexed_by("harness_messages_open_asks")
    );
    let n: i64 = only(store.read(&sql, Vec::new()).await?, "COUNT")?.at(0)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// `impl MessageStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! message_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                model::{Message, MessageQuery, MessageRow},
                store::{
                    Answered, AskRecorded, DeliveryClaim, Dismissed, MessageStore, NewAsk,
                    StoreResult,
                },
            };
            use $crate::shared::message_store as m;

            #[async_trait::async_trait]
            impl MessageStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_ask(&self, ask: NewAsk) -> StoreResult<AskRecorded> {
                    m::record_ask(self, ask).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn ask_evidence(&self, message_id: &str) -> StoreResult<Option<String>> {
                    m::ask_evidence(self, message_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn ask_by_key(
                    &self,
                    task_id: &str,
                    key: &str,
                ) -> StoreResult<Option<Message>> {
                    m::ask_by_key(self, task_id, key).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_notify(&self, n: NewAsk) -> StoreResult<Message> {
                    m::record_notify(self, n).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn answer_open_ask(
                    &self,
                    task_id: &str,
                    text: &str,
                    delivery_id: &str,
                    claim: Option<&DeliveryClaim>,
                    now: DateTime<Utc>,
                    from_chat: bool,
                ) -> StoreResult<Option<Answered>> {
                    m::answer_open_ask(self, task_id, text, delivery_id, claim, now, from_chat)
                        .await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn resume_executions(
                    &self,
                    task_id: &str,
                ) -> StoreResult<(Vec<String>, bool)> {
                    m::resume_executions(self, task_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn open_ask(&self, task_id: &str) -> StoreResult<Option<Message>> {
                    m::newest(self, task_id, true).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn latest_ask(&self, task_id: &str) -> StoreResult<Option<Message>> {
                    m::newest(self, task_id, false).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_message(&self, id: &str) -> StoreResult<Option<Message>> {
                    m::get_message(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn ignore_ask(&self, id: &str) -> StoreResult<Option<Message>> {
                    m::ignore_ask(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn dismiss_message(&self, id: &str) -> StoreResult<Dismissed> {
                    m::dismiss_message(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn cancel_open_asks(&self, task_id: &str) -> StoreResult<Vec<String>> {
                    m::cancel_open_asks(self, task_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn expire_asks_before(
                    &self,
                    cutoff: DateTime<Utc>,
                ) -> StoreResult<Vec<String>> {
                    m::expire_asks_before(self, cutoff).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_messages(&self, q: &MessageQuery) -> StoreResult<Vec<MessageRow>> {
                    m::list_messages(self, q).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn message_row(&self, id: &str) -> StoreResult<Option<MessageRow>> {
                    m::message_row(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn pending_count(&self) -> StoreResult<u64> {
                    m::pending_count(self).await
                }
            }
        };
    };
}
pub(crate) use message_store;
