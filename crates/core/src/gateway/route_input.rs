//! The input of `route_gateway_message` and `route_gateway_query`
//! (docs/tower-messaging.md §4.4, docs/tower-messaging.md §4.5, docs/tower-messaging.md §5.7, docs/tower-messaging.md §5.9) and its checks: every field
//! in the schema's order, a 400 naming the first bad one, before anything
//! is read or written.

use serde::Deserialize;

use super::{
    context::{MAX_ID_CHARS, MAX_PLATFORM_CHARS, MAX_QUOTED_CHARS, MAX_TASK_ID_CHARS},
    context::{gateway_name, required, text},
    ids,
    sessions::Conversation,
};
use crate::{CoreError, CoreResult, store::InboundIntent, validate};

pub const MAX_CONTENT_CHARS: usize = 16_000;
pub const MAX_CONTENT_BYTES: usize = 64_000;
pub const MAX_CHAT_NAME_CHARS: usize = 160;
pub const MAX_QUESTION_CHARS: usize = 8_000;

/// `route_gateway_message` (REST body / MCP arguments).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteInput {
    pub gateway: Option<String>,
    pub platform: Option<String>,
    pub chat_id: Option<String>,
    /// This message's platform id (the dedup identity).
    pub platform_message_id: Option<String>,
    pub sender_id: Option<String>,
    /// Display only, never identity.
    pub chat_name: Option<String>,
    pub thread_id: Option<String>,
    pub root_message_id: Option<String>,
    pub reply_to_message_id: Option<String>,
    pub quoted_text: Option<String>,
    pub task_id: Option<String>,
    /// A project id, name or words identifying it.
    pub project: Option<String>,
    /// `TOWER`, `PROJECT_DISCUSSION`, `PROJECT_WORK` (`DIRECT`: refused).
    pub intent: Option<String>,
    pub content: Option<String>,
    /// `CONTINUE`, `NEW` or `CLOSE`.
    pub session_action: Option<String>,
    /// Only for an explicit "create a new task / start new work".
    pub start_new_work: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionAction {
    Continue,
    New,
    Close,
}

/// The checked input.
#[derive(Debug, Clone)]
pub struct Route {
    pub conv: Conversation,
    pub quoted_text: Option<String>,
    pub task_id: Option<String>,
    pub project: Option<String>,
    pub intent: InboundIntent,
    pub content: String,
    pub action: SessionAction,
    pub start_new_work: bool,
}

impl RouteInput {
    pub fn check(&self) -> CoreResult<Route> {
        let gateway = gateway_name(self.gateway.as_deref())?;
        let platform = ids::normalize(&required(
            self.platform.as_deref(),
            "platform",
            MAX_PLATFORM_CHARS,
        )?);
        let chat_id = required(self.chat_id.as_deref(), "chatId", MAX_ID_CHARS)?;
        let platform_message_id = required(
            self.platform_message_id.as_deref(),
            "platformMessageId",
            MAX_ID_CHARS,
        )?;
        let sender_id = text(self.sender_id.as_deref(), "senderId", MAX_ID_CHARS)?;
        text(self.chat_name.as_deref(), "chatName", MAX_CHAT_NAME_CHARS)?;
        let thread_id = text(self.thread_id.as_deref(), "threadId", MAX_ID_CHARS)?;
        let root_message_id = text(
            self.root_message_id.as_deref(),
            "rootMessageId",
            MAX_ID_CHARS,
        )?;
        let reply_to_message_id = text(
            self.reply_to_message_id.as_deref(),
            "replyToMessageId",
            MAX_ID_CHARS,
        )?;
        let quoted_text = text(self.quoted_text.as_deref(), "quotedText", MAX_QUOTED_CHARS)?;
        let task_id = text(self.task_id.as_deref(), "taskId", MAX_TASK_ID_CHARS)?
            .map(|t| validate::task_id(Some(&t.to_ascii_lowercase())))
            .transpose()?;
        let project = text(self.project.as_deref(), "project", MAX_ID_CHARS)?;
        let intent = match self.intent.as_deref().map(str::trim) {
            None | Some("") => return Err(CoreError::invalid("intent", "intent required")),
            Some(i) => InboundIntent::parse(&i.to_ascii_uppercase()).ok_or_else(|| {
                CoreError::invalid(
                    "intent",
                    "intent must be TOWER, PROJECT_DISCUSSION or PROJECT_WORK",
                )
            })?,
        };
        let content = required(self.content.as_deref(), "content", MAX_CONTENT_CHARS)?;
        if content.len() > MAX_CONTENT_BYTES {
            return Err(CoreError::invalid(
                "content",
                format!("content: at most {MAX_CONTENT_BYTES} bytes"),
            ));
        }
        let action = match self
            .session_action
            .as_deref()
            .map(|a| a.trim().to_ascii_uppercase())
            .as_deref()
        {
            None | Some("") | Some("CONTINUE") => SessionAction::Continue,
            Some("NEW") => SessionAction::New,
            Some("CLOSE") => SessionAction::Close,
            Some(_) => {
                return Err(CoreError::invalid(
                    "sessionAction",
                    "sessionAction must be CONTINUE, NEW or CLOSE",
                ));
            }
        };
        let chat_id = ids::normalize_chat_id(&platform, &chat_id);
        let sender_id = sender_id.map(|s| ids::normalize_sender_id(&platform, &s));
        Ok(Route {
            conv: Conversation {
                gateway,
                platform,
                chat_id,
                sender_id,
                platform_message_id,
                thread_id,
                root_message_id,
                reply_to_message_id,
            },
            quoted_text,
            task_id,
            project,
            intent,
            content,
            action,
            start_new_work: self.start_new_work.unwrap_or(false),
        })
    }
}

/// `route_gateway_query` (REST body / MCP arguments).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryInput {
    pub gateway: Option<String>,
    pub platform: Option<String>,
    pub chat_id: Option<String>,
    pub sender_id: Option<String>,
    pub project: Option<String>,
    pub question: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Query {
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub sender_id: Option<String>,
    pub project: Option<String>,
    pub question: String,
}

impl QueryInput {
    pub fn check(&self) -> CoreResult<Query> {
        let gateway = gateway_name(self.gateway.as_deref())?;
        let platform = ids::normalize(&required(
            self.platform.as_deref(),
            "platform",
            MAX_PLATFORM_CHARS,
        )?);
        let chat_id = required(self.chat_id.as_deref(), "chatId", MAX_ID_CHARS)?;
        let sender_id = text(self.sender_id.as_deref(), "senderId", MAX_ID_CHARS)?;
        let project = text(self.project.as_deref(), "project", MAX_ID_CHARS)?;
        let question = required(self.question.as_deref(), "question", MAX_QUESTION_CHARS)?;
        Ok(Query {
            chat_id: ids::normalize_chat_id(&platform, &chat_id),
            gateway,
            platform,
            sender_id,
            project,
            question,
        })
    }
}

/// An explicit request for new work (docs/tower-messaging.md §8.2 step 7): "create … new task",
/// "start … new work", 创建/新建 … 新任务, 开始 … 新工作.
pub fn asks_for_new_work(content: &str) -> bool {
    let text: Vec<char> = content.to_lowercase().chars().collect();
    near(&text, &["创建", "新建"], "新任务", 8)
        || near(&text, &["开始"], "新工作", 8)
        || near(&text, &["create"], "new task", 16)
        || near(&text, &["start"], "new work", 16)
}

/// Whether one of `firsts` is followed by `then` with at most `gap`
/// characters between them.
fn near(text: &[char], firsts: &[&str], then: &str, gap: usize) -> bool {
    let then: Vec<char> = then.chars().collect();
    let find = |from: usize, pat: &[char]| -> Vec<usize> {
        (from..text.len().saturating_sub(pat.len() - 1).max(from))
            .filter(|&i| text.get(i..i + pat.len()) == Some(pat))
            .collect()
    };
    firsts.iter().any(|first| {
        let first: Vec<char> = first.chars().collect();
        find(0, &first).into_iter().any(|at| {
            let after = at + first.len();
            find(after, &then).into_iter().any(|t| t - after <= gap)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_work_is_recognised() {
        assert!(asks_for_new_work("Please create a new task for the login"));
        assert!(asks_for_new_work("START some new work"));
        assert!(asks_for_new_work("帮我创建一个新任务"));
        assert!(asks_for_new_work("开始新工作"));
        assert!(!asks_for_new_work("continue the task"));
        assert!(!asks_for_new_work(
            "create the report and much later, maybe, a new task"
        ));
    }

    #[test]
    fn fields_are_named() {
        let ok = RouteInput {
            gateway: Some("openclaw".into()),
            platform: Some("Telegram".into()),
            chat_id: Some("telegram:-100".into()),
            platform_message_id: Some("m1".into()),
            intent: Some("TOWER".into()),
            content: Some("status?".into()),
            sender_id: Some("user:42".into()),
            ..Default::default()
        };
        let r = ok.check().unwrap();
        assert_eq!(
            (r.conv.platform.as_str(), r.conv.chat_id.as_str()),
            ("telegram", "-100")
        );
        assert_eq!(r.conv.sender_id.as_deref(), Some("42"));
        for (field, bad) in [
            (
                "intent",
                RouteInput {
                    intent: Some("CHAT".into()),
                    ..ok.clone()
                },
            ),
            (
                "content",
                RouteInput {
                    content: None,
                    ..ok.clone()
                },
            ),
            (
                "sessionAction",
                RouteInput {
                    session_action: Some("x".into()),
                    ..ok.clone()
                },
            ),
            (
                "platformMessageId",
                RouteInput {
                    platform_message_id: Some(" ".into()),
                    ..ok.clone()
                },
            ),
            (
                "chatName",
                RouteInput {
                    chat_name: Some("x".repeat(161)),
                    ..ok.clone()
                },
            ),
        ] {
            match bad.check() {
                Err(CoreError::Invalid { field: Some(f), .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}
