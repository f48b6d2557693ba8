//! Whether agents are isolated from Harness's data directory, and what they
//! may still see (the mechanism is `harness_pty::isolate`).
//!
//! `HARNESS_AGENT_ISOLATION` / `--agent-isolation`:
//! * `auto` (default): isolate when this machine allows it (probed at start);
//!   otherwise start agents without isolation and say so loudly.
//! * `required`: refuse to start the server when agents cannot be isolated.
//! * `off`: never isolate (agents can read the data directory).

use std::path::{Path, PathBuf};

use harness_pty::isolate::{self, Isolation};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IsolationMode {
    #[default]
    Auto,
    Required,
    Off,
}

impl IsolationMode {
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "required" | "on" => Ok(Self::Required),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "agent isolation {other:?}: expected auto, required or off"
            )),
        }
    }
}

/// The decision for this server: which directories agents cannot see.
#[derive(Debug, Clone)]
pub struct AgentIsolation {
    /// Hidden from every agent (`None`: agents are not isolated).
    hide: Option<Vec<PathBuf>>,
    /// Why agents are not isolated (when they are not).
    pub reason: Option<String>,
    /// Why Harness's hooks cannot be laid over `/etc` as the CLIs' managed
    /// settings in the agents' namespace (`None`: they can).
    pub layer_unavailable: Option<String>,
}

impl AgentIsolation {
    /// Not isolated (tests of the plain path; `off`).
    pub fn none(reason: impl Into<String>) -> Self {
        Self {
            hide: None,
            reason: Some(reason.into()),
            layer_unavailable: Some("agents are not isolated".into()),
        }
    }

    /// Decide for `mode`: probe through `launcher` (the harness binary) and
    /// hide `data_dir` and, when they lie elsewhere, the SQLite database's
    /// directory and the secrets directory (a cluster's shared one).
    /// `required` without a working probe is an error.
    pub fn decide(
        mode: IsolationMode,
        launcher: &Path,
        data_dir: &Path,
        database_dir: Option<&Path>,
        secrets_dir: Option<&Path>,
    ) -> Result<Self, String> {
        if isolate::inside_probe() {
            // A launcher that is not the harness binary ran this process as
            // its probe: starting a server here would probe again, without
            // end. Fail the start, whatever the mode; the probe then fails.
            return Err(format!(
                "this process was started as an isolation probe ({} is set) by a launcher \
                 that is not the harness binary: not starting a server",
                isolate::PROBE_ENV
            ));
        }
        if mode == IsolationMode::Off {
            return Ok(Self::none("switched off (HARNESS_AGENT_ISOLATION=off)"));
        }
        match isolate::probe(launcher) {
            Ok(()) => {
                let mut hide = vec![data_dir.to_path_buf()];
                for dir in [database_dir, secrets_dir].into_iter().flatten() {
                    if !dir.starts_with(data_dir) && dir.parent().is_some() {
                        hide.push(dir.to_path_buf());
                    }
                }
                Ok(Self {
                    hide: Some(hide),
                    reason: None,
                    layer_unavailable: isolate::probe_layer(launcher).err(),
                })
            }
            Err(err) if mode == IsolationMode::Required => Err(format!(
                "agents cannot be isolated from the data directory here ({err}), and \
                 HARNESS_AGENT_ISOLATION=required"
            )),
            Err(err) => Ok(Self::none(err)),
        }
    }

    pub fn active(&self) -> bool {
        self.hide.is_some()
    }

    /// Whether each agent gets Harness's hooks as its CLI's managed settings
    /// (an `/etc` layer in its namespace), which the user's and the
    /// project's settings cannot switch off.
    pub fn managed_hooks(&self) -> bool {
        self.active() && self.layer_unavailable.is_none()
    }

    /// The start-up line.
    pub fn describe(&self) -> String {
        match (&self.hide, &self.reason) {
            (Some(hide), _) => format!(
                "agents are isolated: they cannot see {} (user, mount and PID namespaces); {}",
                hide.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                match &self.layer_unavailable {
                    None => "their hooks are managed settings their own settings cannot \
                             switch off"
                        .to_string(),
                    Some(why) => format!(
                        "their hooks are NOT managed settings ({why}): a start whose settings \
                         switch the hooks off is refused"
                    ),
                }
            ),
            (None, reason) => format!(
                "agents are NOT isolated from the data directory: {}; an agent can read \
                 Harness's secrets and replace the executable its hooks and sandbox run \
                 from, so nothing holds its approval gate (see docs/security.md)",
                reason.as_deref().unwrap_or("unknown reason")
            ),
        }
    }

    /// The isolation for one agent: everything hidden but its own run
    /// directory, the signal directory and the private harness executable
    /// its hooks run (all read-only); `etc_layer` laid over `/etc` (its
    /// CLI's managed settings). `cwd` inside a hidden directory cannot work
    /// and is refused by the caller.
    pub fn for_agent(
        &self,
        run_dir: &Path,
        signal_dir: &Path,
        exe: &Path,
        etc_layer: Option<&Path>,
    ) -> Option<Isolation> {
        let hide = self.hide.clone()?;
        let show = [run_dir, signal_dir, exe]
            .into_iter()
            .filter(|p| hide.iter().any(|h| p.starts_with(h) && *p != h.as_path()))
            .map(Path::to_path_buf)
            .collect();
        Some(Isolation {
            hide,
            show,
            etc_layer: etc_layer.map(Path::to_path_buf),
        })
    }

    /// A hidden directory that contains `path`, if any.
    pub fn hides(&self, path: &Path) -> Option<&Path> {
        self.hide
            .as_ref()?
            .iter()
            .find(|h| path.starts_with(h))
            .map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!(IsolationMode::parse("AUTO").unwrap(), IsolationMode::Auto);
        assert_eq!(
            IsolationMode::parse("required").unwrap(),
            IsolationMode::Required
        );
        assert_eq!(IsolationMode::parse("off").unwrap(), IsolationMode::Off);
        assert!(IsolationMode::parse("maybe").is_err());
    }

    #[test]
    fn an_agent_sees_only_its_own_run_directory() {
        let iso = AgentIsolation {
            hide: Some(vec!["/d".into()]),
            reason: None,
            layer_unavailable: None,
        };
        let one = iso
            .for_agent(
                Path::new("/d/runs/e1"),
                Path::new("/d/signals"),
                Path::new("/d/bin/harness-1"),
                Some(Path::new("/d/runs/e1/etc")),
            )
            .unwrap();
        assert_eq!(one.hide, vec![PathBuf::from("/d")]);
        assert_eq!(
            one.show,
            vec![
                PathBuf::from("/d/runs/e1"),
                PathBuf::from("/d/signals"),
                PathBuf::from("/d/bin/harness-1")
            ]
        );
        assert_eq!(one.etc_layer, Some(PathBuf::from("/d/runs/e1/etc")));
        assert!(iso.managed_hooks());
        assert!(iso.hides(Path::new("/d/work")).is_some());
        assert!(iso.hides(Path::new("/e")).is_none());
        assert!(
            AgentIsolation::none("x")
                .for_agent(
                    Path::new("/d/r"),
                    Path::new("/d/s"),
                    Path::new("/d/b"),
                    None
                )
                .is_none()
        );
    }
}
