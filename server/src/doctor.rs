//! `harness doctor`: one line per check, each failure with its fix; exit code
//! 0 only when every check passes.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use harness_core::{outbox::gateway::GatewayConfig, settings::NotifyTarget};

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    /// Not a failure, but worth reading (e.g. an optional CLI not installed).
    Note,
    Fail,
}

#[derive(Debug, Clone)]
pub struct Check {
    pub name: &'static str,
    pub outcome: Outcome,
    pub detail: String,
    /// What to do about it (failures and notes).
    pub fix: Option<String>,
}

impl Check {
    pub(crate) fn pass(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name,
            outcome: Outcome::Pass,
            detail: detail.into(),
            fix: None,
        }
    }
    pub(crate) fn note(
        name: &'static str,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            name,
            outcome: Outcome::Note,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
    pub(crate) fn fail(
        name: &'static str,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            name,
            outcome: Outcome::Fail,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// `ok   name: detail` / `FAIL name: detail — fix: …`
    pub fn line(&self) -> String {
        let tag = match self.outcome {
            Outcome::Pass => "ok  ",
            Outcome::Note => "note",
            Outcome::Fail => "FAIL",
        };
        match &self.fix {
            Some(fix) => format!("{tag} {}: {} — fix: {fix}", self.name, self.detail),
            None => format!("{tag} {}: {}", self.name, self.detail),
        }
    }
}

/// What the checks look at.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub data_dir: PathBuf,
    /// `$HARNESS_SITE_ROOT` when set.
    pub site_root: Option<PathBuf>,
    /// Fail below this many free bytes on the data directory's file system.
    pub min_free_bytes: u64,
    /// `--database-url` / `DATABASE_URL` when given (`None`: the SQLite
    /// default, `<data-dir>/harness.db`).
    pub database_url: Option<String>,
}

/// The agent CLIs Harness drives, and the oldest version known to work.
pub const AGENT_CLIS: &[(&str, &str, (u64, u64, u64))] = &[
    ("claude", "Claude Code", (2, 1, 0)),
    ("codex", "Codex", (0, 171, 0)),
];

pub fn run(inputs: &Inputs) -> Vec<Check> {
    let mut checks = Vec::new();
    let postgres = inputs
        .database_url
        .as_deref()
        .filter(|url| harness_store::is_postgres(url));
    checks.extend(data_dir(&inputs.data_dir, postgres.is_none()));
    if let Some(url) = postgres {
        checks.extend(crate::doctor_pg::checks(url));
    }
    checks.push(server(&inputs.data_dir));
    checks.push(service(&inputs.data_dir));
    checks.extend(agent_clis());
    checks.push(isolation());
    checks.push(crate::terminals::unreadable::doctor_check(&inputs.data_dir));
    checks.extend(gateway_clis(&inputs.data_dir));
    checks.push(site(inputs.site_root.as_deref()));
    checks.push(disk(&inputs.data_dir, inputs.min_free_bytes));
    checks
}

/// Whether agents started by a server here are isolated from the data
/// directory (the same probe `harness serve` runs at start).
fn isolation() -> Check {
    const NAME: &str = "agent isolation";
    let mode = std::env::var("HARNESS_AGENT_ISOLATION").unwrap_or_default();
    if crate::isolation::IsolationMode::parse(&mode) == Ok(crate::isolation::IsolationMode::Off) {
        return Check::note(
            NAME,
            "switched off (HARNESS_AGENT_ISOLATION=off): agents can read the data directory and \
             replace the executable their hooks and sandbox run from, so nothing holds their \
             approval gate",
            "unset HARNESS_AGENT_ISOLATION to isolate agents",
        );
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("harness"));
    match harness_pty::isolate::probe(&exe) {
        Ok(()) => match harness_pty::isolate::probe_layer(&exe) {
            Ok(()) => Check::pass(
                NAME,
                "agents cannot see the data directory (user, mount and PID namespaces); their \
                 hooks run from a read-only private copy of harness and are their CLI's \
                 managed settings, which their own settings cannot switch off",
            ),
            Err(err) => Check::note(
                NAME,
                format!(
                    "agents cannot see the data directory, but their hooks cannot be managed \
                     settings ({err}): a start whose settings switch the hooks off is refused"
                ),
                "Linux 5.11 or later allows overlayfs in a user namespace",
            ),
        },
        Err(err) => Check::fail(
            NAME,
            format!("agents would run NOT isolated and could read Harness's secrets: {err}"),
            "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on \
             Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0), or run agents as a \
             separate OS user (docs/security.md)",
        ),
    }
}

fn mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

/// The data directory, its secrets and (`sqlite`: the database is the
/// default SQLite file in it) `harness.db`, with their permissions.
fn data_dir(root: &Path, sqlite: bool) -> Vec<Check> {
    let mut out = Vec::new();
    if !root.is_dir() {
        out.push(Check::fail(
            "data directory",
            format!("{} does not exist", root.display()),
            "start the server once (`harness serve`) or pass --data-dir",
        ));
        return out;
    }
    out.push(Check::pass("data directory", root.display().to_string()));
    // A cluster's shared secrets directory or variables (`secrets.rs`).
    let sources = crate::secrets::SecretSources::from_env();
    let secrets = sources.dir_for(root);
    let mut expect: Vec<(PathBuf, u32)> = vec![(secrets.clone(), 0o700)];
    if sources.admin_token.is_none() {
        expect.push((secrets.join("admin.token"), 0o600));
    }
    if sources.internal_api_key.is_none() {
        expect.push((secrets.join("internal-api.key"), 0o600));
    }
    if sqlite {
        expect.push((root.join("harness.db"), 0o600));
    }
    for (path, want) in expect {
        match mode(&path) {
            None => out.push(Check::fail(
                "permissions",
                format!("{} is missing", path.display()),
                "start the server once (`harness serve`); it creates it",
            )),
            Some(m) if m & 0o077 != 0 => out.push(Check::fail(
                "permissions",
                format!("{} is {:o}, readable by other users", path.display(), m),
                format!("chmod {want:o} {}", path.display()),
            )),
            Some(m) => out.push(Check::pass(
                "permissions",
                format!("{} {:o}", path.display(), m),
            )),
        }
    }
    out
}

fn server(root: &Path) -> Check {
    let Some(found) = crate::supervised::discovery::read(root) else {
        return Check::fail(
            "server",
            format!(
                "no running server found ({} is missing)",
                crate::supervised::discovery::path(root).display()
            ),
            "start it: `harness serve` (or ./run.sh)",
        );
    };
    let client = match reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()
    {
        Ok(c) => c,
        Err(err) => return Check::fail("server", format!("no HTTP client: {err}"), "report a bug"),
    };
    match client.get(format!("{}/healthz", found.url)).send() {
        Ok(resp) if resp.status().is_success() => Check::pass(
            "server",
            format!("{} answers (pid {})", found.url, found.pid),
        ),
        Ok(resp) => Check::fail(
            "server",
            format!("{} answered HTTP {}", found.url, resp.status().as_u16()),
            "look at the server's log",
        ),
        Err(err) => Check::fail(
            "server",
            format!("{} (pid {}) does not answer: {err}", found.url, found.pid),
            "start it: `harness serve` (a stale server.json is replaced on start)",
        ),
    }
}

/// Whether Harness runs as a systemd service (`crate::service`).
fn service(root: &Path) -> Check {
    match crate::service::status() {
        Ok(status) => crate::service::doctor_check(
            &status,
            crate::supervised::discovery::read(root).map(|d| d.pid),
        ),
        Err(err) => Check::note(
            "service",
            format!("cannot tell whether Harness runs as a service: {err:#}"),
            "`harness service status`",
        ),
    }
}

/// First `x.y.z` in `text`.
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|word| {
            let mut parts = word.split('.').filter(|p| !p.is_empty());
            let a = parts.next()?.parse().ok()?;
            let b = parts.next()?.parse().ok()?;
            let c = parts.next()?.parse().ok()?;
            Some((a, b, c))
        })
        .next()
}

/// Runs `program args…` with no stdin, killed after `timeout`; its stdout.
pub fn output_of(program: &str, args: &[&str], timeout: Duration) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = std::time::Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let out = child.wait_with_output().map_err(|e| e.to_string())?;
                let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if status.success() {
                    return Ok(text);
                }
                let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
                return Err(format!("exited with {status}: {err}"));
            }
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {} s", timeout.as_secs()));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn agent_clis() -> Vec<Check> {
    let mut out = Vec::new();
    let mut found = 0;
    for (program, label, min) in AGENT_CLIS {
        match output_of(program, &["--version"], Duration::from_secs(15)) {
            Err(err) => out.push(Check::note(
                "agent CLI",
                format!("{label} (`{program}`) not runnable: {err}"),
                format!(
                    "install it if you run {label} agents (npm install -g …) and put it on PATH"
                ),
            )),
            Ok(text) => {
                found += 1;
                match parse_version(&text) {
                    Some(v) if v >= *min => out.push(Check::pass(
                        "agent CLI",
                        format!("{label} {}.{}.{} (supported; oldest known to work {}.{}.{})", v.0, v.1, v.2, min.0, min.1, min.2),
                    )),
                    Some(v) => out.push(Check::fail(
                        "agent CLI",
                        format!("{label} {}.{}.{} is older than {}.{}.{}, the oldest Harness works with", v.0, v.1, v.2, min.0, min.1, min.2),
                        format!("update {label}"),
                    )),
                    None => out.push(Check::note(
                        "agent CLI",
                        format!("{label} answered `{text}`, no version in it"),
                        format!("check that `{program}` is {label}"),
                    )),
                }
            }
        }
    }
    if found == 0 {
        out.push(Check::fail(
            "agent CLI",
            "neither Claude Code nor Codex is on PATH".to_string(),
            "install one: `npm install -g @anthropic-ai/claude-code` or `npm install -g @openai/codex`",
        ));
    }
    out
}

/// The gateway CLIs of the configured notify targets, as the running
/// server has them (read over its REST API with the admin token).
fn gateway_clis(root: &Path) -> Vec<Check> {
    let Some(found) = crate::supervised::discovery::read(root) else {
        return vec![Check::note(
            "gateway CLI",
            "not checked: no running server to read the notify targets from",
            "start the server, then run `harness doctor` again",
        )];
    };
    let read = || -> Result<(Vec<NotifyTarget>, GatewayConfig), String> {
        let token = crate::secrets::SecretSources::from_env()
            .admin_token_for(root)
            .map_err(|e| format!("cannot read the admin token: {e:#}"))?;
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| e.to_string())?;
        let get = |path: &str| {
            client
                .get(format!("{}{path}", found.url))
                .bearer_auth(token.trim())
                .send()
                .and_then(reqwest::blocking::Response::error_for_status)
                .map_err(|e| format!("GET {path}: {e}"))
        };
        let targets = get("/api/settings/notify-targets")?
            .json()
            .map_err(|e| e.to_string())?;
        let config = get("/api/settings/gateways")?
            .json()
            .map_err(|e| e.to_string())?;
        Ok((targets, config))
    };
    match read() {
        Ok((targets, config)) => gateway_checks(&targets, &config),
        Err(err) => vec![Check::fail(
            "gateway CLI",
            format!("cannot read the notify targets from {}: {err}", found.url),
            "look at the server's log",
        )],
    }
}

/// One check per gateway used by an active notify target: its CLI exists,
/// is executable and answers `--version`. Passes when none is configured.
pub fn gateway_checks(targets: &[NotifyTarget], config: &GatewayConfig) -> Vec<Check> {
    let gateways: std::collections::BTreeSet<&str> = targets
        .iter()
        .filter(|t| t.active)
        .map(|t| t.gateway.as_str())
        .collect();
    if gateways.is_empty() {
        return vec![Check::pass(
            "gateway CLI",
            "no notify targets configured (nothing to check)",
        )];
    }
    let fix = |gw: &str| {
        format!(
            "install the {gw} CLI, or set its path in Settings → Gateways (cliPath) or HARNESS_{}_BIN",
            gw.to_ascii_uppercase()
        )
    };
    gateways
        .into_iter()
        .map(|gw| {
            let binary = harness_core::outbox::gateway::binary(gw, &config.get(gw));
            let Some(path) = executable(&binary) else {
                return Check::fail(
                    "gateway CLI",
                    format!("{gw}: `{binary}` is not an executable file (or not on PATH)"),
                    fix(gw),
                );
            };
            let shown = path.display().to_string();
            match output_of(&shown, &["--version"], Duration::from_secs(15)) {
                Ok(text) => Check::pass(
                    "gateway CLI",
                    format!(
                        "{gw}: {shown} ({})",
                        text.lines().next().unwrap_or("").trim()
                    ),
                ),
                Err(err) => Check::fail(
                    "gateway CLI",
                    format!("{gw}: `{shown} --version` failed: {err}"),
                    fix(gw),
                ),
            }
        })
        .collect()
}

/// `program` as an executable file: a path as given, a bare name on `PATH`.
fn executable(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_exec(&p).then_some(p);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| is_exec(p))
}

fn site(root: Option<&Path>) -> Check {
    match root {
        Some(dir) => match crate::assets::Site::from_dir(dir) {
            Ok(_) => Check::pass(
                "web bundle",
                format!("{} (HARNESS_SITE_ROOT)", dir.display()),
            ),
            Err(err) => Check::fail(
                "web bundle",
                format!(
                    "HARNESS_SITE_ROOT={} has no built site: {err}",
                    dir.display()
                ),
                "run scripts/build-site.sh, or unset HARNESS_SITE_ROOT to use the embedded bundle",
            ),
        },
        None => match crate::assets::Site::embedded() {
            Some(_) => Check::pass("web bundle", "embedded in this binary"),
            None => Check::fail(
                "web bundle",
                "this binary was built without the web bundle; pages will not hydrate",
                "scripts/build-site.sh, then rebuild harness (see README, Installing)",
            ),
        },
    }
}

/// Free bytes on the file system holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a valid NUL-terminated path; `stat` is written by statvfs
    // and only read when it returns 0.
    let rc = unsafe { libc::statvfs(c.as_ptr(), stat.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled `stat`.
    let stat = unsafe { stat.assume_init() };
    // The field types differ between platforms (u64 here, u32/c_ulong elsewhere).
    #[allow(clippy::unnecessary_cast)]
    let free = (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64);
    Some(free)
}

fn disk(root: &Path, min: u64) -> Check {
    let probe = if root.exists() {
        root.to_path_buf()
    } else {
        root.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"))
    };
    match free_bytes(&probe) {
        None => Check::fail(
            "disk",
            format!("cannot read free space of {}", probe.display()),
            "check the path",
        ),
        Some(free) if free < min => Check::fail(
            "disk",
            format!(
                "{} free on {} (below {})",
                human(free),
                probe.display(),
                human(min)
            ),
            "free some space: the database and agents' logs need room to grow",
        ),
        Some(free) => Check::pass(
            "disk",
            format!("{} free on {}", human(free), probe.display()),
        ),
    }
}

fn human(bytes: u64) -> String {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    #[allow(clippy::cast_precision_loss)]
    let gib = bytes as f64 / GIB;
    format!("{gib:.1} GiB")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_cli_banners() {
        assert_eq!(parse_version("2.1.332 (Claude Code)"), Some((2, 1, 332)));
        assert_eq!(parse_version("codex-cli 0.171.0"), Some((0, 171, 0)));
        assert_eq!(parse_version("no version"), None);
    }

    #[test]
    fn permissions_readable_by_others_fail_with_the_chmod_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("secrets")).unwrap();
        std::fs::set_permissions(root.join("secrets"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        for f in [
            "secrets/admin.token",
            "secrets/internal-api.key",
            "harness.db",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
            std::fs::set_permissions(root.join(f), std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        assert!(
            data_dir(root, true)
                .iter()
                .all(|c| c.outcome == Outcome::Pass)
        );
        std::fs::set_permissions(
            root.join("secrets/admin.token"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let checks = data_dir(root, true);
        let bad: Vec<_> = checks
            .iter()
            .filter(|c| c.outcome == Outcome::Fail)
            .collect();
        assert_eq!(bad.len(), 1);
        assert!(bad[0].line().contains("chmod 600"), "{}", bad[0].line());
    }

    #[test]
    fn disk_check_fails_below_the_threshold() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(disk(dir.path(), 1).outcome, Outcome::Pass);
        assert_eq!(disk(dir.path(), u64::MAX).outcome, Outcome::Fail);
    }

    #[test]
    fn gateway_clis_pass_when_none_configured_and_fail_when_missing_or_not_executable() {
        use std::os::unix::fs::PermissionsExt;
        let none = gateway_checks(&[], &GatewayConfig::default());
        assert_eq!(none.len(), 1);
        assert_eq!(none[0].outcome, Outcome::Pass, "{}", none[0].line());

        let dir = tempfile::tempdir().unwrap();
        let cli = dir.path().join("hermes");
        std::fs::write(&cli, "#!/bin/sh\necho 'hermes 1.4.2'\n").unwrap();
        std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
        let target: NotifyTarget = serde_json::from_value(serde_json::json!({
            "gateway": "hermes", "downstream": "feishu", "dest": "oc_x"
        }))
        .unwrap();
        let with_path = |path: &Path| {
            serde_json::from_value::<GatewayConfig>(
                serde_json::json!({"hermes": {"cliPath": path.display().to_string()}}),
            )
            .unwrap()
        };
        let ok = gateway_checks(std::slice::from_ref(&target), &with_path(&cli));
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].outcome, Outcome::Pass, "{}", ok[0].line());
        assert!(ok[0].line().contains("hermes 1.4.2"), "{}", ok[0].line());

        let missing = gateway_checks(
            std::slice::from_ref(&target),
            &with_path(&dir.path().join("nope")),
        );
        assert_eq!(missing[0].outcome, Outcome::Fail, "{}", missing[0].line());
        assert!(
            missing[0].line().contains("cliPath"),
            "{}",
            missing[0].line()
        );

        std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o644)).unwrap();
        let not_exec = gateway_checks(std::slice::from_ref(&target), &with_path(&cli));
        assert_eq!(not_exec[0].outcome, Outcome::Fail, "{}", not_exec[0].line());

        // A CLI that exits non-zero on --version fails too.
        let broken = dir.path().join("broken");
        std::fs::write(&broken, "#!/bin/sh\nexit 3\n").unwrap();
        std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
        let failed = gateway_checks(std::slice::from_ref(&target), &with_path(&broken));
        assert_eq!(failed[0].outcome, Outcome::Fail, "{}", failed[0].line());

        // An inactive target is not checked.
        let mut off = target.clone();
        off.active = false;
        let skipped = gateway_checks(&[off], &with_path(&dir.path().join("nope")));
        assert_eq!(skipped[0].outcome, Outcome::Pass, "{}", skipped[0].line());
    }
}
