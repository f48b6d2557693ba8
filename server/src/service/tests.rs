use super::*;
use crate::doctor::Outcome;

fn unit(scope: Scope, exists: bool, enabled: &str, active: &str) -> UnitState {
    UnitState {
        scope,
        path: scope.unit_path(Path::new("/home/ada"), None),
        exists,
        enabled: Ok(enabled.into()),
        active: Ok(active.into()),
        main_pid: (active == "active").then_some(42),
    }
}

fn of(units: Vec<UnitState>) -> Status {
    Status {
        not_running: None,
        units,
    }
}

#[test]
fn doctor_says_whether_harness_runs_as_a_service() {
    let none = of(vec![
        unit(Scope::User, false, "", ""),
        unit(Scope::System, false, "", ""),
    ]);
    let c = doctor_check(&none, None);
    assert_eq!(c.outcome, Outcome::Note, "{}", c.line());
    assert!(
        c.line().contains("does not run as a service"),
        "{}",
        c.line()
    );
    assert!(
        c.line().contains("harness service install --user"),
        "{}",
        c.line()
    );

    let mut nowhere = none.clone();
    nowhere.not_running = Some("systemd is not running here".into());
    let c = doctor_check(&nowhere, None);
    assert_eq!(c.outcome, Outcome::Note, "{}", c.line());
    assert!(
        c.line().contains("systemd is not running here"),
        "{}",
        c.line()
    );

    let running = of(vec![unit(Scope::User, true, "enabled", "active")]);
    let c = doctor_check(&running, Some(42));
    assert_eq!(c.outcome, Outcome::Pass, "{}", c.line());
    assert!(
        c.line()
            .contains("runs as a systemd user service (/home/ada/.config/systemd/user/harness.service: enabled, active)"),
        "{}",
        c.line()
    );

    let failed = of(vec![unit(Scope::System, true, "enabled", "failed")]);
    let c = doctor_check(&failed, None);
    assert_eq!(c.outcome, Outcome::Fail, "{}", c.line());
    assert!(
        c.line().contains("system service is failed"),
        "{}",
        c.line()
    );
    assert!(c.line().contains("journalctl -u harness"), "{}", c.line());

    let disabled = of(vec![unit(Scope::User, true, "disabled", "active")]);
    let c = doctor_check(&disabled, Some(42));
    assert_eq!(c.outcome, Outcome::Fail, "{}", c.line());
    assert!(
        c.line().contains("systemctl --user enable harness"),
        "{}",
        c.line()
    );

    // The service runs, but another server serves this data directory.
    let c = doctor_check(&running, Some(7));
    assert_eq!(c.outcome, Outcome::Note, "{}", c.line());
    assert!(c.line().contains("pid 7"), "{}", c.line());

    let mut offline = of(vec![unit(Scope::User, true, "", "")]);
    offline.not_running = Some("systemd is not running here".into());
    let c = doctor_check(&offline, None);
    assert_eq!(c.outcome, Outcome::Note, "{}", c.line());
    assert!(
        c.line().contains("systemd is not running here"),
        "{}",
        c.line()
    );
}

#[test]
fn status_lines_name_each_unit_and_why_systemd_cannot_be_asked() {
    let mut s = of(vec![
        unit(Scope::User, true, "enabled", "active"),
        unit(Scope::System, false, "", ""),
    ]);
    let lines = s.lines();
    assert_eq!(
        lines,
        vec![
            "user unit: /home/ada/.config/systemd/user/harness.service — installed; enabled: \
             enabled; active: active (pid 42)"
                .to_string(),
            "system unit: /etc/systemd/system/harness.service — not installed".to_string(),
        ]
    );
    s.not_running = Some("systemd is not running here".into());
    s.units[0].enabled = Err("systemd is not running here".into());
    s.units[0].active = Err("systemd is not running here".into());
    s.units[0].main_pid = None;
    let lines = s.lines();
    assert!(
        lines[0].ends_with("installed; enabled: unknown; active: unknown"),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().unwrap(),
        "systemd is not running here: whether a unit is enabled or active cannot be asked"
    );
}

/// The status of this machine: both unit paths, and (where systemd does
/// not run, as in CI) the reason nothing more is known.
#[test]
fn status_of_this_machine() {
    let s = super::status().unwrap();
    let lines = s.lines().join("\n");
    assert!(
        lines.contains("/etc/systemd/system/harness.service"),
        "{lines}"
    );
    assert!(lines.contains("/systemd/user/harness.service"), "{lines}");
    if !systemd_running() {
        assert!(lines.contains("systemd is not running here"), "{lines}");
    }
}

#[test]
fn a_dry_run_prints_the_unit_and_writes_nothing() {
    let data = tempfile::tempdir().unwrap();
    let opts = InstallOptions {
        scope: Scope::User,
        data_dir: Some(data.path().join("d")),
        serve_args: vec!["--bind".into(), "127.0.0.1:7801".into()],
        dry_run: true,
    };
    let mut said = Vec::new();
    install(&opts, &mut |line| said.push(line.to_string())).unwrap();
    let text = said.join("\n");
    let exe = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
    assert!(
        text.contains(&format!(
            "ExecStart={} serve --data-dir {} --no-login-link --bind 127.0.0.1:7801",
            exe.display(),
            data.path().join("d").display()
        )),
        "{text}"
    );
    assert!(text.contains("(dry run: nothing written)"), "{text}");
    // The test binary lives in target/…/deps: the warning says so.
    assert!(text.contains("inside a cargo target directory"), "{text}");
    assert!(!data.path().join("d").exists());
    let (path, _, _) = plan(&opts).unwrap();
    assert!(
        text.starts_with("warning:") || text.starts_with('#'),
        "{text}"
    );
    assert!(text.contains(&path.display().to_string()), "{text}");
}

/// Where systemd does not run, a real install refuses and writes nothing.
#[test]
fn install_without_systemd_refuses_clearly() {
    if systemd_running() {
        println!("skipped: systemd runs here (the test would install a real unit)");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let opts = InstallOptions {
        scope: Scope::User,
        data_dir: Some(data.path().to_path_buf()),
        serve_args: Vec::new(),
        dry_run: false,
    };
    let (path, _, _) = plan(&opts).unwrap();
    let existed = path.exists();
    let err = install(&opts, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("systemd is not running here"), "{err}");
    assert!(err.contains("--dry-run"), "{err}");
    assert_eq!(path.exists(), existed, "the unit file was touched");
}

#[test]
fn the_data_dir_is_absolute() {
    let me = invoking_account(Scope::User).unwrap();
    let rel = resolve_data_dir(Some(Path::new("rel/data")), &me).unwrap();
    assert!(rel.is_absolute() && rel.ends_with("rel/data"), "{rel:?}");
    let other = Account {
        name: "ada".into(),
        uid: u32::MAX - 1,
        home: PathBuf::from("/home/ada"),
    };
    assert_eq!(
        resolve_data_dir(None, &other).unwrap(),
        PathBuf::from("/home/ada/.harness")
    );
    assert_eq!(
        resolve_data_dir(None, &me).unwrap(),
        crate::config::default_data_dir()
    );
}
