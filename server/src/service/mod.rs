//! `harness service install [--user] | status | uninstall`: Harness as a
//! systemd service (README "Run as a service"; docs/operating.md). The unit's text is
//! [`unit::unit_text`]; `harness doctor` reports [`Status`] too
//! ([`doctor_check`]).
//!
//! Every step is idempotent: installing again rewrites the unit only when
//! its text changed (and then restarts the service, which keeps the agents:
//! `KillMode=process`, see [`unit`]); uninstalling what is not there says so.

mod systemd;
pub mod unit;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

pub use systemd::{Account, not_running_reason, systemd_running};
pub use unit::{Scope, UNIT_NAME, UnitSpec, unit_text};

use crate::doctor::Check;
use systemd::Systemctl;

/// What `harness service install` was asked.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    pub scope: Scope,
    /// `--data-dir` / `HARNESS_DATA_DIR`; `None`: the account's `~/.harness`.
    pub data_dir: Option<PathBuf>,
    /// `harness serve` options after `--`.
    pub serve_args: Vec<String>,
    /// Print the unit, change nothing.
    pub dry_run: bool,
}

/// The account the service runs as: the invoking user — under `sudo`, the
/// one who ran sudo (`SUDO_USER`), not root.
pub fn invoking_account(scope: Scope) -> anyhow::Result<Account> {
    let euid = systemd::euid();
    let sudo_user = std::env::var("SUDO_USER")
        .ok()
        .filter(|u| !u.is_empty() && u != "root");
    match (scope, sudo_user) {
        (Scope::System, Some(name)) if euid == 0 => systemd::account_by_name(&name)
            .with_context(|| format!("SUDO_USER={name} is not an account of this machine")),
        (Scope::User, Some(name)) if euid == 0 => bail!(
            "`--user` under sudo would install root's own user unit: run `harness service \
             install --user` as {name}, without sudo"
        ),
        _ => systemd::account_by_uid(euid)
            .with_context(|| format!("user id {euid} is not in the password database")),
    }
}

/// The data directory the unit passes: the one given, else the one the CLI
/// resolves (`~/.harness` of the account the service runs as), absolute.
pub fn resolve_data_dir(explicit: Option<&Path>, account: &Account) -> anyhow::Result<PathBuf> {
    let dir = match explicit {
        Some(dir) => dir.to_path_buf(),
        None if account.uid == systemd::euid() => crate::config::default_data_dir(),
        None => account.home.join(".harness"),
    };
    if dir.is_absolute() {
        return Ok(dir);
    }
    Ok(std::env::current_dir()
        .context("cannot read the current directory")?
        .join(dir))
}

/// The `PATH` the service gets: this one's absolute entries, so the agent
/// CLIs found here are found by the service too.
fn service_path() -> Option<String> {
    let path = std::env::var("PATH").ok()?;
    let mut kept: Vec<&str> = Vec::new();
    for entry in path.split(':') {
        if entry.starts_with('/') && !entry.chars().any(char::is_control) && !kept.contains(&entry)
        {
            kept.push(entry);
        }
    }
    (!kept.is_empty()).then(|| kept.join(":"))
}

/// Where the unit of `scope` lives for `account`.
pub fn unit_path(scope: Scope, account: &Account) -> PathBuf {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|_| account.uid == systemd::euid());
    scope.unit_path(&account.home, xdg.as_deref())
}

/// The unit `install` would write, and where.
pub fn plan(opts: &InstallOptions) -> anyhow::Result<(PathBuf, UnitSpec, Vec<String>)> {
    let account = invoking_account(opts.scope)?;
    let mut warnings = Vec::new();
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot find this executable's path")?;
    if unit::in_cargo_target(&exe) {
        warnings.push(format!(
            "warning: {} is inside a cargo target directory: a rebuild or `cargo clean` \
             changes or removes what the service runs. Install the binary first (e.g. \
             `install -m 755 {} /usr/local/bin/harness`) and run `/usr/local/bin/harness \
             service install` from there",
            exe.display(),
            exe.display()
        ));
    }
    let spec = UnitSpec {
        scope: opts.scope,
        exe,
        data_dir: resolve_data_dir(opts.data_dir.as_deref(), &account)?,
        user: (opts.scope == Scope::System).then(|| account.name.clone()),
        path: service_path(),
        serve_args: opts.serve_args.clone(),
    };
    Ok((unit_path(opts.scope, &account), spec, warnings))
}

fn root_needed(verb: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "a system unit lives in /etc/systemd/system, which needs root: run `sudo harness service \
         {verb}`, or `harness service {verb} --user` for a unit of your own"
    )
}

/// `harness service install`: writes, enables and starts the unit; `say`
/// gets each step.
pub fn install(opts: &InstallOptions, say: &mut dyn FnMut(&str)) -> anyhow::Result<()> {
    let (path, spec, warnings) = plan(opts)?;
    let text = unit_text(&spec)?;
    for w in &warnings {
        say(w);
    }
    if opts.dry_run {
        say(&format!("# {} (dry run: nothing written)", path.display()));
        say(text.trim_end());
        return Ok(());
    }
    if opts.scope == Scope::System && systemd::euid() != 0 {
        return Err(root_needed("install"));
    }
    if let Some(reason) = not_running_reason() {
        bail!(
            "{reason}: nothing was installed. `harness service install --dry-run` prints the \
             unit; run `harness serve` under your own supervisor instead"
        );
    }
    let ctl = Systemctl(opts.scope);
    // The user manager must answer before anything is written.
    ctl.must(&["daemon-reload"]).with_context(|| {
        if opts.scope == Scope::User {
            "cannot reach your user's systemd: log in through a session (ssh, a desktop; not \
             `su`), or set XDG_RUNTIME_DIR=/run/user/$(id -u)"
        } else {
            "cannot reach systemd"
        }
    })?;
    let other = match opts.scope {
        Scope::User => Scope::System,
        Scope::System => Scope::User,
    };
    let other_path = unit_path(other, &invoking_account(opts.scope)?);
    if other_path.exists() {
        bail!(
            "a {} unit is installed already ({}): two services would run two servers on one \
             data directory. Remove it first: `{}harness service uninstall{}`",
            other.label(),
            other_path.display(),
            if other == Scope::System { "sudo " } else { "" },
            if other == Scope::User { " --user" } else { "" },
        );
    }
    refuse_a_server_outside(&spec.data_dir, ctl)?;
    let changed = write_unit(&path, &text)?;
    say(&format!(
        "{} {}",
        if changed { "wrote" } else { "unchanged:" },
        path.display()
    ));
    ctl.must(&["daemon-reload"])?;
    ctl.must(&["enable", UNIT_NAME])?;
    // A changed unit takes effect by a restart, which keeps the agents.
    ctl.must(&[if changed { "restart" } else { "start" }, UNIT_NAME])?;
    if opts.scope == Scope::User {
        linger(&spec, say);
    }
    let flag = opts
        .scope
        .flag()
        .map(|f| format!("{f} "))
        .unwrap_or_default();
    say(&format!(
        "Harness runs as a systemd {} service ({UNIT_NAME}, data dir {}), started at boot. \
         Logs: `journalctl {flag}-u harness`; the UI: `harness open`.",
        opts.scope.label(),
        spec.data_dir.display()
    ));
    Ok(())
}

/// Lingering keeps the user's manager (and so the service) running
/// without a login session, from boot on.
fn linger(spec: &UnitSpec, say: &mut dyn FnMut(&str)) {
    let Ok(account) = invoking_account(spec.scope) else {
        return;
    };
    match systemd::capture(
        "loginctl",
        &["enable-linger", &account.name],
        std::time::Duration::from_secs(30),
    ) {
        Ok(out) if out.success => say(&format!(
            "lingering is on for {}: the service runs without a login session",
            account.name
        )),
        Ok(out) => say(&format!(
            "warning: `loginctl enable-linger {}` failed ({}): the service stops when you log \
             out. Ask an administrator to run it",
            account.name,
            out.reason()
        )),
        Err(err) => say(&format!(
            "warning: {err}: the service stops when you log out; run `loginctl enable-linger {}`",
            account.name
        )),
    }
}

/// A server already serving the data directory, not as this unit, would
/// keep the service from starting (it holds the data directory's lock).
fn refuse_a_server_outside(data_dir: &Path, ctl: Systemctl) -> anyhow::Result<()> {
    let Some(found) = crate::supervised::discovery::read(data_dir) else {
        return Ok(());
    };
    if !systemd::process_exists(found.pid) || ctl.main_pid() == Some(found.pid) {
        return Ok(());
    }
    bail!(
        "a server (pid {}, {}) already runs on {} outside the service: stop it first (Ctrl-C, \
         or `kill {}`), then install again",
        found.pid,
        found.url,
        data_dir.display(),
        found.pid
    )
}

/// Writes `text` to `path` (mode 0644) through a temp file and a rename;
/// false when it already held exactly that.
fn write_unit(path: &Path, text: &str) -> anyhow::Result<bool> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(false);
    }
    let dir = path.parent().context("the unit path has no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!(".{UNIT_NAME}.tmp.{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

/// `harness service uninstall`: stops and disables the service, removes
/// the unit. The agents' holders keep running (the next `harness serve` on
/// the data directory takes them back).
pub fn uninstall(scope: Scope, dry_run: bool, say: &mut dyn FnMut(&str)) -> anyhow::Result<()> {
    let account = invoking_account(scope)?;
    let path = unit_path(scope, &account);
    let flag = scope.flag().map(|f| format!("{f} ")).unwrap_or_default();
    if !path.exists() {
        say(&format!(
            "nothing to remove: {} does not exist",
            path.display()
        ));
        return Ok(());
    }
    if dry_run {
        say(&format!(
            "would run `systemctl {flag}disable --now {UNIT_NAME}`, remove {} and reload systemd \
             (dry run: nothing changed)",
            path.display()
        ));
        return Ok(());
    }
    if scope == Scope::System && systemd::euid() != 0 {
        return Err(root_needed("uninstall"));
    }
    let ctl = Systemctl(scope);
    let running = not_running_reason();
    if running.is_none() {
        ctl.must(&["disable", "--now", UNIT_NAME])?;
        say(&format!("stopped and disabled {UNIT_NAME}"));
    }
    std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
    say(&format!("removed {}", path.display()));
    match running {
        None => {
            ctl.must(&["daemon-reload"])?;
            if scope == Scope::User {
                say(&format!(
                    "lingering stays on (`loginctl disable-linger {}` turns it off)",
                    account.name
                ));
            }
        }
        Some(reason) => say(&format!("{reason}: only the file was removed")),
    }
    Ok(())
}

/// One unit as `status` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitState {
    pub scope: Scope,
    pub path: PathBuf,
    pub exists: bool,
    /// `systemctl is-enabled`'s answer, or why there is none.
    pub enabled: Result<String, String>,
    /// `systemctl is-active`'s answer, or why there is none.
    pub active: Result<String, String>,
    /// The unit's main process, when it runs.
    pub main_pid: Option<u32>,
}

/// The service as this machine has it: both units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// Why systemd cannot be asked here, or `None`.
    pub not_running: Option<String>,
    pub units: Vec<UnitState>,
}

/// Reads the state of the user and the system unit.
pub fn status() -> anyhow::Result<Status> {
    let not_running = not_running_reason();
    let mut units = Vec::new();
    for scope in [Scope::User, Scope::System] {
        // Under sudo the user unit is the invoking user's; not readable: skip.
        let Ok(account) = invoking_account(scope) else {
            continue;
        };
        let path = unit_path(scope, &account);
        let exists = path.exists();
        let ctl = Systemctl(scope);
        let unasked = |why: &str| Err(why.to_string());
        let (enabled, active, main_pid) = match &not_running {
            Some(why) => (unasked(why), unasked(why), None),
            None if !exists => (unasked("not installed"), unasked("not installed"), None),
            None => (
                ctl.state("is-enabled"),
                ctl.state("is-active"),
                ctl.main_pid(),
            ),
        };
        units.push(UnitState {
            scope,
            path,
            exists,
            enabled,
            active,
            main_pid,
        });
    }
    Ok(Status { not_running, units })
}

impl Status {
    /// What `harness service status` prints.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for u in &self.units {
            if !u.exists {
                out.push(format!(
                    "{} unit: {} — not installed",
                    u.scope.label(),
                    u.path.display()
                ));
                continue;
            }
            let show = |r: &Result<String, String>| match r {
                Ok(s) => s.clone(),
                // The reason is said once, below.
                Err(_) if self.not_running.is_some() => "unknown".to_string(),
                Err(why) => format!("unknown ({why})"),
            };
            out.push(format!(
                "{} unit: {} — installed; enabled: {}; active: {}{}",
                u.scope.label(),
                u.path.display(),
                show(&u.enabled),
                show(&u.active),
                u.main_pid
                    .map(|pid| format!(" (pid {pid})"))
                    .unwrap_or_default()
            ));
        }
        if let Some(why) = &self.not_running {
            out.push(format!(
                "{why}: whether a unit is enabled or active cannot be asked"
            ));
        }
        out
    }
}

/// `harness doctor`'s line: whether Harness runs as a service; `server_pid`
/// is the pid of the server found on the data directory, if any.
pub fn doctor_check(status: &Status, server_pid: Option<u32>) -> Check {
    const NAME: &str = "service";
    let installed: Vec<&UnitState> = status.units.iter().filter(|u| u.exists).collect();
    let Some(unit) = installed.first() else {
        if let Some(why) = &status.not_running {
            return Check::note(
                NAME,
                format!("Harness does not run as a service: {why}"),
                "keep `harness serve` running with your own supervisor",
            );
        }
        return Check::note(
            NAME,
            "Harness does not run as a service: it stops with your session and does not \
             start at boot",
            "`harness service install --user` (or `sudo harness service install`)",
        );
    };
    let flag = unit
        .scope
        .flag()
        .map(|f| format!("{f} "))
        .unwrap_or_default();
    let label = unit.scope.label();
    let path = unit.path.display();
    if let Some(why) = &status.not_running {
        return Check::note(
            NAME,
            format!("a {label} unit is installed ({path}), but {why}"),
            "run Harness where systemd runs, or `harness service uninstall`",
        );
    }
    let enabled = unit.enabled.as_deref().unwrap_or("unknown");
    let active = unit.active.as_deref().unwrap_or("unknown");
    let fix = format!("`systemctl {flag}status harness`, `journalctl {flag}-u harness`");
    if active != "active" {
        return Check::fail(
            NAME,
            format!("the {label} service is {active} (enabled: {enabled}; {path})"),
            format!("see why: {fix}; start it: `systemctl {flag}start harness`"),
        );
    }
    if enabled != "enabled" {
        return Check::fail(
            NAME,
            format!("the {label} service runs but is {enabled}: it will not start at boot"),
            format!("`systemctl {flag}enable harness`"),
        );
    }
    match (server_pid, unit.main_pid) {
        (Some(server), Some(main)) if server != main => Check::note(
            NAME,
            format!(
                "the {label} service runs (pid {main}), but the server on this data directory \
                 is another process (pid {server})"
            ),
            "check the data directory in the unit: `harness service status`",
        ),
        _ => Check::pass(
            NAME,
            format!("runs as a systemd {label} service ({path}: enabled, active)"),
        ),
    }
}

#[cfg(test)]
mod tests;
