//! The task token `[[tower:task=<id>]]` (docs/tower-messaging.md §7; docs/decisions.md D11: both
//! extraction and validation are case-insensitive).

const OPEN: &str = "[[tower:task=";

/// The token for a task id.
pub fn build(task_id: &str) -> String {
    format!("{OPEN}{task_id}]]")
}

/// The last paragraph of an outbound body.
pub fn task_line(task_id: &str) -> String {
    format!("Task ID: {}", build(task_id))
}

/// The task id of the first well-formed token in `text` (`c` + 20…30 of
/// `[a-z0-9]`, any case), lower-cased; `None` when there is none.
pub fn extract(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(OPEN) {
        let start = from + at + OPEN.len();
        let rest = &lower[start..];
        let id: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            .collect();
        if rest[id.len()..].starts_with("]]")
            && id.starts_with('c')
            && (21..=31).contains(&id.len())
        {
            return Some(id);
        }
        from = start;
    }
    None
}

/// The reply's task from quoted text first, then from the reply itself
/// (the reference's precedence after the delivery mapping and an explicit id).
pub fn extract_from(quoted: Option<&str>, content: Option<&str>) -> Option<String> {
    quoted
        .and_then(extract)
        .or_else(|| content.and_then(extract))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "cabcdefghijklmnopqrstuvwx";

    #[test]
    fn round_trip_and_first_match() {
        assert_eq!(extract(&build(ID)).as_deref(), Some(ID));
        let text = format!(
            "hi\n{}\nand {}",
            task_line(ID),
            build("czzzzzzzzzzzzzzzzzzzzzzzz")
        );
        assert_eq!(extract(&text).as_deref(), Some(ID));
    }

    #[test]
    fn case_insensitive_and_strict_shape() {
        let upper = format!("[[TOWER:TASK={}]]", ID.to_uppercase());
        assert_eq!(extract(&upper).as_deref(), Some(ID));
        assert_eq!(extract("[[tower:task=cshort]]"), None);
        assert_eq!(extract("[[tower:task=xabcdefghijklmnopqrstuvwx]]"), None);
        assert_eq!(extract(&format!("[[tower:task={ID}]")), None);
        // A malformed token first does not hide a good one after it.
        let text = format!("[[tower:task=bad]] then {}", build(ID));
        assert_eq!(extract(&text).as_deref(), Some(ID));
        assert_eq!(extract("no token"), None);
    }

    #[test]
    fn quoted_text_wins() {
        let other = "cbbbbbbbbbbbbbbbbbbbbbbbb";
        assert_eq!(
            extract_from(Some(&build(other)), Some(&build(ID))).as_deref(),
            Some(other)
        );
        assert_eq!(
            extract_from(Some("none"), Some(&build(ID))).as_deref(),
            Some(ID)
        );
        assert_eq!(extract_from(None, None), None);
    }
}
