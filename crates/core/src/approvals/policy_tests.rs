use serde_json::json;

use super::*;

fn eff(project: Vec<Rule>, global: Option<Vec<Rule>>) -> Effective {
    Effective { project, global }
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

#[test]
fn builtin_defaults_ask_for_the_risky_commands_and_allow_the_rest() {
    let p = eff(vec![], None);
    for cmd in [
        "git push --force origin main",
        "git push",
        "cd repo && git push -f",
        "rm -rf build",
        "psql -c 'drop table users'",
        "echo ok; rm -rf /",
        "sqlite3 db \"DROP DATABASE x\"",
        "git reset --hard HEAD~3",
        "git clean -fdx",
        // Recursive without -f still deletes the tree.
        "rm -r x",
    ] {
        let v = p.evaluate("Bash", &bash(cmd), Some("/repo"));
        assert_eq!(v.action, Action::Ask, "{cmd}");
        assert_eq!(v.matched.as_ref().unwrap().source, Source::Builtin);
    }
    for cmd in [
        "git status",
        "cargo test",
        "ls -rf",
        "rm -f x",
        "echo git push",
    ] {
        let v = p.evaluate("Bash", &bash(cmd), Some("/repo"));
        assert_eq!(
            v,
            Verdict {
                action: Action::Allow,
                matched: None
            },
            "{cmd}"
        );
    }
    // Codex's shell shapes.
    let argv = json!({"command": ["bash", "-lc", "git push --force"]});
    assert_eq!(p.evaluate("shell", &argv, None).action, Action::Ask);
    let plain = json!({"command": ["git", "push"]});
    assert_eq!(p.evaluate("shell", &plain, None).action, Action::Ask);
    assert_eq!(
        p.evaluate("exec_command", &json!({"cmd": "rm -rf target"}), None)
            .action,
        Action::Ask
    );
}

#[test]
fn file_rules_match_paths_relative_to_the_working_directory() {
    let p = eff(vec![], None);
    let edit = |path: &str| json!({"file_path": path, "old_string": "a", "new_string": "b"});
    assert_eq!(
        p.evaluate("Edit", &edit("/repo/.env"), Some("/repo"))
            .action,
        Action::Ask
    );
    assert_eq!(
        p.evaluate("Write", &edit("/repo/app/.env.local"), Some("/repo/"))
            .action,
        Action::Ask
    );
    assert_eq!(
        p.evaluate("Edit", &edit("/elsewhere/.env"), Some("/repo"))
            .action,
        Action::Ask
    );
    assert_eq!(
        p.evaluate("Edit", &edit("/repo/src/env.rs"), Some("/repo"))
            .action,
        Action::Allow
    );
    let migrations = eff(
        vec![rule("Edit|Write", Some("migrations/**"), Action::Ask)],
        None,
    );
    for path in [
        "/repo/migrations/0001.sql",
        "/repo/db/migrations/x.sql",
        "migrations/a",
    ] {
        assert_eq!(
            migrations
                .evaluate("Write", &edit(path), Some("/repo"))
                .action,
            Action::Ask,
            "{path}"
        );
    }
    assert_eq!(
        migrations
            .evaluate("Write", &edit("/repo/src/migrations.rs"), Some("/repo"))
            .action,
        Action::Allow
    );
    // Codex apply_patch: every file the patch names.
    let patch = json!({"input": "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-a\n+b\n*** Add File: config/.env\n+X=1\n*** End Patch"});
    assert_eq!(
        p.evaluate("apply_patch", &patch, Some("/repo")).action,
        Action::Ask
    );
    assert_eq!(
        paths_of(&patch),
        vec!["src/main.rs".to_string(), "config/.env".to_string()]
    );
}

#[test]
fn first_match_wins_project_before_global() {
    let global = vec![
        rule("Bash", Some("git push*"), Action::Ask),
        rule("Bash", Some("*--force*"), Action::Deny),
    ];
    let g = eff(vec![], Some(global.clone()));
    let v = g.evaluate("Bash", &bash("git push --force"), None);
    assert_eq!(
        v.action,
        Action::Ask,
        "the earlier rule decides, not the more specific"
    );
    assert_eq!(v.matched.as_ref().unwrap().index, 0);
    assert_eq!(
        g.evaluate("Bash", &bash("cargo --force"), None).action,
        Action::Deny
    );
    // A stored global policy replaces the built-in one.
    assert_eq!(
        g.evaluate("Bash", &bash("rm -rf /"), None).action,
        Action::Allow
    );
    // The project's rules come first.
    let p = eff(
        vec![rule(
            "Bash",
            Some("git push origin feature*"),
            Action::Allow,
        )],
        Some(global),
    );
    let v = p.evaluate("Bash", &bash("git push origin feature-x"), None);
    assert_eq!(v.action, Action::Allow);
    assert_eq!(v.matched.unwrap().source, Source::Project);
    assert_eq!(
        p.evaluate("Bash", &bash("git push origin main"), None)
            .action,
        Action::Ask
    );
    // An empty stored global list means: no global rules at all.
    assert_eq!(
        eff(vec![], Some(vec![]))
            .evaluate("Bash", &bash("rm -rf /"), None)
            .action,
        Action::Allow
    );
}

#[test]
fn mcp_tools_by_name_and_input() {
    let p = eff(
        vec![
            rule("mcp__github__delete_*", None, Action::Deny),
            rule("mcp__db__query", Some("*DELETE FROM*"), Action::Ask),
        ],
        Some(vec![]),
    );
    assert_eq!(
        p.evaluate("mcp__github__delete_repo", &json!({}), None)
            .action,
        Action::Deny
    );
    assert_eq!(
        p.evaluate("mcp__db__query", &json!({"sql": "DELETE FROM users"}), None)
            .action,
        Action::Ask
    );
    assert_eq!(
        p.evaluate("mcp__db__query", &json!({"sql": "SELECT 1"}), None)
            .action,
        Action::Allow
    );
    assert_eq!(
        p.evaluate("mcp__github__get_issue", &json!({}), None)
            .action,
        Action::Allow
    );
    // Tool names are exact (case matters), alternatives split on `|`.
    let q = eff(vec![rule("Edit|Write", None, Action::Deny)], Some(vec![]));
    assert_eq!(q.evaluate("Write", &json!({}), None).action, Action::Deny);
    assert_eq!(q.evaluate("write", &json!({}), None).action, Action::Allow);
    assert_eq!(q.evaluate("Read", &json!({}), None).action, Action::Allow);
}

#[test]
fn wrappers_assignments_and_flag_spellings_do_not_slip_past_the_defaults() {
    let p = eff(vec![], None);
    for cmd in [
        "sudo rm -rf x",
        "sudo -u root rm -rf /srv",
        "FOO=1 git push --force",
        "env -i HOME=/x git push",
        "command git push",
        "git -C d push",
        "git -c user.name=x --no-pager push origin",
        "rm -Rf x",
        "rm -r -f x",
        "rm -fR x",
        "rm --recursive --force x",
        "rm -rfv build",
        "cd a && sudo FOO=1 rm -r -f b",
        "nohup git push &",
        "rm -r x",
    ] {
        assert_eq!(
            p.evaluate("Bash", &bash(cmd), None).action,
            Action::Ask,
            "{cmd}"
        );
    }
    for cmd in [
        "sudo ls",
        "env FOO=1 cargo test",
        "git -C d status",
        "rm -f x",
    ] {
        assert_eq!(
            p.evaluate("Bash", &bash(cmd), None).action,
            Action::Allow,
            "{cmd}"
        );
    }
}

#[test]
fn validation_names_the_field_and_the_rule() {
    let ok = Policy {
        rules: default_rules(),
    };
    validate(&ok).unwrap();
    let bad = |r: Rule| {
        validate(&Policy {
            rules: vec![rule("Bash", None, Action::Ask), r],
        })
    };
    let field = |e: CoreError| match e {
        CoreError::Invalid { field, message } => (field, message),
        other => panic!("{other:?}"),
    };
    let (f, m) = field(bad(rule(" ", None, Action::Ask)).unwrap_err());
    assert_eq!(f, Some("tool"));
    assert!(m.starts_with("rules[1]:"), "{m}");
    assert_eq!(
        field(bad(rule("Edit||Write", None, Action::Ask)).unwrap_err()).0,
        Some("tool")
    );
    assert_eq!(
        field(bad(rule("Bash", Some(""), Action::Ask)).unwrap_err()).0,
        Some("pattern")
    );
    let long = "x".repeat(MAX_PATTERN_CHARS + 1);
    assert_eq!(
        field(bad(rule("Bash", Some(&long), Action::Ask)).unwrap_err()).0,
        Some("pattern")
    );
    let too_many = Policy {
        rules: vec![rule("Bash", None, Action::Ask); MAX_RULES + 1],
    };
    assert_eq!(field(validate(&too_many).unwrap_err()).0, Some("rules"));
    // The wire form: lowercase actions, unknown fields refused.
    let parsed: Policy = serde_json::from_value(
        json!({"rules": [{"tool": "Bash", "pattern": "x*", "action": "deny"}]}),
    )
    .unwrap();
    assert_eq!(parsed.rules[0].action, Action::Deny);
    assert!(
        serde_json::from_value::<Policy>(json!({"rules": [{"tool": "Bash", "action": "maybe"}]}))
            .is_err()
    );
    assert!(
        serde_json::from_value::<Policy>(
            json!({"rules": [{"tool": "Bash", "action": "ask", "x": 1}]})
        )
        .is_err()
    );
}
