use serde_json::json;

use super::*;

fn builtin() -> Effective {
    Effective {
        project: Vec::new(),
        global: None,
    }
}

#[test]
fn programs_that_read_commands_from_the_terminal() {
    for (cmd, program) in [
        ("bash", "bash"),
        ("/bin/bash", "bash"),
        ("bash -i", "bash"),
        ("bash --login", "bash"),
        ("bash -l", "bash"),
        ("bash -s", "bash"),
        ("bash -s -- a b", "bash"),
        ("sh", "sh"),
        ("zsh -f", "zsh"),
        ("exec bash", "bash"),
        ("env -i TERM=x bash --norc", "bash"),
        ("sudo -u root bash", "bash"),
        ("sudo -s", "sudo"),
        ("sudo bash", "bash"),
        ("nohup sh", "sh"),
        ("timeout 600 bash", "bash"),
        ("nice -n 5 bash", "bash"),
        ("FOO=1 bash", "bash"),
        ("cd /tmp && bash", "bash"),
        ("true; (bash)", "bash"),
        ("echo $(bash)", "bash"),
        ("cat | bash", "bash"),
        ("echo 'git push' | sh", "sh"),
        ("'bash'", "bash"),
        ("b\\ash", "bash"),
        ("python3", "python3"),
        ("python", "python"),
        ("python3.12 -i script.py", "python3.12"),
        ("python3 -", "python3"),
        ("python3 -u", "python3"),
        ("ipython", "ipython"),
        ("node", "node"),
        ("node -i", "node"),
        ("deno repl", "deno"),
        ("irb", "irb"),
        ("ruby", "ruby"),
        ("perl", "perl"),
        ("php -a", "php"),
        ("psql -h db app", "psql"),
        ("mysql -u root", "mysql"),
        ("sqlite3 app.db", "sqlite3"),
        ("ssh host", "ssh"),
        ("ssh -p 2222 -i key user@host", "ssh"),
        ("vim notes.md", "vim"),
        ("less README.md", "less"),
        ("tmux new -s x", "tmux"),
        ("su -", "su"),
        ("script -q /dev/null", "script"),
        ("busybox sh", "busybox"),
    ] {
        assert_eq!(
            interactive_program(cmd).as_deref(),
            Some(program),
            "{cmd:?} reads commands from its terminal"
        );
    }
}

#[test]
fn commands_that_do_not_read_the_terminal() {
    for cmd in [
        "",
        "ls -la",
        "git push --force",
        "bash -c 'git status'",
        "bash -lc 'cargo test'",
        "sh -ec 'make'",
        "bash script.sh",
        "bash -x ./deploy.sh arg",
        "bash -o pipefail -c 'a | b'",
        "bash < script.sh",
        "bash <<'EOF'\necho hi\nEOF",
        "sh <<< 'echo hi'",
        "python3 -c 'print(1)'",
        "python3 -m pytest -q",
        "python3 manage.py test",
        "python3 - <<'EOF'\nprint(1)\nEOF",
        "python3 < x.py",
        "node -e 'console.log(1)'",
        "node server.js",
        "ruby -e 'p 1'",
        "perl -pe 's/a/b/' f",
        "psql -c 'select 1'",
        "mysql -e 'select 1'",
        "sqlite3 app.db 'select 1'",
        "ssh host uptime",
        "ssh -p 22 host 'ls -la'",
        "script -c 'make' log.txt",
        "echo bash",
        "grep -r 'bash' .",
        "cargo test -- --nocapture",
        "shellcheck x.sh",
    ] {
        assert_eq!(interactive_program(cmd), None, "{cmd:?}");
    }
}

#[test]
fn an_interactive_shell_asks_when_no_rule_names_it() {
    let v = evaluate(&builtin(), "exec_command", &json!({"cmd": "bash"}), None);
    assert_eq!(v.action, Action::Ask);
    let m = v.matched.expect("a rule of its own");
    assert_eq!(m.source, Source::Builtin);
    assert!(
        m.rule
            .note
            .as_deref()
            .is_some_and(|n| n.contains("interactive program (bash)")),
        "{m:?}"
    );
    // Codex's hook reports `exec_command` as `Bash {command}`.
    assert_eq!(
        evaluate(&builtin(), "Bash", &json!({"command": "bash"}), None).action,
        Action::Ask
    );
    assert_eq!(
        evaluate(&builtin(), "Bash", &json!({"command": "ls"}), None),
        builtin().evaluate("Bash", &json!({"command": "ls"}), None),
        "anything else: the policy's verdict, untouched"
    );
    // Not a shell tool: not judged as a command.
    assert_eq!(
        evaluate(&builtin(), "Read", &json!({"command": "bash"}), None).action,
        Action::Allow
    );
}

#[test]
fn a_rule_that_names_the_call_decides() {
    let allow = Effective {
        project: vec![Rule {
            tool: "Bash|exec_command".into(),
            pattern: Some("python3".into()),
            action: Action::Allow,
            note: None,
        }],
        global: None,
    };
    let v = evaluate(&allow, "exec_command", &json!({"cmd": "python3"}), None);
    assert_eq!(v.action, Action::Allow);
    assert_eq!(v.matched.map(|m| m.source), Some(Source::Project));
    let deny = Effective {
        project: vec![Rule {
            tool: "*".into(),
            pattern: Some("bash".into()),
            action: Action::Deny,
            note: None,
        }],
        global: None,
    };
    assert_eq!(
        evaluate(&deny, "exec_command", &json!({"cmd": "bash"}), None).action,
        Action::Deny
    );
}

#[test]
fn characters_typed_into_a_session_are_the_command_they_are() {
    let typed = |chars: &str| {
        evaluate(
            &builtin(),
            STDIN_TOOL,
            &json!({"session_id": 4711, "chars": chars}),
            Some("/repo"),
        )
    };
    let v = typed("git push --force origin HEAD:refs/heads/x\n");
    assert_eq!(v.action, Action::Ask);
    assert_eq!(
        v.matched.and_then(|m| m.rule.pattern).as_deref(),
        Some("git push*")
    );
    assert_eq!(typed("rm -rf build\n").action, Action::Ask);
    // A shell opened from inside the session asks too.
    assert_eq!(typed("exec bash -i\n").action, Action::Ask);
    // Polling (no characters) and ordinary input run.
    assert_eq!(typed("").action, Action::Allow);
    assert_eq!(typed("cargo test\n").action, Action::Allow);
    assert_eq!(typed("y\n").action, Action::Allow);
    // No `chars`: nothing typed.
    assert_eq!(
        evaluate(&builtin(), STDIN_TOOL, &json!({"session_id": 1}), None).action,
        Action::Allow
    );
}

#[test]
fn offline_an_interactive_shell_fails_closed() {
    let reason = super::super::offline::decide(
        &builtin(),
        "Bash",
        &json!({"command": "bash"}),
        None,
        "connection refused",
        "the built-in rules",
    );
    assert!(
        reason.is_some_and(|r| r.contains("cannot be reached")),
        "held when the server cannot be asked"
    );
}
