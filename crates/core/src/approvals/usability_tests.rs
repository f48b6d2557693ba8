//! The gate must stay usable for an agent that builds and tests all night:
//! an ordinary session's commands (fixtures/coding_session.txt) ask almost
//! never under the built-in rules, and each ask is one a person wants.

use serde_json::json;

use crate::approvals::policy::{Action, Effective};

/// The workspace the session's scripts live in, as a reader sees it.
fn scripts(_: Option<&str>, path: &str, _: usize) -> Result<Vec<u8>, String> {
    match path {
        "scripts/test.sh" => Ok(b"#!/bin/sh\nset -e\ncargo test --workspace\nnpm test\n".to_vec()),
        "scripts/env.sh" => Ok(b"export RUST_LOG=info\nexport PORT=3000\n".to_vec()),
        "target/debug/harness" => Ok(b"\x7fELF\x02\x01\x01\0\0\0".to_vec()),
        // What `python3 -m venv` writes (shortened).
        "venv/bin/activate" => Ok(br#"deactivate () {
    if [ -n "${_OLD_VIRTUAL_PATH:-}" ] ; then
        PATH="${_OLD_VIRTUAL_PATH:-}"
        export PATH
        unset _OLD_VIRTUAL_PATH
    fi
    if [ -n "${BASH:-}" -o -n "${ZSH_VERSION:-}" ] ; then
        hash -r 2> /dev/null
    fi
    unset VIRTUAL_ENV
    if [ ! "${1:-}" = "nondestructive" ] ; then
        unset -f deactivate
    fi
}
deactivate nondestructive
VIRTUAL_ENV="/repo/venv"
export VIRTUAL_ENV
_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH
if [ -z "${VIRTUAL_ENV_DISABLE_PROMPT:-}" ] ; then
    _OLD_VIRTUAL_PS1="${PS1:-}"
    PS1="(venv) ${PS1:-}"
    export PS1
fi
hash -r 2> /dev/null
"#
        .to_vec()),
        other => Err(format!("no file {other}")),
    }
}

fn entries() -> Vec<String> {
    include_str!("fixtures/coding_session.txt")
        .split("\n---\n")
        .map(|e| {
            e.lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

#[test]
fn an_ordinary_coding_session_asks_almost_never() {
    let policy = Effective {
        project: vec![],
        global: None,
    };
    let entries = entries();
    assert!(entries.len() > 140, "{}", entries.len());
    let mut asked = Vec::new();
    for cmd in &entries {
        for (tool, input) in [
            ("Bash", json!({"command": cmd})),
            ("exec_command", json!({"cmd": cmd})),
            ("shell", json!({"command": ["bash", "-lc", cmd]})),
        ] {
            let v = policy.evaluate_with(tool, &input, Some("/repo"), &scripts);
            if v.action != Action::Allow {
                let why = v.matched.map(|m| (m.rule.pattern, m.why));
                asked.push((cmd.clone(), format!("{tool}: {why:?}")));
            }
        }
    }
    // Each ask, and why a person wants it.
    let expected = [
        // Sources a file that does not exist yet when the command is
        // checked (the venv is made by the same command): unreadable.
        "python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.txt",
        // Sources a file outside the working directory: never read.
        "source ~/.cargo/env",
    ];
    let mut distinct: Vec<&str> = asked.iter().map(|(cmd, _)| cmd.as_str()).collect();
    distinct.dedup();
    assert_eq!(distinct, expected, "{asked:#?}");
    // All three shell tools agree.
    assert_eq!(asked.len(), expected.len() * 3, "{asked:#?}");
}
