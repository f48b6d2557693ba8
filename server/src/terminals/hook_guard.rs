//! Settings that would switch Harness's hooks off, found before a start.
//!
//! An agent can write its CLI's settings files (it runs as the server's
//! user): `{"disableAllHooks": true}` in `~/.claude/settings.json` or
//! `<cwd>/.claude/settings.local.json`, or `[hooks.state."<key>"] enabled =
//! false` in `$CODEX_HOME/config.toml`. From the next start on, no hook of a
//! non-managed source would run. Isolated agents get the hooks as managed
//! settings (`providers::HOOKS` in an `/etc` layer), which those files cannot
//! switch off; otherwise such a file refuses the start, naming the file and
//! the key, so an agent never runs silently ungated. What the host's own
//! administrator set (`/etc/claude-code`, `/etc/codex/requirements.toml`)
//! and that switches every hook off refuses the start either way.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use harness_core::model::Provider;

/// Why the hooks would not run: `<file>: <key> …`.
pub type Refusal = String;

/// Checks the settings files the agent's CLI will read. `managed`: the
/// hooks are managed settings (only the host administrator's files matter).
pub fn check(
    provider: Provider,
    cwd: &Path,
    env: &BTreeMap<String, String>,
    managed: bool,
    etc: &Path,
) -> Result<(), Refusal> {
    match provider {
        Provider::Claude => check_claude(cwd, env, managed, etc),
        Provider::Codex => check_codex(env, managed, etc),
        Provider::Command => Ok(()),
    }
}

/// Claude Code reads `disableAllHooks` as off unless it is absent, `null`,
/// `false` or `"false"`.
fn disables(value: Option<&serde_json::Value>) -> bool {
    !matches!(
        value,
        None | Some(serde_json::Value::Null) | Some(serde_json::Value::Bool(false))
    ) && value.and_then(|v| v.as_str()) != Some("false")
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(v) => Some(v),
        Err(err) => {
            tracing::warn!(file = %path.display(), %err, "a settings file is not valid JSON");
            None
        }
    }
}

fn refusal(file: &Path, key: &str, why: &str) -> Refusal {
    format!(
        "{} sets {key}: {why}; Harness does not start an agent whose approval gate would be \
         off (remove the key, or isolate agents so the hooks are managed settings)",
        file.display()
    )
}

fn claude_managed_files(etc: &Path) -> Vec<PathBuf> {
    let dir = etc.join("claude-code");
    let mut files = vec![dir.join("managed-settings.json")];
    let mut drop_ins: Vec<PathBuf> = std::fs::read_dir(dir.join("managed-settings.d"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    drop_ins.sort();
    files.extend(drop_ins);
    files
}

fn check_claude(
    cwd: &Path,
    env: &BTreeMap<String, String>,
    managed: bool,
    etc: &Path,
) -> Result<(), Refusal> {
    for file in claude_managed_files(etc) {
        let Some(v) = read_json(&file) else { continue };
        if disables(v.get("disableAllHooks")) {
            return Err(refusal(
                &file,
                "disableAllHooks",
                "the host's managed settings switch every hook off",
            ));
        }
        if !managed && v.get("allowManagedHooksOnly") == Some(&serde_json::Value::Bool(true)) {
            return Err(refusal(
                &file,
                "allowManagedHooksOnly",
                "Harness's hooks are not managed settings here, so they would not run",
            ));
        }
    }
    if managed {
        return Ok(());
    }
    for file in claude_user_and_project_files(cwd, env) {
        if let Some(v) = read_json(&file)
            && disables(v.get("disableAllHooks"))
        {
            return Err(refusal(
                &file,
                "disableAllHooks",
                "Claude Code would run none of Harness's hooks",
            ));
        }
    }
    Ok(())
}

/// The user's settings and the project's (shared and local) of `cwd` and
/// every directory above it up to its repository's root.
fn claude_user_and_project_files(cwd: &Path, env: &BTreeMap<String, String>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let config_dir = env
        .get("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home(env).map(|h| h.join(".claude")));
    if let Some(dir) = config_dir {
        files.push(dir.join("settings.json"));
    }
    for dir in cwd.ancestors() {
        files.push(dir.join(".claude/settings.json"));
        files.push(dir.join(".claude/settings.local.json"));
        if dir.join(".git").exists() {
            break;
        }
    }
    files
}

fn home(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    env.get("HOME")
        .filter(|h| !h.is_empty())
        .cloned()
        .or_else(|| std::env::var("HOME").ok())
        .map(PathBuf::from)
}

fn read_toml(path: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(path).ok()?;
    match text.parse::<toml::Table>() {
        Ok(t) => Some(t),
        Err(err) => {
            tracing::warn!(file = %path.display(), %err, "a Codex configuration file is not valid TOML");
            None
        }
    }
}

fn check_codex(env: &BTreeMap<String, String>, managed: bool, etc: &Path) -> Result<(), Refusal> {
    let requirements = etc.join(super::providers::CODEX_REQUIREMENTS_FILE);
    if let Some(req) = read_toml(&requirements) {
        let hooks_off = req
            .get("features")
            .and_then(|f| f.get("hooks").or_else(|| f.get("codex_hooks")))
            .and_then(toml::Value::as_bool)
            == Some(false);
        if hooks_off {
            return Err(refusal(
                &requirements,
                "features.hooks = false",
                "the host's requirements switch every hook off",
            ));
        }
        if !managed
            && req
                .get("allow_managed_hooks_only")
                .and_then(toml::Value::as_bool)
                == Some(true)
        {
            return Err(refusal(
                &requirements,
                "allow_managed_hooks_only",
                "Harness's hooks are not managed here, so they would not run",
            ));
        }
    }
    if managed {
        return Ok(());
    }
    // `features.hooks` of the user's and the project's files loses to
    // Harness's `-c features.hooks=true`; a hook's `enabled = false` in
    // `[hooks.state]` of the user's file does not (Codex ignores that table
    // in `-c` and in project files).
    let Some(codex_home) = super::resume::codex_home(env) else {
        return Ok(());
    };
    let file = codex_home.join("config.toml");
    let Some(config) = read_toml(&file) else {
        return Ok(());
    };
    let states = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    for (key, state) in states.into_iter().flatten() {
        let off = state.get("enabled").and_then(toml::Value::as_bool) == Some(false);
        if off && key.contains("<session-flags>") {
            return Err(refusal(
                &file,
                &format!("hooks.state.\"{key}\".enabled = false"),
                "Codex would not run that Harness hook",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path) -> BTreeMap<String, String> {
        BTreeMap::from([("HOME".to_string(), home.display().to_string())])
    }

    #[test]
    fn claude_disable_all_hooks_is_refused_unless_the_hooks_are_managed() {
        let t = tempfile::tempdir().unwrap();
        let (home, work, etc) = (
            t.path().join("h"),
            t.path().join("w/sub"),
            t.path().join("etc"),
        );
        std::fs::create_dir_all(work.join(".claude")).unwrap();
        std::fs::create_dir_all(t.path().join("w/.git")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        let ok = |managed| check(Provider::Claude, &work, &env(&home), managed, &etc);
        assert_eq!(ok(false), Ok(()));
        for (file, value) in [
            (home.join(".claude/settings.json"), "true"),
            (work.join(".claude/settings.local.json"), "\"yes\""),
            (t.path().join("w/.claude/settings.json"), "1"),
        ] {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, format!("{{\"disableAllHooks\": {value}}}")).unwrap();
            let err = ok(false).unwrap_err();
            assert!(
                err.contains(&file.display().to_string()) && err.contains("disableAllHooks"),
                "{err}"
            );
            assert_eq!(ok(true), Ok(()), "managed hooks: masked");
            std::fs::write(&file, "{\"disableAllHooks\": false}").unwrap();
        }
        // The host's administrator switching every hook off: refused either way.
        let ms = etc.join("claude-code/managed-settings.d/zz.json");
        std::fs::create_dir_all(ms.parent().unwrap()).unwrap();
        std::fs::write(&ms, "{\"disableAllHooks\": true}").unwrap();
        assert!(ok(true).unwrap_err().contains("zz.json"));
    }

    #[test]
    fn codex_hook_state_off_is_refused_unless_the_hooks_are_managed() {
        let t = tempfile::tempdir().unwrap();
        let (home, etc) = (t.path().join("h"), t.path().join("etc"));
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        let ok = |managed| check(Provider::Codex, t.path(), &env(&home), managed, &etc);
        let config = home.join(".codex/config.toml");
        std::fs::write(&config, "[features]\nhooks = false\n").unwrap();
        assert_eq!(ok(false), Ok(()), "-c features.hooks=true wins");
        std::fs::write(
            &config,
            "[hooks.state.\"/<session-flags>/config.toml:pre_tool_use:0:0\"]\nenabled = false\n",
        )
        .unwrap();
        let err = ok(false).unwrap_err();
        assert!(
            err.contains("config.toml") && err.contains("pre_tool_use"),
            "{err}"
        );
        assert_eq!(ok(true), Ok(()));
        let req = etc.join("codex/requirements.toml");
        std::fs::create_dir_all(req.parent().unwrap()).unwrap();
        std::fs::write(&req, "[features]\nhooks = false\n").unwrap();
        assert!(ok(true).unwrap_err().contains("requirements.toml"));
    }
}
