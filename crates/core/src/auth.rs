//! Credentials: who is calling, and which task they may act on (docs/decisions.md D12).

use serde::Serialize;

use crate::{CoreError, CoreResult, Harness, ids, model::ExecutionStatus, validate};

/// The access service (`Harness::access`): who a bearer token is and the
/// gateway credential (here), and what a caller may do to which task — a
/// terminal, a task read, a task created as someone, unattended mode
/// (`crate::access`). Declared here, not in `access`, which names this
/// module already: `auth` naming `access` back would make the two a cycle.
#[derive(Clone, Copy)]
pub struct Access<'h> {
    pub(crate) h: &'h Harness,
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Identity {
    /// The admin/automation token: may act on every task.
    Admin,
    /// A per-execution agent token: may act only on its own task.
    #[serde(rename_all = "camelCase")]
    Agent {
        task_id: String,
        execution_id: String,
    },
    /// The same-origin browser UI (server functions).
    Browser,
    /// A chat gateway (OpenClaw, Hermes): a signed request
    /// (`gateway::signing`) or the gateway bearer token. Sees the gateway
    /// tool profile; a person only through the OWNER rules
    /// (`gateway::owner`).
    Gateway,
}

impl Identity {
    /// The reference's task binding rule (docs/tower-messaging.md §4.2): the explicit
    /// id, else the agent's own task; an agent naming another task is refused.
    pub fn bind_task(&self, requested: Option<&str>) -> CoreResult<String> {
        let requested = requested.map(str::trim).filter(|s| !s.is_empty());
        match (self, requested) {
            (Self::Agent { task_id, .. }, Some(other)) if other != task_id => {
                Err(CoreError::Forbidden(format!(
                    "Task boundary mismatch — this terminal is bound to {task_id}, refusing to operate on {other}"
                )))
            }
            (Self::Agent { task_id, .. }, _) => Ok(task_id.clone()),
            (_, requested) => validate::task_id(requested),
        }
    }

    /// [`Self::bind_task`] for what only agents (and the admin) do —
    /// recording an ask or a notify: a gateway's credential is refused.
    pub fn bind_agent_task(&self, requested: Option<&str>) -> CoreResult<String> {
        if self.is_gateway() {
            return Err(CoreError::Forbidden(
                "a gateway credential cannot act as a task's agent".into(),
            ));
        }
        self.bind_task(requested)
    }

    /// The execution a call is about (the Stop hook's turn end): an agent
    /// reports only its own — naming another is refused; anybody else names
    /// one, or gets `None` (the caller then takes the task's live one).
    pub fn bind_execution(&self, requested: Option<&str>) -> CoreResult<Option<String>> {
        let requested = requested.map(str::trim).filter(|s| !s.is_empty());
        match (self, requested) {
            (Self::Agent { execution_id, .. }, Some(other)) if other != execution_id => Err(
                CoreError::Conflict("Execution does not belong to this agent".into()),
            ),
            (Self::Agent { execution_id, .. }, _) => Ok(Some(execution_id.clone())),
            (Self::Gateway, _) => Err(CoreError::Forbidden(
                "a gateway credential cannot report an agent's turn".into(),
            )),
            (_, requested) => Ok(requested.map(str::to_string)),
        }
    }

    pub fn is_admin(&self) -> bool {
        matches!(self, Self::Admin)
    }

    /// The caller as a person, who may answer a question or decide an
    /// approval: the admin token or a browser session. An agent's token is
    /// never a person — not even for its own task.
    pub fn person(&self) -> CoreResult<Person> {
        match self {
            Self::Admin => Ok(Person(PersonKind::Admin)),
            Self::Browser => Ok(Person(PersonKind::Browser)),
            Self::Agent { .. } => Err(CoreError::Forbidden(
                "an agent's token cannot answer a question: only a person may (the web UI, \
                 the admin token or a gateway); the agent waits for their answer"
                    .into(),
            )),
            Self::Gateway => Err(CoreError::Forbidden(
                "a gateway answers for a person only as the platform OWNER (gateway::owner)".into(),
            )),
        }
    }

    pub fn is_gateway(&self) -> bool {
        matches!(self, Self::Gateway)
    }
}

/// Proof that a person is acting: only [`Identity::person`] (and
/// [`Person::admin`] for the operator's own tools) makes one, so a core
/// method that takes a `Person` cannot be reached with an agent's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Person(PersonKind);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PersonKind {
    Admin,
    Browser,
    /// The platform OWNER, through a gateway (`gateway::owner`).
    GatewayOwner,
}

impl Person {
    /// The operator (admin token, or a local tool acting for them).
    pub fn admin() -> Self {
        Self(PersonKind::Admin)
    }

    pub fn kind(&self) -> PersonKind {
        self.0
    }

    /// The platform OWNER speaking through a gateway: made only by
    /// `gateway::owner` once the OWNER rule holds.
    pub(crate) fn gateway_owner() -> Self {
        Self(PersonKind::GatewayOwner)
    }
}

/// Where the gateway bearer token's hash comes from (the server: the file
/// `secrets/gateway.token`, re-read when it changes, so a rotation takes
/// effect without a restart).
pub trait GatewaySecret: Send + Sync + 'static {
    /// SHA-256 hex of the current gateway token; `None`: there is none.
    fn token_hash(&self) -> Option<String>;
    /// The current token masked for display (its prefix and last four
    /// characters); `None`: there is none.
    fn preview(&self) -> Option<String> {
        None
    }
    /// Replace the token; the new one (the old one stops working at once).
    fn rotate(&self) -> Result<String, String> {
        Err("this gateway credential cannot be rotated here".into())
    }
}

/// `hxg_…wxyz`: a token as the gateway page shows it.
pub fn mask_token(token: &str) -> String {
    let tail: String = token
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{GATEWAY_TOKEN_PREFIX}…{tail}")
}

impl Access<'_> {
    /// The gateway credential masked (the gateway page).
    pub fn gateway_token_preview(&self) -> Option<String> {
        self.h.gateway_secret().and_then(|s| s.preview())
    }

    /// Replace the gateway credential (REST `POST
    /// /api/settings/gateway-token/rotate`, the gateway page): the new token.
    pub fn rotate_gateway_token(&self) -> CoreResult<String> {
        let secret = self
            .h
            .gateway_secret()
            .ok_or_else(|| CoreError::Unavailable("no gateway credential is configured".into()))?;
        secret.rotate().map_err(|e| {
            tracing::error!(error = %e, "cannot rotate the gateway token");
            CoreError::Unavailable("cannot write the gateway token".into())
        })
    }
}

/// Prefix of gateway bearer tokens (only those are compared with it).
pub const GATEWAY_TOKEN_PREFIX: &str = "hxg_";

impl Access<'_> {
    /// Resolve a bearer token to an identity. Agent tokens are valid while their
    /// execution is live (RUNNING or PAUSED).
    pub async fn authenticate(&self, bearer: &str) -> CoreResult<Identity> {
        let bearer = bearer.trim();
        if bearer.is_empty() {
            return Err(CoreError::Unauthorized("missing bearer token".into()));
        }
        let hash = ids::token_hash(bearer);
        if ids::secure_eq(hash.as_bytes(), self.h.config().admin_token_hash.as_bytes()) {
            return Ok(Identity::Admin);
        }
        if bearer.starts_with(GATEWAY_TOKEN_PREFIX) {
            return match self.h.gateway_secret().and_then(|s| s.token_hash()) {
                Some(current) if ids::secure_eq(hash.as_bytes(), current.as_bytes()) => {
                    Ok(Identity::Gateway)
                }
                _ => Err(CoreError::Unauthorized("invalid token".into())),
            };
        }
        match self.h.store().execution_by_token_hash(&hash).await? {
            Some(exec)
                if matches!(
                    exec.status,
                    ExecutionStatus::Running | ExecutionStatus::Paused
                ) =>
            {
                Ok(Identity::Agent {
                    task_id: exec.task_id,
                    execution_id: exec.id,
                })
            }
            Some(_) => Err(CoreError::Unauthorized(
                "agent token of an execution that has ended".into(),
            )),
            None => Err(CoreError::Unauthorized("invalid token".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_reports_only_its_own_execution() {
        let agent = Identity::Agent {
            task_id: ids::new_id(),
            execution_id: "e1".into(),
        };
        assert_eq!(agent.bind_execution(None).unwrap().as_deref(), Some("e1"));
        assert_eq!(
            agent.bind_execution(Some(" e1 ")).unwrap().as_deref(),
            Some("e1")
        );
        assert!(matches!(
            agent.bind_execution(Some("e2")),
            Err(CoreError::Conflict(_))
        ));
        assert_eq!(
            Identity::Admin
                .bind_execution(Some("e2"))
                .unwrap()
                .as_deref(),
            Some("e2")
        );
        assert_eq!(Identity::Admin.bind_execution(Some("  ")).unwrap(), None);
    }

    #[test]
    fn binding_rules() {
        let own = ids::new_id();
        let other = ids::new_id();
        let agent = Identity::Agent {
            task_id: own.clone(),
            execution_id: ids::new_id(),
        };
        assert_eq!(agent.bind_task(None).unwrap(), own);
        assert_eq!(agent.bind_task(Some(&own)).unwrap(), own);
        let err = agent.bind_task(Some(&other)).unwrap_err();
        assert!(matches!(err, CoreError::Forbidden(_)));
        assert!(err.to_string().starts_with("Task boundary mismatch"));
        assert_eq!(Identity::Admin.bind_task(Some(&other)).unwrap(), other);
        assert!(Identity::Admin.bind_task(None).is_err());
        assert!(Identity::Admin.bind_task(Some("bad")).is_err());
    }

    #[test]
    fn a_gateway_is_no_agent() {
        assert!(matches!(
            Identity::Gateway.bind_agent_task(Some(&ids::new_id())),
            Err(CoreError::Forbidden(_))
        ));
        assert!(matches!(
            Identity::Gateway.bind_execution(None),
            Err(CoreError::Forbidden(_))
        ));
        assert!(matches!(
            Identity::Gateway.person(),
            Err(CoreError::Forbidden(_))
        ));
        let t = ids::new_id();
        assert_eq!(Identity::Gateway.bind_task(Some(&t)).unwrap(), t);
        assert_eq!(Identity::Admin.bind_agent_task(Some(&t)).unwrap(), t);
    }

    #[test]
    fn only_people_answer() {
        let agent = Identity::Agent {
            task_id: ids::new_id(),
            execution_id: ids::new_id(),
        };
        assert!(matches!(agent.person(), Err(CoreError::Forbidden(_))));
        assert_eq!(Identity::Admin.person().unwrap().kind(), PersonKind::Admin);
        assert_eq!(
            Identity::Browser.person().unwrap().kind(),
            PersonKind::Browser
        );
    }
}
