//! Relay messaging: ask, notify, reply, pending, ignore, dismiss, sweep, list
//! (docs/tower-messaging.md §3.1, docs/tower-messaging.md §5.2–§5.5; docs/decisions.md D5).

use chrono::Utc;
use serde::Serialize;

use crate::asks::Asks;
use crate::{
    CoreError, CoreResult,
    events::HarnessEvent,
    ids,
    model::{Message, MessageKind, MessagePage, MessageQuery, MessageRow, MessageState},
    rate_limit::RateAction,
    store::{Dismissed, NewAsk, StoreError},
    validate,
};

/// The most rows one page of the notification center holds.
pub const MAX_PAGE_ROWS: u32 = 500;

/// Result of `ask`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskOutcome {
    pub request_id: String,
    pub no_channel_configured: bool,
    /// Executions parked by this ask.
    pub paused: Vec<String>,
    /// Earlier OPEN asks superseded by this one.
    pub cancelled: Vec<String>,
    /// A retry with the idempotency key of an ask already recorded: that
    /// ask's id, nothing new recorded.
    pub deduped: bool,
}

// How a reply resumed the task's agent is the shared vocabulary's (the
// browser says it to the person who answered).
pub use harness_types::ResumeMode;

/// Result of `reply`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplyOutcome {
    pub task_id: String,
    pub request_id: String,
    pub mode: ResumeMode,
    /// Whether the reply text is in the terminal (its delivery is DELIVERED).
    pub injected: bool,
    /// True when this call repeated a reply that had already won.
    pub deduped: bool,
    pub resumed: Vec<String>,
    /// The reply's delivery row (also the injection id); `None` when the
    /// task's agent never ran (nothing to type into).
    pub delivery_id: Option<String>,
    /// `delivered`, `queued`, `failed`, `unverified`, or `none`.
    pub delivery: &'static str,
    /// The delivery row as it stood when the call returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_state: Option<crate::deliveries::DeliveryState>,
    /// Why the last delivery attempt failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_error: Option<String>,
}

impl ReplyOutcome {
    fn with_delivery(mut self, row: Option<&crate::deliveries::Delivery>) -> Self {
        match row {
            Some(d) => {
                self.delivery_id = Some(d.id.clone());
                self.delivery = crate::deliveries::status_word(d.state);
                self.delivery_state = Some(d.state);
                self.delivery_error = d.last_error.clone();
                self.injected = d.state == crate::deliveries::DeliveryState::Delivered;
                // Nothing was running at the answer, and yet it arrived:
                // the worker started the agent again to deliver it.
                if self.injected && self.mode == ResumeMode::NotRunning && !self.deduped {
                    self.mode = ResumeMode::Started;
                }
            }
            None => {
                self.delivery_id = None;
                self.delivery = "none";
                self.delivery_state = None;
                self.injected = false;
            }
        }
        self
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub task_id: String,
    pub pending: bool,
    pub request_id: Option<String>,
    pub question: Option<String>,
    /// The OPEN ask's options, multiSelect, default, deadlineAt and urgency
    ///, when it has any.
    #[serde(flatten)]
    #[cfg_attr(feature = "openapi", schema(value_type = PendingChoicesDoc))]
    pub choices: Option<crate::options::Choices>,
}

/// How [`Pending::choices`] looks on the wire: its fields next to the
/// others, every one absent when the ask has no choices (the document's view
/// of the flattened `Option<Choices>`).
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct PendingChoicesDoc {
    options: Option<Vec<crate::options::AskOption>>,
    multi_select: Option<bool>,
    default: Option<String>,
    deadline_at: Option<chrono::DateTime<chrono::Utc>>,
    urgency: Option<crate::options::Urgency>,
}

fn mode(resumed: &[String], running: bool) -> ResumeMode {
    if !resumed.is_empty() {
        ResumeMode::Continued
    } else if running {
        ResumeMode::AlreadyRunning
    } else {
        ResumeMode::NotRunning
    }
}

pub(crate) fn task_missing(err: StoreError) -> CoreError {
    match err {
        StoreError::MissingReference(_) => CoreError::NotFound("Task not found".into()),
        other => other.into(),
    }
}

/// Which question a reply is for and where it came from: an
/// answer aimed at an approval decides exactly that one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Aim<'a> {
    /// The ask the person answered (a UI row's id, a chat push's ask).
    pub request_id: Option<&'a str>,
    /// Where the answer came from, as the audit records it (`ui`, `chat`);
    /// `None`: `chat` with a sender, else `reply`.
    pub via: Option<&'static str>,
    /// Who, beyond the person's kind: a UI session's label
    /// ([`crate::sessions::ui_session_label`]), recorded as
    /// `browser:session:<12 hex>`.
    pub who: Option<&'a str>,
}

impl Asks<'_> {
    /// Whether no notify target is configured (the reference's
    /// `noChannelConfigured`: targets missing or empty).
    pub async fn no_channel_configured(&self) -> CoreResult<bool> {
        Ok(self.h.settings().notify_targets().await?.is_empty())
    }

    /// Record an OPEN ask and park the task (one transaction): earlier OPEN asks
    /// of the task are cancelled, RUNNING executions become PAUSED.
    pub async fn ask(&self, task_id: &str, question: Option<&str>) -> CoreResult<AskOutcome> {
        self.ask_with(task_id, question, &crate::options::ChoicesInput::default())
            .await
    }

    /// [`Asks::ask`] with the structured part: options,
    /// multiSelect, a default with a deadline, urgency — validated by
    /// `options::validate` and stored in the ask's transaction.
    #[tracing::instrument(skip_all, fields(task_id))]
    pub async fn ask_with(
        &self,
        task_id: &str,
        question: Option<&str>,
        choices: &crate::options::ChoicesInput,
    ) -> CoreResult<AskOutcome> {
        self.ask_keyed(task_id, question, choices, None).await
    }

    /// [`Asks::ask_with`] with the caller's optional idempotency key: a
    /// retry with the key of an ask already recorded for the task answers
    /// that ask (`deduped`) and records nothing. Concurrent first tries with
    /// one key: the unique index lets one commit; the others answer it.
    pub async fn ask_keyed(
        &self,
        task_id: &str,
        question: Option<&str>,
        choices: &crate::options::ChoicesInput,
        idempotency_key: Option<&str>,
    ) -> CoreResult<AskOutcome> {
        let task_id = validate::task_id(Some(task_id))?;
        let key = validate::idempotency_key(idempotency_key)?;
        if let Some(key) = &key
            && let Some(existing) = self.h.store().ask_by_key(&task_id, key).await?
        {
            return self.deduped_ask(existing).await;
        }
        let question = validate::text("question", question, validate::MAX_QUESTION_CHARS)?;
        let now = Utc::now();
        let choices = crate::options::validate(choices, now, self.h.config().pending_ttl)?;
        self.h.check_rate(&task_id, RateAction::Ask)?;
        let ask = NewAsk {
            id: ids::new_id(),
            task_id: task_id.clone(),
            question,
            now,
            idempotency_key: key.clone(),
            evidence: self.evidence_now(&task_id).await,
        };
        let recorded = match choices {
            None => self.h.store().record_ask(ask).await,
            Some(choices) => self.h.store().record_ask_with_choices(ask, choices).await,
        };
        let recorded = match (recorded, &key) {
            (Err(crate::store::StoreError::Duplicate(_)), Some(key)) => {
                match self.h.store().ask_by_key(&task_id, key).await? {
                    Some(existing) => return self.deduped_ask(existing).await,
                    None => {
                        return Err(CoreError::Conflict(
                            "the ask could not be recorded; try again".into(),
                        ));
                    }
                }
            }
            (other, _) => other.map_err(task_missing)?,
        };
        self.asked(&task_id, recorded).await
    }

    /// After an ask committed: publish, tell the runtime the task is
    /// parked, answer the outcome.
    pub(crate) async fn asked(
        &self,
        task_id: &str,
        recorded: crate::store::AskRecorded,
    ) -> CoreResult<AskOutcome> {
        let task_id = task_id.to_string();
        for id in &recorded.cancelled {
            self.h.publish(HarnessEvent::MessageChanged {
                id: id.clone(),
                task_id: task_id.clone(),
            });
        }
        self.h.publish(HarnessEvent::MessageChanged {
            id: recorded.message.id.clone(),
            task_id: task_id.clone(),
        });
        self.h.publish(HarnessEvent::TaskChanged {
            task_id: task_id.clone(),
        });
        tracing::info!(request_id = %recorded.message.id, paused = recorded.paused.len(), "ask recorded");
        if let Some(runtime) = self.h.runtime() {
            runtime.parked(&task_id);
        }
        Ok(AskOutcome {
            request_id: recorded.message.id,
            no_channel_configured: self.no_channel_configured().await?,
            paused: recorded.paused,
            cancelled: recorded.cancelled,
            deduped: false,
        })
    }

    /// The answer to a retried ask: the ask recorded before, untouched.
    async fn deduped_ask(&self, existing: Message) -> CoreResult<AskOutcome> {
        tracing::info!(request_id = %existing.id, "ask deduped by its idempotency key");
        Ok(AskOutcome {
            request_id: existing.id,
            no_channel_configured: self.no_channel_configured().await?,
            paused: Vec::new(),
            cancelled: Vec::new(),
            deduped: true,
        })
    }

    /// Record a CLOSED notify line (an FYI; nothing waits for it).
    #[tracing::instrument(skip_all, fields(task_id))]
    pub async fn notify(&self, task_id: &str, message: Option<&str>) -> CoreResult<Message> {
        let task_id = validate::task_id(Some(task_id))?;
        let message = validate::text("message", message, validate::MAX_NOTIFY_CHARS)?;
        self.h.check_rate(&task_id, RateAction::Notify)?;
        let recorded = self
            .h
            .store()
            .record_notify(NewAsk {
                id: ids::new_id(),
                task_id: task_id.clone(),
                question: message,
                now: Utc::now(),
                idempotency_key: None,
                evidence: None,
            })
            .await
            .map_err(task_missing)?;
        self.h.publish(HarnessEvent::MessageChanged {
            id: recorded.id.clone(),
            task_id,
        });
        Ok(recorded)
    }

    /// Answer the task's OPEN ask and resume the parked execution.
    ///
    /// Exactly one of N concurrent replies wins (conditional OPEN → ANSWERED);
    /// the same transaction writes the reply's delivery row, which the
    /// delivery worker types into the terminal. The call returns once the
    /// answer is committed, after waiting at most `delivery_wait` for the
    /// delivery to finish (a caller that goes away changes nothing).
    ///
    /// A repeat of the winning text is `deduped`: it never restarts an agent
    /// and never types again; with `allow_retry` it only queues a FAILED
    /// delivery once more. Any other reply without an OPEN ask is a Conflict
    /// ("No open ask for this task", the reference's 409).
    ///
    /// Only a person answers (`by`, from [`crate::auth::Identity::person`]):
    /// an agent's token cannot answer its own question.
    pub async fn reply(
        &self,
        by: &crate::auth::Person,
        task_id: &str,
        text: Option<&str>,
        allow_retry: bool,
    ) -> CoreResult<ReplyOutcome> {
        self.reply_from(by, task_id, text, allow_retry, None).await
    }

    /// [`Self::reply`] relayed from chat: `sender_id` is the gateway's
    /// verified sender (≤ 512 characters), recorded as who decided when the
    /// reply decides an approval.
    pub async fn reply_from(
        &self,
        by: &crate::auth::Person,
        task_id: &str,
        text: Option<&str>,
        allow_retry: bool,
        sender_id: Option<&str>,
    ) -> CoreResult<ReplyOutcome> {
        self.reply_aimed(by, task_id, text, allow_retry, sender_id, Aim::default())
            .await
    }

    /// [`Self::reply_from`] aimed at one ask (`aim.request_id`: the question
    /// the person saw — a UI row, a chat push): an answer aimed at an
    /// approval decides exactly that approval, or is refused ("cancelled"
    /// / "already decided") when it is no longer pending — never another
    /// approval that replaced it.
    #[tracing::instrument(skip_all, fields(task_id))]
    pub async fn reply_aimed(
        &self,
        by: &crate::auth::Person,
        task_id: &str,
        text: Option<&str>,
        allow_retry: bool,
        sender_id: Option<&str>,
        aim: Aim<'_>,
    ) -> CoreResult<ReplyOutcome> {
        self.answer_reply(by, task_id, text, allow_retry, sender_id, aim)
            .await
    }

    async fn answer_reply(
        &self,
        by: &crate::auth::Person,
        task_id: &str,
        text: Option<&str>,
        allow_retry: bool,
        sender_id: Option<&str>,
        aim: Aim<'_>,
    ) -> CoreResult<ReplyOutcome> {
        let text = validate::text("text", text, validate::MAX_REPLY_CHARS)?;
        let task_id = validate::task_id(Some(task_id))?;
        let sender_id =
            validate::optional_text("senderId", sender_id, validate::MAX_SENDER_ID_CHARS)?;
        let request_id = match aim.request_id.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => Some(validate::cuid("requestId", r)?),
            None => None,
        };
        // A person acts first: what Harness would have done on its own waits no more.
        self.h
            .agents()
            .cancel_agent_actions(&task_id, "a person replied")
            .await?;
        // An approval's ask is decided, never answered as text.
        if let Some(outcome) = self
            .h
            .approvals()
            .reply_to_approval(
                by,
                &task_id,
                &text,
                sender_id.as_deref(),
                Aim {
                    request_id: request_id.as_deref(),
                    ..aim
                },
            )
            .await?
        {
            return Ok(outcome);
        }
        // Subscribed before the row exists, so no change of it is missed.
        let events = self.h.subscribe();
        let delivery_id = ids::new_id();
        let now = Utc::now();
        let claim = self.h.deliveries().handoff_claim(now);
        // The person wrote in the chat (reachability),
        // recorded with the answer; an answer on the web says nothing about
        // the chat.
        let from_chat = by.kind() == crate::auth::PersonKind::GatewayOwner;
        // `2`, `2.` or a label answers a structured question with that option.
        let answered = match self.map_open_reply(&task_id, &text).await? {
            Some(m) => {
                self.h
                    .store()
                    .answer_with_options(
                        &m.ask_id,
                        &m.text,
                        &m.picked,
                        &delivery_id,
                        claim.as_ref(),
                        now,
                        from_chat,
                    )
                    .await?
            }
            None => {
                self.h
                    .store()
                    .answer_open_ask(
                        &task_id,
                        &text,
                        &delivery_id,
                        claim.as_ref(),
                        now,
                        from_chat,
                    )
                    .await?
            }
        };
        if let Some(answered) = answered {
            return self.answered(answered, Some(events)).await;
        }
        let latest = self.h.store().latest_ask(&task_id).await?;
        // A repeat is the same answer: `2` repeats "SQLite".
        let same = match &latest {
            Some(ask) if ask.state == MessageState::Answered => {
                let text = self.reply_text_on(&ask.id, &text).await?;
                ask.reply_text.as_deref() == Some(text.as_str())
            }
            _ => false,
        };
        match latest {
            Some(ask) if same => {
                let mut row = self.h.store().delivery_for_message(&ask.id).await?;
                if allow_retry
                    && let Some(failed) = row
                        .as_ref()
                        .filter(|d| d.state == crate::deliveries::DeliveryState::Failed)
                    && let Some(queued) = self
                        .h
                        .store()
                        .requeue_delivery(
                            &failed.id,
                            &[crate::deliveries::DeliveryState::Failed],
                            Utc::now(),
                        )
                        .await?
                {
                    tracing::info!(delivery_id = %queued.id, "deduped reply: failed delivery queued again");
                    self.h.deliveries().delivery_changed(&queued);
                    self.h.deliveries().wake_deliveries();
                    row = self
                        .h
                        .deliveries()
                        .wait_delivery(&queued.id, self.h.config().delivery_wait, events)
                        .await?
                        .or(Some(queued));
                }
                let running = self.h.store().live_execution(&task_id).await?.is_some();
                Ok(ReplyOutcome {
                    task_id,
                    request_id: ask.id,
                    mode: mode(&[], running),
                    injected: false,
                    deduped: true,
                    resumed: Vec::new(),
                    delivery_id: None,
                    delivery: "none",
                    delivery_state: None,
                    delivery_error: None,
                }
                .with_delivery(row.as_ref()))
            }
            _ => {
                if self.h.store().get_task(&task_id).await?.is_none() {
                    return Err(CoreError::NotFound("Task not found".into()));
                }
                Err(CoreError::Conflict("No open ask for this task".into()))
            }
        }
    }

    /// After an answer committed (a person's reply, or the default after the
    /// deadline): publish, hand the delivery row to the worker, and — with
    /// `events` — wait at most `delivery_wait` for it to settle.
    pub(crate) async fn answered(
        &self,
        answered: crate::store::Answered,
        events: Option<tokio::sync::broadcast::Receiver<HarnessEvent>>,
    ) -> CoreResult<ReplyOutcome> {
        let task_id = answered.message.task_id.clone();
        self.h.publish(HarnessEvent::MessageChanged {
            id: answered.message.id.clone(),
            task_id: task_id.clone(),
        });
        self.h.publish(HarnessEvent::TaskChanged {
            task_id: task_id.clone(),
        });
        tracing::info!(request_id = %answered.message.id, resumed = answered.resumed.len(),
            delivery = answered.delivery.is_some(), "ask answered");
        let outcome = ReplyOutcome {
            task_id,
            request_id: answered.message.id.clone(),
            mode: mode(&answered.resumed, answered.running),
            injected: false,
            deduped: false,
            resumed: answered.resumed,
            delivery_id: None,
            delivery: "none",
            delivery_state: None,
            delivery_error: None,
        };
        let row = match (&answered.delivery, events) {
            (Some(queued), Some(events)) => {
                self.h.deliveries().queued(queued);
                self.h
                    .deliveries()
                    .wait_delivery(&queued.id, self.h.config().delivery_wait, events)
                    .await?
                    .or_else(|| Some(queued.clone()))
            }
            (Some(queued), None) => {
                self.h.deliveries().queued(queued);
                Some(queued.clone())
            }
            (None, _) => None,
        };
        Ok(outcome.with_delivery(row.as_ref()))
    }

    /// The task's OPEN ask, if any.
    pub async fn pending(&self, task_id: &str) -> CoreResult<Pending> {
        let task_id = validate::task_id(Some(task_id))?;
        let open = self.h.store().open_ask(&task_id).await?;
        let choices = match &open {
            Some(m) => self.choices_of(&m.id).await?,
            None => None,
        };
        Ok(Pending {
            pending: open.is_some(),
            request_id: open.as_ref().map(|m| m.id.clone()),
            question: open.map(|m| m.content),
            task_id,
            choices,
        })
    }

    /// Cancel the task's OPEN asks because the task was stopped (the
    /// reference's `cancelOpenAsks` on stop): nobody is waiting for the
    /// answer any more, so the ask leaves the pending view and a late reply
    /// gets the 409 instead of restarting the agent. A server restart does
    /// not call this: an ask survives a restart and stays answerable.
    pub async fn cancel_open_asks(&self, task_id: &str) -> CoreResult<Vec<String>> {
        let task_id = validate::task_id(Some(task_id))?;
        let ids = self.h.store().cancel_open_asks(&task_id).await?;
        for id in &ids {
            self.h.publish(HarnessEvent::MessageChanged {
                id: id.clone(),
                task_id: task_id.clone(),
            });
        }
        if !ids.is_empty() {
            tracing::info!(
                task_id,
                cancelled = ids.len(),
                "open asks cancelled: task stopped"
            );
            self.h.publish(HarnessEvent::TaskChanged { task_id });
        }
        Ok(ids)
    }

    /// OPEN → IGNORED (the human chose not to answer). Conflict if no longer OPEN.
    pub async fn ignore(&self, message_id: &str) -> CoreResult<Message> {
        let message_id = validate::cuid("messageId", message_id.trim())?;
        match self.h.store().ignore_ask(&message_id).await? {
            Some(message) => {
                self.h.publish(HarnessEvent::MessageChanged {
                    id: message.id.clone(),
                    task_id: message.task_id.clone(),
                });
                Ok(message)
            }
            None => match self.h.store().get_message(&message_id).await? {
                None => Err(CoreError::NotFound("Message not found".into())),
                Some(m) if m.kind != MessageKind::Ask => {
                    Err(CoreError::Conflict("Only asks can be ignored".into()))
                }
                Some(m) => Err(CoreError::Conflict(format!(
                    "Ask is no longer pending (state {})",
                    m.state
                ))),
            },
        }
    }

    /// Delete a non-ask line from the notification center.
    pub async fn dismiss(&self, message_id: &str) -> CoreResult<()> {
        let message_id = validate::cuid("messageId", message_id.trim())?;
        match self.h.store().dismiss_message(&message_id).await? {
            Dismissed::Deleted(message) => {
                self.h.publish(HarnessEvent::MessageDeleted {
                    id: message.id,
                    task_id: message.task_id,
                });
                Ok(())
            }
            Dismissed::NotFound => Err(CoreError::NotFound("Message not found".into())),
            Dismissed::IsAsk => Err(CoreError::Conflict(
                "Asks cannot be dismissed; answer or ignore them".into(),
            )),
        }
    }

    /// OPEN asks older than the configured TTL → EXPIRED. Returns how many.
    pub async fn sweep_expired(&self) -> CoreResult<usize> {
        let ttl = chrono::Duration::from_std(self.h.config().pending_ttl)
            .unwrap_or(chrono::Duration::MAX);
        let cutoff = Utc::now()
            .checked_sub_signed(ttl)
            .unwrap_or(chrono::DateTime::<Utc>::MIN_UTC);
        let expired = self.h.store().expire_asks_before(cutoff).await?;
        for id in &expired {
            if let Some(message) = self.h.store().get_message(id).await? {
                self.h.publish(HarnessEvent::MessageChanged {
                    id: id.clone(),
                    task_id: message.task_id,
                });
            }
        }
        if !expired.is_empty() {
            tracing::info!(count = expired.len(), "expired stale asks");
        }
        Ok(expired.len())
    }

    /// One page of notification-center rows, newest first.
    pub async fn list_messages(&self, mut query: MessageQuery) -> CoreResult<MessagePage> {
        query.limit = query.limit.clamp(1, MAX_PAGE_ROWS);
        if let Some(search) = &query.search {
            let trimmed = search.trim();
            if trimmed.chars().count() > 200 {
                return Err(CoreError::invalid(
                    "q",
                    "search text too long (at most 200)",
                ));
            }
            query.search = (!trimmed.is_empty()).then(|| trimmed.to_string());
        }
        let limit = query.limit as usize;
        let mut probe = query.clone();
        probe.limit = query.limit + 1;
        let mut rows = self.h.store().list_messages(&probe).await?;
        let next_cursor = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(|r| {
                crate::model::Cursor {
                    created_at_ms: r.message.created_at.timestamp_millis(),
                    id: r.message.id.clone(),
                }
                .encode()
            })
        } else {
            None
        };
        Ok(MessagePage { rows, next_cursor })
    }

    pub async fn message_row(&self, message_id: &str) -> CoreResult<MessageRow> {
        let message_id = validate::cuid("messageId", message_id.trim())?;
        self.h
            .store()
            .message_row(&message_id)
            .await?
            .ok_or_else(|| CoreError::NotFound("Message not found".into()))
    }

    pub async fn pending_count(&self) -> CoreResult<u64> {
        Ok(self.h.store().pending_count().await?)
    }
}
