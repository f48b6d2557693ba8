//! Structured questions as the UI shows them: an ask's options,
//! default, deadline and urgency, and whether its default was applied.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionInfo {
    pub label: String,
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChoiceInfo {
    pub options: Vec<OptionInfo>,
    pub multi_select: bool,
    pub default: Option<String>,
    /// Unix milliseconds.
    pub deadline_ms: Option<i64>,
    /// `low`, `normal` or `high`.
    pub urgency: String,
    /// Answered by "default after deadline" (not by a person).
    pub by_default: bool,
    /// The labels of the option(s) the answer named, in order.
    #[serde(default)]
    pub answered: Vec<String>,
}

#[cfg(feature = "ssr")]
impl From<harness_core::options::Choices> for ChoiceInfo {
    fn from(c: harness_core::options::Choices) -> Self {
        let answered = c
            .answered_options
            .iter()
            .flatten()
            .filter_map(|i| c.options.get(*i).map(|o| o.label.clone()))
            .collect();
        Self {
            by_default: c.answered_by_default(),
            answered,
            options: c
                .options
                .into_iter()
                .map(|o| OptionInfo {
                    label: o.label,
                    description: o.description,
                })
                .collect(),
            multi_select: c.multi_select,
            default: c.default,
            deadline_ms: c.deadline_at.map(|t| t.timestamp_millis()),
            urgency: c.urgency.as_str().to_string(),
        }
    }
}

/// Attach the choices of every ask (one query).
#[cfg(feature = "ssr")]
pub(crate) async fn with_choices(
    h: &harness_core::Harness,
    mut rows: Vec<super::Row>,
) -> Result<Vec<super::Row>, leptos::prelude::ServerFnError> {
    let ids: Vec<String> = rows
        .iter()
        .filter(|r| r.is_ask())
        .map(|r| r.id.clone())
        .collect();
    if ids.is_empty() {
        return Ok(rows);
    }
    let mut found = h
        .asks()
        .choices_for(&ids)
        .await
        .map_err(super::ssr::to_sfn)?;
    for row in &mut rows {
        row.choices = found.remove(&row.id).map(ChoiceInfo::from);
    }
    Ok(rows)
}
