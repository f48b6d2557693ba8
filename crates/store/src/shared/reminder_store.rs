//! [`ReminderStore`](harness_core::store::ReminderStore) once for both
//! backends: one generic function per method over [`Backend`], and
//! [`reminder_store!`] that implements the port with them. The statements
//! are [`super::reminders`]' and [`super::escalations`]'; a reminder or an
//! escalation and its outbound rows are one write transaction, only while
//! the ask is OPEN.

use chrono::{DateTime, Utc};
use harness_core::store::{
    ChatActivity, Escalation, NewEscalation, NewReminder, Outbound, Reminder, ReminderCandidate,
    StoreResult,
};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch, fetch_one, only, read_optional},
    escalations, marks, ms,
    outbox::outbound,
    reminders::{self, insert_outbound_binds, insert_outbound_sql},
    time,
};

/// The rows of `table` (`columns`) of these asks, by ask and number (in
/// chunks of 500 ids).
async fn rows_of_asks<S: Backend, T>(
    store: &S,
    table: &str,
    columns: &str,
    message_ids: &[String],
    decode: fn(&S::Row) -> StoreResult<T>,
) -> StoreResult<Vec<T>> {
    let mut out = Vec::new();
    for chunk in message_ids.chunks(500) {
        let sql = format!(
            "SELECT {columns} FROM {table} WHERE message_id IN ({}) ORDER BY message_id, seq",
            marks(1, chunk.len())
        );
        let binds = chunk.iter().cloned().map(Bind::Text).collect();
        for row in store.read(&sql, binds).await? {
            out.push(decode(&row)?);
        }
    }
    Ok(out)
}

pub(crate) async fn reminder_candidates<S: Backend>(
    store: &S,
    after: Option<&ReminderCandidate>,
    limit: u32,
) -> StoreResult<Vec<ReminderCandidate>> {
    let (at, id) = after.map_or((i64::MIN, String::new()), |c| {
        (ms(c.asked_at), c.message_id.clone())
    });
    let binds = vec![Bind::Int(i64::from(limit)), Bind::Int(at), Bind::Text(id)];
    store
        .read(&reminders::candidates_sql(), binds)
        .await?
        .iter()
        .map(reminders::candidate)
        .collect()
}

pub(crate) async fn record_reminder<S: Backend>(
    store: &S,
    r: NewReminder,
) -> StoreResult<Option<Outbound>> {
    let o = &r.outbound;
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(r.message_id.clone()),
        Bind::Int(i64::from(r.seq)),
        Bind::Text(o.id.clone()),
        Bind::Int(r.waited_ms),
        Bind::Int(ms(o.now)),
    ];
    if execute::<S>(&mut tx, reminders::INSERT_REMINDER, binds).await? == 0 {
        return Ok(None);
    }
    let key = format!("reminder:{}:{}", r.message_id, r.seq);
    let binds = insert_outbound_binds(o, key, &r.message_id);
    let row = outbound(&fetch_one::<S>(&mut tx, insert_outbound_sql(), binds).await?)?;
    S::commit(tx).await?;
    Ok(Some(row))
}

pub(crate) async fn drop_stale_reminders<S: Backend>(
    store: &S,
    now: DateTime<Utc>,
) -> StoreResult<Vec<Outbound>> {
    let mut tx = store.write_tx().await?;
    let rows = fetch::<S>(
        &mut tx,
        reminders::drop_stale_sql(),
        vec![Bind::Int(ms(now))],
    )
    .await?;
    let dropped = rows.iter().map(outbound).collect::<StoreResult<Vec<_>>>()?;
    S::commit(tx).await?;
    Ok(dropped)
}

pub(crate) async fn reminders_for<S: Backend>(
    store: &S,
    message_ids: &[String],
) -> StoreResult<Vec<Reminder>> {
    let columns = reminders::REMINDER_COLUMNS;
    rows_of_asks(
        store,
        "ask_reminders",
        columns,
        message_ids,
        reminders::reminder,
    )
    .await
}

pub(crate) async fn record_escalation<S: Backend>(
    store: &S,
    e: NewEscalation,
) -> StoreResult<Vec<Outbound>> {
    let mut tx = store.write_tx().await?;
    let mut rows = Vec::new();
    for (i, (target, o)) in e.rows.iter().enumerate() {
        let seq = i64::try_from(i + 1).unwrap_or(i64::MAX);
        let binds = vec![
            Bind::Text(e.message_id.clone()),
            Bind::Int(seq),
            Bind::Text(target.clone()),
            Bind::Text(o.id.clone()),
            Bind::Text(e.reason.as_str().to_owned()),
            Bind::Text(e.notice.clone()),
            Bind::Int(ms(o.now)),
        ];
        if execute::<S>(&mut tx, escalations::INSERT_ESCALATION, binds).await? == 0 {
            // Escalated already (or the ask stopped waiting): nothing of
            // this escalation is written.
            return Ok(Vec::new());
        }
        let key = format!("escalation:{}:{seq}", e.message_id);
        let binds = insert_outbound_binds(o, key, &e.message_id);
        rows.push(outbound(
            &fetch_one::<S>(&mut tx, insert_outbound_sql(), binds).await?,
        )?);
    }
    S::commit(tx).await?;
    Ok(rows)
}

pub(crate) async fn escalations_for<S: Backend>(
    store: &S,
    message_ids: &[String],
) -> StoreResult<Vec<Escalation>> {
    let columns = escalations::ESCALATION_COLUMNS;
    rows_of_asks(
        store,
        "ask_escalations",
        columns,
        message_ids,
        escalations::escalation,
    )
    .await
}

pub(crate) async fn question_closed<S: Backend>(store: &S, outbound_id: &str) -> StoreResult<bool> {
    let binds = vec![Bind::Text(outbound_id.to_owned())];
    let rows = store.read(escalations::QUESTION_CLOSED, binds).await?;
    let closed: i64 = only(rows, "the question's state")?.col("closed")?;
    Ok(closed != 0)
}

pub(crate) async fn chat_activity<S: Backend>(
    store: &S,
    gateway: &str,
    platform: &str,
    chat: &str,
    dest: Option<&str>,
) -> StoreResult<ChatActivity> {
    let binds = vec![
        Bind::Text(gateway.to_owned()),
        Bind::Text(platform.to_owned()),
        Bind::Text(chat.to_owned()),
    ];
    let rows = store.read(escalations::LAST_WROTE, binds).await?;
    let last: Option<i64> = only(rows, "the chat's last message")?.col("last_wrote")?;
    let binds = vec![
        Bind::Text(gateway.to_owned()),
        Bind::Text(platform.to_owned()),
        Bind::Text(dest.unwrap_or("").to_owned()),
    ];
    let failure = read_optional(store, escalations::LAST_FAILURE, binds).await?;
    Ok(ChatActivity {
        last_wrote: last.map(time).transpose()?,
        last_failure: failure.as_ref().map(escalations::failure).transpose()?,
    })
}

/// `impl ReminderStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! reminder_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{
                ChatActivity, Escalation, NewEscalation, NewReminder, Outbound, Reminder,
                ReminderCandidate, ReminderStore, StoreResult,
            };
            use $crate::shared::reminder_store as r;

            #[async_trait::async_trait]
            impl ReminderStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn reminder_candidates(
                    &self,
                    after: Option<&ReminderCandidate>,
                    limit: u32,
                ) -> StoreResult<Vec<ReminderCandidate>> {
                    r::reminder_candidates(self, after, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_reminder(
                    &self,
                    reminder: NewReminder,
                ) -> StoreResult<Option<Outbound>> {
                    r::record_reminder(self, reminder).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn drop_stale_reminders(
                    &self,
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<Outbound>> {
                    r::drop_stale_reminders(self, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn reminders_for(
                    &self,
                    message_ids: &[String],
                ) -> StoreResult<Vec<Reminder>> {
                    r::reminders_for(self, message_ids).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_escalation(
                    &self,
                    escalation: NewEscalation,
                ) -> StoreResult<Vec<Outbound>> {
                    r::record_escalation(self, escalation).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn escalations_for(
                    &self,
                    message_ids: &[String],
                ) -> StoreResult<Vec<Escalation>> {
                    r::escalations_for(self, message_ids).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn question_closed(&self, outbound_id: &str) -> StoreResult<bool> {
                    r::question_closed(self, outbound_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn chat_activity(
                    &self,
                    gateway: &str,
                    platform: &str,
                    chat: &str,
                    dest: Option<&str>,
                ) -> StoreResult<ChatActivity> {
                    r::chat_activity(self, gateway, platform, chat, dest).await
                }
            }
        };
    };
}
pub(crate) use reminder_store;
