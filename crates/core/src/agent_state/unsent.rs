//! Whether typed text still sits unsent in the CLI's input box: the submit
//! key was read as part of the paste (a busy CLI reads the text and its
//! Enter in one chunk and takes the Enter as a newline of the paste), so
//! the text waits there and the agent never reads it. The delivery then
//! presses the submit key again (never the text: it is typed once). The
//! text seen in the conversation above the box is the proof it was sent.

use super::{Cli, Screen, claude, codex};

/// How much of the text's start is compared in the box (without
/// whitespace: the box wraps it at its own width).
const PREFIX_CHARS: usize = 24;
/// How much is compared in the conversation: more, so an earlier message
/// with the same start is not taken for this one.
const SENT_CHARS: usize = 64;

/// Where typed text is on a CLI's screen after its Enter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typed {
    /// In the input box: not sent (yet).
    InBox,
    /// Above the box, in the conversation, and not in the box: sent.
    Sent,
    /// Neither, with the box on the screen (not drawn yet, or scrolled away).
    Unseen,
    /// The screen shows no input box (a dialog, another program): nothing
    /// to confirm.
    NoBox,
}

/// True when `screen` shows the input box of `cli` (its prompt, ready for
/// keys). A delivery looks before it types: a box seen then and gone right
/// after the Enter is the CLI redrawing, not a screen without a box.
pub fn shows_input_box(cli: Cli, screen: &Screen) -> bool {
    match cli {
        Cli::Claude => claude::input_box(screen).is_some(),
        Cli::Codex => codex::composer(screen).is_some(),
    }
}

/// Where the start of `text` is on `screen` drawn by `cli`: in its input
/// box (or a collapsed paste, `[Pasted text …]` / `[Pasted Content …]`, is
/// there), in the conversation above it, or neither.
pub fn typed_state(cli: Cli, screen: &Screen, text: &str) -> Typed {
    let (above, boxed) = match cli {
        Cli::Claude => match claude::input_box(screen) {
            Some((top, input, bottom)) => (top, input..bottom),
            None => return Typed::NoBox,
        },
        Cli::Codex => match codex::composer(screen) {
            Some(at) => (at, at..screen.len()),
            None => return Typed::NoBox,
        },
    };
    let start = squeezed(text, PREFIX_CHARS);
    if start.is_empty() {
        return Typed::Unseen;
    }
    let mut in_box: String = boxed.map(|i| screen.row(i)).collect::<Vec<_>>().join(" ");
    for marker in ["❯", "›"] {
        if let Some(rest) = in_box.trim_start().strip_prefix(marker) {
            in_box = rest.to_string();
        }
    }
    if in_box.contains("[Pasted text")
        || in_box.contains("[Pasted Content")
        || squeezed(&in_box, usize::MAX).contains(&start)
    {
        return Typed::InBox;
    }
    let conversation = (0..above)
        .map(|i| screen.row(i))
        .collect::<Vec<_>>()
        .join(" ");
    if squeezed(&conversation, usize::MAX).contains(&squeezed(text, SENT_CHARS)) {
        Typed::Sent
    } else {
        Typed::Unseen
    }
}

/// True when the input box of `cli` on `screen` holds the start of `text`
/// ([`typed_state`] is [`Typed::InBox`]). Only the box counts: the same
/// text in the conversation above it (the submitted prompt) never does.
pub fn holds_unsent(cli: Cli, screen: &Screen, text: &str) -> bool {
    typed_state(cli, screen, text) == Typed::InBox
}

/// The first `n` characters of `text` that are not whitespace.
fn squeezed(text: &str, n: usize) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .take(n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: &str = "────────────────────────────────────────────────────────────";
    const TEXT: &str = "[Harness approval cmxb6cssr02g8z5b3ghrv6due] Approved by admin: Bash: git push --force origin HEAD:refs/heads/later — run it now";

    fn claude(box_rows: &[&str], above: &[&str]) -> Screen<'static> {
        let mut rows: Vec<&str> = above.to_vec();
        rows.push(RULE);
        rows.extend_from_slice(box_rows);
        rows.push(RULE);
        rows.push("  ⏵⏵ bypass permissions on (shift+tab to cycle)");
        Screen::from_text(&rows.join("\n"))
    }

    #[test]
    fn claude_text_left_in_the_box_is_unsent() {
        // As recorded from Claude Code 2.1 when the Enter came with the paste.
        let screen = claude(
            &[
                "❯ [Harness approval cmxb6cssr02g8z5b3ghrv6due] Approved by admin: Bash: git",
                "  push --force origin HEAD:refs/heads/later — run it now",
                "   ",
            ],
            &["● Waiting for approval."],
        );
        assert!(holds_unsent(Cli::Claude, &screen, TEXT));
    }

    #[test]
    fn claude_submitted_text_above_the_box_is_not_unsent() {
        let screen = claude(
            &["❯ "],
            &[
                "❯ [Harness approval cmxb6cssr02g8z5b3ghrv6due] Approved by admin: Bash: git",
                "  push --force origin HEAD:refs/heads/later — run it now",
                "",
                "✻ Thinking…",
            ],
        );
        assert!(!holds_unsent(Cli::Claude, &screen, TEXT));
    }

    #[test]
    fn claude_other_text_in_the_box_is_not_ours() {
        let screen = claude(&["❯ something the person is typing"], &[]);
        assert!(!holds_unsent(Cli::Claude, &screen, TEXT));
        let pasted = claude(&["❯ [Pasted text #1 +12 lines]"], &[]);
        assert!(holds_unsent(Cli::Claude, &pasted, TEXT));
    }

    #[test]
    fn codex_composer_holding_the_text_is_unsent() {
        let screen = Screen::from_text(
            &[
                "• Waiting for approval.",
                "",
                "› [Harness approval cmxb6cssr02g8z5b3ghrv6due] Approved by admin: Bash: git push",
                "  --force origin HEAD:refs/heads/later — run it now",
                "",
                "  ⏎ send   ⌃J newline   ⌃T transcript   ⌃C quit",
            ]
            .join("\n"),
        );
        assert!(holds_unsent(Cli::Codex, &screen, TEXT));
        let sent = Screen::from_text(
            &[
                "› [Harness approval cmxb6cssr02g8z5b3ghrv6due] Approved by admin: Bash: git push",
                "",
                "• Working (2s • esc to interrupt)",
                "",
                "› Ask Codex to do anything",
                "",
                "  ⏎ send   ⌃J newline   ⌃T transcript   ⌃C quit",
            ]
            .join("\n"),
        );
        assert!(!holds_unsent(Cli::Codex, &sent, TEXT));
    }

    #[test]
    fn sent_text_is_above_the_box_and_unseen_text_nowhere() {
        let sent = claude(
            &["❯ "],
            &[
                "> [Harness approval cmxb6cssr02g8z5b3ghrv6due] Approved by admin: Bash: git",
                "  push --force origin HEAD:refs/heads/later — run it now",
            ],
        );
        assert_eq!(typed_state(Cli::Claude, &sent, TEXT), Typed::Sent);
        let unseen = claude(&["❯ "], &["● Waiting for approval."]);
        assert_eq!(typed_state(Cli::Claude, &unseen, TEXT), Typed::Unseen);
        let plain = Screen::from_text("RESUMED abc\n$ ");
        assert_eq!(typed_state(Cli::Claude, &plain, TEXT), Typed::NoBox);
        assert!(!shows_input_box(Cli::Claude, &plain));
        assert!(shows_input_box(Cli::Claude, &unseen));
        assert_eq!(typed_state(Cli::Codex, &plain, TEXT), Typed::NoBox);
        let held = claude(
            &["❯ [Harness approval cmxb6cssr02g8z5b3ghrv6due] Approved by admin: Bash: git"],
            &["> [Harness approval cmxb6cssr02g8z5b3ghrv6due] an older one"],
        );
        assert_eq!(typed_state(Cli::Claude, &held, TEXT), Typed::InBox);
    }

    #[test]
    fn no_box_no_text_nothing_unsent() {
        let screen = Screen::from_text("$ ");
        assert!(!holds_unsent(Cli::Claude, &screen, TEXT));
        assert!(!holds_unsent(Cli::Codex, &screen, TEXT));
        let boxed = claude(&["❯ x"], &[]);
        assert!(!holds_unsent(Cli::Claude, &boxed, "   "));
    }
}
