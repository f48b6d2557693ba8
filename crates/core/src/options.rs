//! Structured questions: the options of an ask, its default and
//! deadline, its urgency — validation, the mapping of a reply text (`2`,
//! `2.`, a label) to an option, and the numbered rendering for chat.
//!
//! The option shape is Claude Code's `AskUserQuestion` option
//! (`{label, description}`), so a native menu maps over without loss.
//! The rules are pure functions; the ask itself is recorded by
//! `messaging::ask_with`, the deadline is `deadline.rs`.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::asks::Asks;
use crate::{CoreError, CoreResult};

pub const MAX_OPTIONS: usize = 8;
pub const MAX_LABEL_CHARS: usize = 200;
pub const MAX_OPTION_DESCRIPTION_CHARS: usize = 1000;
/// The shortest deadline: one minute from now.
pub const MIN_DEADLINE_SECS: i64 = 60;
/// The fewest options a multi-select question has.
pub const MIN_MULTI_SELECT_OPTIONS: usize = 2;

pub use crate::store::{ANSWERED_BY_DEFAULT, AskOption, Choices, Urgency};

/// The structured part of an ask as an adapter received it (MCP arguments,
/// REST body, hook payload): raw JSON values, validated by [`validate`] so
/// every surface rejects the same inputs with the same messages.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChoicesInput {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<AskOption>>))]
    pub options: Option<Value>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<bool>))]
    pub multi_select: Option<Value>,
    /// The label of the option taken when the deadline passes.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub default: Option<Value>,
    /// Seconds from now (at least a minute, at most the ask's lifetime),
    /// or an RFC 3339 time as far from now.
    #[serde(default)]
    pub deadline: Option<Value>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Urgency>))]
    pub urgency: Option<Value>,
}

impl ChoicesInput {
    fn is_empty(&self) -> bool {
        [
            &self.options,
            &self.multi_select,
            &self.default,
            &self.deadline,
            &self.urgency,
        ]
        .iter()
        .all(|v| v.as_ref().is_none_or(Value::is_null))
    }
}

impl Choices {
    /// The option whose label this is (exact, then case-insensitive).
    pub fn option(&self, label: &str) -> Option<usize> {
        self.options
            .iter()
            .position(|o| o.label == label)
            .or_else(|| {
                let wanted = fold(label);
                self.options.iter().position(|o| fold(&o.label) == wanted)
            })
    }

    pub fn answered_by_default(&self) -> bool {
        self.answered_by.as_deref() == Some(ANSWERED_BY_DEFAULT)
    }
}

fn fold(text: &str) -> String {
    text.trim().to_lowercase()
}

fn label_text(field: &'static str, index: usize, value: &Value) -> CoreResult<String> {
    let Some(text) = value.as_str() else {
        return Err(CoreError::invalid(
            field,
            format!("options[{index}].label must be a string"),
        ));
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(CoreError::invalid(
            field,
            format!("options[{index}].label is blank"),
        ));
    }
    let chars = text.chars().count();
    if chars > MAX_LABEL_CHARS {
        return Err(CoreError::invalid(
            field,
            format!(
                "options[{index}].label too long: {chars} characters, at most {MAX_LABEL_CHARS}"
            ),
        ));
    }
    Ok(text.to_string())
}

fn parse_options(value: &Value) -> CoreResult<Vec<AskOption>> {
    let Some(items) = value.as_array() else {
        return Err(CoreError::invalid(
            "options",
            "options must be an array of {label, description?}",
        ));
    };
    if items.len() > MAX_OPTIONS {
        return Err(CoreError::invalid(
            "options",
            format!("too many options: {}, at most {MAX_OPTIONS}", items.len()),
        ));
    }
    let mut out: Vec<AskOption> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        // A bare string is accepted as a label.
        let (label, description) = match item {
            Value::String(_) => (label_text("options", i, item)?, None),
            Value::Object(map) => {
                let label = label_text("options", i, map.get("label").unwrap_or(&Value::Null))?;
                let description = match map.get("description") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(d)) if d.trim().is_empty() => None,
                    Some(Value::String(d)) => {
                        let chars = d.chars().count();
                        if chars > MAX_OPTION_DESCRIPTION_CHARS {
                            return Err(CoreError::invalid(
                                "options",
                                format!(
                                    "options[{i}].description too long: {chars} characters, \
                                     at most {MAX_OPTION_DESCRIPTION_CHARS}"
                                ),
                            ));
                        }
                        Some(d.trim().to_string())
                    }
                    Some(_) => {
                        return Err(CoreError::invalid(
                            "options",
                            format!("options[{i}].description must be a string"),
                        ));
                    }
                };
                (label, description)
            }
            _ => {
                return Err(CoreError::invalid(
                    "options",
                    format!("options[{i}] must be an object {{label, description?}}"),
                ));
            }
        };
        if let Some(j) = out.iter().position(|o| fold(&o.label) == fold(&label)) {
            return Err(CoreError::invalid(
                "options",
                format!("duplicate option label {label:?} (options[{j}] and options[{i}])"),
            ));
        }
        out.push(AskOption { label, description });
    }
    Ok(out)
}

/// A deadline: seconds from `now` (a number or a string of digits) or an
/// RFC 3339 time, between one minute from now and `ttl` from now.
fn parse_deadline(
    value: &Value,
    now: DateTime<Utc>,
    ttl: std::time::Duration,
) -> CoreResult<DateTime<Utc>> {
    let max_secs = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX);
    let in_bounds = |secs: i64| -> CoreResult<()> {
        if secs < MIN_DEADLINE_SECS || secs > max_secs {
            return Err(CoreError::invalid(
                "deadline",
                format!(
                    "deadline must be between {MIN_DEADLINE_SECS} seconds and {max_secs} seconds \
                     (the ask TTL) from now, got {secs} seconds"
                ),
            ));
        }
        Ok(())
    };
    let from_secs = |secs: i64| -> CoreResult<DateTime<Utc>> {
        in_bounds(secs)?;
        now.checked_add_signed(chrono::Duration::seconds(secs))
            .ok_or_else(|| CoreError::invalid("deadline", "deadline out of range"))
    };
    match value {
        Value::Number(n) => {
            let secs = n
                .as_i64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.is_finite())
                        .map(|f| f.ceil() as i64)
                })
                .ok_or_else(|| CoreError::invalid("deadline", "deadline seconds out of range"))?;
            from_secs(secs)
        }
        Value::String(s) => {
            let s = s.trim();
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                let secs = s
                    .parse::<i64>()
                    .map_err(|_| CoreError::invalid("deadline", "deadline seconds out of range"))?;
                return from_secs(secs);
            }
            let at = DateTime::parse_from_rfc3339(s)
                .map_err(|_| {
                    CoreError::invalid(
                        "deadline",
                        format!(
                            "deadline must be seconds from now or an RFC 3339 time \
                             (e.g. 2026-12-01T08:00:00Z), got {s:?}"
                        ),
                    )
                })?
                .with_timezone(&Utc);
            // Round up to the second, so "one minute from now" sent now passes.
            let secs = (at - now).num_milliseconds().saturating_add(999) / 1000;
            in_bounds(secs)?;
            Ok(at)
        }
        _ => Err(CoreError::invalid(
            "deadline",
            "deadline must be seconds from now (number) or an RFC 3339 time (string)",
        )),
    }
}

/// Validate the structured part of an ask. `None` when nothing structured
/// was given (a plain ask, exactly as before).
pub fn validate(
    input: &ChoicesInput,
    now: DateTime<Utc>,
    ttl: std::time::Duration,
) -> CoreResult<Option<Choices>> {
    if input.is_empty() {
        return Ok(None);
    }
    let present = |v: &Option<Value>| v.as_ref().filter(|v| !v.is_null()).cloned();
    let options = match present(&input.options) {
        Some(v) => parse_options(&v)?,
        None => Vec::new(),
    };
    let multi_select = match present(&input.multi_select) {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(_) => {
            return Err(CoreError::invalid(
                "multiSelect",
                "multiSelect must be true or false",
            ));
        }
    };
    if multi_select && options.len() < MIN_MULTI_SELECT_OPTIONS {
        return Err(CoreError::invalid(
            "multiSelect",
            "multiSelect needs at least two options",
        ));
    }
    let default = match present(&input.default) {
        None => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => {
            if options.is_empty() {
                return Err(CoreError::invalid(
                    "default",
                    "default needs options: it must be one of the option labels",
                ));
            }
            let wanted = fold(&s);
            let Some(option) = options.iter().find(|o| fold(&o.label) == wanted) else {
                let labels: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
                return Err(CoreError::invalid(
                    "default",
                    format!("default {s:?} is not one of the option labels {labels:?}"),
                ));
            };
            Some(option.label.clone())
        }
        Some(_) => {
            return Err(CoreError::invalid(
                "default",
                "default must be the label of one option (a string)",
            ));
        }
    };
    let deadline_at = match present(&input.deadline) {
        None => None,
        Some(v) => Some(parse_deadline(&v, now, ttl)?),
    };
    if default.is_some() && deadline_at.is_none() {
        return Err(CoreError::invalid(
            "deadline",
            "a default needs a deadline (seconds or an RFC 3339 time): it is taken when the deadline passes",
        ));
    }
    let urgency = match present(&input.urgency) {
        None => Urgency::Normal,
        Some(Value::String(s)) => Urgency::parse(s.trim()).ok_or_else(|| {
            CoreError::invalid(
                "urgency",
                format!("urgency must be low, normal or high, got {s:?}"),
            )
        })?,
        Some(_) => {
            return Err(CoreError::invalid(
                "urgency",
                "urgency must be low, normal or high",
            ));
        }
    };
    Ok(Some(Choices {
        options,
        multi_select,
        default,
        deadline_at,
        urgency,
        answered_by: None,
        answered_options: None,
    }))
}

/// The options a reply text names: `2`, `2.`, `2)`, or an option's label
/// (case-insensitive); with `multiSelect`, several separated by commas
/// (`1, 3` or `Postgres, SQLite`). `None` when the text names no option
/// (it is then a free-text answer).
pub fn match_reply(choices: &Choices, text: &str) -> Option<Vec<usize>> {
    let one = |part: &str| -> Option<usize> {
        let part = part.trim();
        if part.is_empty() {
            return None;
        }
        // A label first: a label may itself look like a number.
        if let Some(i) = choices.option(part) {
            return Some(i);
        }
        let digits = part.trim_end_matches(['.', ')']);
        let n: usize = digits.parse().ok()?;
        (1..=choices.options.len()).contains(&n).then(|| n - 1)
    };
    if choices.options.is_empty() {
        return None;
    }
    if let Some(i) = one(text) {
        return Some(vec![i]);
    }
    if !choices.multi_select {
        return None;
    }
    let mut picked = Vec::new();
    for part in text.split([',', ';']) {
        let i = one(part)?;
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    (!picked.is_empty()).then_some(picked)
}

/// The answer text for chosen options: their labels, joined by ", ".
pub fn answer_text(choices: &Choices, picked: &[usize]) -> String {
    picked
        .iter()
        .filter_map(|&i| choices.options.get(i))
        .map(|o| o.label.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reply text a person's input stands for: the option label(s) when the
/// text names options, else the text unchanged.
pub fn canonical_reply(choices: &Choices, text: &str) -> String {
    match match_reply(choices, text) {
        Some(picked) => answer_text(choices, &picked),
        None => text.to_string(),
    }
}

/// What the agent is told when its default was applied.
pub fn default_delivery_text(label: &str) -> String {
    format!("{label} (nobody answered before the deadline; Harness applied your default)")
}

/// A question as a chat message: the question, the options numbered, how
/// to answer, the default and the deadline.
pub fn render_for_chat(question: &str, choices: &Choices) -> String {
    render_for_chat_in(question, choices, crate::ladder::Lang::En)
}

/// [`render_for_chat`] in `lang` (the notify target's language); the
/// question and the options stay as the agent wrote them.
pub fn render_for_chat_in(question: &str, choices: &Choices, lang: crate::ladder::Lang) -> String {
    let zh = lang == crate::ladder::Lang::Zh;
    let mut out = String::new();
    if choices.urgency == Urgency::High {
        out.push_str(if zh { "[紧急] " } else { "[urgent] " });
    }
    out.push_str(question.trim_end());
    if !choices.options.is_empty() {
        out.push_str("\n\n");
        for (i, o) in choices.options.iter().enumerate() {
            out.push_str(&format!("{}. {}", i + 1, o.label));
            if choices.default.as_deref() == Some(o.label.as_str()) {
                out.push_str(if zh { "（默认）" } else { " (default)" });
            }
            if let Some(d) = &o.description {
                out.push_str(&format!(" — {d}"));
            }
            out.push('\n');
        }
        out.push('\n');
        out.push_str(match (choices.multi_select, zh) {
            (true, false) => "Reply with the numbers or labels of your choices, separated by commas (e.g. \"1, 3\").",
            (false, false) => "Reply with a number or an option's label, or write your own answer.",
            (true, true) => "回复所选选项的编号或标签，用逗号分隔（例如 \"1, 3\"）。",
            (false, true) => "回复一个编号或选项的标签，或直接写下你的回答。",
        });
    }
    if let Some(at) = choices.deadline_at {
        let when = at.to_rfc3339_opts(SecondsFormat::Secs, true);
        match (&choices.default, zh) {
            (Some(label), false) => out.push_str(&format!(
                "\nIf nobody answers by {when}, \"{label}\" will be taken."
            )),
            (None, false) => out.push_str(&format!("\nPlease answer by {when}.")),
            (Some(label), true) => {
                out.push_str(&format!("\n如果到 {when} 仍无人回答，将采用“{label}”。"))
            }
            (None, true) => out.push_str(&format!("\n请在 {when} 前回答。")),
        }
    }
    out
}

impl Asks<'_> {
    /// The choices of these asks, by message id (asks without any left out).
    pub async fn choices_for(
        &self,
        message_ids: &[String],
    ) -> CoreResult<std::collections::HashMap<String, Choices>> {
        Ok(self
            .h
            .store()
            .choices_for(message_ids)
            .await?
            .into_iter()
            .collect())
    }

    /// The text a person's reply to the task's OPEN ask stands for: the
    /// option label(s) when it names options (`2`, `2.`, a label), else the
    /// text as typed. `Asks::reply` applies this mapping itself (and
    /// records the option): `choice_reply.rs`; this is the read-only preview.
    pub async fn reply_text_for(&self, task_id: &str, text: &str) -> CoreResult<String> {
        let task_id = crate::validate::task_id(Some(task_id))?;
        let Some(open) = self.h.store().open_ask(&task_id).await? else {
            return Ok(text.to_string());
        };
        let found = self.h.store().choices_for(&[open.id]).await?;
        Ok(match found.first() {
            Some((_, choices)) => canonical_reply(choices, text),
            None => text.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TTL: std::time::Duration = std::time::Duration::from_secs(14 * 24 * 3600);

    fn input(v: Value) -> ChoicesInput {
        serde_json::from_value(v).unwrap()
    }

    fn choices(v: Value) -> Choices {
        validate(&input(v), Utc::now(), TTL).unwrap().unwrap()
    }

    fn err(v: Value) -> (Option<&'static str>, String) {
        let e = validate(&input(v), Utc::now(), TTL).unwrap_err();
        (e.field(), e.to_string())
    }

    #[test]
    fn plain_ask_has_no_choices() {
        assert_eq!(validate(&input(json!({})), Utc::now(), TTL).unwrap(), None);
        let nulls = json!({"options": null, "default": null, "deadline": null});
        assert_eq!(validate(&input(nulls), Utc::now(), TTL).unwrap(), None);
    }

    #[test]
    fn claude_option_shape_maps_without_loss() {
        let c = choices(json!({
            "options": [{"label": "Postgres", "description": "server"}, {"label": "SQLite"}],
            "multiSelect": false, "default": "sqlite", "deadline": 600, "urgency": "high"
        }));
        assert_eq!(c.options[0].description.as_deref(), Some("server"));
        assert_eq!(c.options[1].description, None);
        assert_eq!(c.default.as_deref(), Some("SQLite"), "canonical label");
        assert_eq!(c.urgency, Urgency::High);
        let secs = (c.deadline_at.unwrap() - Utc::now()).num_seconds();
        assert!((595..=600).contains(&secs), "{secs}");
    }

    #[test]
    fn too_many_duplicate_and_unknown_default_are_refused_naming_the_field() {
        let nine: Vec<Value> = (0..9).map(|i| json!({"label": format!("o{i}")})).collect();
        let (field, msg) = err(json!({"options": nine}));
        assert_eq!(field, Some("options"));
        assert!(msg.contains("too many options: 9"), "{msg}");

        let (field, msg) = err(json!({"options": [{"label": "A"}, {"label": " a "}]}));
        assert_eq!(field, Some("options"));
        assert!(msg.contains("duplicate option label"), "{msg}");

        let (field, msg) = err(json!({"options": ["A", "B"], "default": "C", "deadline": 120}));
        assert_eq!(field, Some("default"));
        assert!(msg.contains("not one of the option labels"), "{msg}");

        assert_eq!(err(json!({"options": [{"label": ""}]})).0, Some("options"));
        assert_eq!(err(json!({"options": [{"nolabel": 1}]})).0, Some("options"));
        assert_eq!(err(json!({"options": "A,B"})).0, Some("options"));
        assert_eq!(
            err(json!({"default": "A", "deadline": 120})).0,
            Some("default")
        );
        assert_eq!(
            err(json!({"options": ["A"], "multiSelect": true})).0,
            Some("multiSelect")
        );
        assert_eq!(
            err(json!({"options": ["A", "B"], "multiSelect": "yes"})).0,
            Some("multiSelect")
        );
        assert_eq!(err(json!({"urgency": "urgent"})).0, Some("urgency"));
        assert_eq!(
            err(json!({"options": ["A", "B"], "default": "A"})).0,
            Some("deadline")
        );
    }

    #[test]
    fn deadline_bounds_one_minute_to_ttl() {
        assert_eq!(err(json!({"deadline": 59})).0, Some("deadline"));
        assert!(choices(json!({"deadline": 60})).deadline_at.is_some());
        assert!(choices(json!({"deadline": "3600"})).deadline_at.is_some());
        assert_eq!(
            err(json!({"deadline": TTL.as_secs() + 1})).0,
            Some("deadline")
        );
        assert_eq!(err(json!({"deadline": -5})).0, Some("deadline"));
        assert_eq!(err(json!({"deadline": "tomorrow"})).0, Some("deadline"));
        assert_eq!(err(json!({"deadline": true})).0, Some("deadline"));
        let at = Utc::now() + chrono::Duration::hours(2);
        let text = at.to_rfc3339_opts(SecondsFormat::Secs, true);
        let c = choices(json!({"deadline": text}));
        assert_eq!(c.deadline_at.unwrap().timestamp(), at.timestamp());
        let past = (Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
        assert_eq!(err(json!({"deadline": past})).0, Some("deadline"));
        let far = (Utc::now() + chrono::Duration::days(15)).to_rfc3339();
        assert_eq!(err(json!({"deadline": far})).0, Some("deadline"));
    }

    #[test]
    fn reply_text_maps_to_options() {
        let c = choices(json!({"options": ["Postgres", "SQLite", "3"]}));
        assert_eq!(match_reply(&c, "2"), Some(vec![1]));
        assert_eq!(match_reply(&c, " 2. "), Some(vec![1]));
        assert_eq!(match_reply(&c, "1)"), Some(vec![0]));
        assert_eq!(match_reply(&c, "sqlite"), Some(vec![1]));
        assert_eq!(match_reply(&c, "POSTGRES"), Some(vec![0]));
        assert_eq!(
            match_reply(&c, "3"),
            Some(vec![2]),
            "a label wins over a number"
        );
        assert_eq!(match_reply(&c, "4"), None);
        assert_eq!(match_reply(&c, "0"), None);
        assert_eq!(match_reply(&c, "1, 2"), None, "single choice");
        assert_eq!(match_reply(&c, "use MySQL"), None);
        assert_eq!(canonical_reply(&c, "2."), "SQLite");
        assert_eq!(canonical_reply(&c, "use MySQL"), "use MySQL");
        let m = choices(json!({"options": ["A", "B", "C"], "multiSelect": true}));
        assert_eq!(match_reply(&m, "1, 3"), Some(vec![0, 2]));
        assert_eq!(match_reply(&m, "c; a; c"), Some(vec![2, 0]));
        assert_eq!(match_reply(&m, "1, D"), None);
        assert_eq!(canonical_reply(&m, "3,1"), "C, A");
    }

    #[test]
    fn chat_rendering_numbers_options_and_states_default_and_deadline() {
        let mut c = choices(json!({
            "options": [{"label": "Retry", "description": "once more"}, {"label": "Skip"}],
            "default": "Skip", "deadline": 600, "urgency": "high"
        }));
        c.deadline_at = Some("2026-12-01T08:00:00Z".parse().unwrap());
        let text = render_for_chat("Retry or skip?", &c);
        assert_eq!(
            text,
            "[urgent] Retry or skip?\n\n1. Retry — once more\n2. Skip (default)\n\n\
             Reply with a number or an option's label, or write your own answer.\n\
             If nobody answers by 2026-12-01T08:00:00Z, \"Skip\" will be taken."
        );
        let plain = choices(json!({"urgency": "low"}));
        assert_eq!(render_for_chat("Why?", &plain), "Why?");
        // In Chinese: the same question, options and deadline, our words
        // translated.
        let zh = render_for_chat_in("Retry or skip?", &c, crate::ladder::Lang::Zh);
        assert_eq!(
            zh,
            "[紧急] Retry or skip?\n\n1. Retry — once more\n2. Skip（默认）\n\n\
             回复一个编号或选项的标签，或直接写下你的回答。\n\
             如果到 2026-12-01T08:00:00Z 仍无人回答，将采用“Skip”。"
        );
        c.multi_select = true;
        c.default = None;
        let zh = render_for_chat_in("Which?", &c, crate::ladder::Lang::Zh);
        assert!(
            zh.contains("用逗号分隔") && zh.ends_with("请在 2026-12-01T08:00:00Z 前回答。"),
            "{zh}"
        );
    }
}
