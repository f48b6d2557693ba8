//! Destination resolution (docs/tower-messaging.md §6.2, `resolveHarnessDestination`):
//! what a send's `to` / `dest` becomes before the gateway CLI runs.
//!
//! In order: Hermes' WeChat home route (unattended) ignores any destination;
//! an empty request is the Hermes home channel (unattended) or an error; an
//! alias of `harness.destinations` (alias / label / dest under
//! [`normalize_name`]); the Hermes channel directory file of the profile; the
//! OpenClaw group directory (`openclaw directory groups list …`, a hit is
//! cached into `harness.destinations`); and last [`normalize_platform_dest`].
//! The rules are pure functions here; the directory CLI is run by the
//! caller through [`DirectoryLookup`] (the server's gateway runner). The
//! list's rules and edits (whole, one entry at a time, the directory cache)
//! are in [`super::destination_edits`].

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::CoreResult;
use crate::outbox::Outbox;

pub const DESTINATIONS_KEY: &str = "harness.destinations";
/// At most this many aliases are stored (the cache never grows past it).
pub const MAX_DESTINATIONS: usize = 500;

/// One alias entry of `harness.destinations`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    /// Assigned when the entry is added one at a time (or cached from a
    /// directory); entries of a list written whole may have none and are
    /// then addressed by their position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    #[serde(default)]
    pub dest: String,
    /// Missing means `work`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

fn blank(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|s| !s.is_empty())
}

fn lower(v: Option<&str>) -> Option<String> {
    blank(v).map(str::to_ascii_lowercase)
}

/// Trim; strip the quotes `「」"'`; strip one trailing `群`; lower-case.
pub fn normalize_name(s: &str) -> String {
    let t: String = s
        .trim()
        .chars()
        .filter(|c| !matches!(c, '「' | '」' | '"' | '\''))
        .collect();
    let t = t.trim();
    let t = t.strip_suffix('群').unwrap_or(t).trim();
    t.to_lowercase()
}

/// `^[a-z][a-z0-9_-]*:` — the value already names its platform.
pub fn has_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// `^(oc_|ou_|on_|[CDG][A-Z0-9]{8,}|-?\d{6,}|[0-9A-Fa-f._-]+@g\.us$)`:
/// a platform id rather than a name (the reference's pattern, anchored at
/// the start only except for the WhatsApp group form).
pub fn is_id_like(s: &str) -> bool {
    if s.starts_with("oc_") || s.starts_with("ou_") || s.starts_with("on_") {
        return true;
    }
    let b = s.as_bytes();
    if matches!(b.first(), Some(b'C' | b'D' | b'G'))
        && b[1..]
            .iter()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            .count()
            >= 8
    {
        return true;
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.bytes().take_while(u8::is_ascii_digit).count() >= 6 {
        return true;
    }
    if let Some(local) = s.strip_suffix("@g.us") {
        return !local.is_empty()
            && local
                .chars()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, '.' | '_' | '-'));
    }
    false
}

/// The last rule (`normalizePlatformDest`): keep a `scheme:` value; Feishu
/// `oc_…` gets `feishu:`; WeChat without a scheme gets `weixin:`; an id-like
/// value gets `<platform>:`; anything else stays as it is.
pub fn normalize_platform_dest(raw: &str, platform: Option<&str>) -> String {
    let raw = raw.trim();
    if has_scheme(raw) {
        return raw.to_string();
    }
    let platform = lower(platform);
    match platform.as_deref() {
        Some("feishu") if raw.starts_with("oc_") => format!("feishu:{raw}"),
        Some("wechat" | "weixin") if !raw.contains(':') => format!("weixin:{raw}"),
        Some(p) if is_id_like(raw) => format!("{p}:{raw}"),
        _ => raw.to_string(),
    }
}

/// What one send asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    pub gateway: &'a str,
    /// The downstream platform (`telegram`, `feishu`, …).
    pub platform: Option<&'a str>,
    pub scope: &'a str,
    /// `to`, else the target's `dest`.
    pub requested: Option<&'a str>,
}

/// Rule 4: the alias entries of the gateway (if the entry names one), the
/// platform (if both name one) and the scope whose alias, label or dest
/// equals the query; one match, or several with one dest.
pub fn alias_match(entries: &[Destination], req: &Request<'_>, query: &str) -> Option<String> {
    let q = normalize_name(query);
    if q.is_empty() {
        return None;
    }
    let gateway = req.gateway.trim().to_ascii_lowercase();
    let platform = lower(req.platform);
    let mut found: Option<&str> = None;
    for e in entries {
        let dest = e.dest.trim();
        if dest.is_empty() {
            continue;
        }
        if lower(e.gateway.as_deref()).is_some_and(|g| g != gateway) {
            continue;
        }
        if let (Some(ep), Some(p)) = (lower(e.platform.as_deref()), platform.as_deref())
            && ep != p
        {
            continue;
        }
        if lower(e.scope.as_deref()).as_deref().unwrap_or("work") != req.scope {
            continue;
        }
        let names = [e.alias.as_deref(), e.label.as_deref(), Some(dest)];
        if !names.into_iter().flatten().any(|n| normalize_name(n) == q) {
            continue;
        }
        match found {
            Some(other) if other != dest => return None,
            _ => found = Some(dest),
        }
    }
    found.map(str::to_string)
}

/// `$HOME/.hermes/profiles/<profile>/channel_directory.json`.
pub fn hermes_directory_path(home: &Path, profile: &str) -> PathBuf {
    home.join(".hermes")
        .join("profiles")
        .join(profile)
        .join("channel_directory.json")
}

fn str_field<'v>(v: &'v serde_json::Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(serde_json::Value::as_str))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The single `(id, name)` among `entries` whose name or id matches `query`.
fn single_match(entries: &[serde_json::Value], query: &str) -> Option<(String, Option<String>)> {
    let q = normalize_name(query);
    let mut hit: Option<(String, Option<String>)> = None;
    for e in entries {
        let Some(id) = str_field(e, &["id", "chatId", "chat_id", "target"]) else {
            continue;
        };
        let name = str_field(e, &["name", "title", "label"]);
        if normalize_name(id) != q && name.is_none_or(|n| normalize_name(n) != q) {
            continue;
        }
        match &hit {
            Some((other, _)) if other != id => return None,
            _ => hit = Some((id.to_string(), name.map(str::to_string))),
        }
    }
    hit
}

/// Rule 5 on the file's JSON `{platforms: {<platform>: [{id, name, type}]}}`.
pub fn hermes_directory_match(
    directory: &serde_json::Value,
    platform: &str,
    query: &str,
) -> Option<String> {
    let platform = platform.trim().to_ascii_lowercase();
    let entries = directory
        .get("platforms")?
        .as_object()?
        .iter()
        .find_map(|(k, v)| {
            (k.trim().to_ascii_lowercase() == platform)
                .then(|| v.as_array())
                .flatten()
        })?;
    let (id, _) = single_match(entries, query)?;
    Some(normalize_platform_dest(&id, Some(&platform)))
}

/// Whether rule 6 may run the OpenClaw directory for `query`.
pub fn openclaw_lookup_applies(query: &str) -> bool {
    !has_scheme(query) && !is_id_like(query)
}

/// The directory CLI's argv (without the binary).
pub fn openclaw_directory_argv(platform: &str, query: &str) -> Vec<String> {
    [
        "directory",
        "groups",
        "list",
        "--channel",
        platform,
        "--query",
        query,
        "--json",
        "--limit",
        "10",
    ]
    .map(String::from)
    .to_vec()
}

/// The JSON value (object or array) at the end of `text`, after any log lines.
fn json_tail(text: &str) -> Option<serde_json::Value> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text.trim()) {
        return Some(v);
    }
    let lines: Vec<&str> = text.lines().collect();
    (0..lines.len()).rev().find_map(|start| {
        let l = lines[start].trim_start();
        if !l.starts_with('{') && !l.starts_with('[') {
            return None;
        }
        serde_json::from_str(lines[start..].join("\n").trim()).ok()
    })
}

/// Rule 6 on the CLI's output (JSON, possibly after log lines): an array
/// of groups, or an object holding one under `groups` / `entries` /
/// `items` / `results` / `data`. The single exact match as `(id, name)`.
pub fn openclaw_directory_match(output: &str, query: &str) -> Option<(String, Option<String>)> {
    let json = json_tail(output)?;
    let list = match &json {
        serde_json::Value::Array(a) => a.clone(),
        serde_json::Value::Object(o) => ["groups", "entries", "items", "results", "data"]
            .iter()
            .find_map(|k| o.get(*k).and_then(|v| v.as_array()).cloned())?,
        _ => return None,
    };
    single_match(&list, query)
}

/// Runs the OpenClaw directory CLI (the server's gateway runner).
#[async_trait]
pub trait DirectoryLookup: Send + Sync {
    /// The stdout of `openclaw directory groups list …` (`argv` from
    /// [`openclaw_directory_argv`]), or why it failed.
    async fn run_directory(&self, argv: Vec<String>) -> Result<String, String>;
}

/// Where a resolved destination came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    HomeRoute,
    Alias,
    HermesDirectory,
    OpenClawDirectory,
    Fallback,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// `None`: the gateway's home channel.
    pub dest: Option<String>,
    pub via: Via,
    /// A directory hit to remember in `harness.destinations`.
    pub cache: Option<Destination>,
}

/// Where the Hermes directory file is looked for.
#[derive(Debug, Clone, Default)]
pub struct HermesDirectory {
    pub home: Option<PathBuf>,
    /// The send's profile, else the gateway's, else `$HERMES_PROFILE`.
    pub profile: Option<String>,
}

/// Rules 1–7 of docs/tower-messaging.md §6.2.
pub async fn resolve(
    req: &Request<'_>,
    destinations: &[Destination],
    hermes: &HermesDirectory,
    lookup: &dyn DirectoryLookup,
) -> Result<Resolution, String> {
    let gateway = req.gateway.trim().to_ascii_lowercase();
    let platform = lower(req.platform);
    let unattended = req.scope == "unattended";
    let done = |dest: Option<String>, via| Resolution {
        dest,
        via,
        cache: None,
    };
    if gateway == "hermes" && unattended && matches!(platform.as_deref(), Some("wechat" | "weixin"))
    {
        return Ok(done(None, Via::HomeRoute));
    }
    let Some(requested) = blank(req.requested) else {
        if gateway == "hermes" && unattended {
            return Ok(done(platform, Via::HomeRoute));
        }
        return Err(if unattended {
            "Destination is required".to_string()
        } else {
            "Work messages require a destination (pass `to`: a chat name, alias or id)".to_string()
        });
    };
    if let Some(dest) = alias_match(destinations, req, requested) {
        return Ok(done(Some(dest), Via::Alias));
    }
    if gateway == "hermes"
        && let (Some(home), Some(profile), Some(p)) = (
            hermes.home.as_deref(),
            blank(hermes.profile.as_deref()),
            platform.as_deref(),
        )
    {
        let path = hermes_directory_path(home, profile);
        match tokio::fs::read(&path).await {
            Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(dir) => {
                    if let Some(dest) = hermes_directory_match(&dir, p, requested) {
                        return Ok(done(Some(dest), Via::HermesDirectory));
                    }
                }
                Err(err) => {
                    tracing::warn!(path = %path.display(), %err, "Hermes channel directory is not JSON")
                }
            },
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "cannot read the Hermes channel directory")
            }
        }
    }
    if gateway == "openclaw"
        && let Some(p) = platform.as_deref()
        && openclaw_lookup_applies(requested)
    {
        match lookup
            .run_directory(openclaw_directory_argv(p, requested))
            .await
        {
            Ok(out) => {
                if let Some((id, name)) = openclaw_directory_match(&out, requested) {
                    let dest = normalize_platform_dest(&id, Some(p));
                    return Ok(Resolution {
                        cache: Some(Destination {
                            id: None,
                            alias: Some(requested.to_string()),
                            label: Some(name.unwrap_or_else(|| requested.to_string())),
                            gateway: Some(gateway.clone()),
                            platform: Some(p.to_string()),
                            dest: dest.clone(),
                            scope: Some(req.scope.to_string()),
                        }),
                        dest: Some(dest),
                        via: Via::OpenClawDirectory,
                    });
                }
            }
            Err(err) => {
                tracing::debug!(%err, "OpenClaw directory lookup failed; using the raw destination")
            }
        }
    }
    Ok(done(
        Some(normalize_platform_dest(requested, platform.as_deref())),
        Via::Fallback,
    ))
}

/// What makes an alias entry unique: gateway + platform + scope (missing
/// means `work`) + the alias under [`normalize_name`].
pub(crate) fn alias_key(
    d: &Destination,
) -> (Option<String>, Option<String>, String, Option<String>) {
    (
        lower(d.gateway.as_deref()),
        lower(d.platform.as_deref()),
        lower(d.scope.as_deref()).unwrap_or_else(|| "work".into()),
        blank(d.alias.as_deref()).map(normalize_name),
    )
}

/// Insert or replace `entry` keyed by gateway + platform + scope + alias
/// (a replaced entry keeps its id).
pub fn upsert(entries: &mut Vec<Destination>, entry: Destination) {
    let k = alias_key(&entry);
    match entries.iter().position(|d| alias_key(d) == k) {
        Some(at) => {
            let id = entries[at].id.take().or(entry.id.clone());
            entries[at] = Destination { id, ..entry };
        }
        None if entries.len() < MAX_DESTINATIONS => entries.push(entry),
        None => tracing::warn!("harness.destinations is full; a directory hit is not cached"),
    }
}

impl Outbox<'_> {
    /// `harness.destinations` (an unreadable value reads as empty).
    pub async fn destinations(&self) -> CoreResult<Vec<Destination>> {
        Ok(match self.h.store().get_setting(DESTINATIONS_KEY).await? {
            None => Vec::new(),
            Some(value) => serde_json::from_value(value).unwrap_or_else(|err| {
                tracing::warn!(%err, "stored destinations are unreadable; using none");
                Vec::new()
            }),
        })
    }

    /// Resolve a send's destination (docs/tower-messaging.md §6.2) and remember a directory hit.
    pub async fn resolve_destination(
        &self,
        req: &Request<'_>,
        hermes: &HermesDirectory,
        lookup: &dyn DirectoryLookup,
    ) -> CoreResult<Result<Resolution, String>> {
        let list = self.destinations().await?;
        Ok(self
            .resolve_destination_in(&list, req, hermes, lookup)
            .await)
    }

    /// [`Self::resolve_destination`] with the alias list already read (the
    /// sender keeps it between sends).
    pub async fn resolve_destination_in(
        &self,
        list: &[Destination],
        req: &Request<'_>,
        hermes: &HermesDirectory,
        lookup: &dyn DirectoryLookup,
    ) -> Result<Resolution, String> {
        let resolved = resolve(req, list, hermes, lookup).await;
        if let Ok(Resolution {
            cache: Some(entry), ..
        }) = &resolved
        {
            // A failed cache write only costs a second directory lookup.
            if let Err(err) = self.remember_destination(entry.clone()).await {
                tracing::warn!(error = ?err, "cannot cache a directory destination");
            }
        }
        resolved
    }
}

#[cfg(test)]
#[path = "destination_tests.rs"]
mod tests;
