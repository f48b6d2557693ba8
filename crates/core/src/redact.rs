//! Redaction of secrets from text Harness keeps or sends on (docs/evidence.md: the
//! screen an agent showed when it asked). A pure function: tokens and keys
//! by well-known shapes, `Bearer …`, private-key blocks, `password=`-like
//! assignments, and the exact values of the environment Harness gave the
//! agent. What is removed becomes [`REDACTED`]; a key's well-known prefix
//! (`sk-ant-`, `ghp_`, …) is kept so the reader sees what was there.
//!
//! Errs on the side of removing: a word that only looks like a key is
//! redacted too.

/// What stands where a secret was.
pub const REDACTED: &str = "[REDACTED]";

/// An environment value shorter than this is not searched for (`1`, `en`
/// would erase ordinary text); longer values are removed wherever they occur.
pub const MIN_SECRET_CHARS: usize = 6;

/// Prefixes of provider keys and tokens, each with the fewest characters
/// that must follow it (of [`is_key_char`]) for the word to be a key.
const KEY_PREFIXES: &[(&str, usize)] = &[
    // Anthropic (`sk-ant-api03-…`, `sk-ant-admin01-…`), before OpenAI's `sk-`.
    ("sk-ant-", 16),
    // OpenAI project / service-account keys, then the older `sk-…`.
    ("sk-proj-", 16),
    ("sk-svcacct-", 16),
    ("sk-", 20),
    // GitHub: personal, OAuth, user-to-server, server-to-server, refresh,
    // fine-grained.
    ("github_pat_", 20),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    // Slack: bot, user, app-level, refresh, legacy workspace tokens.
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("xoxa-", 10),
    ("xoxr-", 10),
    ("xoxs-", 10),
    ("xoxe-", 10),
    ("xapp-", 10),
    // Harness's own: the admin key, the internal key, an agent's token.
    ("hxk_", 16),
    ("hxm_", 16),
    ("hxa_", 16),
];

/// Names whose assigned value is a secret (`password=…`, `API_TOKEN: …`):
/// a name containing one of these, case-insensitive.
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "private_key",
    "credential",
];

/// `text` with every secret it shows replaced by [`REDACTED`]. `secrets`:
/// the exact values Harness gave the agent that must not be shown (its
/// token, the task's own environment values); those shorter than
/// [`MIN_SECRET_CHARS`] are ignored.
pub fn redact(text: &str, secrets: &[&str]) -> String {
    let text = private_key_blocks(text);
    let text = exact_values(&text, secrets);
    let text = words(&text);
    let text = bearer(&text);
    assignments(&text)
}

/// The environment values of an agent that are secrets: every value of
/// the task's own variables (a person put them there: keys, passwords) and
/// Harness's credential variables. Values that are public (paths, the
/// server's URL, the task's id and title) are not among them.
pub fn secret_env_values<'a>(
    env: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Vec<String> {
    env.into_iter()
        .filter(|(k, _)| !PUBLIC_ENV.contains(&k.as_str()))
        .map(|(_, v)| v.clone())
        .filter(|v| v.chars().count() >= MIN_SECRET_CHARS)
        .collect()
}

/// Variables Harness sets whose values are not secret.
const PUBLIC_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "TERM",
    "COLORTERM",
    "TOWER_TASK_ID",
    "TOWER_EXECUTION_ID",
    "TOWER_TASK_TITLE",
    "TOWER_API_URL",
    "TOWER_MCP_URL",
    "TOWER_SIGNAL_DIR",
    "TOWER_HAS_PARENT",
];

/// A character of a key's body.
fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE
/// KEY-----` (or the end of the text, when the screen cut it); the body
/// of a block whose BEGIN has scrolled away goes from the start of the text.
fn private_key_blocks(text: &str) -> String {
    const BEGIN: &str = "-----BEGIN ";
    const END: &str = "-----END ";
    const TAIL: &str = "PRIVATE KEY-----";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let begin = find_marker(rest, BEGIN, TAIL);
        let end = find_marker(rest, END, TAIL);
        match (begin, end) {
            // An END before any BEGIN: its block began above the text.
            (b, Some((e_at, e_len))) if b.is_none_or(|(b_at, _)| e_at < b_at) => {
                out.push_str(REDACTED);
                rest = &rest[e_at + e_len..];
            }
            (Some((b_at, b_len)), _) => {
                out.push_str(&rest[..b_at]);
                out.push_str(REDACTED);
                let after = &rest[b_at + b_len..];
                match find_marker(after, END, TAIL) {
                    Some((e_at, e_len)) => rest = &after[e_at + e_len..],
                    None => return out,
                }
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// The first `<start>…<tail>` on one line: `(offset, length)`.
fn find_marker(text: &str, start: &str, tail: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(found) = text[from..].find(start) {
        let at = from + found;
        let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n);
        if let Some(t) = text[at..line_end].find(tail) {
            return Some((at, t + tail.len()));
        }
        from = at + start.len();
    }
    None
}

/// Every occurrence of each secret value, longest first (a value inside
/// another is removed with it).
fn exact_values(text: &str, secrets: &[&str]) -> String {
    let mut values: Vec<&str> = secrets
        .iter()
        .copied()
        .filter(|s| s.chars().count() >= MIN_SECRET_CHARS)
        .collect();
    values.sort_by_key(|s| std::cmp::Reverse(s.len()));
    values.dedup();
    let mut out = text.to_string();
    for value in values {
        if out.contains(value) {
            out = out.replace(value, REDACTED);
        }
    }
    out
}

/// Words shaped like a provider key, a Harness token or an AWS access key
/// id. A word starts where the character before it is not a key character.
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut prev: Option<char> = None;
    while i < text.len() {
        let rest = &text[i..];
        let at_start = prev.is_none_or(|c| !is_key_char(c));
        if at_start && let Some(len) = key_at(rest) {
            out.push_str(&rest[..len.prefix]);
            out.push_str(REDACTED);
            i += len.total;
            prev = text[..i].chars().next_back();
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        prev = Some(c);
        i += c.len_utf8();
    }
    out
}

struct KeyLen {
    /// The part kept (the well-known prefix).
    prefix: usize,
    /// The whole word.
    total: usize,
}

/// The key `text` starts with, if it does.
fn key_at(text: &str) -> Option<KeyLen> {
    let body_len = |s: &str| s.find(|c: char| !is_key_char(c)).unwrap_or(s.len());
    for (prefix, min) in KEY_PREFIXES {
        if let Some(after) = text.strip_prefix(prefix) {
            let body = body_len(after);
            if body >= *min {
                return Some(KeyLen {
                    prefix: prefix.len(),
                    total: prefix.len() + body,
                });
            }
        }
    }
    // AWS access key ids: AKIA / ASIA and 16 upper-case letters or digits.
    for prefix in ["AKIA", "ASIA"] {
        if let Some(after) = text.strip_prefix(prefix) {
            let body = after
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit()))
                .unwrap_or(after.len());
            let next = after[body..].chars().next();
            if body == 16 && next.is_none_or(|c| !is_key_char(c)) {
                return Some(KeyLen {
                    prefix: prefix.len(),
                    total: prefix.len() + body,
                });
            }
        }
    }
    None
}

/// `Bearer <credential>` (any case): the credential.
fn bearer(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = lower[from..].find("bearer") {
        let at = from + found;
        from = at + "bearer".len();
        let before_ok = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        let after = &text[from..];
        let spaces = after.len() - after.trim_start_matches([' ', '\t']).len();
        if !before_ok || spaces == 0 {
            continue;
        }
        let cred_start = from + spaces;
        let cred = &text[cred_start..];
        let cred_len = cred
            .find(|c: char| !(c.is_ascii_alphanumeric() || "-._~+/=".contains(c)))
            .unwrap_or(cred.len());
        if cred_len < 8 || cred[..cred_len].starts_with(REDACTED) {
            continue;
        }
        out.push_str(&text[copied..cred_start]);
        out.push_str(REDACTED);
        copied = cred_start + cred_len;
        from = copied;
    }
    out.push_str(&text[copied..]);
    out
}

/// `name=value`, `name: value`, `"name": "value"` where the name says it
/// holds a secret ([`SECRET_NAMES`]): the value.
fn assignments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c != b'=' && c != b':' {
            i += 1;
            continue;
        }
        // The name before the sign (skipping a closing quote and spaces).
        let head = text[copied.max(line_start(text, i))..i].trim_end_matches([' ', '\t']);
        let head = head.trim_end_matches(['"', '\'']);
        let name_len = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '.')
            .map(char::len_utf8)
            .sum::<usize>();
        let name = head[head.len() - name_len..].to_ascii_lowercase();
        let secret_name = !name.is_empty() && SECRET_NAMES.iter().any(|n| name.contains(n));
        // `==`, `:=`, `=>` and `://` are not assignments of a value here.
        let sign_len = if text[i..].starts_with(":=") { 2 } else { 1 };
        let after_sign = i + sign_len;
        if !secret_name || text[after_sign..].starts_with(['=', '>', '/']) {
            i += 1;
            continue;
        }
        let value_area = &text[after_sign..];
        let spaces = value_area.len() - value_area.trim_start_matches([' ', '\t']).len();
        let mut start = after_sign + spaces;
        let quote = text[start..]
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'');
        if quote.is_some() {
            start += 1;
        }
        let value = &text[start..];
        let len = match quote {
            Some(q) => value.find([q, '\n']).unwrap_or(value.len()),
            None => value
                .find(|c: char| c.is_whitespace() || ",;&\"'".contains(c))
                .unwrap_or(value.len()),
        };
        if len == 0 || value[..len].starts_with(REDACTED) {
            i = after_sign;
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = start + len;
        i = copied;
    }
    out.push_str(&text[copied..]);
    out
}

/// The offset of the start of the line holding byte `at`.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |n| n + 1)
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
