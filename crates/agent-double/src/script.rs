//! The script language: one action per line, `#` comments.

/// One scripted action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Print the text as a line.
    Say(String),
    /// Sleep this many milliseconds.
    Sleep(u64),
    /// MCP `tools/call ask_human {question}`.
    AskHuman(String),
    /// MCP `tools/call notify_human {message}`.
    NotifyHuman(String),
    /// Use a tool: runs the PreToolUse hooks matching its name.
    Tool { name: String, input: Option<String> },
    /// Read the next input and print `GOT REPLY: <text>`.
    WaitReply,
    /// Run the Stop hooks (with this last reply, default `done`).
    StopHook(Option<String>),
    /// Run the SessionStart hooks.
    SessionStart,
    /// Print `ENV NAME=value` (or `ENV NAME unset`).
    PrintEnv(String),
    /// Turn bracketed paste on or off (`CSI ? 2004 h/l`).
    BracketedPaste(bool),
    /// Exit with this code.
    Exit(i32),
    /// MCP `tools/call <tool> <json arguments>`; prints `MCP OK: …` / `MCP FAILED: …`.
    Mcp { tool: String, arguments: String },
}

/// Parses a script; errors name the line.
pub fn parse(text: &str) -> Result<Vec<Action>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .map(|(i, l)| parse_line(l.trim()).map_err(|e| format!("script line {}: {e}", i + 1)))
        .collect()
}

/// Parses one action line.
pub fn parse_line(line: &str) -> Result<Action, String> {
    let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    let need = |what: &str| {
        if rest.is_empty() {
            Err(format!("`{cmd}` needs {what}"))
        } else {
            Ok(rest.to_owned())
        }
    };
    Ok(match cmd {
        "say" => Action::Say(rest.to_owned()),
        "sleep" => Action::Sleep(rest.parse().map_err(|_| "`sleep` needs milliseconds")?),
        "ask_human" => Action::AskHuman(need("a question")?),
        "notify_human" => Action::NotifyHuman(need("a message")?),
        "tool" => {
            let tool = need("a tool name")?;
            let (name, input) = match tool.split_once(' ') {
                Some((n, i)) => (n.to_owned(), Some(i.trim().to_owned())),
                None => (tool, None),
            };
            Action::Tool { name, input }
        }
        "wait_reply" => Action::WaitReply,
        "stop_hook" => Action::StopHook((!rest.is_empty()).then(|| rest.to_owned())),
        "session_start" => Action::SessionStart,
        "mcp" => {
            let spec = need("a tool name")?;
            let (tool, arguments) = spec.split_once(' ').unwrap_or((spec.as_str(), "{}"));
            Action::Mcp {
                tool: tool.to_owned(),
                arguments: arguments.trim().to_owned(),
            }
        }
        "print_env" => Action::PrintEnv(need("a variable name")?),
        "bracketed_paste" => Action::BracketedPaste(rest != "off"),
        "exit" => Action::Exit(if rest.is_empty() {
            0
        } else {
            rest.parse().map_err(|_| "`exit` needs a number")?
        }),
        other => return Err(format!("unknown action `{other}`")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_action() {
        let s = "# demo\nsay hello world\nsleep 10\nask_human Which one?\nnotify_human FYI\n\
                 tool AskUserQuestion\ntool Bash {\"command\":\"ls\"}\nwait_reply\nstop_hook\n\
                 session_start\nprint_env TOWER_TASK_ID\nbracketed_paste off\nexit 3\n";
        let a = parse(s).unwrap();
        assert_eq!(a[0], Action::Say("hello world".into()));
        assert_eq!(a[1], Action::Sleep(10));
        assert_eq!(a[2], Action::AskHuman("Which one?".into()));
        assert_eq!(
            a[5],
            Action::Tool {
                name: "Bash".into(),
                input: Some("{\"command\":\"ls\"}".into())
            }
        );
        assert_eq!(a[10], Action::BracketedPaste(false));
        assert_eq!(a[11], Action::Exit(3));
        assert_eq!(a.len(), 12);
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(parse("say ok\nfly away").unwrap_err().contains("line 2"));
        assert!(parse("ask_human").is_err());
        assert!(parse("sleep soon").is_err());
    }
}
