//! The escalation ladder (seed 000, docs/tower-workbench.md §4.1–§4.2): who a
//! blocked agent asks, and the enforcement decision of the PreToolUse hook.
//!
//! Two axes: does the task have a parent, and is a human watching this
//! terminal (attended) or not (unattended)? Native interactive question tools
//! are allowed only with no parent AND attended; everywhere else they would
//! deadlock an unwatched terminal, so they are denied with directions to the
//! right rung.

/// Tool names of native interactive questions — the ONE list: the hook's
/// decision and the hook matchers Harness passes to each CLI are built from it.
/// Claude Code: `AskUserQuestion`; Codex: `request_user_input` and
/// `request_user_input_async` (both in Codex 0.171's tool set).
pub const BLOCKED_TOOLS: [&str; 3] = [
    "AskUserQuestion",
    "request_user_input",
    "request_user_input_async",
];

/// The blocked tools of one CLI.
pub fn blocked_tools(claude: bool) -> impl Iterator<Item = &'static str> {
    BLOCKED_TOOLS
        .into_iter()
        .filter(move |t| (*t == "AskUserQuestion") == claude)
}

/// The PreToolUse hook matcher for one CLI: `a|b` (an exact-name list in
/// Claude Code, a regex in Codex; the decision itself is [`decide`]).
pub fn blocked_tools_matcher(claude: bool) -> String {
    blocked_tools(claude).collect::<Vec<_>>().join("|")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Deny, with the reason shown to the agent.
    Deny(&'static str),
}

const CHILD_REASON: &str = "Harness: no human is watching this terminal — it is a derived child task, \
and a native interactive question (AskUserQuestion / request_user_input) would block it forever \
because nobody can see or click it. Route the question UP the escalation ladder instead: end your \
turn now with a plain-text final message that states the blocker and the concrete options (A/B/…) \
with your recommendation. Harness wakes your parent task, whose decision is typed back into this \
terminal. Do not ask the human directly. See the escalation section of your system directive.";

const UNATTENDED_REASON: &str = "Harness: this task runs unattended — no human is watching this \
terminal, so a native interactive question (AskUserQuestion / request_user_input) would block it \
forever. Use the MCP tool ask_human with the question and the concrete options (A/B/…) and your \
recommendation (or push_to_human when it must reach the human's chat), then END YOUR TURN and wait: \
the reply is typed into this terminal. For information that needs no answer use notify_human and \
continue. See the escalation section of your system directive.";

/// The hook's decision for one tool call.
pub fn decide(tool_name: &str, has_parent: bool, unattended: bool) -> Decision {
    if !BLOCKED_TOOLS.contains(&tool_name) {
        return Decision::Allow;
    }
    match (has_parent, unattended) {
        (false, false) => Decision::Allow,
        (true, _) => Decision::Deny(CHILD_REASON),
        (false, true) => Decision::Deny(UNATTENDED_REASON),
    }
}

/// The default system directive applied at fresh start and on resume.
pub fn default_directive(lang: Lang) -> &'static str {
    match lang {
        Lang::En => DIRECTIVE_EN,
        Lang::Zh => DIRECTIVE_ZH,
    }
}

/// A language Harness writes in: the ladder's directive, and what goes to
/// a notify target's chat (`NotifyTarget::language`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl Lang {
    /// `en` or `zh`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "en" => Some(Self::En),
            "zh" => Some(Self::Zh),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Zh => "zh",
        }
    }
}

const DIRECTIVE_EN: &str = "## Harness: how to get unblocked (escalation ladder)

You run inside Harness. Questions go UP the ladder — child → parent → human — never down.
Decide which case you are in:
1. No parent task, a human is watching (attended): native question menus are fine; present the options right here.
2. No parent task, unattended (nobody watching): never use a native question menu. Call the MCP tool
   `ask_human` with the question, the concrete options and your recommendation (or `push_to_human`
   when it must reach the human's chat). After `ask_human`, END YOUR TURN immediately and do nothing
   further: you are parked and the reply will be typed into this terminal.
3. You are a derived child task (your description has a `## 来源` section saying \"父任务派生\"),
   attended or not: the human watches your parent, not you. Write the blocker and the options as a
   plain-text final message and end your turn normally; your parent's decision will be typed back here.
4. If you are a parent and cannot decide a child's question either: present the options in your own
   terminal when attended, otherwise use `ask_human`. Never bounce a question back down to the child.

Dangerous or irreversible operations need consent first (from your parent if you are derived, else via `ask_human`).
For information that needs no answer, call `notify_human` and continue working.";

const DIRECTIVE_ZH: &str = "## Harness：卡住时如何求助（升级阶梯）

你运行在 Harness 中。问题只能沿阶梯向上传递——子任务 → 父任务 → 人——绝不向下。
先判断你属于哪种情况：
1. 没有父任务，且有人正在看这个终端（有人值守）：可以使用原生的提问菜单，直接在这里给出选项。
2. 没有父任务，且无人值守：绝不使用原生提问菜单。调用 MCP 工具 `ask_human`，写明问题、具体选项和你的建议
   （需要送达对方聊天工具时用 `push_to_human`）。调用 `ask_human` 之后立即结束本轮，不要再做任何事：
   你已被挂起，回复会被输入到这个终端。
3. 你是派生出来的子任务（描述里有 `## 来源` 一节写着“父任务派生”），无论是否有人值守：人看的是父任务而不是你。
   把阻塞点和选项写成纯文本的最终消息，正常结束本轮；父任务的决定会被输入回这里。
4. 如果你是父任务，也无法决定子任务的问题：有人值守时在自己的终端里给出选项，否则使用 `ask_human`。
   绝不能把问题再推回给子任务。

危险或不可逆的操作先征得同意（派生任务问父任务，否则用 `ask_human`）。
只需告知、无需回复的信息，调用 `notify_human` 后继续工作。";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_cases_for_both_blocked_tools() {
        for tool in BLOCKED_TOOLS {
            assert_eq!(decide(tool, false, false), Decision::Allow);
            assert!(
                matches!(decide(tool, false, true), Decision::Deny(r) if r.contains("ask_human"))
            );
            assert!(
                matches!(decide(tool, true, false), Decision::Deny(r) if r.contains("end your turn"))
            );
            assert!(matches!(decide(tool, true, true), Decision::Deny(r) if r.contains("parent")));
        }
        for other in [
            "Bash",
            "Edit",
            "askuserquestion",
            "",
            "request_user_input_x",
        ] {
            for (p, u) in [(false, false), (false, true), (true, false), (true, true)] {
                assert_eq!(decide(other, p, u), Decision::Allow);
            }
        }
    }

    #[test]
    fn matchers_cover_the_list_per_cli() {
        assert_eq!(blocked_tools_matcher(true), "AskUserQuestion");
        assert_eq!(
            blocked_tools_matcher(false),
            "request_user_input|request_user_input_async"
        );
        let all: Vec<_> = blocked_tools(true).chain(blocked_tools(false)).collect();
        assert_eq!(all.len(), BLOCKED_TOOLS.len());
    }

    #[test]
    fn directives_carry_the_ladder_in_both_languages() {
        for lang in [Lang::En, Lang::Zh] {
            let d = default_directive(lang);
            for needle in [
                "ask_human",
                "notify_human",
                "push_to_human",
                "## 来源",
                "父任务派生",
            ] {
                assert!(d.contains(needle), "{lang:?} lacks {needle}");
            }
        }
        assert!(DIRECTIVE_EN.contains("END YOUR TURN"));
        assert!(DIRECTIVE_EN.contains("Never bounce a question back down"));
        assert!(DIRECTIVE_ZH.contains("绝不能把问题再推回给子任务"));
    }
}
