//! Settings → Notifications: the notify targets (channels); the
//! destination aliases; the gateways' CLI settings.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetRow {
    /// The target's id, or its position when it has none: what the
    /// per-target actions address (a concurrent edit of another target is
    /// never lost).
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub downstream: Option<String>,
    pub label: String,
    pub gateway: String,
    pub dest: Option<String>,
    pub scope: String,
    pub active: bool,
    /// The daily report's local time (`HH:MM`); none: off.
    #[serde(default)]
    pub report_at: Option<String>,
    /// Its IANA time zone.
    #[serde(default)]
    pub report_time_zone: Option<String>,
    /// The language its chat is written in: `en` (none) or `zh`.
    #[serde(default)]
    pub language: Option<String>,
    /// Whether a question pushed to it carries the agent's screen.
    #[serde(default)]
    pub include_screen: bool,
}

#[server(prefix = "/sfn", endpoint = "notify_targets")]
pub async fn notify_targets() -> Result<Vec<TargetRow>, ServerFnError> {
    let h = ssr::harness()?;
    let targets = h.settings().notify_targets().await.map_err(ssr::to_sfn)?;
    Ok(targets
        .into_iter()
        .enumerate()
        .map(|(i, t)| TargetRow {
            key: t.id.clone().unwrap_or_else(|| i.to_string()),
            downstream: t.downstream,
            label: t.label,
            gateway: t.gateway,
            dest: t.dest,
            scope: t.scope,
            active: t.active,
            report_at: t.report_at,
            report_time_zone: t.report_time_zone,
            language: t.language,
            include_screen: t.include_screen,
        })
        .collect())
}

/// Add one target (compare-and-set: a concurrent edit is not lost).
#[server(prefix = "/sfn", endpoint = "add_notify_target")]
pub async fn add_notify_target(
    label: String,
    gateway: String,
    downstream: Option<String>,
    dest: Option<String>,
    scope: String,
    #[server(default)] report_at: Option<String>,
    #[server(default)] report_time_zone: Option<String>,
    #[server(default)] language: Option<String>,
) -> Result<String, ServerFnError> {
    use harness_core::settings::NotifyTarget;
    let h = ssr::harness()?;
    let blank = |v: Option<String>| v.map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
    let added = h
        .outbox()
        .add_notify_target(NotifyTarget {
            id: None,
            label: label.trim().to_string(),
            gateway,
            downstream: blank(downstream),
            dest: blank(dest),
            profile: None,
            scope,
            active: true,
            include_screen: false,
            report_at: blank(report_at),
            report_time_zone: blank(report_time_zone),
            report_since: None,
            language: blank(language),
        })
        .await
        .map_err(to_sfn_field)?;
    Ok(added.id.unwrap_or_default())
}

/// Set one target's daily report (a time `HH:MM` and an IANA time zone),
/// or switch it off (no time), and its chat language; the core names a
/// wrong field.
#[server(prefix = "/sfn", endpoint = "set_target_report")]
pub async fn set_target_report(
    key: String,
    #[server(default)] report_at: Option<String>,
    #[server(default)] report_time_zone: Option<String>,
    #[server(default)] language: Option<String>,
) -> Result<(), ServerFnError> {
    let h = ssr::harness()?;
    let blank = |v: Option<String>| v.map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
    let (at, zone, language) = (blank(report_at), blank(report_time_zone), blank(language));
    h.outbox()
        .set_notify_target_report(&key, at.as_deref(), zone.as_deref(), language.as_deref())
        .await
        .map_err(to_sfn_field)?;
    Ok(())
}

/// Whether questions pushed to one target carry the agent's screen
/// (redacted; docs/evidence.md): `on` is the checkbox, absent when unticked.
#[server(prefix = "/sfn", endpoint = "set_target_screen")]
pub async fn set_target_screen(
    key: String,
    #[server(default)] on: Option<String>,
) -> Result<(), ServerFnError> {
    let h = ssr::harness()?;
    h.outbox()
        .set_notify_target_screen(&key, on.is_some())
        .await
        .map_err(to_sfn_field)?;
    Ok(())
}

/// Separates the field from the message in a server function's error text
/// (`<field>\u{1f}<message>`): the form shows the message by that input.
pub const FIELD_SEP: char = '\u{1f}';

/// A validation error that names its field keeps the field in the text.
#[cfg(feature = "ssr")]
pub(crate) fn to_sfn_field(err: harness_core::CoreError) -> ServerFnError {
    let field = err.field();
    match (field, ssr::to_sfn(err)) {
        (Some(f), ServerFnError::ServerError(m)) => {
            ServerFnError::ServerError(format!("{f}{FIELD_SEP}{m}"))
        }
        (_, other) => other,
    }
}

/// `(field, message)` of an error from [`add_notify_target`] or
/// [`add_destination`].
pub fn field_error(err: &ServerFnError) -> (Option<String>, String) {
    let text = crate::components::error_text(err);
    match text.split_once(FIELD_SEP) {
        Some((f, m)) => (Some(f.to_string()), m.to_string()),
        None => (None, text),
    }
}

/// Remove one target by its key (id, or position for targets without one).
#[server(prefix = "/sfn", endpoint = "remove_notify_target")]
pub async fn remove_notify_target(key: String) -> Result<(), ServerFnError> {
    let h = ssr::harness()?;
    h.outbox()
        .delete_notify_target(&key)
        .await
        .map_err(ssr::to_sfn)
}

/// How a test message went within the wait.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    /// The state it reached (a failed test is FAILED, never DEAD).
    pub state: harness_types::OutboundState,
    /// Why it was not sent, when it was not.
    pub error: Option<String>,
}

/// "Send a test message" to one target, through the real outbox: the
/// state it reached within the wait.
#[server(prefix = "/sfn", endpoint = "test_notify_target")]
pub async fn test_notify_target(key: String) -> Result<TestResult, ServerFnError> {
    use harness_types::OutboundState;
    let h = ssr::harness()?;
    let out = h
        .outbox()
        .send_test_message(&key)
        .await
        .map_err(ssr::to_sfn)?;
    // A test message is tried once: its failure ends it (DEAD), which a
    // person reads as what it is, a failed test.
    let state = match out.state {
        OutboundState::Dead => OutboundState::Failed,
        s => s,
    };
    Ok(TestResult {
        state,
        error: out.last_error.filter(|_| !out.sent),
    })
}

/// One destination alias (`harness.destinations`) as the settings page
/// lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DestinationRow {
    /// The entry's id, or its position when it has none: what "remove"
    /// addresses (a concurrent edit of another entry is never lost).
    pub key: String,
    pub alias: Option<String>,
    pub label: Option<String>,
    /// `None`: any gateway.
    pub gateway: Option<String>,
    /// `None`: any platform.
    pub platform: Option<String>,
    pub dest: String,
    /// `work` or `unattended`.
    pub scope: String,
}

#[server(prefix = "/sfn", endpoint = "destination_aliases")]
pub async fn destination_aliases() -> Result<Vec<DestinationRow>, ServerFnError> {
    let h = ssr::harness()?;
    let list = h.outbox().destinations().await.map_err(ssr::to_sfn)?;
    Ok(list
        .into_iter()
        .enumerate()
        .map(|(i, d)| DestinationRow {
            key: d.id.unwrap_or_else(|| i.to_string()),
            alias: d.alias,
            label: d.label,
            gateway: d.gateway,
            platform: d.platform,
            dest: d.dest,
            scope: d.scope.unwrap_or_else(|| "work".into()),
        })
        .collect())
}

/// Add one alias (compare-and-set: a concurrent edit is not lost). Blank
/// gateway / platform mean any; the core's rules name the bad field.
#[server(prefix = "/sfn", endpoint = "add_destination")]
pub async fn add_destination(
    alias: String,
    dest: String,
    gateway: String,
    platform: String,
    scope: String,
    label: String,
) -> Result<String, ServerFnError> {
    use harness_core::outbox::destination::Destination;
    let h = ssr::harness()?;
    let added = h
        .outbox()
        .add_destination(Destination {
            id: None,
            alias: Some(alias),
            label: Some(label),
            gateway: Some(gateway),
            platform: Some(platform),
            dest,
            scope: Some(scope),
        })
        .await
        .map_err(to_sfn_field)?;
    Ok(added.id.unwrap_or_default())
}

/// Remove one alias by its key (id, or position for entries without one).
#[server(prefix = "/sfn", endpoint = "remove_destination")]
pub async fn remove_destination(key: String) -> Result<(), ServerFnError> {
    let h = ssr::harness()?;
    h.outbox()
        .remove_destination(&key)
        .await
        .map_err(ssr::to_sfn)
}

/// One gateway's CLI settings as the form shows them (`env` as `NAME=value` lines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct GatewayRow {
    pub gateway: String,
    pub cli_path: String,
    pub profile: String,
    pub env: String,
}

#[server(prefix = "/sfn", endpoint = "gateway_settings")]
pub async fn gateway_settings() -> Result<Vec<GatewayRow>, ServerFnError> {
    let h = ssr::harness()?;
    let config = h.outbox().gateway_config().await.map_err(ssr::to_sfn)?;
    Ok(["hermes", "openclaw"]
        .into_iter()
        .map(|g| {
            let s = config.get(g);
            GatewayRow {
                gateway: g.to_string(),
                cli_path: s.cli_path.unwrap_or_default(),
                profile: s.profile.unwrap_or_default(),
                env: s.env.iter().map(|(k, v)| format!("{k}={v}\n")).collect(),
            }
        })
        .collect())
}

/// Save one gateway's CLI path, profile and extra environment.
#[server(prefix = "/sfn", endpoint = "save_gateway_settings")]
pub async fn save_gateway_settings(
    gateway: String,
    cli_path: String,
    profile: String,
    env: String,
) -> Result<(), ServerFnError> {
    let h = ssr::harness()?;
    let mut config = h.outbox().gateway_config().await.map_err(ssr::to_sfn)?;
    let mut vars = std::collections::BTreeMap::new();
    for line in env.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some((k, v)) = line.split_once('=') else {
            return Err(ssr::to_sfn(harness_core::CoreError::invalid(
                "env",
                format!("env: {line:?} is not NAME=value"),
            )));
        };
        vars.insert(k.trim().to_string(), v.to_string());
    }
    let mut one = config.get(&gateway);
    one.cli_path = Some(cli_path);
    one.profile = Some(profile);
    one.env = vars;
    match gateway.as_str() {
        "hermes" => config.hermes = Some(one),
        "openclaw" => config.openclaw = Some(one),
        _ => {
            return Err(ssr::to_sfn(harness_core::CoreError::invalid(
                "gateway",
                "gateway must be \"hermes\" or \"openclaw\"",
            )));
        }
    }
    h.outbox()
        .set_gateway_config(config)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(())
}
