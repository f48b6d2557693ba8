//! A reply to a structured question: a text of `2`, `2.` or an
//! option's label (case-insensitive, trimmed; several separated by commas
//! with `multiSelect`) answers with that option — the option's label is the
//! recorded answer and the option's index is recorded with it. Used by every
//! reply surface alike (REST reply, MCP `reply_to_ask`, the UI's free-text
//! box) because it sits inside [`Asks::reply`]; the matching rule itself
//! is `options::match_reply`.

use crate::asks::Asks;
use crate::{CoreResult, options};

/// A reply text that names options of a task's OPEN ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedReply {
    /// The ask whose options were matched (the answer is conditional on it).
    pub ask_id: String,
    /// The recorded answer: the option label(s), joined by ", ".
    pub text: String,
    /// The option(s), 0-based.
    pub picked: Vec<usize>,
}

/// The answer `text` stands for on `choices`: `None` when it names no option.
pub fn map_reply(ask_id: &str, choices: &options::Choices, text: &str) -> Option<MappedReply> {
    let picked = options::match_reply(choices, text)?;
    Some(MappedReply {
        ask_id: ask_id.to_string(),
        text: options::answer_text(choices, &picked),
        picked,
    })
}

impl Asks<'_> {
    /// The option(s) `text` names on the task's OPEN ask; `None` when there
    /// is no OPEN ask, it has no options, or the text is a free answer.
    pub async fn map_open_reply(
        &self,
        task_id: &str,
        text: &str,
    ) -> CoreResult<Option<MappedReply>> {
        let Some(open) = self.h.store().open_ask(task_id).await? else {
            return Ok(None);
        };
        let found = self
            .h
            .store()
            .choices_for(std::slice::from_ref(&open.id))
            .await?;
        Ok(found
            .first()
            .and_then(|(_, choices)| map_reply(&open.id, choices, text)))
    }

    /// The text a reply stands for on the ask `ask_id` (the option label(s)
    /// it names, else the text as typed): compared with a recorded answer to
    /// recognise a repeated reply (`2` repeats an answer of "SQLite").
    pub(crate) async fn reply_text_on(&self, ask_id: &str, text: &str) -> CoreResult<String> {
        let found = self.h.store().choices_for(&[ask_id.to_string()]).await?;
        Ok(match found.first() {
            Some((_, choices)) => options::canonical_reply(choices, text),
            None => text.to_string(),
        })
    }

    /// The choices of one ask, if it has any.
    pub(crate) async fn choices_of(&self, ask_id: &str) -> CoreResult<Option<options::Choices>> {
        Ok(self
            .h
            .store()
            .choices_for(&[ask_id.to_string()])
            .await?
            .into_iter()
            .next()
            .map(|(_, c)| c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn choices(v: serde_json::Value) -> options::Choices {
        let input: options::ChoicesInput = serde_json::from_value(v).unwrap();
        options::validate(
            &input,
            chrono::Utc::now(),
            std::time::Duration::from_secs(14 * 24 * 3600),
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_number_or_a_label_maps_to_the_option_label() {
        let c = choices(json!({"options": [{"label": "Postgres"}, {"label": "SQLite"}]}));
        for typed in ["2", "2.", " 2. ", "sqlite", "  SQLite ", "SQLITE"] {
            let m = map_reply("cask", &c, typed).unwrap_or_else(|| panic!("{typed:?}"));
            assert_eq!(m.text, "SQLite", "{typed:?}");
            assert_eq!(m.picked, vec![1]);
            assert_eq!(m.ask_id, "cask");
        }
        assert_eq!(map_reply("cask", &c, "3"), None);
        assert_eq!(map_reply("cask", &c, "MySQL please"), None);
        let m = choices(json!({"options": ["A", "B", "C"], "multiSelect": true}));
        let got = map_reply("cask", &m, "3, a").unwrap();
        assert_eq!((got.text.as_str(), got.picked), ("C, A", vec![2, 0]));
        let none = choices(json!({"urgency": "high"}));
        assert_eq!(map_reply("cask", &none, "1"), None, "no options: free text");
    }
}
