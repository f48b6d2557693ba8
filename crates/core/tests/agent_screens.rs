//! Every screen recorded from the real CLIs
//! (`tests/fixtures/agent_screens/<cli>/<case>.txt`, made by
//! `cargo run -p harness-model-standin --example record_agent_screens`,
//! `docs/agent-states.md`) is recognised as its case, and the screens where
//! the agent only quotes those lines are recognised as nothing.

use harness_core::agent_state::{
    Cli, ErrorKind, MAX_EVIDENCE_LINES, Observation, Screen, observe, recognise,
};

/// The screen of a fixture (its first line is the recording's header).
fn screen(cli: &str, case: &str) -> Screen<'static> {
    let path = format!(
        "{}/tests/fixtures/agent_screens/{cli}/{case}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (header, body) = text.split_once('\n').expect("a header line");
    assert!(header.starts_with("# "), "{path}: no header line");
    // `<case>@<cols>x<rows>` is recorded at that size, the others at 160×45.
    let size = case.split_once('@').map_or("160x45", |(_, size)| size);
    assert!(header.contains(&format!("{size} PTY")), "{path}: {header}");
    Screen::from_text(body.strip_suffix('\n').unwrap_or(body))
}

fn seen(cli: Cli, case: &str) -> Observation {
    let dir = match cli {
        Cli::Claude => "claude",
        Cli::Codex => "codex",
    };
    observe(cli, &screen(dir, case))
}

/// Retrying, with the attempt shown and the number of attempts `of`.
#[track_caller]
fn assert_erroring(cli: Cli, case: &str, kind: ErrorKind, of: u32) {
    match seen(cli, case) {
        Observation::Erroring {
            kind: k,
            attempt: Some(a),
            of: Some(o),
        } => {
            assert_eq!((k, o), (kind, of), "{case}");
            assert!((1..=o).contains(&a), "{case}: attempt {a}/{o}");
        }
        other => panic!("{case}: {other:?}"),
    }
}

#[track_caller]
fn assert_seen(cli: Cli, case: &str, want: Observation) {
    assert_eq!(seen(cli, case), want, "{cli:?} {case}");
}

#[track_caller]
fn assert_usage_limited(cli: Cli, case: &str, text: &str, zone: Option<&str>) {
    match seen(cli, case) {
        Observation::UsageLimited { reset: Some(r) } => {
            assert_eq!(r.text, text, "{case}");
            assert_eq!(r.zone.as_deref(), zone, "{case}");
        }
        other => panic!("{case}: {other:?}"),
    }
}

/// The reset time printed in the fixture (it is the recording's clock).
fn printed_time(cli: &str, case: &str, after: &str) -> String {
    // Rows joined as one text: a long line wraps.
    let text = screen(cli, case).rows().join(" ");
    let at = text
        .rfind(after)
        .unwrap_or_else(|| panic!("{case}: no {after:?}"))
        + after.len();
    harness_core::agent_state::ResetTime::parse(&text[at..])
        .unwrap_or_else(|| panic!("{case}: no time after {after:?}"))
        .text
}

#[test]
fn claude_code_retrying() {
    use Cli::Claude;
    assert_erroring(
        Claude,
        "rate_limit_429_retrying",
        ErrorKind::RateLimited,
        10,
    );
    assert_erroring(Claude, "overloaded_529_retrying", ErrorKind::Overloaded, 10);
    assert_erroring(
        Claude,
        "server_error_500_retrying",
        ErrorKind::Server(500),
        10,
    );
    // A dropped stream is only "API error" on the spinner row.
    assert_erroring(
        Claude,
        "connection_dropped_retrying",
        ErrorKind::Other("API error".into()),
        10,
    );
}

#[test]
fn claude_code_gave_up() {
    use Cli::Claude;
    for (case, kind) in [
        ("rate_limit_429_gave_up", ErrorKind::RateLimited),
        ("overloaded_529_gave_up", ErrorKind::Overloaded),
        ("server_error_500_gave_up", ErrorKind::Server(500)),
        ("connection_dropped_gave_up", ErrorKind::Network),
        // An API token with the subscription's rate-limit headers: no wait
        // for the reset, a rejection at once.
        ("usage_limit_api_key", ErrorKind::RateLimited),
    ] {
        assert_seen(Claude, case, Observation::GaveUp { kind });
    }
}

#[test]
fn claude_code_usage_limit() {
    let at = printed_time(
        "claude",
        "usage_limit_subscription",
        "Continuing automatically at ",
    );
    assert_usage_limited(
        Cli::Claude,
        "usage_limit_subscription",
        &format!("{at} (UTC)"),
        Some("UTC"),
    );
    let at = printed_time("claude", "usage_limit_api_key_watchdog", "retrying in ");
    assert_usage_limited(Cli::Claude, "usage_limit_api_key_watchdog", &at, None);
    // After the reset the answer came: nothing to report.
    assert_seen(
        Cli::Claude,
        "usage_limit_subscription_after_reset",
        Observation::None,
    );
}

#[test]
fn claude_code_logged_out() {
    use Cli::Claude;
    for case in [
        "unauthorized_401_subscription",
        "unauthorized_401_subscription_invalid",
        // An API token refused: retried like any error, but the person must
        // fix the credentials.
        "unauthorized_401_api_key",
    ] {
        assert_seen(Claude, case, Observation::LoggedOut);
    }
}

#[test]
fn claude_code_native_question() {
    assert_seen(
        Cli::Claude,
        "native_question",
        Observation::NativeDialog {
            title: "Which colour?".into(),
            options: vec![
                "Red".into(),
                "Blue".into(),
                "Type something.".into(),
                "Chat about this".into(),
            ],
        },
    );
}

#[test]
fn codex_retrying_and_gave_up() {
    use Cli::Codex;
    assert_erroring(Codex, "overloaded_529_retrying", ErrorKind::Overloaded, 5);
    // Codex words a 500 as "high demand".
    assert_erroring(Codex, "server_error_500_retrying", ErrorKind::Overloaded, 5);
    assert_erroring(Codex, "connection_dropped_retrying", ErrorKind::Network, 5);
    for (case, kind) in [
        ("overloaded_529_gave_up", ErrorKind::Overloaded),
        ("server_error_500_gave_up", ErrorKind::Overloaded),
        ("connection_dropped_gave_up", ErrorKind::Network),
    ] {
        assert_seen(Codex, case, Observation::GaveUp { kind });
    }
    assert_seen(Codex, "unauthorized_401", Observation::LoggedOut);
}

#[test]
fn codex_usage_limit_wins_over_its_rate_limit_dialog() {
    let at = printed_time("codex", "usage_limit", "try again at ");
    assert_usage_limited(Cli::Codex, "usage_limit", &at, None);
}

#[test]
fn codex_rate_limit_dialog_alone_is_a_native_dialog() {
    // The same recorded screen with the usage-limit cell blanked out: what
    // is left is Codex's own dialog.
    let rows: Vec<String> = screen("codex", "usage_limit")
        .rows()
        .iter()
        .map(|r| {
            if r.starts_with("■ ") || r.starts_with("at ") {
                String::new()
            } else {
                r.clone()
            }
        })
        .collect();
    assert_eq!(
        observe(Cli::Codex, &Screen::from_text(&rows.join("\n"))),
        Observation::NativeDialog {
            title: "Approaching rate limits — Switch to gpt-6-luna for lower credit usage?".into(),
            options: vec![
                "Switch to gpt-6-luna".into(),
                "Keep current model".into(),
                "Keep current model (never show again)".into(),
            ],
        }
    );
}

#[test]
fn the_agents_own_text_is_never_a_status() {
    for (cli, dir) in [(Cli::Claude, "claude"), (Cli::Codex, "codex")] {
        for case in ["quoted_status_lines", "quoted_status_lines_long"] {
            let s = screen(dir, case);
            assert!(
                s.rows()
                    .iter()
                    .any(|r| r.contains("retrying in 1s · attempt 3/10")),
                "{dir}/{case}: the quoted lines are on the screen"
            );
            assert_eq!(observe(cli, &s), Observation::None, "{dir}/{case}");
        }
        // The same recorded screen without the CLI's own row between the
        // answer and the input ("✻ Baked for 2s", "Worked for <1s"): the
        // quoted lines are right above it, and still only the agent's.
        let rows: Vec<String> = screen(dir, "quoted_status_lines_long")
            .rows()
            .iter()
            .filter(|r| !r.starts_with("✻ ") && !r.trim_start().starts_with("Worked for"))
            .cloned()
            .collect();
        assert_eq!(
            observe(cli, &Screen::from_text(&rows.join("\n"))),
            Observation::None,
            "{dir}: quoted lines next to the input"
        );
    }
}

#[test]
fn working_is_no_status() {
    // The spinner row ("✢ Cerebrating…") and Codex's live status
    // ("◦ Working (3s • esc to interrupt) · …") of an agent at work.
    assert_seen(Cli::Claude, "working_tool", Observation::None);
    assert_seen(Cli::Codex, "working_tool", Observation::None);
}

#[test]
fn an_error_the_cli_recovered_from_is_history() {
    // Gave up, then the message was typed again and answered: the old error
    // is still in the conversation, but nothing holds the agent.
    assert_seen(Cli::Claude, "recovered_after_error", Observation::None);
    assert_seen(Cli::Codex, "recovered_after_error", Observation::None);
}

#[test]
fn recorded_screens_become_one_state() {
    use harness_core::agent_state::{
        AgentState, DEFAULT_STALL_AFTER, ExitStatus, HookEvent, Inputs, state,
    };
    let inputs = |observation| Inputs {
        exit: None,
        observation,
        last_hook: Some(HookEvent::UserPromptSubmit),
        open_question: false,
        silent_secs: 30 * 60,
        stall_after: DEFAULT_STALL_AFTER,
    };
    // Retrying for half an hour is erroring, not stalled.
    let retrying = seen(Cli::Claude, "overloaded_529_retrying");
    assert!(matches!(
        state(&inputs(&retrying)),
        AgentState::Erroring {
            kind: ErrorKind::Overloaded,
            gave_up: false,
            ..
        }
    ));
    let gave_up = seen(Cli::Codex, "connection_dropped_gave_up");
    assert!(matches!(
        state(&inputs(&gave_up)),
        AgentState::Erroring {
            kind: ErrorKind::Network,
            gave_up: true,
            ..
        }
    ));
    let limited = seen(Cli::Claude, "usage_limit_subscription");
    assert!(matches!(
        state(&inputs(&limited)),
        AgentState::UsageLimited { reset: Some(_) }
    ));
    // The agent's quoted text: its hooks decide (here silent too long).
    let quoted = seen(Cli::Claude, "quoted_status_lines_long");
    assert_eq!(
        state(&inputs(&quoted)),
        AgentState::Stalled {
            silent_secs: 30 * 60
        }
    );
    let ended = Inputs {
        exit: Some(ExitStatus::Signal(9)),
        ..inputs(&limited)
    };
    assert_eq!(state(&ended), AgentState::Crashed { signal: 9 });
}

/// The evidence of a case: the CLI's own rows it was read from, each one a
/// row of the screen, with `needles` among them.
#[track_caller]
fn assert_evidence(cli: Cli, case: &str, needles: &[&str]) {
    let dir = match cli {
        Cli::Claude => "claude",
        Cli::Codex => "codex",
    };
    let s = screen(dir, case);
    let seen = recognise(cli, &s);
    assert_ne!(seen.observation, Observation::None, "{dir}/{case}");
    assert!(
        !seen.lines.is_empty() && seen.lines.len() <= MAX_EVIDENCE_LINES,
        "{dir}/{case}: {:?}",
        seen.lines
    );
    for line in &seen.lines {
        assert!(
            s.rows().iter().any(|r| r.trim() == line),
            "{dir}/{case}: {line:?} is not a row of the screen"
        );
    }
    for needle in needles {
        assert!(
            seen.lines.iter().any(|l| l.contains(needle)),
            "{dir}/{case}: no evidence line with {needle:?} in {:?}",
            seen.lines
        );
    }
}

#[test]
fn the_evidence_is_the_clis_own_rows() {
    use Cli::{Claude, Codex};
    assert_evidence(Claude, "overloaded_529_retrying", &["529", "attempt"]);
    assert_evidence(
        Claude,
        "overloaded_529_gave_up",
        &["API Error", "Resend your message"],
    );
    assert_evidence(
        Claude,
        "usage_limit_subscription",
        &["Usage limit reached", "(UTC)"],
    );
    assert_evidence(Claude, "usage_limit_api_key_watchdog", &["limit reached"]);
    assert_evidence(Claude, "unauthorized_401_subscription", &["/login"]);
    assert_evidence(Claude, "native_question", &["Which colour?", "Red", "Esc"]);
    assert_evidence(Codex, "overloaded_529_retrying", &["Reconnecting", "529"]);
    assert_evidence(Codex, "connection_dropped_gave_up", &["■ "]);
    assert_evidence(Codex, "usage_limit", &["usage limit"]);
    assert_evidence(Codex, "unauthorized_401", &["401"]);
    // Nothing recognised: no evidence, and never the agent's quoted text.
    for (cli, dir) in [(Claude, "claude"), (Codex, "codex")] {
        for case in [
            "quoted_status_lines",
            "working_tool",
            "recovered_after_error",
        ] {
            let seen = recognise(cli, &screen(dir, case));
            assert_eq!(seen.observation, Observation::None, "{dir}/{case}");
            assert!(seen.lines.is_empty(), "{dir}/{case}: {:?}", seen.lines);
        }
    }
}

#[test]
fn codex_at_harness_default_terminal_of_80_by_24() {
    // Recorded at 80×24: the usage-limit cell and the dialog's option
    // descriptions wrap onto rows of their own.
    use Cli::Codex;
    let at = printed_time("codex", "usage_limit@80x24", "try again at ");
    assert_usage_limited(Codex, "usage_limit@80x24", &at, None);
    assert_erroring(
        Codex,
        "server_error_500_retrying@80x24",
        ErrorKind::Overloaded,
        5,
    );
    assert_seen(
        Codex,
        "overloaded_529_gave_up@80x24",
        Observation::GaveUp {
            kind: ErrorKind::Overloaded,
        },
    );
    assert_seen(Codex, "unauthorized_401@80x24", Observation::LoggedOut);
    // The dialog behind the usage limit, with its wrapped descriptions.
    let s = screen("codex", "usage_limit@80x24");
    assert_eq!(
        harness_core::agent_state::dialog(Codex, &s),
        Some((
            "Approaching rate limits — Switch to gpt-6-luna for lower credit usage?".into(),
            vec![
                "Switch to gpt-6-luna".into(),
                "Keep current model".into(),
                "Keep current model (never show again)".into(),
            ]
        ))
    );
}

#[test]
fn claude_code_at_harness_default_terminal_of_80_by_24() {
    use Cli::Claude;
    assert_erroring(
        Claude,
        "rate_limit_429_retrying@80x24",
        ErrorKind::RateLimited,
        10,
    );
    assert_seen(
        Claude,
        "overloaded_529_gave_up@80x24",
        Observation::GaveUp {
            kind: ErrorKind::Overloaded,
        },
    );
    assert_seen(
        Claude,
        "unauthorized_401_api_key@80x24",
        Observation::LoggedOut,
    );
    let at = printed_time(
        "claude",
        "usage_limit_subscription@80x24",
        "Continuing automatically at ",
    );
    assert_usage_limited(
        Claude,
        "usage_limit_subscription@80x24",
        &format!("{at} (UTC)"),
        Some("UTC"),
    );
    assert_seen(
        Claude,
        "usage_limit_subscription_after_reset@80x24",
        Observation::None,
    );
}

/// Claude Code's Notification hook event after it waited at its prompt, as
/// the real CLI gave it to a hook (`tests/fixtures/hooks/`, recorded by
/// `server/tests/notification_real.rs`): read as "idle at its prompt".
#[test]
fn the_recorded_idle_notification_reads_as_idle() {
    use harness_core::agent_state::{HookEvent, notification};
    let path = format!(
        "{}/tests/fixtures/hooks/claude_notification_idle_prompt.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let fixture: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let event = &fixture["event"];
    assert_eq!(event["hook_event_name"], "Notification");
    assert_eq!(
        notification(
            event["notification_type"].as_str(),
            event["message"].as_str()
        ),
        Some(HookEvent::IdlePrompt)
    );
    // A CLI that sent only the message would be read the same.
    assert_eq!(
        notification(None, event["message"].as_str()),
        Some(HookEvent::IdlePrompt)
    );
}
