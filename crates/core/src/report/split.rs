//! A long chat message in parts at a platform's limit: each part at most
//! `limit` characters including its "(1/2) " mark, cut at a line break
//! where one fits, else at a space, else anywhere — never inside a
//! character.

/// `text` in parts of at most `limit` characters, each after the first
/// marked "(i/n) " (the first too when there are several). A text within
/// the limit is one part, unmarked.
pub fn split(text: &str, limit: usize) -> Vec<String> {
    if text.chars().count() <= limit {
        return vec![text.to_string()];
    }
    // The marks take room from each part; the mark's width depends on the
    // number of parts, so grow the reserve until the count is stable.
    let mut reserve = "(1/2) ".len();
    loop {
        let room = limit.saturating_sub(reserve).max(1);
        let pieces = cut(text, room);
        let n = pieces.len();
        let widest = format!("({n}/{n}) ").chars().count();
        if widest <= reserve || room == 1 {
            return pieces
                .into_iter()
                .enumerate()
                .map(|(i, p)| format!("({}/{n}) {p}", i + 1))
                .collect();
        }
        reserve = widest;
    }
}

/// `text` cut into pieces of at most `room` characters.
fn cut(text: &str, room: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest: &str = text;
    while !rest.is_empty() {
        if rest.chars().count() <= room {
            out.push(rest.to_string());
            break;
        }
        let end = rest
            .char_indices()
            .nth(room)
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        let window = &rest[..end];
        let at = window
            .rfind('\n')
            .filter(|&i| i > 0)
            .map(|i| (i, i + 1))
            .or_else(|| window.rfind(' ').filter(|&i| i > 0).map(|i| (i, i + 1)))
            .unwrap_or((end, end));
        out.push(rest[..at.0].trim_end().to_string());
        rest = rest[at.1..].trim_start_matches('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_one_unmarked_part() {
        assert_eq!(split("hello", 10), ["hello"]);
        assert_eq!(split("", 10), [""]);
    }

    #[test]
    fn parts_are_cut_at_line_breaks_and_marked() {
        let text = "line one\nline two\nline three";
        let parts = split(text, 16);
        assert_eq!(
            parts,
            ["(1/3) line one", "(2/3) line two", "(3/3) line three"]
        );
        assert!(parts.iter().all(|p| p.chars().count() <= 16));
    }

    #[test]
    fn without_line_breaks_at_spaces_then_anywhere_and_never_inside_a_character() {
        let parts = split("aaaa bbbb cccc", 11);
        assert!(parts.iter().all(|p| p.chars().count() <= 11), "{parts:?}");
        assert_eq!(
            parts
                .join(" ")
                .replace("(1/3) ", "")
                .replace("(2/3) ", "")
                .replace("(3/3) ", ""),
            "aaaa bbbb cccc"
        );
        let wide = "工作".repeat(20);
        let parts = split(&wide, 15);
        assert!(parts.iter().all(|p| p.chars().count() <= 15), "{parts:?}");
        let joined: String = parts
            .iter()
            .map(|p| p.split_once(") ").map(|x| x.1).unwrap_or(p))
            .collect();
        assert_eq!(joined, wide);
    }

    #[test]
    fn ten_or_more_parts_make_room_for_the_wider_mark() {
        let text = (0..30)
            .map(|i| format!("item {i:02}"))
            .collect::<Vec<_>>()
            .join("\n");
        let parts = split(&text, 24);
        assert!(parts.len() >= 10, "{parts:?}");
        assert!(parts.iter().all(|p| p.chars().count() <= 24), "{parts:?}");
        assert!(parts[0].starts_with(&format!("(1/{}) ", parts.len())));
    }
}
