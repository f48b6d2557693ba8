//! `harness serve` configuration (docs/contract.md §1).

use std::{net::SocketAddr, path::PathBuf, time::Duration};

#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: SocketAddr,
    pub data_dir: PathBuf,
    /// `sqlite://…`; defaults to `<data_dir>/harness.db`.
    pub database_url: Option<String>,
    /// Development override of the web assets: a built site directory
    /// (`<target>/site`) read at start instead of the site embedded in the
    /// binary. `None`: the embedded site.
    pub site_root: Option<PathBuf>,
    pub pending_ttl: Duration,
    pub sweep_interval: Duration,
    /// The `harness` executable agents' hooks call (default: this executable).
    pub harness_bin: PathBuf,
    /// Extra `Host` values accepted (e.g. `harness.example.com:7700`) when
    /// reachable under another name than the bind address.
    pub allowed_hosts: Vec<String>,
    /// How long a reply waits for its delivery before answering `queued`.
    pub delivery_wait: Duration,
    /// Connection cap, header-read/idle timeout, stream caps (`serve.rs`).
    pub limits: crate::serve::Limits,
    /// How long `push_to_human` waits for the first send attempt (docs/decisions.md D8).
    pub outbox_wait: Duration,
    /// The outbox worker (lease, CLI timeout, concurrency).
    pub outbox: crate::workers::outbox::OutboxConfig,
    /// Whether agents are isolated from the data directory (`isolation.rs`).
    pub agent_isolation: crate::isolation::IsolationMode,
    /// How often one task may ask, notify and push (the core's rule).
    pub rate_limits: harness_core::rate_limit::RateLimits,
    /// The longest an approval check holds a tool call.
    pub approval_wait_max: Duration,
    /// How long a derived task's approval waits for its parent before
    /// the person's chat is pushed.
    pub approval_parent_step: Duration,
    /// The ungated-run watch's pace (`crate::ungated_watch`).
    pub ungated_watch: crate::ungated_watch::WatchConfig,
    /// The delivery worker (its poll is the fallback of its wake-ups).
    pub deliveries: crate::workers::deliveries::WorkerConfig,
    /// Secrets shared by the nodes of a cluster: a directory or variables
    /// (`secrets.rs`); default: `<data_dir>/secrets` only.
    pub secrets: crate::secrets::SecretSources,
    /// This node's own reachable base URL (`--node-url`), written in its
    /// row of the node registry so other nodes can reach it.
    pub node_url: Option<String>,
    /// What this node is shown as (`--node-name`, validated by
    /// [`parse_node_name`]); `None`: the machine's hostname.
    pub node_name: Option<String>,
    /// How often this node writes its heartbeat.
    pub node_heartbeat: Duration,
    /// A node without a heartbeat for this long is dead (by the database's
    /// clock); survivors then recover what it left.
    pub node_dead_after: Duration,
    /// Agent holders: agents outlive the server (`terminals::held`).
    pub holders: HoldersConfig,
    /// The agent watcher's pace and default stall threshold
    /// (`terminals::agent_watch`, `HARNESS_STALL_AFTER_SECS`).
    pub agent_watch: crate::terminals::agent_watch::WatchConfig,
}

/// Whether agents run in holder processes that outlive the server.
#[derive(Debug, Clone)]
pub struct HoldersConfig {
    /// On by default; `HARNESS_HOLDERS=off` runs agents in the server's
    /// own PTYs (they die with it).
    pub enabled: bool,
    /// A holder whose server has not come back for this long ends its
    /// agent and leaves the exit for the next start
    /// (`HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS`, default 24 h).
    pub orphan_timeout: Duration,
}

impl Default for HoldersConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            orphan_timeout: harness_holder::hold::DEFAULT_ORPHAN_TIMEOUT,
        }
    }
}

impl HoldersConfig {
    /// From `HARNESS_HOLDERS` (`on`/`off`) and
    /// `HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS`; a bad value is an error naming
    /// the variable.
    pub fn from_env(
        holders: Option<&str>,
        orphan_timeout_secs: Option<&str>,
    ) -> Result<Self, String> {
        let mut cfg = Self::default();
        match holders.map(str::trim) {
            None | Some("" | "on" | "1" | "true") => {}
            Some("off" | "0" | "false") => cfg.enabled = false,
            Some(other) => {
                return Err(format!(
                    "HARNESS_HOLDERS={other:?}: expected \"on\" or \"off\""
                ));
            }
        }
        if let Some(v) = orphan_timeout_secs.map(str::trim).filter(|v| !v.is_empty()) {
            let secs: u64 = v.parse().ok().filter(|s| *s > 0).ok_or_else(|| {
                format!("HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS={v:?}: expected a positive number of seconds")
            })?;
            cfg.orphan_timeout = Duration::from_secs(secs);
        }
        Ok(cfg)
    }
}

impl ServeConfig {
    pub fn new(bind: SocketAddr, data_dir: PathBuf) -> Self {
        Self {
            bind,
            data_dir,
            database_url: None,
            site_root: default_site_root(),
            pending_ttl: Duration::from_secs(14 * 24 * 3600),
            sweep_interval: Duration::from_secs(6 * 3600),
            harness_bin: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("harness")),
            allowed_hosts: Vec::new(),
            delivery_wait: Duration::from_secs(2),
            limits: crate::serve::Limits::default(),
            outbox_wait: harness_core::outbox::DEFAULT_PUSH_WAIT,
            outbox: crate::workers::outbox::OutboxConfig::default(),
            agent_isolation: crate::isolation::IsolationMode::default(),
            rate_limits: harness_core::rate_limit::RateLimits::default(),
            approval_wait_max: harness_core::approvals::flow::MAX_WAIT,
            approval_parent_step: harness_core::approvals::flow::PARENT_STEP,
            ungated_watch: crate::ungated_watch::WatchConfig::default(),
            deliveries: crate::workers::deliveries::WorkerConfig::default(),
            secrets: crate::secrets::SecretSources::default(),
            node_url: None,
            node_name: None,
            node_heartbeat: harness_core::nodes::DEFAULT_HEARTBEAT,
            node_dead_after: harness_core::nodes::DEFAULT_DEAD_AFTER,
            holders: HoldersConfig::default(),
            agent_watch: crate::terminals::agent_watch::WatchConfig::default(),
        }
    }

    pub fn database_url(&self) -> String {
        database_url(&self.data_dir, self.database_url.clone())
    }
}

/// The database URL: the explicit one, else `sqlite://<data_dir>/harness.db`
/// (the one default, used by `serve`, `backup` and `restore`).
pub fn database_url(data_dir: &std::path::Path, explicit: Option<String>) -> String {
    explicit.unwrap_or_else(|| format!("sqlite://{}", data_dir.join("harness.db").display()))
}

/// A node's own base URL (`--node-url`, `HARNESS_NODE_URL`): an absolute
/// `http` or `https` URL with a host and no credentials, query or fragment;
/// answered without a trailing `/`.
pub fn parse_node_url(value: &str) -> Result<String, String> {
    let value = value.trim();
    let url = reqwest::Url::parse(value)
        .map_err(|err| format!("--node-url {value:?} is not a URL ({err})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "--node-url {value:?}: expected an http:// or https:// URL"
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("--node-url {value:?}: the URL has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("--node-url: the URL must not carry credentials".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "--node-url {value:?}: the URL must not have a query or fragment"
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
}

/// A node's name (`--node-name`, `HARNESS_NODE_NAME`): the core's rule
/// (`validate::node_name`: 1 to 64 printable characters), trimmed.
pub fn parse_node_name(value: &str) -> Result<String, String> {
    harness_core::validate::node_name(value).map_err(|err| match err {
        harness_core::CoreError::Invalid { message, .. } => {
            format!("--node-name {value:?}: {message}")
        }
        other => other.to_string(),
    })
}

/// A duration in whole seconds of at least one (`--node-heartbeat-secs` …).
pub fn parse_positive_secs(value: &str) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(secs) if secs >= 1 => Ok(secs),
        _ => Err(format!("{value:?}: expected a whole number of seconds ≥ 1")),
    }
}

/// `$HARNESS_SITE_ROOT`: serve the web assets from this built site directory
/// (e.g. `target/site` after `scripts/build-site.sh`) instead of the ones
/// embedded in the binary.
pub fn default_site_root() -> Option<PathBuf> {
    std::env::var_os("HARNESS_SITE_ROOT")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

/// The default data directory: `$HOME/.harness`.
pub fn default_data_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
        .join(".harness")
}

#[cfg(test)]
mod tests {
    use super::{parse_node_name, parse_node_url};

    #[test]
    fn node_names() {
        assert_eq!(parse_node_name(" build-box 1 ").unwrap(), "build-box 1");
        assert_eq!(parse_node_name("東京-7").unwrap(), "東京-7");
        assert_eq!(parse_node_name(&"é".repeat(64)).unwrap(), "é".repeat(64));
        for (bad, says) in [
            ("", "empty"),
            ("   ", "empty"),
            ("a\nb", "printable"),
            ("tab\there", "printable"),
        ] {
            let err = parse_node_name(bad).unwrap_err();
            assert!(
                err.contains("--node-name") && err.contains(says),
                "{bad:?}: {err}"
            );
        }
        let err = parse_node_name(&"x".repeat(65)).unwrap_err();
        assert!(err.contains("at most 64"), "{err}");
    }

    #[test]
    fn node_urls() {
        assert_eq!(
            parse_node_url(" https://h1.example:7700/ ").unwrap(),
            "https://h1.example:7700"
        );
        assert_eq!(
            parse_node_url("http://10.0.0.2:7700/harness").unwrap(),
            "http://10.0.0.2:7700/harness"
        );
        for bad in [
            "",
            "h1:7700",
            "ftp://h1",
            "http://u:p@h1",
            "http://h1/?a=1",
            "http://h1/#x",
        ] {
            let err = parse_node_url(bad).unwrap_err();
            assert!(err.contains("node-url"), "{bad}: {err}");
        }
    }
}
