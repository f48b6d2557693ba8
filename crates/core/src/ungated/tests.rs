use serde_json::json;

use super::{transcripts::*, *};

/// A run of the real Claude Code 2.1.332 with `disableAllHooks`: the model
/// called a tool Claude Code does not have, then `Bash {"command":"bash"}`
/// (trimmed to the lines with calls; the last line is cut, as a file being
/// written is).
const CLAUDE: &str = include_str!("fixtures/claude-2.1.332-transcript.jsonl");
/// A run of the real Codex 0.171.0 (session file, trimmed): `exec_command`
/// with a tty, `write_stdin` into it, an MCP tool, a tool it does not have,
/// another `exec_command`.
const CODEX: &str = include_str!("fixtures/codex-0.171.0-session.jsonl");

#[test]
fn claude_code_transcript_calls() {
    let calls = claude_calls(CLAUDE);
    let shown: Vec<(&str, bool)> = calls.iter().map(|c| (c.tool.as_str(), c.not_run)).collect();
    assert_eq!(shown, [("NoSuchTool", true), ("Bash", false)]);
    let bash = &calls[1];
    assert!(
        bash.call_id
            .as_deref()
            .is_some_and(|id| id.starts_with("toolu_")),
        "{bash:?}"
    );
    assert_eq!(bash.input["command"], "bash");
    assert!(bash.at.is_some());
}

#[test]
fn codex_session_file_calls() {
    let calls = codex_calls(CODEX);
    let shown: Vec<(&str, Option<&str>, bool)> = calls
        .iter()
        .map(|c| (c.tool.as_str(), c.call_id.as_deref(), c.not_run))
        .collect();
    assert_eq!(
        shown,
        [
            ("exec_command", Some("call_0"), false),
            ("write_stdin", Some("call_1"), false),
            ("mcp__t__echo_tool", Some("call_2"), false),
            ("apply_patch", Some("call_3"), true),
            ("exec_command", Some("call_4"), false),
        ]
    );
    assert_eq!(
        calls[0].input,
        json!({"cmd": "bash", "tty": true, "yield_time_ms": 500})
    );
    assert!(
        calls[1].input["chars"]
            .as_str()
            .is_some_and(|c| c.starts_with("git push --force"))
    );
}

#[test]
fn a_hook_and_the_file_name_a_call_alike() {
    // Codex's hook: `Bash {"command": …}` with the call's id; its file:
    // `exec_command {"cmd": …, "tty": …}` with the same id.
    assert_eq!(
        call_key(Some("call_0"), "Bash", &json!({"command": "bash"})),
        call_key(
            Some("call_0"),
            "exec_command",
            &json!({"cmd": "bash", "tty": true})
        )
    );
    assert_eq!(call_key(Some("call_0"), "Bash", &json!({})), "id:call_0");
    assert_ne!(
        call_key(Some("call_0"), "Bash", &json!({})),
        call_key(Some("call_1"), "Bash", &json!({}))
    );
    // Without an id: what the call does.
    assert_eq!(
        call_key(None, "Bash", &json!({"command": "ls", "description": "x"})),
        call_key(
            None,
            "exec_command",
            &json!({"cmd": "ls", "yield_time_ms": 5})
        )
    );
    assert_ne!(
        call_key(None, "Bash", &json!({"command": "ls"})),
        call_key(None, "Bash", &json!({"command": "ls -la"}))
    );
    assert_eq!(
        call_key(Some("  "), "Bash", &json!({"command": "ls"})),
        call_key(None, "Bash", &json!({"command": "ls"}))
    );
}

#[test]
fn what_needs_a_check() {
    assert!(needs_check("Bash"));
    assert!(needs_check("exec_command"));
    assert!(needs_check("mcp__harness__ask_human"));
    assert!(!needs_check("write_stdin"), "no hook ever sees it");
    assert!(
        !needs_check("AskUserQuestion"),
        "the ladder denies it unchecked"
    );
    assert!(!needs_check("request_user_input"));
}

#[test]
fn a_call_counts_once_its_hook_had_its_chance() {
    let t0 = Utc::now();
    assert!(!settled(
        t0,
        t0 + chrono::Duration::seconds(10),
        false,
        SETTLE
    ));
    assert!(settled(
        t0,
        t0 + chrono::Duration::seconds(10),
        true,
        SETTLE
    ));
    assert!(settled(
        t0,
        t0 + chrono::Duration::seconds(76),
        false,
        SETTLE
    ));
}

#[test]
fn lines_that_are_not_calls_are_skipped() {
    let text = "not json\n{\"type\":\"response_item\",\"payload\":{\"type\":\"reasoning\"}}\n\n\
                {\"type\":\"response_item\",\"payload\":{\"type\":\"local_shell_call\",\"call_id\":\"c9\",\
                \"action\":{\"type\":\"exec\",\"command\":[\"ls\"]}}}\n";
    let calls = codex_calls(text);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].tool, "local_shell");
    assert_eq!(claude_calls(text), Vec::new());
    let interrupted = "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{}}]}}\n\
        {\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\
        \"content\":[{\"type\":\"text\",\"text\":\"[Request interrupted by user for tool use]\"}],\"is_error\":true}]}}\n";
    assert!(claude_calls(interrupted)[0].not_run);
}

#[test]
fn the_alert_says_what_was_seen() {
    let t = alert_text(
        "cexec",
        UngatedEvidence::Transcript,
        "Bash: git push --force",
    );
    assert!(t.starts_with("[Ungated run]"), "{t}");
    assert!(t.contains("execution cexec") && t.contains("Bash: git push --force"));
    assert!(t.contains("disableAllHooks"), "{t}");
}

#[test]
fn a_record_read_in_parts_gives_the_same_calls() {
    for (format, text, whole) in [
        (transcripts::Format::Codex, CODEX, codex_calls(CODEX)),
        (transcripts::Format::Claude, CLAUDE, claude_calls(CLAUDE)),
    ] {
        let mut r = transcripts::Reading::new(format);
        for line in text.split_inclusive('\n') {
            r.feed(line);
        }
        assert_eq!(r.calls(), whole);
    }
}
