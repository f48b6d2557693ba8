//! Which project a routed message or a query is about (docs/tower-messaging.md
//! docs/tower-messaging.md §8.5, docs/decisions.md D11): the reply's session → this conversation's own
//! session (a thread, else the chat and sender within 7 days) → the
//! explicit project (id or name) → the one project the words identify →
//! the sender's recent project (any chat, 7 days) → the chat's default
//! project (`harness.channelBindings`, docs/decisions.md D11: the reference documents it but
//! never did it) → candidates. Reads only.

use crate::gateway::Gateway;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::{ids, sessions};
use crate::{CoreResult, model::Project, store::SessionLookup};

/// The channel binding setting (a chat's default project).
pub const CHANNEL_BINDINGS_KEY: &str = "harness.channelBindings";

/// The projects a caller may see (docs/tower-messaging.md §8.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    Workspace(String),
    Projects(Vec<String>),
}

impl Scope {
    pub fn allows(&self, p: &Project) -> bool {
        match self {
            Self::All => true,
            Self::Workspace(w) => &p.workspace_id == w,
            Self::Projects(ids) => ids.contains(&p.id),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Resolution {
    /// The project and how it was found.
    Found {
        project: Project,
        resolution: &'static str,
    },
    /// No single project: the candidates and why (`ambiguous`, `not_found`,
    /// `not_allowed`).
    Candidates {
        candidates: Vec<Project>,
        reason: &'static str,
    },
}

pub fn candidate(p: &Project) -> Value {
    json!({"projectId": p.id, "name": p.name, "workspaceId": p.workspace_id,
        "workspaceName": p.workspace})
}

/// How well `query` names project `p` (0 … 1).
pub fn score(p: &Project, query: &str) -> f64 {
    let name = p.name.to_lowercase();
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return 0.0;
    }
    if name == q {
        return 1.0;
    }
    if q.contains(&name) || name.contains(&q) {
        return 0.8;
    }
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 2)
            .map(str::to_string)
            .collect()
    };
    let name_words = words(&name);
    let q_words = words(&q);
    if name_words.is_empty() || q_words.is_empty() {
        return 0.0;
    }
    let hits = name_words.iter().filter(|w| q_words.contains(w)).count();
    hits as f64 / name_words.len() as f64
}

/// What to resolve with.
pub struct Ask<'a> {
    pub conv: Option<&'a sessions::Conversation>,
    pub project: Option<&'a str>,
    pub scope: &'a Scope,
    pub ignore_sessions: bool,
    pub now: DateTime<Utc>,
}

impl Gateway<'_> {
    pub(crate) async fn resolve_project(&self, ask: Ask<'_>) -> CoreResult<Resolution> {
        let sessions_on = !ask.ignore_sessions;
        if sessions_on && let Some(conv) = ask.conv {
            if let Some(reply_to) = &conv.reply_to_message_id {
                let lookup = SessionLookup::ReplyTo {
                    gateway: conv.gateway.clone(),
                    platform: conv.platform.clone(),
                    chat_id: conv.chat_id.clone(),
                    platform_message_id: reply_to.clone(),
                };
                if let Some(found) = self.session_project(lookup, ask.scope).await? {
                    return Ok(found.named("reply_message_binding"));
                }
            }
            if let Some(lookup) = conv.own_session(ask.now)
                && let Some(found) = self.session_project(lookup, ask.scope).await?
            {
                return Ok(found.named("thread_session_binding"));
            }
        }
        let all = self.h.store().list_projects().await?;
        let scoped: Vec<Project> = all
            .iter()
            .filter(|p| ask.scope.allows(p))
            .cloned()
            .collect();
        if let Some(query) = ask.project {
            let q = query.trim();
            let exact: Vec<&Project> = scoped
                .iter()
                .filter(|p| p.id == q || p.name.to_lowercase() == q.to_lowercase())
                .collect();
            match exact.as_slice() {
                [one] => return Ok(found((*one).clone(), "explicit_project")),
                [_, _, ..] => {
                    return Ok(candidates(
                        exact.into_iter().cloned().collect(),
                        "ambiguous",
                    ));
                }
                [] => {}
            }
            let mut scored: Vec<(f64, &Project)> = scoped
                .iter()
                .map(|p| (score(p, q), p))
                .filter(|(s, _)| *s >= 0.3)
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            match scored.as_slice() {
                [(_, one)] => return Ok(found((*one).clone(), "identify_project")),
                [_, _, ..] => {
                    return Ok(candidates(
                        scored.into_iter().map(|(_, p)| p.clone()).collect(),
                        "ambiguous",
                    ));
                }
                [] => {}
            }
            let elsewhere = all.iter().any(|p| p.id == q || p.name == q);
            return Ok(candidates(
                Vec::new(),
                if elsewhere {
                    "not_allowed"
                } else {
                    "not_found"
                },
            ));
        }
        if sessions_on
            && let Some(conv) = ask.conv
            && let Some(sender) = &conv.sender_id
        {
            let lookup = SessionLookup::RecentSender {
                gateway: conv.gateway.clone(),
                platform: conv.platform.clone(),
                sender_id: sender.clone(),
                since: ask.now - sessions::recent(),
            };
            if let Some(found) = self.session_project(lookup, ask.scope).await? {
                return Ok(found.named("recent_user_project"));
            }
        }
        if let Some(conv) = ask.conv
            && let Some(id) = self.channel_default(conv).await?
            && let Some(p) = scoped.iter().find(|p| p.id == id)
        {
            return Ok(found(p.clone(), "channel_default_project"));
        }
        let reason = if scoped.len() > 1 {
            "ambiguous"
        } else {
            "not_found"
        };
        Ok(candidates(scoped, reason))
    }

    /// The project of the newest session a lookup finds (scope-checked:
    /// outside the scope → no binding).
    async fn session_project(
        &self,
        lookup: SessionLookup,
        scope: &Scope,
    ) -> CoreResult<Option<Resolution>> {
        let Some(session) = self
            .h
            .store()
            .find_sessions(lookup)
            .await?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let Some(project) = self.h.store().get_project(&session.project_id).await? else {
            return Ok(None);
        };
        if !scope.allows(&project) {
            return Ok(Some(candidates(Vec::new(), "not_allowed")));
        }
        Ok(Some(Resolution::Found {
            project,
            resolution: "",
        }))
    }

    /// The chat's default project: the first `harness.channelBindings`
    /// entry of this platform and chat (and gateway, when it names one)
    /// with a `defaultProjectId`.
    async fn channel_default(&self, conv: &sessions::Conversation) -> CoreResult<Option<String>> {
        let Some(Value::Array(bindings)) = self.h.store().get_setting(CHANNEL_BINDINGS_KEY).await?
        else {
            return Ok(None);
        };
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Ok(bindings.iter().find_map(|b| {
            let platform = ids::normalize(&s(b, "platform")?);
            let chat = ids::normalize_chat_id(&platform, &s(b, "chatId")?);
            let gateway_ok = s(b, "gateway")
                .map(|g| ids::normalize(&g))
                .is_none_or(|g| g.is_empty() || g == conv.gateway);
            (gateway_ok && platform == conv.platform && chat == conv.chat_id)
                .then(|| s(b, "defaultProjectId"))
                .flatten()
        }))
    }
}

fn found(project: Project, resolution: &'static str) -> Resolution {
    Resolution::Found {
        project,
        resolution,
    }
}

fn candidates(candidates: Vec<Project>, reason: &'static str) -> Resolution {
    Resolution::Candidates { candidates, reason }
}

impl Resolution {
    fn named(self, name: &'static str) -> Self {
        match self {
            Self::Found { project, .. } => Self::Found {
                project,
                resolution: name,
            },
            other => other,
        }
    }
}
