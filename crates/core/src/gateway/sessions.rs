//! Gateway sessions (docs/tower-messaging.md §2.4, docs/tower-messaging.md §3.5, docs/tower-messaging.md §8.5): a
//! chat thread or root message — else, in a threadless chat, a chat and
//! its sender — bound to a project and its Workbench. The binding key is
//! the identity of a session; a threadless session is its sender's recent
//! project context for [`RECENT`] (7 days) after its last activity.

use chrono::{DateTime, Duration, Utc};
use sha2::{Digest, Sha256};

use crate::store::{NewSession, SessionLookup};

/// How long a threadless session stays its sender's recent project.
pub fn recent() -> Duration {
    Duration::days(7)
}

/// What a routed message says about its conversation (normalised).
#[derive(Debug, Clone)]
pub struct Conversation {
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub sender_id: Option<String>,
    pub platform_message_id: String,
    pub thread_id: Option<String>,
    pub root_message_id: Option<String>,
    pub reply_to_message_id: Option<String>,
}

impl Conversation {
    /// The session anchor: `thread:<thread | root>`, else
    /// `sender:<sender>`, else `message:<platform message id>`.
    pub fn anchor(&self) -> String {
        if let Some(t) = self.thread_id.as_ref().or(self.root_message_id.as_ref()) {
            format!("thread:{t}")
        } else if let Some(s) = &self.sender_id {
            format!("sender:{s}")
        } else {
            format!("message:{}", self.platform_message_id)
        }
    }

    /// `gateway-session:` + sha256 hex of gateway, platform, chat, anchor,
    /// `WORKBENCH` and the project, one per line.
    pub fn binding_key(&self, project_id: &str) -> String {
        let text = format!(
            "{}\n{}\n{}\n{}\nWORKBENCH\n{project_id}",
            self.gateway,
            self.platform,
            self.chat_id,
            self.anchor()
        );
        format!(
            "gateway-session:{}",
            hex::encode(Sha256::digest(text.as_bytes()))
        )
    }

    /// The thread anchors a bound session is found by (reply-to, thread,
    /// root message).
    pub fn anchors(&self) -> Vec<String> {
        [
            &self.reply_to_message_id,
            &self.thread_id,
            &self.root_message_id,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
    }

    /// The lookup of this conversation's own session: by its thread
    /// anchors; threadless, by chat and sender within [`recent`].
    pub fn own_session(&self, now: DateTime<Utc>) -> Option<SessionLookup> {
        let anchors = self.anchors();
        if !anchors.is_empty() {
            return Some(SessionLookup::Anchored {
                gateway: self.gateway.clone(),
                platform: self.platform.clone(),
                chat_id: self.chat_id.clone(),
                anchors,
            });
        }
        self.sender_id
            .as_ref()
            .map(|sender| SessionLookup::ChatSender {
                gateway: self.gateway.clone(),
                platform: self.platform.clone(),
                chat_id: self.chat_id.clone(),
                sender_id: sender.clone(),
                since: now - recent(),
            })
    }

    /// The session to bind for `project_id` and its Workbench.
    pub fn new_session(&self, id: String, project_id: &str, workbench: &str) -> NewSession {
        NewSession {
            id,
            binding_key: self.binding_key(project_id),
            gateway: self.gateway.clone(),
            platform: self.platform.clone(),
            chat_id: self.chat_id.clone(),
            thread_id: self.thread_id.clone(),
            root_message_id: self
                .root_message_id
                .clone()
                .or_else(|| Some(self.platform_message_id.clone())),
            sender_id: self.sender_id.clone(),
            project_id: project_id.to_string(),
            workbench_task_id: workbench.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(thread: Option<&str>, sender: Option<&str>) -> Conversation {
        Conversation {
            gateway: "openclaw".into(),
            platform: "telegram".into(),
            chat_id: "-100".into(),
            sender_id: sender.map(str::to_string),
            platform_message_id: "m1".into(),
            thread_id: thread.map(str::to_string),
            root_message_id: None,
            reply_to_message_id: None,
        }
    }

    #[test]
    fn one_session_per_thread_else_per_sender() {
        let a = conv(None, Some("42"));
        let mut b = conv(None, Some("42"));
        b.platform_message_id = "m2".into();
        assert_eq!(
            a.binding_key("p"),
            b.binding_key("p"),
            "same chat and sender"
        );
        assert_ne!(a.binding_key("p"), conv(None, Some("7")).binding_key("p"));
        assert_ne!(a.binding_key("p"), a.binding_key("q"), "another project");
        assert_eq!(conv(Some("t"), Some("42")).anchor(), "thread:t");
        assert_eq!(
            conv(Some("t"), Some("42")).binding_key("p"),
            conv(Some("t"), Some("7")).binding_key("p"),
            "a thread is one session whoever writes"
        );
        assert_eq!(conv(None, None).anchor(), "message:m1");
        assert!(a.binding_key("p").starts_with("gateway-session:"));
    }
}
