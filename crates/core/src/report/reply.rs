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

use std::collections::BTreeMap;

use chrono::Utc;
use serde::Serialize;

use super::batch::{self, Answer, Item, Malformed};
use crate::{
    CoreError, CoreResult, Harness,
    auth::{Person, PersonKind},
    control::{Action, AgentControl},
    ids,
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
    /// What was applied, or why not.
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
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
    pub items: Vec<ItemOutcome>,
    /// The answer back, in words.
    pub text: String,
}

impl BatchOutcome {
    fn say(mut self) -> Self {
        self.text = answer_back(&self);
        self
    }
}

/// The answer back: which items were taken, which not and why.
pub fn answer_back(o: &BatchOutcome) -> String {
    if let Some(why) = &o.malformed {
        return format!("Nothing was answered: {why}.");
    }
    let line = |i: &ItemOutcome| format!("{}: {}", i.number, i.detail);
    let taken: Vec<String> = o.items.iter().filter(|i| i.taken).map(line).collect();
    let refused: Vec<String> = o.items.iter().filter(|i| !i.taken).map(line).collect();
    let mut out = Vec::new();
    if !taken.is_empty() {
        out.push(format!("Taken ({}):\n{}", taken.len(), taken.join("\n")));
    }
    if !refused.is_empty() {
        out.push(format!(
            "Not taken ({}):\n{}",
            refused.len(),
            refused.join("\n")
        ));
    }
    out.join("\n\n")
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

impl Harness {
    /// Apply `reply` to kept report `report_id`. `control`: how an agent
    /// item is resumed or stopped (without it such an item is refused with
    /// the way to do it on its page).
    pub async fn answer_report(
        &self,
        from: ReplyFrom<'_>,
        report_id: &str,
        reply: &str,
        control: Option<&dyn AgentControl>,
    ) -> CoreResult<BatchOutcome> {
        let report_id = crate::validate::cuid("reportId", report_id.trim())?;
        let reply = crate::validate::text("text", Some(reply), crate::validate::MAX_REPLY_CHARS)?;
        let Some(report) = self.store().get_report(&report_id).await? else {
            return Err(CoreError::NotFound("Report not found".into()));
        };
        let mut out = BatchOutcome {
            report_id: report.id.clone(),
            malformed: None,
            items: Vec::new(),
            text: String::new(),
        };
        let parts = match batch::parse(&reply) {
            Ok(p) => p,
            Err(m @ (Malformed::Empty | Malformed::NotNumbered(_))) => {
                out.malformed = Some(m.to_string());
                return Ok(out.say());
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
            self.store()
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
            let (taken, detail) = match (planned, item) {
                (Err(refusal), _) => (false, refusal.to_string()),
                (Ok(_), None) => (false, batch::Refusal::UnknownNumber(number).to_string()),
                (Ok(Answer::Later), Some(_)) => (true, "left waiting".to_string()),
                (Ok(answer), Some(item)) => {
                    match self.apply_one(from, item, answer, control).await {
                        Ok(done) => (true, done),
                        Err(Refused(why)) => (false, why),
                    }
                }
            };
            out.items.push(ItemOutcome {
                number,
                taken,
                detail,
                task_id: item.map(|i| i.task_id.clone()),
            });
        }
        tracing::info!(report_id = %out.report_id, items = out.items.len(),
            taken = out.items.iter().filter(|i| i.taken).count(), "report reply applied");
        Ok(out.say())
    }

    async fn apply_one(
        &self,
        from: ReplyFrom<'_>,
        item: &ItemRef,
        answer: Answer,
        control: Option<&dyn AgentControl>,
    ) -> Result<String, Refused> {
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
            _ => Err(Refused("that answer does not fit this item".into())),
        }
    }

    /// Exactly the question the report numbered, only while it is OPEN.
    async fn answer_question(
        &self,
        from: ReplyFrom<'_>,
        item: &ItemRef,
        text: &str,
        picked: &[usize],
    ) -> Result<String, Refused> {
        let now = Utc::now();
        let claim = self.handoff_claim(now);
        let from_chat = from.by.kind() == PersonKind::GatewayOwner;
        let answered = self
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
            .map_err(|e| Refused(format!("not answered: {e}")))?;
        match answered {
            Some(a) => {
                self.answered(a, None)
                    .await
                    .map_err(|e| Refused(format!("answered, but: {e}")))?;
                Ok(format!("answered “{text}”"))
            }
            None => {
                let msg = self
                    .store()
                    .get_message(&item.ref_id)
                    .await
                    .map_err(|e| Refused(e.to_string()))?;
                Err(match msg {
                    Some(m)
                        if m.state == MessageState::Answered
                            && m.reply_text.as_deref() == Some(text) =>
                    {
                        return Ok(format!("answered “{text}” (already, with this answer)"));
                    }
                    Some(m) if m.state == MessageState::Answered => Refused(format!(
                        "already answered (“{}”)",
                        m.reply_text.unwrap_or_default()
                    )),
                    Some(m) => Refused(format!(
                        "no longer waiting ({})",
                        m.state.as_str().to_lowercase()
                    )),
                    None => Refused("no longer exists".into()),
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
    ) -> Result<String, Refused> {
        let word = if approve { "approved" } else { "denied" };
        match self
            .decide_approval(from.by, &item.ref_id, approve, reason.as_deref(), from.via)
            .await
        {
            Ok(_) => Ok(word.to_string()),
            Err(CoreError::Conflict(message)) => {
                let now = self
                    .approval(&item.ref_id)
                    .await
                    .map_err(|e| Refused(e.to_string()))?;
                let same = (approve && now.state == ApprovalState::Approved)
                    || (!approve && now.state == ApprovalState::Denied);
                if same && now.decided_via.as_deref() == Some(from.via) {
                    Ok(format!("{word} (already, with this answer)"))
                } else if matches!(now.state, ApprovalState::Approved | ApprovalState::Denied) {
                    Err(Refused(format!(
                        "already answered ({} by {})",
                        now.state.as_str().to_lowercase(),
                        now.decided_by.as_deref().unwrap_or("?")
                    )))
                } else {
                    Err(Refused(message))
                }
            }
            Err(other) => Err(Refused(other.to_string())),
        }
    }

    /// The agent item's execution, only while its agent still needs a
    /// person (the same rule as the item).
    async fn act_on_agent(
        &self,
        item: &ItemRef,
        stop: bool,
        control: Option<&dyn AgentControl>,
    ) -> Result<String, Refused> {
        let view = self
            .get_task(&item.task_id)
            .await
            .map_err(|e| Refused(e.to_string()))?;
        let still =
            super::agents::needs_person(&view).is_some_and(|n| n.execution_id == item.ref_id);
        if !still {
            return Err(Refused(
                "already acted upon (the agent was started again, stopped or its task closed)"
                    .into(),
            ));
        }
        let Some(control) = control else {
            return Err(Refused(format!(
                "resume or stop it on its page: {}",
                super::model::task_link(&item.task_id)
            )));
        };
        let action = match (
            stop,
            view.execution.as_ref().and_then(|e| e.session_id.as_ref()),
        ) {
            (true, _) => Action::Stop,
            (false, Some(_)) => Action::Resume,
            (false, None) => Action::Restart,
        };
        self.control_task(control, &item.task_id, action, None)
            .await
            .map_err(|e| Refused(e.to_string()))?;
        Ok(match action {
            Action::Stop => "stopped",
            Action::Resume => "resumed",
            _ => "restarted",
        }
        .to_string())
    }
}

impl Harness {
    /// The report a chat message replies to: the reply names a platform
    /// message Harness sent as a part of a report.
    pub(crate) async fn report_replied_to(
        &self,
        c: &crate::gateway::sessions::Conversation,
    ) -> CoreResult<Option<String>> {
        let Some(pmid) = c.reply_to_message_id.as_deref() else {
            return Ok(None);
        };
        let Some(mapping) = self
            .delivery_mapping(&c.gateway, &c.platform, &c.chat_id, pmid)
            .await?
        else {
            return Ok(None);
        };
        let Some(outbound_id) = mapping.outbound_id.as_deref() else {
            return Ok(None);
        };
        let Some(row) = self.store().get_outbound(outbound_id).await? else {
            return Ok(None);
        };
        Ok(crate::store::report_of_key(&row.dedup_key).map(str::to_string))
    }

    /// The gateway tools' answer to a reply to a report: what was taken and
    /// what not, with the answer back for the person.
    pub(crate) async fn report_reply_json(
        &self,
        report_id: &str,
        text: &str,
        sender: Option<&str>,
    ) -> CoreResult<serde_json::Value> {
        let by = Person::gateway_owner();
        let outcome = self
            .answer_report(
                ReplyFrom {
                    by: &by,
                    sender,
                    via: "report",
                },
                report_id,
                text,
                None,
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

/// Why one item was not applied.
struct Refused(String);
