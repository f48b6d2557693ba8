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
/// The longest text typed into a terminal by one call (`send_task_terminal_input`).
pub const MAX_TERMINAL_INPUT_CHARS: usize = 10_000;
/// The longest idempotency key of a terminal input (its delivery's dedup key).
pub const MAX_INPUT_KEY_CHARS: usize = 256;
/// The longest `batchId` / `leaseToken` a Workbench batch call names.
pub const MAX_BATCH_ARG_CHARS: usize = 128;
/// The longest prompt an agent is started with (`POST /api/tasks/{id}/start`).
pub const MAX_PROMPT_CHARS: usize = 100_000;
/// The longest node id ([`is_node_id`]).
pub const MAX_NODE_ID_CHARS: usize = 64;
/// The longest node name ([`node_name`]).
pub const MAX_NODE_NAME_CHARS: usize = 64;

/// Text typed into a terminal: 1..=[`MAX_TERMINAL_INPUT_CHARS`] characters,
/// with an optional key of at most [`MAX_INPUT_KEY_CHARS`].
pub fn terminal_input(text: &str, key: Option<&str>) -> CoreResult<()> {
    if text.is_empty() || text.chars().count() > MAX_TERMINAL_INPUT_CHARS {
        return Err(CoreError::invalid(
            "text",
            format!("text must be 1..{MAX_TERMINAL_INPUT_CHARS} characters"),
        ));
    }
    if key.is_some_and(str::is_empty) {
        return Err(CoreError::invalid(
            "idempotencyKey",
            "idempotencyKey must not be empty (leave it out to type without one)",
        ));
    }
    if key.is_some_and(|k| k.chars().count() > MAX_INPUT_KEY_CHARS) {
        return Err(CoreError::invalid(
            "idempotencyKey",
            format!("idempotencyKey too long (at most {MAX_INPUT_KEY_CHARS} characters)"),
        ));
    }
    Ok(())
}

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

/// A node's name (`--node-name`, shown instead of its id): trimmed, 1 to
/// [`MAX_NODE_NAME_CHARS`] characters, none of them a control character
/// (any script's letters, spaces and punctuation are fine).
pub fn node_name(value: &str) -> CoreResult<String> {
    let name = value.trim();
    if name.is_empty() {
        return Err(CoreError::invalid(
            "nodeName",
            "a node name must not be empty",
        ));
    }
    if name.chars().count() > MAX_NODE_NAME_CHARS {
        return Err(CoreError::invalid(
            "nodeName",
            format!("a node name has at most {MAX_NODE_NAME_CHARS} characters"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(CoreError::invalid(
            "nodeName",
            "a node name must be printable (no control characters such as newlines or tabs)",
        ));
    }
    Ok(name.to_string())
}

/// Whether `id` is a node id (`<data-dir>/node-id`): 1–64 ASCII letters,
/// digits, `-` or `_`.
pub fn is_node_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_NODE_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A required, non-blank text of at most `max` characters. Returns it unchanged
/// (agents' formatting is preserved); blank means missing.
/// Longest idempotency key accepted.
pub const MAX_IDEMPOTENCY_KEY_CHARS: usize = 200;
/// A gateway's verified sender id (`senderId` of a reply from chat).
pub const MAX_SENDER_ID_CHARS: usize = 512;

/// An optional caller idempotency key (`idempotencyKey`): trimmed, blank is
/// none, at most [`MAX_IDEMPOTENCY_KEY_CHARS`], no control characters.
pub fn idempotency_key(value: Option<&str>) -> CoreResult<Option<String>> {
    let Some(key) = value.map(str::trim).filter(|k| !k.is_empty()) else {
        return Ok(None);
    };
    if key.chars().count() > MAX_IDEMPOTENCY_KEY_CHARS {
        return Err(CoreError::invalid(
            "idempotencyKey",
            format!("idempotencyKey too long (at most {MAX_IDEMPOTENCY_KEY_CHARS} characters)"),
        ));
    }
    if key.chars().any(char::is_control) {
        return Err(CoreError::invalid(
            "idempotencyKey",
            "idempotencyKey must not contain control characters",
        ));
    }
    Ok(Some(key.to_string()))
}

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

/// A project directory: absolute, existing, resolved to its canonical form
/// (symlinks and `..` followed once, here, at registration). A relative path
/// is refused (the plan page and the agents' working directory must not
/// depend on the server's cwd), and so are a path with a NUL character (no
/// system call takes it), a missing one and one that is not a directory
/// (agents were started in, and plans read from, paths
/// nobody had checked) — each a `path` field error.
pub fn project_dir(value: &str) -> CoreResult<String> {
    let value = value.trim();
    if value.contains('\0') {
        return Err(CoreError::invalid(
            "path",
            "path must not contain a NUL character",
        ));
    }
    let path = std::path::Path::new(value);
    if !path.is_absolute() {
        return Err(CoreError::invalid(
            "path",
            format!("path must be an absolute directory, got the relative path {value:?}"),
        ));
    }
    match std::fs::canonicalize(path) {
        Ok(canonical) if canonical.is_dir() => match canonical.to_str() {
            Some(text) => Ok(text.to_string()),
            None => Err(CoreError::invalid(
                "path",
                format!("path {value:?} resolves to a name that is not UTF-8"),
            )),
        },
        Ok(canonical) => Err(CoreError::invalid(
            "path",
            format!("path is not a directory: {}", canonical.display()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(CoreError::invalid(
            "path",
            format!("path {value:?} does not exist: create the directory first"),
        )),
        Err(e) => Err(CoreError::invalid(
            "path",
            format!("path {value:?} cannot be resolved: {e}"),
        )),
    }
}

#[cfg(test)]
mod project_dir_tests {
    use super::project_dir;

    #[test]
    fn relative_and_dotdot_paths_are_refused_or_resolved() {
        assert!(project_dir("../../../../etc").is_err());
        assert!(project_dir("relative/dir").is_err());
        assert!(project_dir("/no/such/../dir").is_err());
        // missing, NUL, not a directory: a path field error.
        for bad in ["/no/such/dir", "/tmp\0/x", "\0", "/proc/self/status"] {
            let err = project_dir(bad).unwrap_err();
            assert_eq!(err.field(), Some("path"), "{bad:?}: {err}");
            assert_eq!(err.http_status(), 400);
        }
        let tmp = std::env::temp_dir().canonicalize().unwrap();
        let dotted = format!(
            "{}/../{}",
            tmp.display(),
            tmp.file_name().unwrap().to_string_lossy()
        );
        assert_eq!(project_dir(&dotted).unwrap(), tmp.to_string_lossy());
    }
}
