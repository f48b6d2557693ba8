//! [`ChoicesStore`](harness_core::store::ChoicesStore) once for both
//! backends: an ask's options, default, deadline and urgency
//! (`ask_choices`, migration 0010), and the answers that use them — the
//! deadline's default and a pick of options, each the same transaction as
//! a person's reply (`messages::finish_answer`). One generic function per
//! method over [`Backend`], and [`choices_store!`] that implements the port
//! with them.

use chrono::{DateTime, Utc};
use harness_core::{
    inbox::NewEvent,
    options::Choices,
    store::{Answered, AskRecorded, DeliveryClaim, DueDefault, NewAsk, StoreError, StoreResult},
};

use super::{
    Bind, SqlRow,
    backend::{Backend, Step, answer_steps, only, write_steps},
    choices::{
        ANSWER_WITH_OPTIONS, INSERT_ASKED_CHOICES, READ_COLUMNS, UNDELIVERED_EVENT, choices,
        due_default, insert_ask_screen, insert_choices, insert_parent_event, mark_default,
        options_json,
    },
    marks,
    messages::{
        ANSWER_THIS_ASK, ANSWER_WITH_DEFAULT, answered_from, ask_binds, ask_recorded,
        finish_answer, from_chat, handoff, insert_evidence,
    },
    ms, time,
};

pub(crate) async fn record_ask_with_choices<S: Backend>(
    store: &S,
    ask: NewAsk,
    choices: Choices,
) -> StoreResult<AskRecorded> {
    // The ask's own statements, then its choices, in one transaction: `$5`
    // is the ask's idempotency key; the choices follow it. The screen when
    // it asked, if any, is `$11`.
    let mut binds = ask_binds(&ask);
    binds.extend([
        Bind::Text(options_json(&choices)?),
        Bind::Int(i64::from(choices.multi_select)),
        Bind::OptText(choices.default),
        Bind::OptInt(choices.deadline_at.map(ms)),
        Bind::Text(choices.urgency.as_str().to_owned()),
    ]);
    let evidence = match &ask.evidence {
        Some(screen) => {
            binds.push(Bind::Text(screen.clone()));
            format!("; {}", insert_evidence(11))
        }
        None => String::new(),
    };
    let sql = format!("{}; {INSERT_ASKED_CHOICES}{evidence}", S::ASKS.record_ask);
    let returned = store.run_batch(&sql, binds).await?;
    ask_recorded(ask, &returned)
}

pub(crate) async fn choices_for<S: Backend>(
    store: &S,
    message_ids: &[String],
) -> StoreResult<Vec<(String, Choices)>> {
    let mut out = Vec::new();
    for chunk in message_ids.chunks(500) {
        let sql = format!(
            "SELECT {READ_COLUMNS} FROM ask_choices WHERE message_id IN ({})",
            marks(1, chunk.len())
        );
        let binds = chunk.iter().cloned().map(Bind::Text).collect();
        for row in store.read(&sql, binds).await? {
            out.push(choices(&row)?);
        }
    }
    Ok(out)
}

pub(crate) async fn due_defaults<S: Backend>(
    store: &S,
    now: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<DueDefault>> {
    let sql = super::choices::due_defaults(&S::DIALECT.indexed_by("ask_choices_due"));
    let binds = vec![Bind::Int(ms(now)), Bind::Int(i64::from(limit))];
    store
        .read(&sql, binds)
        .await?
        .iter()
        .map(due_default)
        .collect()
}

pub(crate) async fn next_default_deadline<S: Backend>(
    store: &S,
) -> StoreResult<Option<DateTime<Utc>>> {
    let sql = super::choices::next_default_deadline(&S::DIALECT.indexed_by("ask_choices_due"));
    let at: Option<i64> = only(store.read(&sql, Vec::new()).await?, "MIN")?.at(0)?;
    at.map(time).transpose()
}

pub(crate) async fn answer_with_default<S: Backend>(
    store: &S,
    message_id: &str,
    delivery_text: &str,
    delivery_id: &str,
    claim: Option<&DeliveryClaim>,
    now: DateTime<Utc>,
) -> StoreResult<Option<Answered>> {
    // The conditional OPEN → ANSWERED of this ask (still OPEN, due, with a
    // default) with the default label as the reply text, the mark (the
    // default is an option: its index is recorded as the answer's), then —
    // only if it won — the same second half as a person's reply.
    let (message_id, now) = (message_id.to_owned(), ms(now));
    let (text, delivery_id) = (delivery_text.to_owned(), delivery_id.to_owned());
    let handoff = handoff(claim);
    let first = Step::new(
        ANSWER_WITH_DEFAULT.as_str(),
        vec![Bind::Text(message_id.clone()), Bind::Int(now)],
    );
    let delivery_text = text.clone();
    let done = answer_steps(store, first, move |row: &S::Row| {
        let task_id: String = row.col("task_id")?;
        Ok(vec![
            Step::new(
                mark_default(S::ASKS.default_option),
                vec![Bind::Text(message_id)],
            ),
            finish_answer(row, &task_id, &delivery_id, &delivery_text, now, handoff)?,
        ])
    })
    .await?;
    let Some((row, after)) = done else {
        return Ok(None);
    };
    answered_from(&row, &after, Some(&text)).map(Some)
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn answer_with_options<S: Backend>(
    store: &S,
    message_id: &str,
    text: &str,
    picked: &[usize],
    delivery_id: &str,
    claim: Option<&DeliveryClaim>,
    now: DateTime<Utc>,
    chat: bool,
) -> StoreResult<Option<Answered>> {
    // The conditional OPEN → ANSWERED of this very ask (the options were
    // read from it), the option(s) recorded, then — only if it won — the
    // same second half as any reply.
    let picked = serde_json::to_string(picked).map_err(|e| StoreError::Backend(Box::new(e)))?;
    let (message_id, text, now) = (message_id.to_owned(), text.to_owned(), ms(now));
    let delivery_id = delivery_id.to_owned();
    let handoff = handoff(claim);
    let first = Step::new(
        ANSWER_THIS_ASK.as_str(),
        vec![
            Bind::Text(message_id.clone()),
            Bind::Text(text.clone()),
            Bind::Int(now),
        ],
    );
    let done = answer_steps(store, first, move |row: &S::Row| {
        let mut steps = vec![Step::new(
            ANSWER_WITH_OPTIONS,
            vec![Bind::Text(picked), Bind::Text(message_id)],
        )];
        if chat {
            steps.push(from_chat(row, now)?);
        }
        let task_id: String = row.col("task_id")?;
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

pub(crate) async fn record_ask_for_parent<S: Backend>(
    store: &S,
    ask: NewAsk,
    choices: Option<Choices>,
    event: NewEvent,
) -> StoreResult<(AskRecorded, bool)> {
    // The ask's own statements, its choices, its screen and the parent's
    // event, in one transaction.
    let options = choices.as_ref().map(options_json).transpose()?;
    let payload = event.payload.to_string();
    let (id, now, evidence) = (ask.id.clone(), ms(ask.now), ask.evidence.clone());
    let first = Step::new(S::ASKS.record_ask, ask_binds(&ask));
    let done = write_steps(store, first, move |_: &[S::Row]| {
        let mut steps = Vec::new();
        if let (Some(choices), Some(options)) = (&choices, &options) {
            steps.push(insert_choices(&id, choices, options));
        }
        if let Some(screen) = &evidence {
            steps.push(insert_ask_screen(&id, screen, now));
        }
        steps.push(insert_parent_event(&event, &id, &payload));
        Ok(Some(steps))
    })
    .await?;
    let Some((returned, rest)) = done else {
        return Err(StoreError::Backend("the ask's batch wrote nothing".into()));
    };
    let mut added = false;
    for row in &rest {
        added |= row.col::<String>("what")? == "event";
    }
    Ok((ask_recorded(ask, &returned)?, added))
}

pub(crate) async fn undelivered_event<S: Backend>(
    store: &S,
    dedup_key: &str,
) -> StoreResult<Option<String>> {
    store
        .read(UNDELIVERED_EVENT, vec![Bind::Text(dedup_key.to_owned())])
        .await?
        .first()
        .map(|r| r.col("id"))
        .transpose()
}

/// `impl ChoicesStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! choices_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                inbox::NewEvent,
                options::Choices,
                store::{
                    Answered, AskRecorded, ChoicesStore, DeliveryClaim, DueDefault, NewAsk,
                    StoreResult,
                },
            };
            use $crate::shared::choices_store as c;

            #[async_trait::async_trait]
            impl ChoicesStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_ask_with_choices(
                    &self,
                    ask: NewAsk,
                    choices: Choices,
                ) -> StoreResult<AskRecorded> {
                    c::record_ask_with_choices(self, ask, choices).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn choices_for(
                    &self,
                    message_ids: &[String],
                ) -> StoreResult<Vec<(String, Choices)>> {
                    c::choices_for(self, message_ids).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn due_defaults(
                    &self,
                    now: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Vec<DueDefault>> {
                    c::due_defaults(self, now, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn next_default_deadline(&self) -> StoreResult<Option<DateTime<Utc>>> {
                    c::next_default_deadline(self).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn answer_with_default(
                    &self,
                    message_id: &str,
                    delivery_text: &str,
                    delivery_id: &str,
                    claim: Option<&DeliveryClaim>,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<Answered>> {
                    c::answer_with_default(self, message_id, delivery_text, delivery_id, claim, now)
                        .await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn answer_with_options(
                    &self,
                    message_id: &str,
                    text: &str,
                    picked: &[usize],
                    delivery_id: &str,
                    claim: Option<&DeliveryClaim>,
                    now: DateTime<Utc>,
                    from_chat: bool,
                ) -> StoreResult<Option<Answered>> {
                    c::answer_with_options(
                        self,
                        message_id,
                        text,
                        picked,
                        delivery_id,
                        claim,
                        now,
                        from_chat,
                    )
                    .await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_ask_for_parent(
                    &self,
                    ask: NewAsk,
                    choices: Option<Choices>,
                    event: NewEvent,
                ) -> StoreResult<(AskRecorded, bool)> {
                    c::record_ask_for_parent(self, ask, choices, event).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn undelivered_event(&self, dedup_key: &str) -> StoreResult<Option<String>> {
                    c::undelivered_event(self, dedup_key).await
                }
            }
        };
    };
}
pub(crate) use choices_store;
