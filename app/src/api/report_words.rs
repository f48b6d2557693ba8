//! The core's report phrases in the page's language: why a waiting item
//! ranks where it does (`harness_core::report::rank::Blocks`), how a run
//! ended (its end reason), what a batch reply did with each item
//! (`harness_core::report::reply::Said`, `batch::Malformed`) and an
//! answered question's receipt (`harness_core::receipt::line`). The
//! phrases are the core's, one table per language
//! (`harness_core::report::words`); the page only picks the language.

use harness_core::{
    ladder::Lang,
    receipt::line::ReceiptLine,
    report::{
        batch::Malformed,
        rank::Blocks,
        reply::Said,
        words::{self, end_reason as core_end_reason},
    },
};

use crate::i18n::Locale;

/// The core's language for a page's locale.
pub fn lang(l: Locale) -> Lang {
    match l {
        Locale::En => Lang::En,
        Locale::Zh => Lang::Zh,
    }
}

/// "blocks 3 agents and 2 plan tasks · 4 agent-h waited · its default
/// applies soon".
pub fn why(l: Locale, b: &Blocks) -> String {
    words::why(lang(l), b)
}

/// What a restart did with a task's agent, from the notes it left.
pub fn resumed(l: Locale, notes: &[String]) -> Vec<String> {
    notes
        .iter()
        .filter_map(|n| harness_core::reboot::note_words_in(lang(l), Some(n)))
        .collect()
}

/// Where a question's answer came from (`web`, `chat`, `default`), or
/// who decided an approval (a name, as it is).
pub fn by(l: Locale, by: &str) -> String {
    words::by_words(lang(l), by)
}

/// Why a run ended (`exited`, `stopped`, `interrupted`, `spawn_failed`,
/// `superseded`; another as it is recorded).
pub fn end_reason(l: Locale, reason: &str) -> String {
    core_end_reason(lang(l), reason)
}

/// What a batch reply did with one item.
pub fn said(l: Locale, s: &Said) -> String {
    words::said(lang(l), s)
}

/// Why a whole reply was not read.
pub fn malformed(l: Locale, m: &Malformed) -> String {
    words::malformed(lang(l), m)
}

/// An answered question's receipt line.
pub fn receipt(l: Locale, r: &ReceiptLine) -> String {
    r.words(lang(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    use harness_core::report::samples::{END_REASONS, blocks as all_blocks, said as all_said};

    #[test]
    fn in_english_the_words_are_the_cores() {
        for s in all_said() {
            assert_eq!(said(Locale::En, &s), s.to_string());
        }
        for b in all_blocks() {
            assert_eq!(why(Locale::En, &b), b.words());
        }
        for m in [Malformed::Empty, Malformed::NotNumbered("ok".into())] {
            assert_eq!(malformed(Locale::En, &m), m.to_string());
        }
        assert_eq!(end_reason(Locale::En, "spawn_failed"), "spawn failed");
    }

    /// No English word of these lists is left in Chinese (the words a
    /// person typed or a name — "B", "x", "web", "/tasks/ct1", the
    /// keywords approve / deny / resume / restart / stop — aside).
    #[test]
    fn in_chinese_no_english_phrase_is_left() {
        let keep = [
            "B",
            "x",
            "boom",
            "web",
            "/tasks/ct1",
            "ok",
            "approve",
            "deny",
            "resume",
            "restart",
            "stop",
            "reason",
            "1",
            "2",
            "3",
            "4",
            "9",
        ];
        let english = |text: &str| -> Vec<String> {
            let mut t = text.to_string();
            // `1 B · 2 approve · 3 deny: reason`: the reply's own syntax.
            t = t.replace("`1 B · 2 approve · 3 deny: reason`", "");
            t.split(|c: char| !c.is_ascii_alphanumeric() && c != '/')
                // A number is no language.
                .filter(|w| {
                    !w.is_empty() && !keep.contains(w) && !w.chars().all(|c| c.is_ascii_digit())
                })
                .map(str::to_string)
                .collect()
        };
        let mut texts: Vec<String> = all_said().iter().map(|s| said(Locale::Zh, s)).collect();
        texts.extend(all_blocks().iter().map(|b| why(Locale::Zh, b)));
        texts.extend(END_REASONS.iter().map(|r| end_reason(Locale::Zh, r)));
        texts.push(malformed(Locale::Zh, &Malformed::Empty));
        texts.push(malformed(Locale::Zh, &Malformed::NotNumbered("ok".into())));
        for t in texts {
            assert_eq!(english(&t), Vec::<String>::new(), "English left in “{t}”");
        }
    }
}
