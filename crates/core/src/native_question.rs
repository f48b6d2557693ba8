//! Native question menus become Harness questions: the input of
//! Claude Code's `AskUserQuestion` (`{questions: [{question, header,
//! multiSelect, options: [{label, description}]}]}`) or Codex's
//! `request_user_input` (`{questions: [{id, header, question, isOther,
//! isSecret, options?: [{label, description}]}]}`) as the body of an ask.
//!
//! One ask carries one set of options: the first question's options are
//! the ask's options; further questions (Claude allows up to four) are
//! written into the question text with their options, so nothing is lost.

use serde_json::{Map, Value, json};

use crate::asks::Asks;
use crate::options::{MAX_LABEL_CHARS, MAX_OPTIONS};

/// The ask a native question tool call stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeQuestion {
    pub question: String,
    /// `{options, multiSelect}` as `POST /api/internal/harness/ask` takes them.
    pub choices: Map<String, Value>,
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn options_of(q: &Value) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for o in q
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (label, description) = match o {
            Value::String(s) => (text(Some(&Value::String(s.clone()))), None),
            _ => (text(o.get("label")), text(o.get("description"))),
        };
        let Some(label) = label else { continue };
        let label: String = label.chars().take(MAX_LABEL_CHARS).collect();
        if out
            .iter()
            .any(|(l, _)| l.to_lowercase() == label.to_lowercase())
        {
            continue;
        }
        out.push((label, description));
    }
    out
}

fn heading(q: &Value) -> String {
    let question = text(q.get("question")).unwrap_or_default();
    match text(q.get("header")) {
        Some(h) if !question.is_empty() => format!("[{h}] {question}"),
        Some(h) => h,
        None => question,
    }
}

/// The ask for a native question tool call; `None` when the input holds no
/// question (the hook then keeps its plain deny).
pub fn from_tool_input(tool_name: &str, input: &Value) -> Option<NativeQuestion> {
    if !crate::ladder::BLOCKED_TOOLS.contains(&tool_name) {
        return None;
    }
    let questions: Vec<&Value> = input
        .get("questions")
        .and_then(Value::as_array)
        .map(|qs| qs.iter().collect())
        .unwrap_or_default();
    let first = *questions.first()?;
    let mut question = heading(first);
    if question.is_empty() {
        return None;
    }
    let mut options = options_of(first);
    // More than the ask can carry stays in the text.
    let overflow: Vec<_> = options.split_off(options.len().min(MAX_OPTIONS));
    if !overflow.is_empty() {
        question.push_str("\n\nMore options:");
        for (label, d) in &overflow {
            question.push_str(&format!("\n- {label}"));
            if let Some(d) = d {
                question.push_str(&format!(" — {d}"));
            }
        }
    }
    for (n, q) in questions.iter().enumerate().skip(1) {
        question.push_str(&format!("\n\nQuestion {}: {}", n + 1, heading(q)));
        if q.get("multiSelect").and_then(Value::as_bool) == Some(true) {
            question.push_str(" (several may be chosen)");
        }
        for (i, (label, d)) in options_of(q).iter().enumerate() {
            question.push_str(&format!("\n{}. {label}", i + 1));
            if let Some(d) = d {
                question.push_str(&format!(" — {d}"));
            }
        }
    }
    let mut choices = Map::new();
    if !options.is_empty() {
        choices.insert(
            "options".into(),
            Value::Array(
                options
                    .iter()
                    .map(|(label, d)| match d {
                        Some(d) => json!({"label": label, "description": d}),
                        None => json!({"label": label}),
                    })
                    .collect(),
            ),
        );
        let multi = first.get("multiSelect").and_then(Value::as_bool) == Some(true);
        if multi && options.len() >= 2 {
            choices.insert("multiSelect".into(), Value::Bool(true));
        }
    }
    Some(NativeQuestion { question, choices })
}

/// The deny reason once the question was recorded as ask `request_id`.
pub fn recorded_reason(tool_name: &str, request_id: &str, has_parent: bool) -> String {
    let (why, who) = if has_parent {
        (
            "this is a derived child task",
            "your parent task or the human",
        )
    } else {
        ("this task runs unattended", "the human")
    };
    format!(
        "Harness: {why} — nobody is watching this terminal, so the {tool_name} menu was not shown here. \
         Harness has ALREADY recorded your question and its options as a Harness question \
         (request {request_id}) and it is on its way to {who}. Do not ask again and do not call \
         ask_human: END YOUR TURN now and wait — the answer will be typed into this terminal."
    )
}

/// The dedup key of a derived child's native question in its parent's
/// inbox: one event per recorded ask.
pub fn parent_event_key(child_task_id: &str, request_id: &str) -> String {
    format!(
        "child-question:{}:{child_task_id}:{request_id}",
        crate::inbox::EventKind::ChildDecisionRequired.as_str()
    )
}

impl Asks<'_> {
    /// A native question menu denied by the hook (`tool_name`), recorded as
    /// an ask with its options. On a derived task it is also a HIGH
    /// `CHILD_DECISION_REQUIRED` event in the parent's inbox — in the ask's
    /// transaction, under [`parent_event_key`] — so the parent sees the
    /// question and its options in its next review batch; on any other task
    /// it is exactly `ask_with`.
    pub async fn ask_native(
        &self,
        task_id: &str,
        tool_name: &str,
        question: Option<&str>,
        choices: &crate::options::ChoicesInput,
    ) -> crate::CoreResult<crate::messaging::AskOutcome> {
        let view = self.h.tasks().get_task(task_id).await?;
        if view.task.parent_task_id.is_none() {
            return self.ask_with(task_id, question, choices).await;
        }
        let prepared = self
            .prepare_native_ask(&view.task, tool_name, question, choices)
            .await?;
        let Some(event) = prepared.event else {
            return Err(crate::CoreError::Conflict("the task has no parent".into()));
        };
        let (recorded, added) = self
            .h
            .store()
            .record_ask_for_parent(prepared.ask, prepared.choices, event)
            .await
            .map_err(crate::messaging::task_missing)?;
        self.native_asked(&view.task.id, prepared.parent, recorded, added)
            .await
    }

    /// The validated ask of a native question of `task` (rate-checked), with
    /// the agent's screen as its evidence (`crate::evidence`), and on a
    /// derived task its parent's inbox event (see [`Self::ask_native`]).
    pub(crate) async fn prepare_native_ask(
        &self,
        task: &crate::model::Task,
        tool_name: &str,
        question: Option<&str>,
        choices: &crate::options::ChoicesInput,
    ) -> crate::CoreResult<PreparedAsk> {
        use crate::{ids, inbox, store::NewAsk, validate};
        let question = validate::text("question", question, validate::MAX_QUESTION_CHARS)?;
        let tool: String = tool_name.trim().chars().take(64).collect();
        let now = chrono::Utc::now();
        let choices = crate::options::validate(choices, now, self.h.config().pending_ttl)?;
        self.h
            .check_rate(&task.id, crate::rate_limit::RateAction::Ask)?;
        let ask = NewAsk {
            id: ids::new_id(),
            task_id: task.id.clone(),
            question: question.clone(),
            now,
            idempotency_key: None,
            // Like an ask's: the agent's screen, bounded and redacted, stored
            // with it (an approval's too: docs/evidence.md).
            evidence: self.evidence_now(&task.id).await,
        };
        let Some(parent_id) = task.parent_task_id.clone() else {
            return Ok(PreparedAsk {
                ask,
                choices,
                event: None,
                parent: None,
            });
        };
        let mut payload = json!({
            "childTaskId": task.id, "childTitle": task.title,
            "question": question, "requestId": ask.id, "nativeTool": tool,
        });
        if let Some(c) = &choices
            && let Ok(Value::Object(fields)) = serde_json::to_value(c)
        {
            // options, multiSelect, default, deadlineAt, urgency.
            for (k, v) in fields {
                payload[k] = v;
            }
        }
        let event = inbox::NewEvent {
            id: ids::new_id(),
            parent_task_id: parent_id.clone(),
            source_task_id: task.id.clone(),
            // The store takes the ask's own execution.
            execution_id: None,
            kind: inbox::EventKind::ChildDecisionRequired,
            priority: inbox::Priority::High,
            dedup_key: parent_event_key(&task.id, &ask.id),
            execution_review_key: None,
            fallback: false,
            payload,
            now,
        };
        Ok(PreparedAsk {
            ask,
            choices,
            event: Some(event),
            parent: Some(parent_id),
        })
    }

    /// After a native ask committed: the parent's event published, the ask
    /// published as [`Self::asked`] does.
    pub(crate) async fn native_asked(
        &self,
        task_id: &str,
        parent: Option<String>,
        recorded: crate::store::AskRecorded,
        added: bool,
    ) -> crate::CoreResult<crate::messaging::AskOutcome> {
        if added && let Some(parent) = parent {
            tracing::info!(request_id = %recorded.message.id, parent_task_id = %parent,
                "native question of a derived task queued for its parent");
            self.h
                .publish(crate::events::HarnessEvent::TaskChanged { task_id: parent });
        }
        self.asked(task_id, recorded).await
    }
}

/// A native question ready to record: the ask, its validated choices, and
/// (derived task) the parent's inbox event.
pub(crate) struct PreparedAsk {
    pub ask: crate::store::NewAsk,
    pub choices: Option<crate::options::Choices>,
    pub event: Option<crate::inbox::NewEvent>,
    pub parent: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_single_question_maps_options_and_multiselect() {
        let input = json!({"questions": [{"question": "Which DB?", "header": "DB", "multiSelect": true,
            "options": [{"label": "Postgres", "description": "server"}, {"label": "SQLite", "description": "file"}]}]});
        let q = from_tool_input("AskUserQuestion", &input).unwrap();
        assert_eq!(q.question, "[DB] Which DB?");
        assert_eq!(
            q.choices["options"][0],
            json!({"label": "Postgres", "description": "server"})
        );
        assert_eq!(q.choices["multiSelect"], json!(true));
    }

    #[test]
    fn codex_question_without_options_is_free_text() {
        let input = json!({"questions": [{"id": "q1", "header": "Name", "question": "Project name?", "isOther": false, "isSecret": false}]});
        let q = from_tool_input("request_user_input", &input).unwrap();
        assert_eq!(q.question, "[Name] Project name?");
        assert!(q.choices.is_empty());
    }

    #[test]
    fn further_questions_and_surplus_options_stay_in_the_text() {
        let many: Vec<_> = (0..10).map(|i| json!({"label": format!("o{i}")})).collect();
        let input = json!({"questions": [
            {"question": "First?", "options": many},
            {"question": "Second?", "header": "B", "options": [{"label": "x", "description": "ex"}]}
        ]});
        let q = from_tool_input("AskUserQuestion", &input).unwrap();
        assert_eq!(q.choices["options"].as_array().unwrap().len(), 8);
        assert!(
            q.question.contains("More options:\n- o8\n- o9"),
            "{}",
            q.question
        );
        assert!(
            q.question.contains("Question 2: [B] Second?\n1. x — ex"),
            "{}",
            q.question
        );
    }

    #[test]
    fn other_tools_and_empty_inputs_are_not_questions() {
        assert!(from_tool_input("Bash", &json!({"questions": [{"question": "x"}]})).is_none());
        assert!(from_tool_input("AskUserQuestion", &json!({})).is_none());
        assert!(from_tool_input("AskUserQuestion", &json!({"questions": [{}]})).is_none());
    }
}
