//! The systemd unit `harness service install` writes: built by one pure
//! function ([`unit_text`]) from what the installer resolved ([`UnitSpec`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The unit's file name, the same for a user and a system unit.
pub const UNIT_NAME: &str = "harness.service";

/// Which systemd instance runs the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's own manager (`systemctl --user`), kept running without a
    /// login session by lingering (`loginctl enable-linger`).
    User,
    /// The system manager, the service running as `User=`.
    System,
}

impl Scope {
    /// `systemctl`'s flag for this scope (`None`: the system manager).
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Self::User => Some("--user"),
            Self::System => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::System => "system",
        }
    }

    /// Where the unit file lives: `~/.config/systemd/user/harness.service`
    /// (`$XDG_CONFIG_HOME` when set) or `/etc/systemd/system/harness.service`.
    pub fn unit_path(self, home: &Path, xdg_config_home: Option<&Path>) -> PathBuf {
        match self {
            Self::User => xdg_config_home
                .filter(|dir| dir.is_absolute())
                .map_or_else(|| home.join(".config"), Path::to_path_buf)
                .join("systemd/user")
                .join(UNIT_NAME),
            Self::System => PathBuf::from("/etc/systemd/system").join(UNIT_NAME),
        }
    }
}

/// Everything the unit says, resolved by the installer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitSpec {
    pub scope: Scope,
    /// The absolute, canonical path of the `harness` executable.
    pub exe: PathBuf,
    /// The absolute data directory, passed as `--data-dir`.
    pub data_dir: PathBuf,
    /// System units: the account the server runs as (`User=`).
    pub user: Option<String>,
    /// The installer's `PATH`, so the service finds the agent CLIs (and
    /// gateway CLIs) the user finds; `None`: systemd's default.
    pub path: Option<String>,
    /// Further `harness serve` options (after `--` on the command line).
    pub serve_args: Vec<String>,
}

/// The unit file's text.
pub fn unit_text(spec: &UnitSpec) -> anyhow::Result<String> {
    if !spec.exe.is_absolute() {
        bail!("the executable path {} is not absolute", spec.exe.display());
    }
    if !spec.data_dir.is_absolute() {
        bail!(
            "the data directory {} is not absolute",
            spec.data_dir.display()
        );
    }
    let mut exec = vec![
        exec_word(path_str(&spec.exe, "the executable path")?)?,
        "serve".to_string(),
        "--data-dir".to_string(),
        exec_word(path_str(&spec.data_dir, "the data directory")?)?,
        "--no-login-link".to_string(),
    ];
    for arg in &spec.serve_args {
        exec.push(exec_word(arg).with_context(|| format!("the serve option {arg:?}"))?);
    }
    let mut out = String::new();
    out.push_str(
        "# Written by `harness service install`; `harness service uninstall` removes it.\n\
         # Edit it with `systemctl",
    );
    if let Some(flag) = spec.scope.flag() {
        out.push(' ');
        out.push_str(flag);
    }
    out.push_str(" edit harness` (a drop-in) to add Environment= lines.\n");
    out.push_str(
        "[Unit]\nDescription=Harness: agents that park when blocked and resume when answered\n",
    );
    if spec.scope == Scope::System {
        // A PostgreSQL on another machine or a --node-url peer is reached
        // over the network.
        out.push_str("Wants=network-online.target\nAfter=network-online.target\n");
    }
    out.push_str("\n[Service]\nType=simple\n");
    if let Some(user) = &spec.user {
        if user.is_empty() || !user.chars().all(|c| c.is_ascii_graphic() && c != '%') {
            bail!("the user name {user:?} cannot be written in a unit");
        }
        out.push_str(&format!("User={user}\n"));
    }
    out.push_str("WorkingDirectory=~\n");
    if let Some(path) = &spec.path {
        out.push_str(&format!("Environment={}\n", env_assignment("PATH", path)?));
    }
    out.push_str(&format!("ExecStart={}\n", exec.join(" ")));
    out.push_str("Restart=on-failure\nRestartSec=2\n");
    out.push_str(KILL_MODE_COMMENT);
    out.push_str("KillMode=process\n");
    out.push_str("\n[Install]\n");
    out.push_str(match spec.scope {
        Scope::User => "WantedBy=default.target\n",
        Scope::System => "WantedBy=multi-user.target\n",
    });
    Ok(out)
}

/// Why the unit says `KillMode=process` (written into the unit itself, so
/// whoever reads it sees the reason; docs/ARCHITECTURE.md, "Running as a
/// service", says the same).
const KILL_MODE_COMMENT: &str = "\
# KillMode=process: on stop and restart systemd signals only the main process
# (harness serve: SIGTERM, SIGKILL after TimeoutStopSec). Each agent lives in
# its own holder process (`harness hold`), started detached in a session of
# its own. A session is not a cgroup: the holders are still in this unit's
# control group, and the default KillMode=control-group would kill them, and
# the agents with them, on every stop or restart. With KillMode=process:
# - `systemctl restart harness` (or Restart=on-failure) replaces the server
#   only; the holders keep running and the new server takes their agents back.
# - `systemctl stop harness` stops the server only; the holders and agents keep
#   running, left in the unit's control group (systemd notes them as left-over
#   processes when the unit starts again), until the next start takes them back
#   or their orphan timeout (HARNESS_HOLDER_ORPHAN_TIMEOUT_SECS, 24 h) ends them.
#   To end the agents at once, stop them from the UI first, or
#   `systemctl kill harness` (every process of the unit).
";

fn path_str<'a>(path: &'a Path, what: &str) -> anyhow::Result<&'a str> {
    path.to_str()
        .with_context(|| format!("{what} {} is not UTF-8", path.display()))
}

/// Characters a word of `ExecStart=` may hold unquoted: none is special to
/// systemd's parser (quotes, escapes, `%` specifiers, `$` variables, `;`).
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/._-:=,@+".contains(c)
}

/// One word of `ExecStart=`: as is when plain, else double-quoted with `\`
/// and `"` escaped, and `%` / `$` doubled (systemd expands specifiers and
/// variables even inside quotes). Control characters are refused.
fn exec_word(word: &str) -> anyhow::Result<String> {
    if word.chars().any(char::is_control) {
        bail!("{word:?} holds a control character, which a unit file cannot carry");
    }
    if !word.is_empty() && word.chars().all(plain) {
        return Ok(word.to_string());
    }
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// `"NAME=value"` for `Environment=` (quoted; `\`, `"` escaped, `%` doubled:
/// `$` is not expanded there).
fn env_assignment(name: &str, value: &str) -> anyhow::Result<String> {
    if value.chars().any(char::is_control) {
        bail!("${name} holds a control character, which a unit file cannot carry");
    }
    let mut out = format!("\"{name}=");
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// A path inside a cargo target directory (`…/target/debug/harness`):
/// rebuilt or removed by cargo, a poor home for a service's executable.
pub fn in_cargo_target(exe: &Path) -> bool {
    let parts: Vec<_> = exe.components().map(|c| c.as_os_str()).collect();
    let profile = |p: &std::ffi::OsStr| p == "debug" || p == "release";
    // `target/debug`, or `target/<triple>/release` when cross-built.
    parts.windows(2).any(|w| w[0] == "target" && profile(w[1]))
        || parts.windows(3).any(|w| w[0] == "target" && profile(w[2]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(scope: Scope) -> UnitSpec {
        UnitSpec {
            scope,
            exe: PathBuf::from("/usr/local/bin/harness"),
            data_dir: PathBuf::from("/home/ada/.harness"),
            user: (scope == Scope::System).then(|| "ada".to_string()),
            path: Some("/home/ada/.local/bin:/usr/bin".into()),
            serve_args: Vec::new(),
        }
    }

    fn lines(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.starts_with('#')).collect()
    }

    #[test]
    fn a_user_unit_runs_serve_on_the_data_dir_and_keeps_the_holders() {
        let text = unit_text(&spec(Scope::User)).unwrap();
        let l = lines(&text);
        assert!(
            l.contains(&"ExecStart=/usr/local/bin/harness serve --data-dir /home/ada/.harness --no-login-link"),
            "{text}"
        );
        for want in [
            "[Unit]",
            "[Service]",
            "[Install]",
            "Type=simple",
            "Restart=on-failure",
            "KillMode=process",
            "WantedBy=default.target",
            "Environment=\"PATH=/home/ada/.local/bin:/usr/bin\"",
        ] {
            assert!(l.contains(&want), "{want} missing:\n{text}");
        }
        // A user unit has no User= (it is the user's own manager) and no
        // system targets.
        assert!(!text.contains("User="), "{text}");
        assert!(!text.contains("network-online"), "{text}");
        assert!(!text.contains("multi-user"), "{text}");
        // The reason for the kill mode is in the file.
        assert!(text.contains("# KillMode=process:"), "{text}");
        assert!(text.contains("systemctl --user edit harness"), "{text}");
    }

    #[test]
    fn a_system_unit_runs_as_the_user_after_the_network() {
        let text = unit_text(&spec(Scope::System)).unwrap();
        let l = lines(&text);
        for want in [
            "User=ada",
            "WantedBy=multi-user.target",
            "After=network-online.target",
            "Wants=network-online.target",
            "KillMode=process",
        ] {
            assert!(l.contains(&want), "{want} missing:\n{text}");
        }
        // Exactly one of each directive that must be single.
        for key in ["ExecStart=", "KillMode=", "Restart=", "User="] {
            assert_eq!(
                l.iter().filter(|x| x.starts_with(key)).count(),
                1,
                "{key}:\n{text}"
            );
        }
        assert!(text.contains("`systemctl edit harness`"), "{text}");
    }

    #[test]
    fn words_with_spaces_quotes_and_specifiers_are_quoted() {
        let mut s = spec(Scope::User);
        s.data_dir = PathBuf::from("/home/ada/My Harness/50%$HOME");
        s.serve_args = vec![
            "--bind".into(),
            "0.0.0.0:7700".into(),
            "a\"b\\c".into(),
            ";".into(),
        ];
        s.path = Some("/opt/100%/bin:/usr/bin".into());
        let text = unit_text(&s).unwrap();
        assert!(
            text.contains(
                "ExecStart=/usr/local/bin/harness serve --data-dir \"/home/ada/My Harness/50%%$$HOME\" \
                 --no-login-link --bind 0.0.0.0:7700 \"a\\\"b\\\\c\" \";\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("Environment=\"PATH=/opt/100%%/bin:/usr/bin\"\n"),
            "{text}"
        );
    }

    #[test]
    fn what_a_unit_cannot_carry_is_refused() {
        let mut s = spec(Scope::User);
        s.serve_args = vec!["--node-url\nExecStartPre=/bin/sh".into()];
        assert!(unit_text(&s).is_err());
        let mut s = spec(Scope::User);
        s.data_dir = PathBuf::from("relative/dir");
        assert!(unit_text(&s).is_err());
        let mut s = spec(Scope::System);
        s.user = Some("ada\nUser=root".into());
        assert!(unit_text(&s).is_err());
    }

    #[test]
    fn unit_paths() {
        let home = Path::new("/home/ada");
        assert_eq!(
            Scope::User.unit_path(home, None),
            PathBuf::from("/home/ada/.config/systemd/user/harness.service")
        );
        assert_eq!(
            Scope::User.unit_path(home, Some(Path::new("/cfg"))),
            PathBuf::from("/cfg/systemd/user/harness.service")
        );
        assert_eq!(
            Scope::System.unit_path(home, None),
            PathBuf::from("/etc/systemd/system/harness.service")
        );
        assert!(in_cargo_target(Path::new(
            "/src/harness/target/debug/harness"
        )));
        assert!(!in_cargo_target(Path::new("/usr/local/bin/harness")));
    }

    /// `systemd-analyze verify` accepts both units (where it exists: it
    /// needs no running systemd).
    #[test]
    fn systemd_analyze_verifies_the_units() {
        let Ok(analyze) = which("systemd-analyze") else {
            println!(
                "skipped: systemd-analyze is not installed (Debian's package `systemd` provides it; \
                 scripts/setup.sh test installs it)"
            );
            return;
        };
        // A real executable for ExecStart= (verify checks it exists).
        let exe = std::fs::canonicalize("/bin/sh").unwrap();
        for scope in [Scope::User, Scope::System] {
            let dir = tempfile::tempdir().unwrap();
            let runtime = tempfile::tempdir().unwrap();
            let mut s = spec(scope);
            s.exe = exe.clone();
            s.user = (scope == Scope::System).then(|| "root".to_string());
            s.serve_args = vec!["--bind".into(), "127.0.0.1:7700".into()];
            let file = dir.path().join(UNIT_NAME);
            std::fs::write(&file, unit_text(&s).unwrap()).unwrap();
            let mut cmd = std::process::Command::new(&analyze);
            if let Some(flag) = scope.flag() {
                // The user manager's verify needs a runtime directory.
                cmd.arg(flag).env("XDG_RUNTIME_DIR", runtime.path());
            }
            let out = cmd.arg("verify").arg(&file).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            // Warnings about the unit name its file; other units' noise
            // (the machine's own unit files) is not this unit's.
            let ours: Vec<&str> = stderr
                .lines()
                .filter(|l| l.contains(UNIT_NAME) || l.contains(&*file.to_string_lossy()))
                .collect();
            assert!(
                out.status.success() && ours.is_empty(),
                "{scope:?}: systemd-analyze verify: {}\n{stderr}\n{}",
                out.status,
                std::fs::read_to_string(&file).unwrap()
            );
        }
    }

    /// The test above must be able to fail: a unit systemd rejects.
    #[test]
    fn systemd_analyze_rejects_a_broken_unit() {
        let Ok(analyze) = which("systemd-analyze") else {
            println!("skipped: systemd-analyze is not installed");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(UNIT_NAME);
        let mut s = spec(Scope::System);
        s.exe = PathBuf::from("/nonexistent/harness");
        std::fs::write(&file, unit_text(&s).unwrap()).unwrap();
        let out = std::process::Command::new(analyze)
            .arg("verify")
            .arg(&file)
            .output()
            .unwrap();
        assert!(!out.status.success(), "a missing executable passed verify");
    }

    fn which(program: &str) -> Result<PathBuf, ()> {
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
            .ok_or(())
    }
}
