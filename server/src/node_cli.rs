//! `harness node list | drain | undrain`: the nodes of a cluster through the
//! running server's REST API (`/api/nodes`), found like `harness open` finds
//! it (`<data-dir>/server.json`, or `--server`), with the admin token as the
//! server has it (a cluster's variable or shared secrets directory first).

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// Where the server is and how to reach it.
pub struct Target {
    pub data_dir: PathBuf,
    pub secrets_dir: Option<PathBuf>,
    /// The server's base URL instead of `<data-dir>/server.json`'s.
    pub server: Option<String>,
}

/// How often `--wait` asks.
const WAIT_POLL: Duration = Duration::from_secs(1);

pub(crate) struct Api {
    base: String,
    token: String,
    client: reqwest::blocking::Client,
}

impl Api {
    pub(crate) fn new(target: &Target) -> anyhow::Result<Self> {
        let base = match &target.server {
            Some(url) => url.clone(),
            None => harness_server::supervised::discovery::read(&target.data_dir)
                .map(|d| d.url)
                .context(
                    "no running server found (start one with `harness serve`, or name it \
                         with --server)",
                )?,
        };
        let mut sources = harness_server::secrets::SecretSources::from_env();
        sources.dir.clone_from(&target.secrets_dir);
        let token = sources.admin_token_for(&target.data_dir)?;
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("cannot build the HTTP client")?;
        Ok(Self {
            base: base.trim_end_matches('/').to_string(),
            token,
            client,
        })
    }

    pub(crate) fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let url = format!("{}/api{path}", self.base);
        let mut req = self.client.request(method, &url).bearer_auth(&self.token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().with_context(|| format!("cannot reach {url}"))?;
        let status = resp.status();
        let value: Value = resp.json().unwrap_or(Value::Null);
        if !status.is_success() {
            let why = value["error"].as_str().unwrap_or("no reason given");
            bail!("{status}: {why}");
        }
        Ok(value)
    }

    /// The node named, else the one that answers.
    fn node_id(&self, id: Option<String>) -> anyhow::Result<String> {
        if let Some(id) = id {
            anyhow::ensure!(
                harness_core::validate::is_node_id(&id),
                "not a node id: {id:?} (see `harness node list`)"
            );
            return Ok(id);
        }
        let list = self.call(reqwest::Method::GET, "/nodes", None)?;
        list["thisNode"]
            .as_str()
            .map(str::to_string)
            .context("the server did not say which node it is")
    }
}

fn runs(node: &Value) -> Vec<String> {
    node["liveRuns"]
        .as_array()
        .map(|runs| {
            runs.iter()
                .filter_map(|r| r["taskId"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn line(node: &Value) -> String {
    let state = match (node["alive"].as_bool(), node["draining"].as_bool()) {
        (Some(false), _) => "dead",
        (_, Some(true)) => "draining",
        _ => "live",
    };
    let id = node["id"].as_str().unwrap_or("?");
    let name = node["name"].as_str().filter(|n| *n != id);
    format!(
        "{}{}{}  {state}  {} agent(s)  {}",
        name.unwrap_or(id),
        name.map(|_| format!(" [{id}]")).unwrap_or_default(),
        if node["thisNode"].as_bool() == Some(true) {
            " (this server)"
        } else {
            ""
        },
        runs(node).len(),
        node["url"].as_str().unwrap_or("(no --node-url)")
    )
}

/// `harness node list`.
pub fn list(target: &Target, as_json: bool) -> anyhow::Result<()> {
    let api = Api::new(target)?;
    let list = api.call(reqwest::Method::GET, "/nodes", None)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    for node in list["nodes"].as_array().into_iter().flatten() {
        println!("{}", line(node));
    }
    Ok(())
}

/// `harness node drain` / `undrain`; with `wait`, until no agent runs on
/// the node (at most `timeout`).
pub fn set(
    target: &Target,
    id: Option<String>,
    draining: bool,
    wait: bool,
    timeout: Option<Duration>,
) -> anyhow::Result<()> {
    let api = Api::new(target)?;
    let id = api.node_id(id)?;
    let answer = api.call(
        reqwest::Method::PATCH,
        &format!("/nodes/{id}"),
        Some(json!({ "draining": draining })),
    )?;
    let node = &answer["node"];
    println!(
        "node {id} {}",
        if draining {
            "is draining: it takes no new work; its agents keep running"
        } else {
            "takes work again"
        }
    );
    if let Some(note) = answer["note"].as_str() {
        println!("note: {note}");
    }
    if !draining || !wait {
        if draining && !runs(node).is_empty() {
            println!(
                "{} agent(s) still run on it (`--wait` waits for them)",
                runs(node).len()
            );
        }
        return Ok(());
    }
    wait_drained(&api, &id, timeout)
}

fn wait_drained(api: &Api, id: &str, timeout: Option<Duration>) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut last: Option<Vec<String>> = None;
    loop {
        let node = api.call(reqwest::Method::GET, &format!("/nodes/{id}"), None)?;
        if node["draining"].as_bool() != Some(true) {
            bail!("node {id} was undrained while waiting");
        }
        let left = runs(&node);
        if left.is_empty() {
            println!("node {id} is drained: no agent runs on it; stop it now (SIGTERM)");
            return Ok(());
        }
        if last.as_ref() != Some(&left) {
            println!(
                "waiting for {} agent(s) on node {id}: tasks {}",
                left.len(),
                left.join(", ")
            );
            last = Some(left.clone());
        }
        if timeout.is_some_and(|t| started.elapsed() >= t) {
            bail!(
                "timed out: {} agent(s) still run on node {id} (it stays draining)",
                left.len()
            );
        }
        std::thread::sleep(WAIT_POLL);
    }
}
