//! docs/approvals.md's rows on scripts, the real reader, inline programs, parse
//! errors, the reason shown, and what the gate cannot see.

use serde_json::{Value, json};

use crate::approvals::{
    offline,
    policy::{Action, Effective, Source, Verdict},
    shell::{MAX_SCRIPT_BYTES, NoScripts, ScriptReader, WorkspaceScripts},
};

fn defaults() -> Effective {
    Effective {
        project: vec![],
        global: None,
    }
}

fn bash(cmd: &str) -> Value {
    json!({"command": cmd})
}

fn check(cmd: &str, reader: &dyn ScriptReader) -> Verdict {
    defaults().evaluate_with("Bash", &bash(cmd), Some("/repo"), reader)
}

fn why(v: &Verdict) -> String {
    v.matched
        .as_ref()
        .and_then(|m| m.why.clone())
        .unwrap_or_default()
}

/// A workspace with a few scripts.
fn files(_: Option<&str>, path: &str, _: usize) -> Result<Vec<u8>, String> {
    let text: &[u8] = match path {
        "deploy.sh" => b"#!/bin/bash\nset -e\ncargo build --release\ngit push --force\n",
        "scripts/ci.sh" => b"#!/usr/bin/env bash\ncargo fmt --check\ncargo test\n",
        "plain" => b"echo no shebang\nrm -rf build\n",
        "nested.sh" => b"#!/bin/sh\n./deploy.sh\n",
        "tool.py" => {
            b"#!/usr/bin/env python3\nimport subprocess\nsubprocess.run(['git', 'push'])\n"
        }
        "bin/app" => b"\x7fELF\x02\x01\x01\0\0\0\0",
        "env.sh" => b"export A=1\necho hi > .env\n",
        "gradlew" => b"#!/bin/sh\neval set -- $(printf '%s' \"$ARGS\")\nexec \"$JAVACMD\" \"$@\"\n",
        "big.sh" => return Ok(vec![b'#'; MAX_SCRIPT_BYTES + 1]),
        other => return Err(format!("no file {other}")),
    };
    Ok(text.to_vec())
}

#[test]
fn workspace_scripts_are_read_one_level_deep() {
    for (cmd, action) in [
        ("./deploy.sh", Action::Ask),
        ("bash deploy.sh", Action::Ask),
        ("sh ./deploy.sh --fast", Action::Ask),
        ("source deploy.sh", Action::Ask),
        (". ./deploy.sh", Action::Ask),
        ("cd scripts && ../deploy.sh", Action::Ask),
        ("./plain", Action::Ask),
        ("./env.sh", Action::Ask),
        ("./scripts/ci.sh", Action::Allow),
        ("bash scripts/ci.sh", Action::Allow),
        ("timeout 600 ./scripts/ci.sh", Action::Allow),
    ] {
        assert_eq!(check(cmd, &files).action, action, "{cmd}");
    }
    let v = check("./deploy.sh", &files);
    assert!(why(&v).contains("in the script `./deploy.sh`"), "{v:?}");
    // One level: a script run by a script is not read; it asks.
    let v = check("./nested.sh", &files);
    assert_eq!(v.action, Action::Ask);
    assert!(why(&v).contains("from inside a script"), "{v:?}");
    // What cannot be read asks, with the reason.
    for (cmd, reason) in [
        ("./missing.sh", "cannot read: no file missing.sh"),
        ("./big.sh", "longer than 64 KiB"),
        ("bash bin/app", "not a text file"),
        ("/tmp/x.sh", "cannot read"),
        (
            "cd \"$D\" && ./deploy.sh",
            "a directory the gate cannot know",
        ),
        (
            "echo 'git push' >> scripts/ci.sh; ./scripts/ci.sh",
            "ci.sh` and runs it",
        ),
        (
            "./scripts/ci.sh & echo 'git push' >> scripts/ci.sh",
            "ci.sh` and runs it",
        ),
    ] {
        let v = check(cmd, &files);
        assert_eq!(v.action, Action::Ask, "{cmd}");
        assert!(why(&v).contains(reason), "{cmd}: {v:?}");
    }
    // A script that hides what it runs asks, unless an explicit `allow`
    // rule names the command that runs it; writing it first still asks.
    assert_eq!(check("./gradlew build", &files).action, Action::Ask);
    let trusting = Effective {
        project: vec![crate::approvals::policy::Rule {
            tool: "Bash".into(),
            pattern: Some("./gradlew *".into()),
            action: Action::Allow,
            note: None,
        }],
        global: None,
    };
    let run = |cmd: &str| {
        trusting
            .evaluate_with("Bash", &bash(cmd), Some("/repo"), &files)
            .action
    };
    assert_eq!(run("./gradlew build"), Action::Allow);
    assert_eq!(
        run("echo 'git push' >> gradlew; ./gradlew build"),
        Action::Ask
    );
    assert_eq!(run("./gradlew build && ./deploy.sh"), Action::Ask);
    // A program (compiled, or another interpreter's script) is beyond a
    // command gate: it runs (docs/approvals.md).
    assert_eq!(check("./bin/app --serve", &files).action, Action::Allow);
    assert_eq!(check("./tool.py", &files).action, Action::Allow);
}

#[test]
fn the_real_reader_reads_only_regular_files_inside_the_working_directory() {
    let base = std::env::temp_dir().join(format!("harness-scripts-{}", std::process::id()));
    let work = base.join("work");
    let outside = base.join("outside");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(work.join("ok.sh"), "cargo test\n").unwrap();
    std::fs::write(outside.join("push.sh"), "git push\n").unwrap();
    std::os::unix::fs::symlink(outside.join("push.sh"), work.join("link.sh")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("out")).unwrap();
    let cwd = work.to_string_lossy().to_string();
    let r = WorkspaceScripts;
    assert_eq!(r.read(Some(&cwd), "ok.sh", 100).unwrap(), b"cargo test\n");
    assert_eq!(
        r.read(Some(&cwd), "sub/../ok.sh", 100).unwrap(),
        b"cargo test\n"
    );
    // At most limit + 1 bytes.
    assert_eq!(r.read(Some(&cwd), "ok.sh", 3).unwrap().len(), 4);
    for (path, reason) in [
        ("link.sh", "outside the working directory"),
        ("out/push.sh", "outside the working directory"),
        ("../outside/push.sh", "outside the working directory"),
        ("sub", "not a regular file"),
        ("nothing.sh", "cannot be read"),
    ] {
        let e = r.read(Some(&cwd), path, 100).unwrap_err();
        assert!(e.contains(reason), "{path}: {e}");
    }
    assert!(r.read(None, "ok.sh", 100).is_err(), "no working directory");
    assert!(r.read(Some("relative"), "ok.sh", 100).is_err());
    // Through the policy: the symlinked script asks, the real one runs.
    let p = defaults();
    let v = p.evaluate("Bash", &bash("./link.sh"), Some(&cwd));
    assert_eq!(v.action, Action::Ask, "{v:?}");
    assert_eq!(
        p.evaluate("Bash", &bash("./ok.sh"), Some(&cwd)).action,
        Action::Allow
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn inline_interpreter_code_asks_when_it_names_a_risky_operation() {
    for cmd in [
        "python3 -c \"import shutil; shutil.rmtree('build')\"",
        "python -c 'import os; os.system(\"git push\")'",
        "python3 -c \"__import__('subprocess').run(['git','push'])\"",
        "python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['git', 'push'])\nEOF",
        "echo 'import os' | python3",
        "python3 /dev/stdin <<'EOF'\nimport shutil; shutil.rmtree('x')\nEOF",
        "node -e \"require('child_process').execSync('git push')\"",
        "node -e \"require('fs').rmSync('build', {recursive: true})\"",
        "perl -e 'system(\"git push\")'",
        "perl -e 'unlink glob \"*\"'",
        "ruby -e '`git push`'",
        "awk 'BEGIN { system(\"git push\") }'",
        "awk '{ print | \"sh\" }' x",
        "python3 -c \"open('.env', 'w').write('X=1')\"",
        "python3 -c \"$CODE\"",
    ] {
        let v = check(cmd, &NoScripts);
        assert_eq!(v.action, Action::Ask, "{cmd}");
        assert!(
            why(&v).contains("heuristic")
                || why(&v).contains("computed")
                || why(&v).contains("input"),
            "{cmd}: {v:?}"
        );
    }
    for cmd in [
        "python3 -c \"import json; print(json.load(open('package.json'))['name'])\"",
        "python3 -c 'import os; print(os.environ[\"HOME\"])'",
        "node -e \"console.log(process.env.HOME)\"",
        "node -e 'console.log(`${1 + 1}`)'",
        "perl -ne 'print if /fn main/' src/main.rs",
        "awk -F'|' '{print $2}' x",
        "python3 -m pytest -q",
        "python3 script.py",
        "python3",
    ] {
        assert_eq!(check(cmd, &NoScripts).action, Action::Allow, "{cmd}");
    }
}

#[test]
fn a_command_that_does_not_parse_asks() {
    for cmd in [
        "echo 'unterminated",
        "echo $(",
        "if true; then git push",
        "cat <<EOF\nno end",
        "fi",
    ] {
        let v = check(cmd, &NoScripts);
        assert_eq!(v.action, Action::Ask, "{cmd}");
        let m = v.matched.as_ref().unwrap();
        assert_eq!(m.source, Source::Gate);
        assert!(why(&v).contains("could not be parsed"), "{cmd}: {v:?}");
    }
    // Too long, or too many substitutions to parse: asks, never hangs.
    let long = format!("echo {}", "a".repeat(70 * 1024));
    assert_eq!(check(&long, &NoScripts).action, Action::Ask);
    let nested = format!("{}x{}", "$(".repeat(20_000), ")".repeat(20_000));
    let t = std::time::Instant::now();
    assert_eq!(check(&nested, &NoScripts).action, Action::Ask);
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
    let deep = format!("{}true{}", "{ ".repeat(10_000), "; }".repeat(10_000));
    assert_eq!(
        check(&deep, &NoScripts).action,
        Action::Allow,
        "parsed, harmless"
    );
}

#[test]
fn the_reason_reaches_the_question_and_the_agent() {
    let input = bash("bash -c 'git push --force'");
    let v = check("bash -c 'git push --force'", &NoScripts);
    let m = v.matched.clone().unwrap();
    let q = crate::approvals::text::question("Bash", &input, Some("/repo"), "t", &m);
    assert!(
        q.contains("Why: the command runs `git push --force` inside `bash -c`"),
        "{q}"
    );
    let zh =
        harness_types::approval_words::question_zh(&q).expect("the core's question reads in zh");
    assert!(
        zh.contains("\n规则：") && zh.contains("\n原因：the command runs"),
        "{zh}"
    );
    let agent = crate::approvals::text::short_why("Bash", &input, Some(&m));
    assert!(
        agent.contains("— runs `git push --force` inside `bash -c`"),
        "{agent}"
    );
    // Asked by the gate itself: the question says why, and no rule.
    let input = bash("eval \"$X\"");
    let v = check("eval \"$X\"", &NoScripts);
    let m = v.matched.clone().unwrap();
    let q = crate::approvals::text::question("Bash", &input, Some("/repo"), "t", &m);
    assert!(
        q.contains(
            "Why: the gate cannot read what this command runs, so it asks: `eval` runs text"
        ),
        "{q}"
    );
    assert!(!q.contains("Rule:"), "{q}");
    // The same question as a Chinese page or chat shows it.
    let zh =
        harness_types::approval_words::question_zh(&q).expect("the core's question reads in zh");
    assert!(
        zh.starts_with(
            "批准这次 Bash 调用吗？\n\n$ eval \"$X\"\n\n任务：t\n工作目录：/repo\n原因：审批闸门"
        ),
        "{zh}"
    );
    // Offline, the same evaluation and the same reason.
    let r = offline::decide(&defaults(), "Bash", &input, Some("/repo"), "refused", "s").unwrap();
    assert!(r.contains("`eval` runs text computed"), "{r}");
    let r = offline::decide(
        &defaults(),
        "Bash",
        &bash("echo X > .env"),
        Some("/repo"),
        "refused",
        "s",
    )
    .unwrap();
    assert!(r.contains("writes `.env`"), "{r}");
}

#[test]
fn what_the_gate_cannot_see_runs_as_documented() {
    // Each is a known limit, written in docs/approvals.md: a program the
    // agent wrote, a build tool running its own files, a writer the gate
    // does not know, a remote command.
    for cmd in [
        "python3 push.py",
        "node tools/release.js",
        "make deploy",
        "npm run release",
        "cargo run --bin publisher",
        "tar -xf payload.tar",
        "patch -p1 < change.diff",
        "ssh host 'git push'",
    ] {
        assert_eq!(check(cmd, &NoScripts).action, Action::Allow, "{cmd}");
    }
}
