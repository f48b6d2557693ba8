//! `manage_gateway_channel_access` (docs/tower-messaging.md §4.4, docs/tower-messaging.md §5.10, docs/tower-messaging.md §8.8):
//! the OWNER authorises a chat for NON_OWNER project queries, binds it to a
//! workspace or to projects, unbinds or revokes it — identified only by an
//! inbound message it sent (`gatewayInboundId`: its gateway, platform, chat
//! and sender come from the stored row, never from the request), and once
//! per inbound message (a second action with the same id is the first's
//! answer, `deduped`).
//!
//! The records live in the setting `tower-agent.channel-access.v1`
//! (`query.rs` reads it on every query): `{version: 1, revision, channels:
//! {<key>: record}, receipts: [[inboundId, key], …]}`, written by
//! compare-and-set (up to 12 attempts, else 409 "changed concurrently").

use crate::gateway::Gateway;
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    context::text,
    ids,
    owner::{Role, Sender},
    query::{CHANNEL_ACCESS_KEY, channel_key},
};
use crate::{CoreError, CoreResult, model::Project, validate};
use harness_types::ChatAccess;

/// The inbound id's limit (`gatewayInboundId`).
pub const MAX_ID_CHARS: usize = 128;
/// A workspace's or a project's id or name.
pub const MAX_QUERY_CHARS: usize = 512;
pub const MAX_CHAT_NAME_CHARS: usize = 160;
/// Projects bound to one chat at once.
pub const MAX_PROJECTS: usize = 50;
/// Compare-and-set attempts before "changed concurrently".
const CAS_ATTEMPTS: usize = 12;
/// Receipts kept (the newest): a repeat older than these acts again.
const MAX_RECEIPTS: usize = 2000;

/// The tool's and the route's input (docs/tower-messaging.md §4.4, docs/tower-messaging.md §5.10).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccessInput {
    /// `authorize`, `bind_workspace`, `bind_projects`, `unbind`, `revoke` or `get`.
    pub action: Option<String>,
    /// The OWNER's inbound message in the chat concerned.
    pub gateway_inbound_id: Option<String>,
    /// `bind_workspace`: the workspace's id or name.
    pub workspace: Option<String>,
    /// `bind_projects`: each project's id or name (1–50).
    pub projects: Option<Vec<String>>,
    pub chat_name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Authorize,
    BindWorkspace,
    BindProjects,
    Unbind,
    Revoke,
    Get,
}

impl Action {
    fn parse(v: Option<&str>) -> CoreResult<Self> {
        Ok(match v.map(str::trim) {
            Some("authorize") => Self::Authorize,
            Some("bind_workspace") => Self::BindWorkspace,
            Some("bind_projects") => Self::BindProjects,
            Some("unbind") => Self::Unbind,
            Some("revoke") => Self::Revoke,
            Some("get") => Self::Get,
            _ => {
                return Err(CoreError::invalid(
                    "action",
                    "action must be authorize, bind_workspace, bind_projects, unbind, revoke \
                     or get",
                ));
            }
        })
    }
}

struct Checked {
    action: Action,
    inbound_id: String,
    workspace: Option<String>,
    projects: Vec<String>,
    chat_name: Option<String>,
}

impl AccessInput {
    fn check(&self) -> CoreResult<Checked> {
        let action = Action::parse(self.action.as_deref())?;
        let inbound_id = text(
            self.gateway_inbound_id.as_deref(),
            "gatewayInboundId",
            MAX_ID_CHARS,
        )?
        .ok_or_else(|| CoreError::invalid("gatewayInboundId", "gatewayInboundId required"))?;
        let inbound_id = validate::cuid("gatewayInboundId", &inbound_id)?;
        let workspace = text(self.workspace.as_deref(), "workspace", MAX_QUERY_CHARS)?;
        if action == Action::BindWorkspace && workspace.is_none() {
            return Err(CoreError::invalid(
                "workspace",
                "workspace required for bind_workspace",
            ));
        }
        let mut projects = Vec::new();
        if let Some(list) = &self.projects {
            if list.len() > MAX_PROJECTS {
                return Err(CoreError::invalid(
                    "projects",
                    format!("projects: at most {MAX_PROJECTS}"),
                ));
            }
            for p in list {
                let p = text(Some(p), "projects", MAX_QUERY_CHARS)?
                    .ok_or_else(|| CoreError::invalid("projects", "projects: a blank entry"))?;
                if !projects.contains(&p) {
                    projects.push(p);
                }
            }
        }
        if action == Action::BindProjects && projects.is_empty() {
            return Err(CoreError::invalid(
                "projects",
                "projects required for bind_projects (1-50 ids or names)",
            ));
        }
        let chat_name = text(self.chat_name.as_deref(), "chatName", MAX_CHAT_NAME_CHARS)?;
        Ok(Checked {
            action,
            inbound_id,
            workspace,
            projects,
            chat_name,
        })
    }
}

fn candidates(list: &[&Project]) -> Vec<Value> {
    list.iter()
        .map(|p| {
            json!({"projectId": p.id, "name": p.name, "workspaceId": p.workspace_id,
            "workspace": p.workspace})
        })
        .collect()
}

/// The scope an action sets, or the answer when it names nothing (an
/// error) or more than one thing (`needsSelection`).
enum ScopeChoice {
    Scope(Value),
    Selection(Value),
}

fn choose_scope(c: &Checked, projects: &[Project]) -> CoreResult<ScopeChoice> {
    match c.action {
        Action::BindWorkspace => {
            let q = c.workspace.clone().unwrap_or_default();
            let mut found: Vec<(&str, &str)> = Vec::new();
            for p in projects {
                let hit = p.workspace_id == q || p.workspace.eq_ignore_ascii_case(&q);
                if hit && !found.iter().any(|(id, _)| *id == p.workspace_id) {
                    found.push((&p.workspace_id, &p.workspace));
                }
            }
            match found.as_slice() {
                [] => Err(CoreError::invalid(
                    "workspace",
                    format!("workspace: no workspace is called {q}"),
                )),
                [(id, _)] => Ok(ScopeChoice::Scope(
                    json!({"mode": "WORKSPACE", "workspaceId": id}),
                )),
                many => Ok(ScopeChoice::Selection(json!({"ok": false,
                    "needsSelection": true, "field": "workspace",
                    "candidates": many.iter().map(|(id, name)|
                        json!({"workspaceId": id, "name": name})).collect::<Vec<_>>()}))),
            }
        }
        Action::BindProjects => {
            let mut ids = Vec::new();
            for q in &c.projects {
                let exact: Vec<&Project> = projects.iter().filter(|p| &p.id == q).collect();
                let found = if exact.is_empty() {
                    projects
                        .iter()
                        .filter(|p| p.name.eq_ignore_ascii_case(q))
                        .collect()
                } else {
                    exact
                };
                match found.as_slice() {
                    [] => {
                        return Err(CoreError::invalid(
                            "projects",
                            format!("projects: no project is called {q}"),
                        ));
                    }
                    [one] => {
                        if !ids.contains(&one.id) {
                            ids.push(one.id.clone());
                        }
                    }
                    many => {
                        return Ok(ScopeChoice::Selection(json!({"ok": false,
                            "needsSelection": true, "field": "projects", "query": q,
                            "candidates": candidates(many)})));
                    }
                }
            }
            Ok(ScopeChoice::Scope(
                json!({"mode": "PROJECTS", "projectIds": ids}),
            ))
        }
        _ => Ok(ScopeChoice::Scope(json!({"mode": "ALL"}))),
    }
}

/// A record as answered (docs/tower-messaging.md §8.8 step 5): adds its key, whether its scope
/// names things that exist, and those things.
fn view(key: &str, record: &Value, projects: &[Project]) -> Value {
    let mut out = record.clone();
    let scope = &record["scope"];
    let (valid, workspace, named): (bool, Value, Vec<Value>) =
        match scope["mode"].as_str().unwrap_or_default() {
            "ALL" => (true, Value::Null, Vec::new()),
            "WORKSPACE" => {
                let id = scope["workspaceId"].as_str().unwrap_or_default();
                match projects.iter().find(|p| p.workspace_id == id) {
                    Some(p) => (true, json!({"id": id, "name": p.workspace}), Vec::new()),
                    None => (false, json!({"id": id, "name": null}), Vec::new()),
                }
            }
            "PROJECTS" => {
                let ids: Vec<&str> = scope["projectIds"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let named: Vec<Value> = ids
                    .iter()
                    .map(|id| match projects.iter().find(|p| p.id == *id) {
                        Some(p) => json!({"id": id, "name": p.name}),
                        None => json!({"id": id, "name": null}),
                    })
                    .collect();
                let valid = !ids.is_empty() && named.iter().all(|n| !n["name"].is_null());
                (valid, Value::Null, named)
            }
            _ => (false, Value::Null, Vec::new()),
        };
    if let Some(o) = out.as_object_mut() {
        o.insert("key".into(), json!(key));
        o.insert("scopeValid".into(), json!(valid));
        o.insert("workspace".into(), workspace);
        o.insert("projects".into(), json!(named));
    }
    out
}

/// The stored configuration, or an empty one (a version other than 1 is
/// treated as empty, docs/tower-messaging.md §8.8).
fn config_of(stored: Option<&Value>) -> Value {
    match stored {
        Some(v) if v.get("version").and_then(Value::as_i64) == Some(1) => v.clone(),
        _ => json!({"version": 1, "revision": 0, "channels": {}, "receipts": []}),
    }
}

fn receipt(config: &Value, inbound_id: &str) -> Option<String> {
    config["receipts"].as_array()?.iter().find_map(|r| {
        (r.get(0)?.as_str()? == inbound_id).then(|| r.get(1)?.as_str().map(str::to_string))?
    })
}

impl Gateway<'_> {
    /// docs/tower-messaging.md §8.8 `manageGatewayChannelAccess`. `Ok` with `ok: false` when the
    /// action needs a selection (REST answers 400).
    pub async fn manage_gateway_channel_access(&self, input: &AccessInput) -> CoreResult<Value> {
        let c = input.check()?;
        let inbound = self
            .h
            .store()
            .get_inbound(&c.inbound_id)
            .await?
            .ok_or_else(|| CoreError::NotFound("Gateway inbound message not found".into()))?;
        let role = self
            .gateway_role(Sender {
                gateway: &inbound.gateway,
                platform: &inbound.platform,
                sender_id: inbound.sender_id.as_deref(),
            })
            .await?;
        if role != Role::Owner {
            return Err(CoreError::Forbidden(
                "Only the configured platform OWNER may manage channel access".into(),
            ));
        }
        let key = channel_key(&inbound.gateway, &inbound.platform, &inbound.chat_id);
        let projects = self.h.store().list_projects().await?;
        for _ in 0..CAS_ATTEMPTS {
            let stored = self.h.store().get_setting(CHANNEL_ACCESS_KEY).await?;
            let mut config = config_of(stored.as_ref());
            let record_of = |config: &Value, key: &str| {
                config["channels"]
                    .get(key)
                    .map(|r| view(key, r, &projects))
                    .unwrap_or(Value::Null)
            };
            if c.action == Action::Get {
                let record = record_of(&config, &key);
                return Ok(json!({"ok": true, "deduped": false,
                    "updatedAt": record.get("updatedAt").cloned().unwrap_or(Value::Null),
                    "record": record, "version": config["revision"]}));
            }
            if let Some(done_key) = receipt(&config, &inbound.id) {
                let record = record_of(&config, &done_key);
                return Ok(json!({"ok": true, "deduped": true,
                    "updatedAt": record.get("updatedAt").cloned().unwrap_or(Value::Null),
                    "record": record, "version": config["revision"]}));
            }
            let scope = match choose_scope(&c, &projects)? {
                ScopeChoice::Scope(s) => s,
                ScopeChoice::Selection(answer) => return Ok(answer),
            };
            let now = Utc::now();
            let who = format!(
                "{}:{}",
                inbound.platform,
                inbound
                    .sender_id
                    .as_deref()
                    .map(|s| ids::normalize_sender_id(&inbound.platform, s))
                    .unwrap_or_default()
            );
            let old = config["channels"].get(&key).cloned();
            let mut record = old.clone().unwrap_or_else(|| {
                json!({"gateway": inbound.gateway, "platform": inbound.platform,
                    "chatId": inbound.chat_id, "authorizedBy": who, "authorizedAt": now,
                    "revision": 0})
            });
            let r = record.as_object_mut().ok_or_else(|| {
                CoreError::Conflict("a channel access record is not an object".into())
            })?;
            if c.action == Action::Revoke {
                r.insert("status".into(), json!(ChatAccess::Revoked.as_str()));
                r.insert("revokedBy".into(), json!(who));
                r.insert("revokedAt".into(), json!(now));
                if !r.contains_key("scope") {
                    r.insert("scope".into(), json!({"mode": "ALL"}));
                }
            } else {
                r.insert("status".into(), json!(ChatAccess::Authorized.as_str()));
                r.insert("scope".into(), scope);
                r.remove("revokedBy");
                r.remove("revokedAt");
                if old.is_some() && !r.contains_key("authorizedBy") {
                    r.insert("authorizedBy".into(), json!(who));
                    r.insert("authorizedAt".into(), json!(now));
                }
            }
            if let Some(name) = &c.chat_name {
                r.insert("chatName".into(), json!(name));
            }
            r.insert("updatedBy".into(), json!(who));
            r.insert("updatedAt".into(), json!(now));
            let revision = r.get("revision").and_then(Value::as_i64).unwrap_or(0) + 1;
            r.insert("revision".into(), json!(revision));
            let cfg = config
                .as_object_mut()
                .ok_or_else(|| CoreError::Conflict("channel access is not an object".into()))?;
            let channels = cfg
                .entry("channels")
                .or_insert_with(|| Value::Object(Map::new()));
            if !channels.is_object() {
                *channels = Value::Object(Map::new());
            }
            if let Some(ch) = channels.as_object_mut() {
                ch.insert(key.clone(), record.clone());
            }
            let version = cfg.get("revision").and_then(Value::as_i64).unwrap_or(0) + 1;
            cfg.insert("revision".into(), json!(version));
            let mut receipts = cfg
                .get("receipts")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            receipts.push(json!([inbound.id, key]));
            if receipts.len() > MAX_RECEIPTS {
                receipts.drain(..receipts.len() - MAX_RECEIPTS);
            }
            cfg.insert("receipts".into(), Value::Array(receipts));
            if self
                .h
                .store()
                .replace_setting(CHANNEL_ACCESS_KEY, stored.as_ref(), &config, now)
                .await?
            {
                tracing::info!(channel = %key, action = ?c.action, "gateway channel access changed");
                return Ok(json!({"ok": true, "deduped": false, "updatedAt": now,
                    "record": view(&key, &record, &projects), "version": version}));
            }
        }
        Err(CoreError::Conflict(
            "the channel access changed concurrently; try again".into(),
        ))
    }

    /// `listGatewayChannelAccess` (the gateway page): every channel's
    /// record, newest change first, and the OWNER ids per gateway.
    pub async fn gateway_channels(&self) -> CoreResult<Value> {
        let stored = self.h.store().get_setting(CHANNEL_ACCESS_KEY).await?;
        let config = config_of(stored.as_ref());
        let projects = self.h.store().list_projects().await?;
        let mut channels: Vec<Value> = config["channels"]
            .as_object()
            .map(|m| m.iter().map(|(k, r)| view(k, r, &projects)).collect())
            .unwrap_or_default();
        channels.sort_by(|a, b| {
            b["updatedAt"]
                .as_str()
                .unwrap_or_default()
                .cmp(a["updatedAt"].as_str().unwrap_or_default())
        });
        let gateways = self.h.outbox().gateway_config().await?;
        let owners = |g: &str| {
            gateways
                .get(g)
                .access_policy
                .map(|p| json!(p.owner_ids))
                .unwrap_or_else(|| json!({}))
        };
        Ok(json!({"channels": channels, "version": config["revision"],
            "owners": {"openclaw": owners("openclaw"), "hermes": owners("hermes")}}))
    }
}
