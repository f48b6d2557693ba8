//! One reply answers many: a reply to a kept report, read with
//! [`super::batch::parse`] and [`super::batch::plan`] against the items
//! the report numbered, each applied alone by the same core path as a
//! direct answer — conditional on the item still waiting, so an item
//! answered meanwhile is refused ("already answered") and never applied to
//! a newer question. A malformed reply changes nothing.
//!
//! Retries: applying the same reply again takes nothing twice — every item
//! it took is answered by then; an item whose recorded answer is exactly
//! this reply's is reported as taken (a retry after a crash between the
//! answers and the record of the reply), any other answer as refused.

use crate::report::Reports;
use std::collections::BTreeMap;

use chrono::Utc;
use serde::Serialize;

use super::batch::{self, Answer, Item, Malformed, Refusal};
use crate::{
    CoreError, CoreResult,
    auth::{Person, PersonKind},
    control::{Action, AgentControl},
    ids,
    ladder::Lang,
    model::MessageState,
    store::{ApprovalState, ItemKind, ItemRef},
};

/// What happened to one numbered part of a reply.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemOutcome {
    pub number: u32,
    /// Taken (applied, or left waiting on purpose with `later`).
    pub taken: bool,
    /// What was applied, or why not, in the answer's language ([`Said`] in
    /// words: [`super::words::said`]).
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The same as data, for a surface that says it in another language.
    #[serde(skip)]
    pub said: Said,
}

/// What happened to one numbered part of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// A question answered with `text`; `again`: it already was, with this
    /// very answer (a retry of the reply).
    Answered {
        text: String,
        again: bool,
    },
    Approved {
        again: bool,
    },
    Denied {
        again: bool,
    },
    /// `later`: left waiting on purpose.
    LeftWaiting,
    Resumed,
    Restarted,
    Stopped,
    /// Answered meanwhile, with `answer`.
    AlreadyAnswered {
        answer: String,
    },
    /// An approval decided meanwhile: `approved` or `denied`, by `by`.
    AlreadyDecided {
        state: String,
        by: String,
    },
    /// It no longer waits: its state (`cancelled`, `expired`, `ignored`).
    NoLongerWaiting {
        state: String,
    },
    Gone,
    /// The agent was started again, stopped or its task closed.
    AgentActedUpon,
    /// An agent is resumed or stopped on its page (`link`).
    OnItsPage {
        link: String,
    },
    /// The answer is not one for this kind of item.
    DoesNotFit,
    /// Why the part was not read ([`Refusal`]).
    Refused(Refusal),
    /// It failed: the error, in English.
    Failed(String),
}

impl std::fmt::Display for Said {
    /// In English ([`super::words::said`] in any language).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::words::said(Lang::En, self))
    }
}

/// A reply's outcome: per item, or why the whole reply was not read.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchOutcome {
    pub report_id: String,
    /// Set when nothing was read: the reply is malformed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub malformed: Option<String>,
    /// The same as data.
    #[serde(skip)]
    pub malformed_why: Option<Malformed>,
    pub items: Vec<ItemOutcome>,
    /// The answer back, in words (in the answer's language).
    pub text: String,
}

impl BatchOutcome {
    /// Every phrase in `lang`: each item's `detail`, `malformed` and the
    /// answer back.
    pub fn say(mut self, lang: Lang) -> Self {
        for i in &mut self.items {
            i.detail = super::words::said(lang, &i.said);
        }
        if let Some(m) = &self.malformed_why {
            self.malformed = Some(super::words::malformed(lang, m));
        }
        self.text = super::words::answer_back(lang, &self);
        self
    }
}

/// The answer back, in English: which items were taken, which not and why
/// ([`super::words::answer_back`] in any language).
pub fn answer_back(o: &BatchOutcome) -> String {
    super::words::answer_back(Lang::En, o)
}

/// Where a reply came from, as the audit records it.
#[derive(Clone, Copy)]
pub struct ReplyFrom<'a> {
    pub by: &'a Person,
    /// The chat sender (a gateway's verified sender id).
    pub sender: Option<&'a str>,
    /// As an approval's audit records where it was decided: `report`.
    pub via: &'static str,
}

impl Reports<'_> {
    /// Apply `reply` to kept report `report_id`, answered back in English.
    /// `control`: how an agent item is resumed or stopped (without it such
    /// an item is refused with the way to do it on its page).
    pub async fn answer_report(
        &self,
        from: ReplyFrom<'_>,
        report_id: &str,
        reply: &str,
        control: Option<&dyn AgentControl>,
    ) -> CoreResult<BatchOutcome> {
        self.answer_report_in(from, report_id, reply, control, Lang::En)
            .await
    }

    /// [`Self::answer_report`], answered back in `lang`.
    pub async fn answer_report_in(
        &self,
        from: ReplyFrom<'_>,
        report_id: &str,
        reply: &str,
        control: Option<&dyn AgentControl>,
        lang: Lang,
    ) -> CoreResult<BatchOutcome> {
        let report_id = crate::validate::cuid("reportId", report_id.trim())?;
        let reply = crate::validate::text("text", Some(reply), crate::validate::MAX_REPLY_CHARS)?;
        let Some(report) = self.h.store().get_report(&report_id).await? else {
            return Err(CoreError::NotFound("Report not found".into()));
        };
        let mut out = BatchOutcome {
            report_id: report.id.clone(),
            malformed: None,
            malformed_why: None,
            items: Vec::new(),
            text: String::new(),
        };
        let parts = match batch::parse(&reply) {
            Ok(p) => p,
            Err(m @ (Malformed::Empty | Malformed::NotNumbered(_))) => {
                out.malformed = Some(m.to_string());
                out.malformed_why = Some(m);
                return Ok(out.say(lang));
            }
        };
        let refs: BTreeMap<u32, &ItemRef> = report.items.iter().map(|i| (i.number, i)).collect();
        let questions: Vec<String> = report
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Question)
            .map(|i| i.ref_id.clone())
            .collect();
        let choices: BTreeMap<String, crate::store::Choices> = if questions.is_empty() {
            BTreeMap::new()
        } else {
            self.h
                .store()
                .choices_for(&questions)
                .await?
                .into_iter()
                .collect()
        };
        let items: BTreeMap<u32, Item> = report
            .items
            .iter()
            .map(|i| {
                let item = match i.kind {
                    ItemKind::Question => Item::Question {
                        choices: choices.get(&i.ref_id).cloned(),
                    },
                    ItemKind::Approval => Item::Approval,
                    ItemKind::Agent => Item::Agent,
                };
                (i.number, item)
            })
            .collect();
        for (number, planned) in batch::plan(&items, &parts) {
            let item = refs.get(&number).copied();
            let (taken, said) = match (planned, item) {
                (Err(refusal), _) => (false, Said::Refused(refusal)),
                (Ok(_), None) => (false, Said::Refused(Refusal::UnknownNumber(number))),
                (Ok(Answer::Later), Some(_)) => (true, Said::LeftWaiting),
                (Ok(answer), Some(item)) => {
                    match self.apply_one(from, item, answer, control).await {
                        Ok(done) => (true, done),
                        Err(why) => (false, why),
                    }
                }
            };
            out.items.push(ItemOutcome {
                number,
                taken,
                detail: said.to_string(),
                task_id: item.map(|i| i.task_id.clone()),
                said,
            });
        }
        tracing::info!(report_id = %out.report_id, items = out.items.len(),
            taken = out.items.iter().filter(|i| i.taken).count(), "report reply applied");
        Ok(out.say(lang))
    }

    async fn apply_one(
        &self,
        from: ReplyFrom<'_>,
        item: &ItemRef,
        answer: Answer,
        control: Option<&dyn AgentControl>,
    ) -> Result<Said, Said> {
        match (item.kind, answer) {
            (ItemKind::Question, Answer::Options { picked, text }) => {
                self.answer_question(from, item, &text, &picked).await
            }
            (ItemKind::Question, Answer::Text(text)) => {
                self.answer_question(from, item, &text, &[]).await
            }
            (ItemKind::Approval, Answer::Approve) => self.decide_item(from, item, true, None).await,
            (ItemKind::Approval, Answer::Deny { reason }) => {
                self.decide_item(from, item, false, reason).await
            }
            (ItemKind::Agent, a @ (Answer::Resume | Answer::Stop)) => {
                self.act_on_agent(item, matches!(a, Answer::Stop), control)
                    .await
            }
            _ => Err(Said::DoesNotFit),
        }
    }

    /// Exactly the question the report numbered, only while it is OPEN.
    async fn answer_question(
        &self,
        from: ReplyFrom<'_>,
        item: &ItemRef,
        text: &str,
        picked: &[usize],
    ) -> Result<Said, Said> {
        let now = Utc::now();
        let claim = self.h.deliveries().handoff_claim(now);
        let from_chat = from.by.kind() == PersonKind::GatewayOwner;
        let answered = self
            .h
            .store()
            .answer_with_options(
                &item.ref_id,
                text,
                picked,
                &ids::new_id(),
                claim.as_ref(),
                now,
                from_chat,
            )
            .await
            .map_err(|e| Said::Failed(format!("not answered: {e}")))?;
        match answered {
            Some(a) => {
                self.h
                    .asks()
                    .answered(a, None)
                    .await
                    .map_err(|e| Said::Failed(format!("answered, but: {e}")))?;
                Ok(Said::Answered {
                    text: text.to_string(),
                    again: false,
                })
            }
            None => {
                let msg = self
                    .h
                    .store()
                    .get_message(&item.ref_id)
                    .await
                    .map_err(|e| Said::Failed(e.to_string()))?;
                Err(match msg {
                    Some(m)
                        if m.state == MessageState::Answered
                            && m.reply_text.as_deref() == Some(text) =>
                    {
                        return Ok(Said::Answered {
                            text: text.to_string(),
                            again: true,
                        });
                    }
                    Some(m) if m.state == MessageState::Answered => Said::AlreadyAnswered {
                        answer: m.reply_text.unwrap_or_default(),
                    },
                    Some(m) => Said::NoLongerWaiting {
                        state: m.state.as_str().to_lowercase(),
                    },
                    None => Said::Gone,
                })
            }
        }
    }

    /// Exactly the approval the report numbered, only while it is PENDING.
    async fn decide_item(
        &self,
        from: ReplyFrom<'_>,
        item: &ItemRef,
        approve: bool,
        reason: Option<String>,
    ) -> Result<Said, Said> {
        let said = |again| {
            if approve {
                Said::Approved { again }
            } else {
                Said::Denied { again }
            }
        };
        match self
            .h
            .approvals()
            .decide_approval(from.by, &item.ref_id, approve, reason.as_deref(), from.via)
            .await
        {
            Ok(_) => Ok(said(false)),
            Err(CoreError::Conflict(message)) => {
                let now = self
                    .h
                    .approvals()
                    .approval(&item.ref_id)
                    .await
                    .map_err(|e| Said::Failed(e.to_string()))?;
                let same = (approve && now.state == ApprovalState::Approved)
                    || (!approve && now.state == ApprovalState::Denied);
                if same && now.decided_via.as_deref() == Some(from.via) {
                    Ok(said(true))
                } else if matches!(now.state, ApprovalState::Approved | ApprovalState::Denied) {
                    Err(Said::AlreadyDecided {
                        state: now.state.as_str().to_lowercase(),
                        by: now.decided_by.unwrap_or_else(|| "?".into()),
                    })
                } else {
                    Err(Said::Failed(message))
                }
            }
            Err(other) => Err(Said::Failed(other.to_string())),
        }
    }

    /// The agent item's execution, only while its agent still needs a
    /// person (the same rule as the item).
    async fn act_on_agent(
        &self,
        item: &ItemRef,
        stop: bool,
        control: Option<&dyn AgentControl>,
    ) -> Result<Said, Said> {
        let view = self
            .h
            .tasks()
            .get_task(&item.task_id)
            .await
            .map_err(|e| Said::Failed(e.to_string()))?;
        let still =
            super::agents::needs_person(&view).is_some_and(|n| n.execution_id == item.ref_id);
        if !still {
            return Err(Said::AgentActedUpon);
        }
        let Some(control) = control else {
            return Err(Said::OnItsPage {
                link: super::model::task_link(&item.task_id),
            });
        };
        let action = match (
            stop,
            view.execution.as_ref().and_then(|e| e.session_id.as_ref()),
        ) {
            (true, _) => Action::Stop,
            (false, Some(_)) => Action::Resume,
            (false, None) => Action::Restart,
        };
        self.h
            .tasks()
            .control_task(control, &item.task_id, action, None)
            .await
            .map_err(|e| Said::Failed(e.to_string()))?;
        Ok(match action {
            Action::Stop => Said::Stopped,
            Action::Resume => Said::Resumed,
            _ => Said::Restarted,
        })
    }
}

impl Reports<'_> {
    /// The report a chat message replies to — the reply names a platform
    /// message Harness sent as a part of a report — and the language of the
    /// notify target it went to (English when none matches).
    pub(crate) async fn report_replied_to(
        &self,
        c: &crate::gateway::sessions::Conversation,
    ) -> CoreResult<Option<(String, Lang)>> {
        let Some(pmid) = c.reply_to_message_id.as_deref() else {
            return Ok(None);
        };
        let Some(mapping) = self
            .h
            .gateway()
            .delivery_mapping(&c.gateway, &c.platform, &c.chat_id, pmid)
            .await?
        else {
            return Ok(None);
        };
        let Some(outbound_id) = mapping.outbound_id.as_deref() else {
            return Ok(None);
        };
        let Some(row) = self.h.store().get_outbound(outbound_id).await? else {
            return Ok(None);
        };
        let Some(report_id) = crate::store::report_of_key(&row.dedup_key) else {
            return Ok(None);
        };
        let targets = self.h.settings().notify_targets().await?;
        let lang = crate::quiet_hours::target_of(&targets, &row)
            .map(|t| t.lang())
            .unwrap_or_default();
        Ok(Some((report_id.to_string(), lang)))
    }

    /// The gateway tools' answer to a reply to a report: what was taken and
    /// what not, with the answer back for the person in `lang` (the
    /// report's chat's language).
    pub(crate) async fn report_reply_json(
        &self,
        report_id: &str,
        text: &str,
        sender: Option<&str>,
        lang: Lang,
    ) -> CoreResult<serde_json::Value> {
        let by = Person::gateway_owner();
        let outcome = self
            .answer_report_in(
                ReplyFrom {
                    by: &by,
                    sender,
                    via: "report",
                },
                report_id,
                text,
                None,
                lang,
            )
            .await?;
        let mode = if outcome.malformed.is_some() {
            "report_reply_malformed"
        } else {
            "report_answered"
        };
        Ok(serde_json::json!({
            "ok": outcome.malformed.is_none(), "mode": mode, "reportId": outcome.report_id,
            "items": outcome.items, "malformed": outcome.malformed,
            "acknowledgement": outcome.text,
            "instructions": "The reply answered the report's numbered items as listed. Tell the \
                person the acknowledgement as it is; do not answer anything else.",
        }))
    }
}
