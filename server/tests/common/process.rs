//! A real `harness serve` child process on a free port: for tests that
//! kill it (SIGKILL) or stop it (SIGTERM) and start it again on the same
//! data directory.

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use reqwest::{Client, StatusCode};
use serde_json::Value;

pub struct ServerProcess {
    pub child: Child,
    pub base: String,
    pub admin: String,
    pub client: Client,
}

/// Points `cmd` at `database_url` (`--database-url`) when given.
pub fn on_database(cmd: &mut Command, database_url: Option<&str>) {
    if let Some(url) = database_url {
        cmd.arg("--database-url").arg(url);
    }
}

impl ServerProcess {
    /// Starts `harness serve` on `data`; its stderr is appended to
    /// `<data>/server.log` (info from our crates).
    pub async fn start(data: &Path) -> ServerProcess {
        Self::start_with(data, |_| {}).await
    }

    /// Like [`start`](Self::start), on `database_url` when given (else the
    /// data directory's SQLite database).
    pub async fn start_on(data: &Path, database_url: Option<&str>) -> ServerProcess {
        Self::start_with(data, |cmd| on_database(cmd, database_url)).await
    }

    /// Like [`start`](Self::start); `configure` adds arguments or
    /// environment to the command before it is spawned.
    pub async fn start_with(data: &Path, configure: impl FnOnce(&mut Command)) -> ServerProcess {
        Self::start_from(Path::new(env!("CARGO_BIN_EXE_harness")), data, configure).await
    }

    /// Like [`start_with`](Self::start_with), running the executable `bin`
    /// (a copy of the harness binary a test may overwrite).
    pub async fn start_from(
        bin: &Path,
        data: &Path,
        configure: impl FnOnce(&mut Command),
    ) -> ServerProcess {
        super::watchdog::watch();
        std::fs::create_dir_all(data).unwrap();
        let _ = std::fs::remove_file(data.join("server.json"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data.join("server.log"))
            .unwrap();
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--data-dir"])
            .arg(data)
            .env("HARNESS_LOG", "warn,harness_core=info,harness_server=info")
            // Agents outlive a killed test server in their holders: not for long.
            .env("HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS", "120")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        configure(&mut cmd);
        // The same port on every start on this data directory, unless
        // `configure` chose one (a node that names its URL): agents held
        // across a restart reach their server at the address they were
        // given, as in production where `--bind` stays the same.
        if !cmd.get_args().any(|a| a == "--bind") {
            cmd.arg("--bind").arg(sticky_bind(data));
        }
        // The admin token: a cluster's shared secrets directory, when given.
        let secrets = cmd
            .get_envs()
            .find(|(k, _)| *k == "HARNESS_SECRETS_DIR")
            .and_then(|(_, v)| v)
            .map_or_else(|| data.join("secrets"), std::path::PathBuf::from);
        let mut child = cmd.spawn().unwrap();
        // The discovery file names this process once it listens.
        let deadline = Instant::now() + Duration::from_secs(60);
        let base = loop {
            if let Ok(text) = std::fs::read_to_string(data.join("server.json"))
                && let Ok(v) = serde_json::from_str::<Value>(&text)
                && v["pid"].as_u64() == Some(u64::from(child.id()))
            {
                break v["url"].as_str().unwrap().to_string();
            }
            let exited = child.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() > deadline {
                let log = std::fs::read_to_string(data.join("server.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                panic!(
                    "the server never came up ({}); the end of its log:\n{}",
                    exited.map_or_else(
                        || "still starting after 60 s".to_string(),
                        |s| s.to_string()
                    ),
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let admin = std::fs::read_to_string(secrets.join("admin.token"))
            .unwrap()
            .trim()
            .to_string();
        ServerProcess {
            child,
            base,
            admin,
            client: Client::new(),
        }
    }

    /// An admin API call: (status, JSON body or `Null`).
    pub async fn call(
        &self,
        method: impl AsRef<str>,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let method = reqwest::Method::from_bytes(method.as_ref().as_bytes()).unwrap();
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.admin);
        if let Some(b) = body {
            req = req.json(&b);
        }
        super::decode(req.send().await.unwrap()).await
    }

    /// `ids` are the OWNERs of `gateway` on Telegram (the gateway tests'
    /// senders).
    pub async fn set_owners(&self, gateway: &str, ids: &[&str]) {
        let policy =
            serde_json::json!({gateway: {"accessPolicy": {"ownerIds": {"telegram": ids}}}});
        let (st, out) = self
            .call("PUT", "/api/settings/gateways", Some(policy))
            .await;
        assert_eq!(st, StatusCode::OK, "{out}");
    }

    /// SIGKILL: no graceful anything.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM: the graceful path (closes the database).
    pub fn stop(mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let _ = self.child.wait();
    }
}

/// `127.0.0.1:<port>` for a server on `data`: a free port chosen at the
/// first start, kept in `<data>/test-bind` for the next ones.
///
/// The port is below the kernel's ephemeral range (32768–60999 here), so no
/// outgoing connection of another test can take it while this server is
/// down between a kill and its restart (a port the kernel handed out once,
/// taken by a client meanwhile, failed the restart's bind under load), and
/// no two servers of this test process get the same one.
fn sticky_bind(data: &Path) -> String {
    use std::sync::Mutex;
    static GIVEN: Mutex<Vec<u16>> = Mutex::new(Vec::new());
    const PORTS: std::ops::Range<u16> = 20_000..32_000;
    let file = data.join("test-bind");
    if let Ok(bind) = std::fs::read_to_string(&file) {
        return bind.trim().to_string();
    }
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    // A start from the process id and the data directory's name, then the
    // next free port of the range.
    let seed = data
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(u32::from(std::process::id() as u16), |h, b| {
            h.wrapping_mul(31).wrapping_add(u32::from(*b))
        });
    let span = u32::from(PORTS.end - PORTS.start);
    let port = (0..span)
        .map(|i| PORTS.start + ((seed.wrapping_add(i)) % span) as u16)
        .find(|p| !given.contains(p) && std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port below the ephemeral range");
    given.push(port);
    let bind = format!("127.0.0.1:{port}");
    std::fs::write(&file, &bind).unwrap();
    bind
}

/// A test that panics before it stops its servers does not leave them
/// running (they would load the machine for every later test).
impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Stop a child started in its own process group (`process_group(0)`, a
/// gateway with its helpers): SIGTERM to the group, up to 10 s to exit,
/// then SIGKILL to the child. For `Drop`: never panics.
pub fn stop_group(child: &mut std::process::Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: killpg has no memory-safety preconditions; the group is
        // the child's own (process_group(0)).
        unsafe {
            libc::killpg(pid, libc::SIGTERM);
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Host pids of this user's processes whose `/proc/<pid>/<file>`
/// (`cmdline`, `environ`) holds `marker` (zombies and other users'
/// processes are unreadable and left out).
pub fn pids_with(file: &str, marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Ok(text) = std::fs::read(entry.path().join(file))
            && String::from_utf8_lossy(&text).contains(marker)
        {
            found.push(pid);
        }
    }
    found
}
