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
        ("busybox sh", "sh"),
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

/// Commands read the way the shell reads them (the gate's shell parser),
/// not split by hand: each of these was misread by a hand-made splitter.
#[test]
fn programs_found_wherever_the_shell_runs_them() {
    for (cmd, program) in [
        // Inside a command substitution in double quotes.
        ("echo \"$(bash)\"", "bash"),
        ("git commit -m \"$(python3)\"", "python3"),
        // Inside compound commands, after their keywords.
        ("if true; then bash; fi", "bash"),
        ("while true; do python3; done", "python3"),
        ("for i in 1; do psql; done", "psql"),
        ("! bash", "bash"),
        // A comment is not a script operand.
        ("bash # a comment", "bash"),
        // A redirection of another descriptor leaves its input open.
        ("bash 3<in.txt", "bash"),
        // Input redirected from the terminal is the terminal.
        ("bash < /dev/tty", "bash"),
        ("python3 </dev/tty", "python3"),
        // Inside `sh -c '…'` and the other texts the gate parses.
        ("bash -c 'python3'", "python3"),
        ("sh -c \"cd /tmp && bash\"", "bash"),
        ("env -S bash", "bash"),
        ("bash -c \"$(echo) \"; python3", "python3"),
        // Wrappers the gate knows.
        ("sudo -u x env A=1 bash", "bash"),
        ("uv run python", "python"),
        ("poetry run ipython", "ipython"),
        ("bundle exec irb", "irb"),
        ("find . -exec bash \\;", "bash"),
        ("git ls-files | xargs -o vim", "vim"),
        // A carriage return typed into a terminal ends the line.
        ("bash\r", "bash"),
    ] {
        assert_eq!(
            interactive_program(cmd).as_deref(),
            Some(program),
            "{cmd:?} reads commands from its terminal"
        );
    }
}

#[test]
fn text_that_only_looks_like_a_program() {
    for cmd in [
        // A here-document's lines are its text, not commands.
        "cat <<EOF\nbash\nEOF",
        "git commit -F - <<'EOF'\nless noise in the logs\nEOF",
        // A comment.
        "ls # ; bash",
        // `sudo -i <cmd>` runs the command, not a shell that reads input.
        "sudo -i ls",
        // `sudo` running nothing more is no shell.
        "sudo -v",
        "sudo -l",
        // `xargs` gives its command no input (`/dev/null`).
        "printf 'a.sh' | xargs bash",
    ] {
        assert_eq!(interactive_program(cmd), None, "{cmd:?}");
    }
}

/// What the rule reads of each simple command: its words as it runs and
/// where its input comes from, as the shell module sees them.
#[test]
fn each_command_says_where_its_input_comes_from() {
    use crate::approvals::shell::{Input, NoScripts, analyze};
    // The first command named `name`, or else the last one.
    let unit = |cmd: &str, name: &str| {
        let mut units = analyze(cmd, None, &NoScripts).units;
        let at = units
            .iter()
            .position(|u| u.argv.first().is_some_and(|n| n == name))
            .unwrap_or(units.len() - 1);
        let unit = units.swap_remove(at);
        (unit.argv, unit.stdin)
    };
    for (cmd, input) in [
        ("bash", Input::Terminal),
        ("cat x | bash", Input::Pipe),
        ("bash < f", Input::Redirected),
        ("bash 0<f", Input::Redirected),
        ("bash <>f", Input::Redirected),
        ("cat x | bash < f", Input::Redirected),
        ("bash <<<'ls'", Input::Redirected),
        ("bash <<'EOF'\nls\nEOF", Input::Redirected),
        ("bash < /dev/tty", Input::Terminal),
        ("cat x | bash < /dev/stdin", Input::Pipe),
        ("bash 2<f", Input::Terminal),
        ("bash > out", Input::Terminal),
        ("xargs bash", Input::Redirected),
        ("xargs -o bash", Input::Terminal),
        ("xargs -0or bash", Input::Terminal),
    ] {
        assert_eq!(unit(cmd, "bash").1, input, "{cmd:?}");
    }
    assert_eq!(
        unit("sudo -u r env A=1 nice -n 5 /bin/bash -i", "bash").0,
        ["bash", "-i"]
    );
    assert_eq!(unit("sudo -s", "sudo").0, ["sudo", "-s"]);
    assert_eq!(
        unit("./tools/repl --fast", "").0,
        ["./tools/repl", "--fast"]
    );
}
