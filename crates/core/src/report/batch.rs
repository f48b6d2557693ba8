//! One reply answers many: `1 B · 2 approve · 3 deny: not on Friday ·
//! 4 later`, or one item per line, read against the numbered items of one
//! report. Pure: [`parse`] splits the reply into numbered parts (a reply
//! with any part that is not numbered is malformed and changes nothing);
//! [`plan`] reads each part with the same rules as a direct answer —
//! options by number or label (`options::match_reply`), approvals approve /
//! deny with a reason (`approvals::flow::parse_answer`), free text after
//! `:` — and says, per item, the answer or why it is refused. Applying an
//! answer (conditional on the item still waiting) is the caller's; an item
//! answered meanwhile is refused there, never applied to a newer one.

use std::collections::BTreeMap;

use crate::{approvals::flow::parse_answer, options, store::Choices};

/// The separators between items on one line (besides line breaks).
const SEPARATORS: [char; 2] = ['·', '•'];

/// One numbered part of a reply, as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub number: u32,
    /// The answer after the number (trimmed).
    pub text: String,
    /// The number was followed by `:`: the text is a free answer, never an
    /// option or a keyword.
    pub free_text: bool,
}

/// Why a whole reply was not read (nothing of it is applied). Said in
/// English by `Display`, in any language by [`super::words::malformed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    Empty,
    NotNumbered(String),
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::words::malformed(crate::ladder::Lang::En, self))
    }
}

impl std::error::Error for Malformed {}

/// The reply's numbered parts, in order.
pub fn parse(reply: &str) -> Result<Vec<Part>, Malformed> {
    let mut parts = Vec::new();
    for segment in reply
        .split(['\n', '\r'])
        .flat_map(|line| line.split(SEPARATORS))
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        parts.push(numbered(segment).ok_or_else(|| Malformed::NotNumbered(clip(segment)))?);
    }
    if parts.is_empty() {
        return Err(Malformed::Empty);
    }
    Ok(parts)
}

/// `3 deny: x`, `#3 deny`, `3. B`, `3) B`, `3: free text`.
fn numbered(segment: &str) -> Option<Part> {
    let s = segment.strip_prefix('#').unwrap_or(segment);
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 4 {
        return None;
    }
    let number: u32 = s[..digits].parse().ok()?;
    let rest = &s[digits..];
    let (free_text, text) = match rest.chars().next() {
        None => (false, ""),
        Some(':') => (true, &rest[1..]),
        Some('.' | ')') => {
            let after = rest[1..].trim_start();
            match after.strip_prefix(':') {
                Some(free) => (true, free),
                None => (false, after),
            }
        }
        Some(c) if c.is_whitespace() => {
            let after = rest.trim_start();
            match after.strip_prefix(':') {
                Some(free) => (true, free),
                None => (false, after),
            }
        }
        // `12abc`: not a number followed by an answer.
        Some(_) => return None,
    };
    Some(Part {
        number,
        text: text.trim().to_string(),
        free_text,
    })
}

fn clip(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let mut cut: String = text.chars().take(MAX - 1).collect();
        cut.push('…');
        cut
    }
}

/// What a numbered item of the report is, as far as reading an answer goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// An open question; `choices` when it has options.
    Question { choices: Option<Choices> },
    /// A pending approval of a tool call.
    Approval,
    /// An agent that needs a person (stopped, failed, logged out, stalled).
    Agent,
}

/// What one part answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The option(s) picked (0-based) and the answer's text (their labels).
    Options {
        picked: Vec<usize>,
        text: String,
    },
    /// A free answer.
    Text(String),
    Approve,
    Deny {
        reason: Option<String>,
    },
    /// Start the agent again (with its session when it has one).
    Resume,
    Stop,
    /// Left waiting on purpose.
    Later,
}

/// Why one part is not applied (the rest of the reply still is). Said in
/// English by `Display`, in any language by [`super::words::refusal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    UnknownNumber(u32),
    Ambiguous(u32),
    NoAnswer(u32),
    NotUnderstood {
        number: u32,
        text: String,
        expected: Expected,
    },
}

/// What a part's answer should have been.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// One of the question's options.
    Option,
    /// `approve`, or `deny` with a reason.
    Decision,
    /// `resume`, `restart` or `stop`.
    AgentAction,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::words::refusal(crate::ladder::Lang::En, self))
    }
}

impl std::error::Error for Refusal {}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(super::words::expected(crate::ladder::Lang::En, *self))
    }
}

/// Each part read against the report's numbered `items`: one entry per
/// distinct number, in the order of the reply. A number given twice is
/// refused as ambiguous (neither is applied).
pub fn plan(items: &BTreeMap<u32, Item>, parts: &[Part]) -> Vec<(u32, Result<Answer, Refusal>)> {
    let mut out: Vec<(u32, Result<Answer, Refusal>)> = Vec::new();
    for part in parts {
        if let Some(seen) = out.iter_mut().find(|(n, _)| *n == part.number) {
            seen.1 = Err(Refusal::Ambiguous(part.number));
            continue;
        }
        let read = match items.get(&part.number) {
            None => Err(Refusal::UnknownNumber(part.number)),
            Some(item) => read(item, part),
        };
        out.push((part.number, read));
    }
    out
}

fn read(item: &Item, part: &Part) -> Result<Answer, Refusal> {
    let text = part.text.as_str();
    if text.is_empty() {
        return Err(Refusal::NoAnswer(part.number));
    }
    let not_understood = |expected| Refusal::NotUnderstood {
        number: part.number,
        text: clip(text),
        expected,
    };
    let word = text.to_lowercase();
    // An option named "Later" is that option, not the keyword.
    if let (false, Item::Question { choices: Some(c) }) = (part.free_text, item)
        && let Some(picked) = options::match_reply(c, text)
    {
        return Ok(Answer::Options {
            text: options::answer_text(c, &picked),
            picked,
        });
    }
    if !part.free_text && matches!(word.as_str(), "later" | "skip" | "wait") {
        return Ok(Answer::Later);
    }
    match item {
        Item::Question { choices } => match choices {
            _ if part.free_text => Ok(Answer::Text(text.to_string())),
            Some(c) if !c.options.is_empty() => Err(not_understood(Expected::Option)),
            _ => Ok(Answer::Text(text.to_string())),
        },
        Item::Approval => match (part.free_text, parse_answer(text)) {
            (false, Some((true, _))) => Ok(Answer::Approve),
            (false, Some((false, reason))) => Ok(Answer::Deny { reason }),
            _ => Err(not_understood(Expected::Decision)),
        },
        Item::Agent => match (part.free_text, word.as_str()) {
            (false, "resume" | "restart" | "continue") => Ok(Answer::Resume),
            (false, "stop") => Ok(Answer::Stop),
            _ => Err(not_understood(Expected::AgentAction)),
        },
    }
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
