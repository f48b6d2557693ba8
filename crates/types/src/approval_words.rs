//! An approval's question and options in Chinese, for a page or a chat in
//! that language.
//!
//! The core writes an approval's question in English
//! (`harness_core::approvals::text::question`) and stores it with the ask,
//! with the options `Approve` / `Deny` that a reply is matched against. The
//! stored text and labels stay as they are; what a person reads in Chinese is
//! made from them here: the question's first line and the labels of its
//! closing lines (task, working directory, why or rule) are translated, the
//! call itself and the values are shown as written. A text that is not an
//! approval's question is left alone.

/// The first line the core writes: `Approve this <tool> call?`.
const HEAD: (&str, &str) = ("Approve this ", " call?");
/// The gate's own reason when it cannot read a command (a fixed sentence).
const GATE_WHY: &str = "Why: the gate cannot read what this command runs, so it asks: ";
const GATE_WHY_ZH: &str = "原因：审批闸门读不懂这条命令会运行什么，所以来问你：";
/// The closing lines' labels, English → Chinese.
const LABELS: [(&str, &str); 4] = [
    ("Task: ", "任务："),
    ("Working directory: ", "工作目录："),
    ("Why: ", "原因："),
    ("Rule: ", "规则："),
];

/// The tool of an approval's first line, when `line` is one.
fn tool_of(line: &str) -> Option<&str> {
    let tool = line.strip_prefix(HEAD.0)?.strip_suffix(HEAD.1)?;
    (!tool.is_empty() && !tool.contains(char::is_whitespace)).then_some(tool)
}

/// An approval's question (as the core writes it) in Chinese; `None` when
/// `question` is not one.
pub fn question_zh(question: &str) -> Option<String> {
    let (head, rest) = question.split_once('\n').unwrap_or((question, ""));
    let tool = tool_of(head.trim_end())?;
    // The closing lines follow the call after its last blank line that
    // starts with the task's line: the call itself may hold blank lines.
    let (call, closing) = match rest.rfind("\n\nTask: ") {
        Some(at) => (&rest[..at + 2], &rest[at + 2..]),
        None => (rest, ""),
    };
    let mut out = format!("批准这次 {tool} 调用吗？\n{call}");
    for (i, line) in closing.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&closing_line_zh(line));
    }
    Some(out)
}

fn closing_line_zh(line: &str) -> String {
    if let Some(why) = line.strip_prefix(GATE_WHY) {
        return format!("{GATE_WHY_ZH}{why}");
    }
    for (en, zh) in LABELS {
        if let Some(value) = line.strip_prefix(en) {
            let value = if value == "(unknown)" {
                "（未知）"
            } else {
                value
            };
            return format!("{zh}{value}");
        }
    }
    line.to_owned()
}

/// An approval's option (label and description as the core stores them)
/// in Chinese: (label, description); `None` for any other option. The
/// stored label is still what a reply sends.
pub fn option_zh(label: &str, description: Option<&str>) -> Option<(&'static str, &'static str)> {
    match (label, description) {
        ("Approve", Some("run exactly this call, once")) => Some(("批准", "只运行这一次调用")),
        ("Deny", Some("the agent must not run it")) => Some(("拒绝", "智能体不得运行它")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: &str = "Approve this Bash call?\n\n$ git push --force\n\nTask: ship it\n\
                        Working directory: /repo\nRule: Project #0 `Bash` git push* — no force\n\
                        Why: the command pushes";

    #[test]
    fn a_rule_approval_reads_in_chinese_with_the_call_as_written() {
        let zh = question_zh(RULE).expect("an approval");
        assert_eq!(
            zh,
            "批准这次 Bash 调用吗？\n\n$ git push --force\n\n任务：ship it\n工作目录：/repo\n\
             规则：Project #0 `Bash` git push* — no force\n原因：the command pushes"
        );
    }

    #[test]
    fn the_gates_own_reason_is_translated_whole() {
        let q = "Approve this Bash call?\n\n$ eval \"$X\"\n\nTask: t\nWorking directory: (unknown)\n\
                 Why: the gate cannot read what this command runs, so it asks: eval of a variable";
        let zh = question_zh(q).expect("an approval");
        assert!(zh.ends_with(
            "任务：t\n工作目录：（未知）\n原因：审批闸门读不懂这条命令会运行什么，所以来问你：eval of a variable"
        ), "{zh}");
    }

    #[test]
    fn lines_of_the_call_that_look_like_labels_stay_as_written() {
        let q = "Approve this Write call?\n\nfiles: notes.md\nTask: inside the file\n\nmore\n\n\
                 Task: the real task\nWorking directory: /w\nRule: Global #2 `Write` *";
        let zh = question_zh(q).expect("an approval");
        assert!(
            zh.contains("files: notes.md\nTask: inside the file\n\nmore\n\n任务：the real task"),
            "{zh}"
        );
    }

    #[test]
    fn other_texts_are_not_approvals() {
        for text in [
            "Which database?",
            "Approve this call?",
            "Approve this Bash call? please",
            "approve this Bash call?",
            "",
        ] {
            assert_eq!(question_zh(text), None, "{text}");
        }
    }

    #[test]
    fn only_the_gates_two_options_are_translated() {
        assert_eq!(
            option_zh("Approve", Some("run exactly this call, once")),
            Some(("批准", "只运行这一次调用"))
        );
        assert_eq!(
            option_zh("Deny", Some("the agent must not run it")),
            Some(("拒绝", "智能体不得运行它"))
        );
        assert_eq!(option_zh("Approve", None), None);
        assert_eq!(option_zh("Deny", Some("a person's own option")), None);
        assert_eq!(
            option_zh("Postgres", Some("run exactly this call, once")),
            None
        );
    }
}
