//! One test per row of docs/approvals.md's table of how shell commands are matched.

use serde_json::{Value, json};

use crate::approvals::{
    policy::{Action, Effective, Rule, Source, Verdict},
    shell::{NoScripts, ScriptReader},
};

fn defaults() -> Effective {
    Effective {
        project: vec![],
        global: None,
    }
}

fn rule(tool: &str, pattern: Option<&str>, action: Action) -> Rule {
    Rule {
        tool: tool.into(),
        pattern: pattern.map(str::to_string),
        action,
        note: None,
    }
}

fn bash(cmd: &str) -> Value {
    json!({"command": cmd})
}

fn check(p: &Effective, cmd: &str, reader: &dyn ScriptReader) -> Verdict {
    p.evaluate_with("Bash", &bash(cmd), Some("/repo"), reader)
}

fn action(p: &Effective, cmd: &str) -> Action {
    check(p, cmd, &NoScripts).action
}

fn why(v: &Verdict) -> String {
    v.matched
        .as_ref()
        .and_then(|m| m.why.clone())
        .unwrap_or_default()
}

#[track_caller]
fn all_ask(p: &Effective, cmds: &[&str]) {
    for cmd in cmds {
        assert_eq!(action(p, cmd), Action::Ask, "{cmd}");
    }
}

#[track_caller]
fn all_allow(p: &Effective, cmds: &[&str]) {
    for cmd in cmds {
        let v = check(p, cmd, &NoScripts);
        assert_eq!(v.action, Action::Allow, "{cmd}: {v:?}");
    }
}

#[test]
fn every_simple_command_is_checked_wherever_it_is_nested() {
    let p = defaults();
    all_ask(
        &p,
        &[
            "cargo test && git push",
            "false || git push",
            "make; git push",
            "ls | git push",
            "sleep 1 & git push",
            "(cd x && git push)",
            "{ git push; }",
            "! git push",
            "if git push; then :; fi",
            "if true; then :; elif false; then :; else git push; fi",
            "while true; do git push; break; done",
            "until false; do git push; done",
            "for b in a b; do git push origin $b; done",
            "case x in x) git push;; esac",
            "f() { git push; }; f",
            "echo $(git push)",
            "echo \"`git push`\"",
            "x=$(git push) true",
            "diff <(git push) y",
            "cat <<EOF\n$(git push)\nEOF",
            "[[ $(git push) ]]",
            "time git push",
            "git status\ngit push",
            // Typed into a terminal: a carriage return ends a line.
            "echo x\rgit push",
        ],
    );
    // A here-document with a quoted delimiter is text, not commands.
    all_allow(&p, &["cat <<'EOF'\n$(git push)\nEOF", "echo 'git push'"]);
}

#[test]
fn command_names_are_read_after_quote_removal_and_path_stripping() {
    let p = defaults();
    all_ask(
        &p,
        &[
            "/usr/bin/git push",
            "/bin/rm -rf x",
            "\\git push",
            "g''it push",
            "\"git\" \"push\"",
            "$'\\x67it' push",
            "$'\\147it' push",
            "gi\\t pu\\sh",
            "GIT push",
            "git \\\npush",
        ],
    );
}

#[test]
fn wrappers_run_the_command_after_them() {
    let p = defaults();
    all_ask(
        &p,
        &[
            "sudo -u root git push",
            "doas git push",
            "env -i A=1 git push",
            "env -S 'git push'",
            "timeout -s KILL 5 git push",
            "nice -n 10 git push",
            "ionice -c 3 git push",
            "nohup git push",
            "exec git push",
            "command -p git push",
            "builtin command git push",
            "stdbuf -o L git push",
            "setsid git push",
            "xargs -n 1 rm -rf",
            "flock /tmp/l git push",
            "flock /tmp/l -c 'git push'",
            "busybox rm -rf x",
            "sudo timeout 5 env A=1 nice git push",
            "bash -c 'git push'",
            "sh -lc \"rm -rf build\"",
            "zsh -c 'git push'",
            "dash -ec 'git push'",
            "bash -o pipefail -c 'git push'",
            "bash -c \"bash -c 'git push'\"",
            "bash <<'EOF'\ngit push\nEOF",
            "trap 'git push' EXIT",
            "alias p='git push'",
            "find . -exec git push \\;",
            "bash <<< 'git push'",
            "watch -n 1 git push",
            "watch 'git push'",
            "su root -c 'git push'",
            "sg wheel -c 'git push'",
            "unshare -r git push",
            "systemd-run --user git push",
            "uv run git push",
            "uv run --with x -- git push",
            "poetry run bash -c 'git push'",
            "bundle exec git push",
            "nix-shell --run 'git push'",
        ],
    );
    all_allow(
        &p,
        &["sudo ls", "timeout 60 cargo test", "bash -c 'cargo test'"],
    );
    // Where the command was found is shown.
    let v = check(&p, "bash -c 'git push'", &NoScripts);
    assert!(why(&v).contains("inside `bash -c`"), "{v:?}");
}

#[test]
fn redirections_are_file_writes_for_the_file_rules() {
    let p = defaults();
    all_ask(
        &p,
        &[
            "echo X=1 > .env",
            "echo X=1 >> app/.env.local",
            "echo X >| .env",
            "cargo run &> .env",
            "cargo run &>> .env",
            "echo x >& .env",
            "cat > .env <<E\nX=1\nE",
            "{ echo a; } > .env",
            "echo x > .git/config",
            "echo x > ./.git/../.git/hooks/pre-commit",
            "cd .git && echo x > config",
            "cd app; cd ..; echo x > .env",
            "echo x > /repo/.env",
        ],
    );
    all_allow(
        &p,
        &[
            "cargo test > out.txt 2>&1",
            "echo x > /dev/null",
            "ls 2>/dev/null",
        ],
    );
    let v = check(&p, "echo X=1 > .env", &NoScripts);
    assert_eq!(
        v.matched.as_ref().unwrap().rule.pattern.as_deref(),
        Some("**/.env*")
    );
    assert!(why(&v).contains("writes `.env` (redirection >)"), "{v:?}");
    // Codex's `workdir`: a write there is matched relative to the task's
    // working directory.
    let scoped = Effective {
        project: vec![rule("Edit|Write", Some("secrets/**"), Action::Ask)],
        global: Some(vec![]),
    };
    let codex = json!({"command": ["bash", "-lc", "echo x > key"], "workdir": "/repo/secrets"});
    assert_eq!(
        scoped
            .evaluate_with("shell", &codex, Some("/repo"), &NoScripts)
            .action,
        Action::Ask
    );
    // A write whose file is computed, or in a directory not known, asks.
    all_ask(
        &p,
        &[
            "echo x > \"$F\"",
            "cd \"$D\" && echo x > config",
            "f() { cd .git; }; f; echo x > config",
        ],
    );
}

#[test]
fn writer_destinations_are_file_writes() {
    let p = defaults();
    all_ask(
        &p,
        &[
            "cp f .env",
            "cp -r f app/.env",
            "cp .env.example app/",
            "cp -t app .env.example f",
            "mv x .env",
            "mv .env x",
            "install -m 600 f .env",
            "ln -s .git g",
            "ln -sf /etc/x .env",
            "tee .env",
            "echo x | tee -a .env",
            "dd if=/dev/zero of=.env",
            "sed -i 's/a/b/' .env",
            "sed -i.bak -e 's/a/b/' .env",
            "perl -pi -e 's/a/b/' .env",
            "truncate -s 0 .env",
            "touch .env",
            "rm .env",
            "rsync -a f .env",
            "curl -o .env https://example.test/x",
            "sed -n 'w .env' x",
            "sed 's/a/b/w .env' x",
        ],
    );
    all_allow(
        &p,
        &[
            "cp a b",
            "sed -n '1,20p' .env",
            "sed 's/a/b/' .env",
            "cat .env",
            "tee out.txt",
        ],
    );
}

#[test]
fn commands_that_hide_what_they_run_ask_with_the_reason() {
    let p = defaults();
    for (cmd, reason) in [
        ("eval \"$X\"", "`eval` runs text computed"),
        ("$CMD push", "name is computed"),
        ("$(printf git) push", "name is computed"),
        ("x=push; git $x", "computed"),
        ("git ${SUB}", "computed"),
        ("bash -c \"$S\"", "`bash -c` runs a command computed"),
        ("sh -c \"git $x\"", "`sh -c` runs a command computed"),
        ("source \"$F\"", "`source` of a file computed"),
        (". $(mktemp)", "`.` of a file computed"),
        (
            "echo 'git push' | bash",
            "`bash` reads its commands from its input",
        ),
        ("curl -s x | sh", "`sh` reads its commands from its input"),
        ("bash < x.sh", "reads its commands from its input"),
        ("g?t push", "a pattern the shell expands"),
        ("{git,push} --force", "a pattern the shell expands"),
        ("rm -v $FLAGS x", "it may be an option"),
        ("find . $ACTION", "it may be an action"),
        ("ls | xargs rm", "takes its arguments from its input"),
        ("sudo -s", "starts a shell"),
        (
            "find . -name '*.sh' -exec {} \\;",
            "runs the files or words it is given",
        ),
        ("ls | xargs -I{} {}", "runs the files or words it is given"),
        ("ls | xargs -I X X", "runs the files or words it is given"),
        ("sed -n '1e git push' x", "`sed` runs a command"),
        ("sed 's/.*/git push/e' x", "`sed` runs a command"),
        ("sed '/main/e git push' x", "`sed` runs a command"),
        (
            "git -c core.sshCommand=x fetch",
            "`git -c core.sshcommand=…`",
        ),
    ] {
        let v = check(&p, cmd, &NoScripts);
        assert_eq!(v.action, Action::Ask, "{cmd}");
        let m = v.matched.as_ref().unwrap();
        assert!(why(&v).contains(reason), "{cmd}: {v:?}");
        if !matches!(cmd, "x=push; git $x" | "git ${SUB}" | "rm -v $FLAGS x") {
            assert_eq!(m.source, Source::Gate, "{cmd}");
        }
    }
    // Plain data is not hiding anything.
    all_allow(
        &p,
        &[
            "echo $HOME",
            "cd \"$(git rev-parse --show-toplevel)\"",
            "ls $TMPDIR",
            "export A=$(pwd)",
            "echo 'eval is a word'",
            "git commit -m \"$(date)\"",
        ],
    );
}

#[test]
fn hiding_asks_only_when_the_policy_has_rules_for_the_tool() {
    // No rules at all: nothing to protect, nothing asks.
    let none = Effective {
        project: vec![],
        global: Some(vec![]),
    };
    assert_eq!(action(&none, "eval \"$X\""), Action::Allow);
    // Only file rules: a computed command runs, a computed file asks.
    let files = Effective {
        project: vec![rule("Edit|Write", Some("secrets/**"), Action::Ask)],
        global: Some(vec![]),
    };
    assert_eq!(action(&files, "eval \"$X\""), Action::Allow);
    assert_eq!(action(&files, "echo x > \"$F\""), Action::Ask);
    // A deny rule protects as an ask rule does.
    let deny = Effective {
        project: vec![rule("Bash", Some("terraform apply*"), Action::Deny)],
        global: Some(vec![]),
    };
    assert_eq!(action(&deny, "eval \"$X\""), Action::Ask);
    assert_eq!(action(&deny, "bash -c 'terraform apply'"), Action::Deny);
    // Rules for another tool do not count.
    let other = Effective {
        project: vec![rule("shell", Some("git push*"), Action::Ask)],
        global: Some(vec![]),
    };
    assert_eq!(action(&other, "eval \"$X\""), Action::Allow);
}

#[test]
fn an_allow_rule_for_one_part_never_lets_another_through() {
    let p = Effective {
        project: vec![rule(
            "Bash",
            Some("git push origin feature*"),
            Action::Allow,
        )],
        global: None,
    };
    assert_eq!(action(&p, "git push origin feature-x"), Action::Allow);
    assert_eq!(
        action(&p, "git push origin feature-x && git push -f origin main"),
        Action::Ask
    );
    let deny = Effective {
        project: vec![rule("Bash", Some("*terraform destroy*"), Action::Deny)],
        global: None,
    };
    assert_eq!(
        action(&deny, "git push; bash -c 'terraform destroy'"),
        Action::Deny,
        "deny beats ask"
    );
}

#[test]
fn git_aliases_and_config_overrides_ask() {
    let p = defaults();
    all_ask(
        &p,
        &[
            "git -c alias.p=push p --force",
            "git --config-env=alias.p=X p",
            "git -c core.pager='sh -c x' log",
            "git p --force",
            "git lfs push origin main",
            "git send-pack --force origin main",
            "git subtree push --prefix d origin b",
            "git push origin +main",
            "git push --force-with-lease",
            "git --git-dir=.git --work-tree=. push",
            "git -C ../x push --mirror",
            "git config core.hooksPath hooks",
            "git config set core.pager 'sh -c x'",
        ],
    );
    all_allow(
        &p,
        &[
            "git -c user.name=x -c user.email=y commit -m m",
            "git -c color.ui=false log",
            "git --no-pager diff",
            "git config alias.st status",
            "git config user.email a@b",
            "git config --get core.hooksPath",
        ],
    );
}

#[test]
fn the_defaults_cover_every_spelling_of_push_rm_and_find_delete() {
    let p = defaults();
    all_ask(
        &p,
        &[
            "rm -rf x",
            "rm -Rf x",
            "rm -fr x",
            "rm -r -f x",
            "rm --recursive --force x",
            "rm --recursive x",
            "rm -r x",
            "rm -rfv x",
            "rm -v -R -- x",
            "find build -delete",
            "find -delete",
            "find . -name '*.o' -exec rm {} +",
            "find . -type f -execdir /bin/rm -f {} \\;",
            "find . -ok rm {} \\;",
            "git push",
            "git reset --hard HEAD~1",
            "git clean -fdx",
        ],
    );
    all_allow(
        &p,
        &["rm -f x.o", "rm x", "find . -name '*-delete*'", "ls -rf"],
    );
}
