//! The vocabulary of [`super::constraints`]: what one field must satisfy,
//! and how that is written into a JSON Schema.
//!
//! utoipa's `#[schema(max_length = …, pattern = …)]` takes only literals, so
//! the limits the core's validation enforces are stated here, from the
//! core's constants, and written into the served document.

use serde_json::{Value, json};

/// Text with a character that is not white space: the validation trims
/// and treats a blank value as missing.
pub const NON_BLANK: &str = r"\S";
/// Non-blank text without a NUL character (the gateway inputs refuse it).
pub const NON_BLANK_NO_NUL: &str = r"^[^\u0000]*[^\s\u0000][^\u0000]*$";
/// Text without a control character (`char::is_control`: Unicode Cc).
pub const NO_CONTROL: &str = r"^[^\u0000-\u001F\u007F-\u009F]*$";
/// Text without a NUL character.
pub const NO_NUL: &str = r"^[^\u0000]*$";

/// One thing a field (or a parameter) must satisfy.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// Present and not `null`.
    Required,
    /// At most this many characters (Unicode scalar values, as the core
    /// counts them and JSON Schema does).
    MaxLength(usize),
    /// At least this many characters.
    MinLength(usize),
    /// A regular expression the text matches somewhere.
    Pattern(&'static str),
    /// A CUID (`harness_core::ids::CUID_PATTERN`).
    Cuid,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// At most this many items.
    MaxItems(usize),
    /// At least this many items.
    MinItems(usize),
    /// No item twice.
    UniqueItems,
    /// A number within these bounds (inclusive).
    Range(i64, i64),
    /// An object's rule between its fields: one of these shapes
    /// (`anyOf`), added to the object's `allOf`.
    AnyOf(Vec<Value>),
}

/// The shape "`field` is present, a non-blank string".
pub fn present(field: &str) -> Value {
    json!({"required": [field], "properties": {field: {"type": "string", "pattern": NON_BLANK}}})
}

/// The shape "`field` is `word`" (or absent, when `absent_is` names it).
pub fn is(field: &str, words: &[&str]) -> Value {
    json!({"required": [field], "properties": {field: {"enum": words}}})
}

/// Both shapes.
pub fn both(a: Value, b: Value) -> Value {
    json!({"allOf": [a, b]})
}

/// A required, non-blank text of at most `max` characters.
pub fn text(max: usize) -> Vec<Rule> {
    vec![
        Rule::Required,
        Rule::MinLength(1),
        Rule::MaxLength(max),
        Rule::Pattern(NON_BLANK),
    ]
}

/// An optional text of at most `max` characters (blank counts as absent).
pub fn optional(max: usize) -> Vec<Rule> {
    vec![Rule::MaxLength(max)]
}

/// A required CUID.
pub fn cuid() -> Vec<Rule> {
    vec![Rule::Required, Rule::Cuid]
}

/// A required word from `words`.
pub fn one_of(words: &'static [&'static str]) -> Vec<Rule> {
    vec![Rule::Required, Rule::OneOf(words)]
}

/// `rules` plus `more`.
pub fn and(mut rules: Vec<Rule>, more: impl IntoIterator<Item = Rule>) -> Vec<Rule> {
    rules.extend(more);
    rules
}

/// Whether `schema` allows `null` (`type: [.., "null"]` or a `oneOf` with a
/// `null` branch).
fn drop_null(schema: &mut Value) {
    if let Some(types) = schema.get_mut("type").and_then(Value::as_array_mut) {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types[0].clone();
            schema["type"] = only;
        }
    }
    if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
        let rest: Vec<Value> = branches
            .iter()
            .filter(|b| b.get("type") != Some(&json!("null")))
            .cloned()
            .collect();
        if rest.len() == 1 {
            if let Some(map) = schema.as_object_mut() {
                map.remove("oneOf");
                if let Some(Value::Object(branch)) = rest.into_iter().next() {
                    map.extend(branch);
                }
            }
        } else if let Some(map) = schema.as_object_mut() {
            map.insert("oneOf".into(), Value::Array(rest));
        }
    }
}

fn nullable(schema: &Value) -> bool {
    schema
        .get("type")
        .and_then(Value::as_array)
        .is_some_and(|t| t.iter().any(|t| t == "null"))
}

/// Write `rules` into a field's `schema`; `true` when the field is required
/// (the caller adds it to its object's `required`).
pub fn apply(schema: &mut Value, rules: &[Rule]) -> bool {
    let mut required = false;
    for rule in rules {
        match rule {
            Rule::Required => {
                required = true;
                drop_null(schema);
            }
            Rule::MaxLength(n) => schema["maxLength"] = json!(n),
            Rule::MinLength(n) => schema["minLength"] = json!(n),
            Rule::Pattern(p) => schema["pattern"] = json!(p),
            Rule::Cuid => schema["pattern"] = json!(harness_core::ids::CUID_PATTERN),
            Rule::OneOf(words) => {
                let mut list: Vec<Value> = words.iter().map(|w| json!(w)).collect();
                if nullable(schema) {
                    list.push(Value::Null);
                }
                schema["enum"] = Value::Array(list);
            }
            Rule::MaxItems(n) => schema["maxItems"] = json!(n),
            Rule::MinItems(n) => schema["minItems"] = json!(n),
            Rule::UniqueItems => schema["uniqueItems"] = json!(true),
            Rule::Range(lo, hi) => {
                schema["minimum"] = json!(lo);
                schema["maximum"] = json!(hi);
            }
            Rule::AnyOf(shapes) => {
                let all = schema
                    .as_object_mut()
                    .map(|o| o.entry("allOf").or_insert_with(|| json!([])));
                if let Some(Value::Array(all)) = all {
                    all.push(json!({"anyOf": shapes}));
                }
            }
        }
    }
    required
}
