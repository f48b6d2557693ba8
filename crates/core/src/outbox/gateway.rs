//! Gateway CLIs as configured (docs/decisions.md D10): binary path, profile and
//! extra environment per gateway (`harness.gatewayConfig`), and the argv of
//! one send (docs/contract.md §9).

use std::collections::BTreeMap;

use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::Outbound;
use crate::outbox::Outbox;
use crate::{CoreError, CoreResult, events::HarnessEvent};

pub const GATEWAY_CONFIG_KEY: &str = "harness.gatewayConfig";

/// One gateway's settings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySettings {
    /// The CLI binary (default: `openclaw` / `hermes` on `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Card / message title (default "Tower").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Extra environment for the CLI.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Who is the OWNER of inbound messages (docs/tower-messaging.md §2.10,
    /// docs/tower-messaging.md §8.1; the rule: `crate::gateway::owner`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_policy: Option<AccessPolicy>,
}

/// A gateway's access policy.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessPolicy {
    /// Platform (`feishu`, `telegram` …) → the OWNER's sender ids there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub owner_ids: BTreeMap<String, Vec<String>>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hermes: Option<GatewaySettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openclaw: Option<GatewaySettings>,
}

impl GatewaySettings {
    /// A variable as the gateway CLI sees it: the gateway's configured
    /// environment first, then this process's; a blank value is unset.
    pub fn var(&self, name: &str) -> Option<String> {
        self.env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.trim().is_empty())
    }

    /// Where a send's Hermes directory file is read (docs/tower-messaging.md §6.2): `$HOME` as the
    /// CLI sees it; the profile of the send, else the gateway's, else
    /// `$HERMES_PROFILE`.
    pub fn hermes_directory(
        &self,
        send_profile: Option<&str>,
    ) -> super::destination::HermesDirectory {
        super::destination::HermesDirectory {
            home: self.var("HOME").map(std::path::PathBuf::from),
            profile: send_profile
                .map(str::to_string)
                .or_else(|| self.profile.clone())
                .or_else(|| self.var("HERMES_PROFILE")),
        }
    }
}

impl GatewayConfig {
    pub fn get(&self, gateway: &str) -> GatewaySettings {
        match gateway {
            "hermes" => self.hermes.clone(),
            "openclaw" => self.openclaw.clone(),
            _ => None,
        }
        .unwrap_or_default()
    }
}

fn env_name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn validate_one(field_prefix: &'static str, s: &mut GatewaySettings) -> CoreResult<()> {
    let trim = |v: &mut Option<String>| {
        *v = v
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
    };
    trim(&mut s.cli_path);
    trim(&mut s.profile);
    trim(&mut s.display_name);
    if let Some(path) = &s.cli_path
        && (path.chars().count() > 1024 || path.contains('\0'))
    {
        return Err(CoreError::invalid(
            field_prefix,
            "cliPath: at most 1024 characters, no NUL",
        ));
    }
    if s.profile.as_ref().is_some_and(|p| p.chars().count() > 256) {
        return Err(CoreError::invalid(
            field_prefix,
            "profile: at most 256 characters",
        ));
    }
    if s.display_name
        .as_ref()
        .is_some_and(|p| p.chars().count() > 200)
    {
        return Err(CoreError::invalid(
            field_prefix,
            "displayName: at most 200 characters",
        ));
    }
    if let Some(policy) = s.access_policy.take() {
        let owners = crate::gateway::owner::clean_owner_ids(field_prefix, policy.owner_ids)?;
        s.access_policy = (!owners.is_empty()).then_some(AccessPolicy { owner_ids: owners });
    }
    if s.env.len() > 64 {
        return Err(CoreError::invalid(
            field_prefix,
            "env: at most 64 variables",
        ));
    }
    for (k, v) in &s.env {
        if !env_name_ok(k) {
            return Err(CoreError::invalid(
                field_prefix,
                format!("env: {k:?} is not a valid variable name"),
            ));
        }
        if v.contains('\0') || v.len() > 8192 {
            return Err(CoreError::invalid(
                field_prefix,
                format!("env: value of {k} is invalid"),
            ));
        }
    }
    Ok(())
}

/// The binary for `gateway`: `HARNESS_<GW>_BIN` of the server process, then
/// the setting, then the name on `PATH`.
pub fn binary(gateway: &str, settings: &GatewaySettings) -> String {
    let var = match gateway {
        "hermes" => "HARNESS_HERMES_BIN",
        _ => "HARNESS_OPENCLAW_BIN",
    };
    std::env::var(var)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| settings.cli_path.clone())
        .unwrap_or_else(|| gateway.to_string())
}

/// Hermes' `--to`: `wechat` is `weixin`; an empty destination is the
/// platform's home channel; Feishu chat ids get their scheme.
fn hermes_to(dest: Option<&str>, downstream: Option<&str>) -> Result<String, String> {
    let platform = downstream.map(|d| d.trim().to_ascii_lowercase());
    let platform = platform.map(|p| {
        if p == "wechat" {
            "weixin".to_string()
        } else {
            p
        }
    });
    match dest.map(str::trim).filter(|d| !d.is_empty()) {
        None => platform
            .filter(|p| !p.is_empty())
            .ok_or_else(|| "Hermes destination is required (e.g. feishu:oc_xxx)".to_string()),
        Some(d) if d.contains(':') => Ok(d.to_string()),
        Some(d) => match platform.as_deref() {
            Some("feishu") if d.starts_with("oc_") => Ok(format!("feishu:{d}")),
            Some(p) if !p.is_empty() => Ok(format!("{p}:{d}")),
            _ => Ok(d.to_string()),
        },
    }
}

/// The argv (without the binary) of sending `row` (docs/contract.md §9).
pub fn argv(row: &Outbound, settings: &GatewaySettings) -> Result<Vec<String>, String> {
    let text = row.message.trim();
    if text.is_empty() {
        // An empty text makes Hermes read stdin: never.
        return Err("the message is empty".into());
    }
    let profile = row.profile.clone().or_else(|| settings.profile.clone());
    let mut args = Vec::new();
    if let Some(p) = profile {
        args.extend(["--profile".to_string(), p]);
    }
    let dest = row.requested_to.as_deref().or(row.dest.as_deref());
    match row.gateway.as_str() {
        "hermes" => {
            let to = hermes_to(dest, row.downstream.as_deref())?;
            args.extend(["send", "--to"].map(String::from));
            args.push(to);
            args.extend(["--json", "--"].map(String::from));
            args.push(text.to_string());
        }
        "openclaw" => {
            let channel = row
                .downstream
                .clone()
                .filter(|d| !d.trim().is_empty())
                .ok_or(
                    "OpenClaw downstream channel is required (e.g. slack, whatsapp, telegram)",
                )?;
            let target = dest
                .filter(|d| !d.trim().is_empty())
                .ok_or("OpenClaw destination is required")?;
            args.extend(["message", "send", "--channel"].map(String::from));
            args.push(channel);
            args.push("--target".into());
            args.push(target.to_string());
            args.push("--message".into());
            args.push(text.to_string());
            args.push("--json".into());
        }
        other => return Err(format!("Unsupported gateway: {other}")),
    }
    Ok(args)
}

impl Outbox<'_> {
    pub async fn gateway_config(&self) -> CoreResult<GatewayConfig> {
        Ok(
            match self.h.store().get_setting(GATEWAY_CONFIG_KEY).await? {
                None => GatewayConfig::default(),
                Some(value) => serde_json::from_value(value).unwrap_or_else(|err| {
                    tracing::warn!(%err, "stored gateway config is unreadable; using defaults");
                    GatewayConfig::default()
                }),
            },
        )
    }

    /// Replace the gateway settings (validated; blanks dropped).
    pub async fn set_gateway_config(&self, mut config: GatewayConfig) -> CoreResult<GatewayConfig> {
        if let Some(h) = config.hermes.as_mut() {
            validate_one("hermes", h)?;
        }
        if let Some(o) = config.openclaw.as_mut() {
            validate_one("openclaw", o)?;
        }
        let value = serde_json::to_value(&config)
            .map_err(|e| CoreError::invalid_body(format!("gateway config: {e}")))?;
        self.h
            .store()
            .put_setting(GATEWAY_CONFIG_KEY, &value, Utc::now())
            .await?;
        self.h.publish(HarnessEvent::SettingChanged {
            key: GATEWAY_CONFIG_KEY.into(),
        });
        Ok(config)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_sends_profile_beats_the_gateways_beats_the_environment() {
        let mut settings = GatewaySettings {
            profile: Some("gw".into()),
            ..GatewaySettings::default()
        };
        settings.env.insert("HOME".into(), "/srv/hermes".into());
        settings
            .env
            .insert("HERMES_PROFILE".into(), "from-env".into());
        let send = settings.hermes_directory(Some("send"));
        assert_eq!(send.profile.as_deref(), Some("send"));
        assert_eq!(send.home, Some(std::path::PathBuf::from("/srv/hermes")));
        assert_eq!(
            settings.hermes_directory(None).profile.as_deref(),
            Some("gw")
        );
        settings.profile = None;
        assert_eq!(
            settings.hermes_directory(None).profile.as_deref(),
            Some("from-env"),
            "the configured environment, as the CLI sees it"
        );
        // A blank configured value is unset, not an empty profile.
        settings.env.insert("HERMES_PROFILE".into(), "  ".into());
        assert_ne!(settings.var("HERMES_PROFILE").as_deref(), Some("  "));
    }
    use super::*;

    fn row(gateway: &str, downstream: Option<&str>, dest: Option<&str>) -> Outbound {
        Outbound::sample(gateway, downstream, dest, "-starts with a dash")
    }

    #[test]
    fn hermes_argv_has_double_dash_and_profile() {
        let s = GatewaySettings {
            profile: Some("work".into()),
            ..Default::default()
        };
        let a = argv(&row("hermes", Some("feishu"), Some("oc_1")), &s).unwrap();
        assert_eq!(
            a,
            [
                "--profile",
                "work",
                "send",
                "--to",
                "feishu:oc_1",
                "--json",
                "--",
                "-starts with a dash"
            ]
        );
        let a = argv(&row("hermes", Some("wechat"), None), &Default::default()).unwrap();
        assert_eq!(a[2], "weixin");
        assert!(argv(&row("hermes", None, None), &Default::default()).is_err());
    }

    #[test]
    fn openclaw_argv() {
        let a = argv(
            &row("openclaw", Some("telegram"), Some("-100")),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(
            a,
            [
                "message",
                "send",
                "--channel",
                "telegram",
                "--target",
                "-100",
                "--message",
                "-starts with a dash",
                "--json"
            ]
        );
        assert!(argv(&row("openclaw", None, Some("x")), &Default::default()).is_err());
        assert!(argv(&row("openclaw", Some("slack"), None), &Default::default()).is_err());
    }

    #[test]
    fn env_names_are_checked() {
        let mut s = GatewaySettings::default();
        s.env.insert("GOOD_1".into(), "v".into());
        assert!(validate_one("hermes", &mut s).is_ok());
        s.env.insert("1BAD".into(), "v".into());
        assert!(validate_one("hermes", &mut s).is_err());
    }
}
