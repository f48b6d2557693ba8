//! Input validation shared by every adapter, so REST, MCP and server functions
//! reject the same inputs with the same messages.

use crate::{CoreError, CoreResult, ids};

pub const MAX_QUESTION_CHARS: usize = 4000;
pub const MAX_NOTIFY_CHARS: usize = 4000;
pub const MAX_REPLY_CHARS: usize = 8000;
pub const MAX_TITLE_CHARS: usize = 500;
pub const MAX_DESCRIPTION_CHARS: usize = 100_000;
pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_PATH_CHARS: usize = 4096;

/// A required task id: present, CUID-shaped.
pub fn task_id(value: Option<&str>) -> CoreResult<String> {
    let value = value.map(str::trim).unwrap_or_default();
    if value.is_empty() {
        return Err(CoreError::invalid("taskId", "taskId required"));
    }
    cuid("taskId", value)
}

/// A CUID-shaped id in `field`.
pub fn cuid(field: &'static str, value: &str) -> CoreResult<String> {
    if ids::is_cuid(value) {
        Ok(value.to_string())
    } else {
        Err(CoreError::invalid(
            field,
            format!("Invalid {field} format — expected CUID"),
        ))
    }
}

/// A required, non-blank text of at most `max` characters. Returns it unchanged
/// (agents' formatting is preserved); blank means missing.
pub fn text(field: &'static str, value: Option<&str>, max: usize) -> CoreResult<String> {
    let value = value.unwrap_or_default();
    if value.trim().is_empty() {
        return Err(CoreError::invalid(field, format!("{field} required")));
    }
    let chars = value.chars().count();
    if chars > max {
        return Err(CoreError::invalid(
            field,
            format!("{field} too long: {chars} characters, at most {max}"),
        ));
    }
    Ok(value.to_string())
}

/// An optional text of at most `max` characters; blank becomes `None`.
pub fn optional_text(
    field: &'static str,
    value: Option<&str>,
    max: usize,
) -> CoreResult<Option<String>> {
    match value {
        Some(v) if !v.trim().is_empty() => text(field, Some(v), max).map(Some),
        _ => Ok(None),
    }
}

/// An environment variable name: `^[A-Za-z_][A-Za-z0-9_]*$`.
pub fn env_name(value: &str) -> bool {
    let mut chars = value.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_limits_count_characters_not_bytes() {
        let han = "问".repeat(MAX_QUESTION_CHARS);
        assert!(text("question", Some(&han), MAX_QUESTION_CHARS).is_ok());
        let over = "问".repeat(MAX_QUESTION_CHARS + 1);
        let err = text("question", Some(&over), MAX_QUESTION_CHARS).unwrap_err();
        assert_eq!(err.field(), Some("question"));
        assert!(text("question", Some("   "), 10).is_err());
        assert!(text("question", None, 10).is_err());
    }

    #[test]
    fn task_id_rules() {
        assert_eq!(task_id(None).unwrap_err().to_string(), "taskId required");
        assert!(
            task_id(Some("nope"))
                .unwrap_err()
                .to_string()
                .starts_with("Invalid taskId format")
        );
        assert!(task_id(Some(&crate::ids::new_id())).is_ok());
    }

    #[test]
    fn env_names() {
        assert!(env_name("FOO_1"));
        assert!(env_name("_x"));
        assert!(!env_name("1FOO"));
        assert!(!env_name("FO-O"));
        assert!(!env_name(""));
    }
}
