//! What to spawn: argv, working directory, the complete environment, size.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Variables [`base_env`] copies from the current process.
pub const BASE_ENV_KEYS: &[&str] = &["PATH", "HOME", "LANG", "TERM", "COLORTERM"];
/// `TERM` when the current process has none.
pub const DEFAULT_TERM: &str = "xterm-256color";

/// A program to run in a fresh PTY.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnSpec {
    /// Program and arguments; `argv[0]` is looked up in `env["PATH"]`.
    pub argv: Vec<String>,
    /// Working directory (must exist).
    pub cwd: PathBuf,
    /// The COMPLETE environment of the child: nothing else is inherited
    /// (docs/decisions.md D13). Building the allow-list is the caller's job; see
    /// [`base_env`]. (portable-pty additionally sets `SHELL`, from this map
    /// or the password database.)
    pub env: BTreeMap<String, String>,
    /// Initial rows (clamped to at least 2).
    pub rows: u16,
    /// Initial columns (clamped to at least 2).
    pub cols: u16,
}

impl SpawnSpec {
    /// A spec with the [`base_env`], 24×80, in `cwd`.
    pub fn new(argv: impl IntoIterator<Item = impl Into<String>>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd: cwd.into(),
            env: base_env(),
            rows: 24,
            cols: 80,
        }
    }

    /// Sets one environment variable (builder style).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets the size (builder style).
    pub fn size(mut self, rows: u16, cols: u16) -> Self {
        self.rows = rows;
        self.cols = cols;
        self
    }
}

/// The minimal environment of an agent: `PATH`, `HOME`, `LANG`, `TERM`
/// (default `xterm-256color`) and `COLORTERM=truecolor`, taken from the
/// current process where present. Nothing else — in particular no secrets of
/// the server — is copied.
pub fn base_env() -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = ["PATH", "HOME", "LANG", "TERM"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_owned(), v)))
        .collect();
    env.entry("PATH".into())
        .or_insert_with(|| "/usr/local/bin:/usr/bin:/bin".into());
    env.entry("TERM".into())
        .or_insert_with(|| DEFAULT_TERM.into());
    env.insert("COLORTERM".into(), "truecolor".into());
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_env_is_an_allow_list() {
        let env = base_env();
        assert!(env.keys().all(|k| BASE_ENV_KEYS.contains(&k.as_str())));
        assert_eq!(env["COLORTERM"], "truecolor");
        assert!(env.contains_key("PATH") && env.contains_key("TERM"));
    }
}
