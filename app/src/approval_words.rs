//! An approval's question and its two options as the page's language shows
//! them. The stored text and labels are the core's English, and a choice
//! still sends its stored label; on a Chinese page the words around the
//! call are Chinese (`harness_types::approval_words`, shared with the
//! Chinese chat push).

use harness_types::approval_words::{option_zh, question_zh};

use crate::i18n::Locale;

/// A message's text as shown: an approval's question in the page's
/// language, any other text as it is.
pub fn question(l: Locale, content: &str) -> String {
    match l {
        Locale::Zh => question_zh(content).unwrap_or_else(|| content.to_owned()),
        Locale::En => content.to_owned(),
    }
}

/// An option's label and description as shown (the gate's Approve / Deny in
/// the page's language; a question's own options as they are).
pub fn option(l: Locale, label: &str, description: Option<&str>) -> (String, Option<String>) {
    match (l, option_zh(label, description)) {
        (Locale::Zh, Some((label, description))) => {
            (label.to_owned(), Some(description.to_owned()))
        }
        _ => (label.to_owned(), description.map(str::to_owned)),
    }
}
