//! Claude Code's configuration shapes: the `--settings` hooks and the
//! `--mcp-config` servers. Both flags take a file path or a JSON string.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One hook command.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct HookCommand {
    /// Only `command` hooks are run.
    #[serde(rename = "type", default = "command_type")]
    pub kind: String,
    /// Shell command (`sh -c`).
    #[serde(default)]
    pub command: String,
    /// Seconds (Claude's default is 60).
    pub timeout: Option<u64>,
}

fn command_type() -> String {
    "command".into()
}

/// A matcher group of an event.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct HookGroup {
    /// Tool-name matcher: empty or `*` matches all; otherwise `A|B` exact
    /// alternatives (Claude accepts regexes; plain names behave the same).
    #[serde(default)]
    pub matcher: Option<String>,
    /// The commands.
    #[serde(default)]
    pub hooks: Vec<HookCommand>,
}

impl HookGroup {
    /// True when this group applies to `tool`.
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (self.matcher.as_deref().map(str::trim), tool) {
            (None | Some("" | "*"), _) => true,
            (Some(_), None) => true,
            (Some(m), Some(t)) => m.split('|').any(|alt| alt.trim() == t),
        }
    }
}

/// The `hooks` key of a settings file.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Settings {
    /// Event name → matcher groups.
    #[serde(default)]
    pub hooks: BTreeMap<String, Vec<HookGroup>>,
}

impl Settings {
    /// Adds the hooks of Claude Code's managed settings drop-ins
    /// (`<dir>/*.json`, in name order), as the real CLI merges them.
    pub fn with_managed(mut self, dir: &std::path::Path) -> Self {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let Some(managed) = file.to_str().and_then(|f| load::<Settings>(f).ok()) else {
                continue;
            };
            for (event, groups) in managed.hooks {
                self.hooks.entry(event).or_default().extend(groups);
            }
        }
        self
    }

    /// Command hooks for `event` that match `tool`.
    pub fn commands(&self, event: &str, tool: Option<&str>) -> Vec<HookCommand> {
        self.hooks
            .get(event)
            .into_iter()
            .flatten()
            .filter(|g| g.matches(tool))
            .flat_map(|g| g.hooks.iter().cloned())
            .filter(|h| h.kind == "command" && !h.command.is_empty())
            .collect()
    }
}

/// An MCP server entry.
#[derive(Clone, Debug, Deserialize)]
pub struct McpServer {
    /// `http` (streamable HTTP) is the only type the double calls.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// Endpoint.
    pub url: Option<String>,
    /// Extra headers (`${VAR}` / `${VAR:-default}` expanded).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// An `--mcp-config` file.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct McpConfig {
    /// Name → server.
    #[serde(rename = "mcpServers", default)]
    pub servers: BTreeMap<String, McpServer>,
}

/// The endpoint to call: URL and headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// URL.
    pub url: String,
    /// Headers (already expanded).
    pub headers: Vec<(String, String)>,
}

impl McpConfig {
    /// The HTTP server named `harness`, else the first HTTP server.
    pub fn endpoint(&self) -> Option<Endpoint> {
        let is_http = |s: &&McpServer| {
            s.url.is_some() && matches!(s.kind.as_deref(), None | Some("http" | "streamable-http"))
        };
        let server = self
            .servers
            .get("harness")
            .filter(is_http)
            .or_else(|| self.servers.values().find(is_http))?;
        Some(Endpoint {
            url: expand(server.url.as_deref()?),
            headers: server
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), expand(v)))
                .collect(),
        })
    }
}

/// Reads a flag value that is either inline JSON or a path to a JSON file.
pub fn load<T: serde::de::DeserializeOwned>(value: &str) -> Result<T, String> {
    let text = if value.trim_start().starts_with('{') {
        value.to_owned()
    } else {
        std::fs::read_to_string(value).map_err(|e| format!("{value}: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| format!("{value}: {e}"))
}

/// Expands `${VAR}` and `${VAR:-default}` from the environment.
pub fn expand(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &rest[start + 2..start + end];
        let (name, default) = inner.split_once(":-").unwrap_or((inner, ""));
        out.push_str(&std::env::var(name).unwrap_or_else(|_| default.to_owned()));
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_shape() {
        let s: Settings = load(
            r#"{"hooks":{"PreToolUse":[{"matcher":"AskUserQuestion","hooks":[{"type":"command","command":"a","timeout":5}]},
                {"matcher":"Write|Edit","hooks":[{"type":"command","command":"b"}]}],
               "Stop":[{"hooks":[{"type":"command","command":"c"}]}]}}"#,
        )
        .unwrap();
        let pre = s.commands("PreToolUse", Some("AskUserQuestion"));
        assert_eq!(pre.len(), 1);
        assert_eq!(pre[0].command, "a");
        assert_eq!(pre[0].timeout, Some(5));
        assert_eq!(s.commands("PreToolUse", Some("Edit"))[0].command, "b");
        assert!(s.commands("PreToolUse", Some("Bash")).is_empty());
        assert_eq!(s.commands("Stop", None)[0].command, "c");
        assert!(s.commands("SessionStart", None).is_empty());
    }

    #[test]
    fn mcp_config_shape_and_expansion() {
        // SAFETY (test): single-threaded use of a unique variable.
        unsafe { std::env::set_var("DOUBLE_TEST_TOKEN", "tok123") };
        let c: McpConfig = load(
            r#"{"mcpServers":{"other":{"type":"stdio","command":"x"},
                "harness":{"type":"http","url":"http://127.0.0.1:9/mcp",
                "headers":{"Authorization":"Bearer ${DOUBLE_TEST_TOKEN}","X":"${NOPE_UNSET:-dflt}"}}}}"#,
        )
        .unwrap();
        let e = c.endpoint().unwrap();
        assert_eq!(e.url, "http://127.0.0.1:9/mcp");
        assert!(
            e.headers
                .contains(&("Authorization".into(), "Bearer tok123".into()))
        );
        assert!(e.headers.contains(&("X".into(), "dflt".into())));
    }
}
