//! The two glob dialects of approval rules, kept tiny and total:
//! no regex, no allocation per character, every pattern valid.
//!
//! * [`text`] — Bash commands and tool names: `*` any run of characters
//!   (spaces and `/` included), `?` one character, everything else literal.
//! * [`path`] — file paths: `**` any run of whole segments (none included),
//!   `*` and `?` within one segment, `/` separates segments.

/// Whether `text` matches the text glob `pattern` (whole string).
pub fn text(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    wildcard(&p, &t, None)
}

/// Iterative wildcard match with backtracking on the last `*`; `stop`: a
/// character `*` and `?` never cross (the path separator).
fn wildcard(p: &[char], t: &[char], stop: Option<char>) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') if Some(t[ti]) != stop => {
                pi += 1;
                ti += 1;
                continue;
            }
            Some(&c) if c != '?' && c == t[ti] => {
                pi += 1;
                ti += 1;
                continue;
            }
            _ => {}
        }
        match star {
            // The last `*` takes one more character (never the separator).
            Some((sp, st)) if Some(t[st]) != stop => {
                star = Some((sp, st + 1));
                pi = sp + 1;
                ti = st + 1;
            }
            _ => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether the path `path` (segments split on `/`) matches the path glob
/// `pattern` (whole path).
pub fn path(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let t: Vec<&str> = path.split('/').collect();
    segments(&p, &t)
}

fn segments(p: &[&str], t: &[&str]) -> bool {
    match p.split_first() {
        None => t.is_empty(),
        Some((&"**", rest)) => (0..=t.len()).any(|skip| segments(rest, &t[skip..])),
        Some((seg, rest)) => match t.split_first() {
            Some((first, t_rest)) => {
                let sp: Vec<char> = seg.chars().collect();
                let st: Vec<char> = first.chars().collect();
                wildcard(&sp, &st, Some('/')) && segments(rest, t_rest)
            }
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_globs() {
        assert!(text("git push*", "git push --force origin main"));
        assert!(text("git push*", "git push"));
        assert!(!text("git push*", "git pull"));
        assert!(!text("git push*", " git push"), "whole string");
        assert!(text("*DROP TABLE*", "psql -c 'DROP TABLE users'"));
        assert!(text("rm -rf *", "rm -rf /tmp/x y"));
        assert!(!text("rm -rf *", "rm -rf"), "the space is literal");
        assert!(text("a?c", "abc") && !text("a?c", "ac"));
        assert!(text("*", "") && text("**", "x/y"));
        assert!(text("mcp__*__delete_*", "mcp__github__delete_repo"));
        assert!(!text("Bash", "Bashful"));
        assert!(text("*a*b*c", "xxaxxbxxbxc"), "backtracking");
        assert!(!text("*a*b*c", "xxaxxbxxbx"));
    }

    #[test]
    fn path_globs() {
        assert!(path("**/.env*", ".env"));
        assert!(path("**/.env*", "app/config/.env.local"));
        assert!(!path("**/.env*", "app/env"));
        assert!(path("migrations/**", "migrations/sqlite/0001.sql"));
        assert!(path("migrations/**", "migrations"), "** matches no segment");
        assert!(!path("migrations/**", "src/migrations.rs"));
        assert!(path("src/*.rs", "src/lib.rs"));
        assert!(!path("src/*.rs", "src/a/lib.rs"), "* stays in its segment");
        assert!(path("/etc/**", "/etc/passwd"));
        assert!(path("**", "any/thing/at/all"));
        assert!(!path("a/?", "a/"), "? needs a character");
        assert!(path("**/secrets/**", "x/secrets/admin.token"));
    }
}
