//! One shell word as the gate reads it: its text after quote removal
//! (`g''it` → `git`, `\git` → `git`, `$'\x67it'` → `git`), and whether the
//! shell can still change it when it runs — an expansion (`$x`,
//! `$(…)`, `` `…` ``, `$((…))`) or an unquoted pattern (`*`, `?`, `[…]`,
//! `{a,b}`) that may become other words.

use brush_parser::{
    ParserOptions,
    word::{self, WordPiece, WordPieceWithSource},
};

/// A word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellWord {
    /// The text after quote removal; an expansion is kept as written
    /// (`$x`, `$(date)`).
    pub text: String,
    /// Holds an expansion: its value is known only when it runs.
    pub dynamic: bool,
    /// Holds an unquoted glob or brace pattern: the shell may turn it into
    /// other words.
    pub pattern: bool,
    /// The source of each command substitution in the word (checked as
    /// commands of their own).
    pub substitutions: Vec<String>,
    /// Why the gate cannot read this word, when it cannot.
    pub unreadable: Option<String>,
}

impl ShellWord {
    /// Neither an expansion nor a pattern: the text is exactly what the
    /// command receives.
    pub fn literal(&self) -> bool {
        !self.dynamic && !self.pattern && self.unreadable.is_none()
    }
}

/// Read one word as written in the source (quotes included).
pub fn read(source: &str, options: &ParserOptions) -> ShellWord {
    let mut out = ShellWord::default();
    match word::parse(source, options) {
        Ok(pieces) => pieces_into(&pieces, source, false, &mut out),
        Err(e) => {
            out.text = source.to_string();
            out.unreadable = Some(format!("the word `{source}` could not be parsed ({e})"));
        }
    }
    out
}

fn pieces_into(pieces: &[WordPieceWithSource], source: &str, quoted: bool, out: &mut ShellWord) {
    for p in pieces {
        let raw = source.get(p.start_index..p.end_index).unwrap_or_default();
        match &p.piece {
            WordPiece::Text(t) => {
                if !quoted && is_pattern(t) {
                    out.pattern = true;
                }
                out.text.push_str(t);
            }
            WordPiece::SingleQuotedText(t) => out.text.push_str(t),
            WordPiece::AnsiCQuotedText(t) => out.text.push_str(&ansi_c(t)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                pieces_into(inner, source, true, out);
            }
            WordPiece::TildeExpansion(_) => out.text.push_str(raw),
            WordPiece::ParameterExpansion(_) => {
                out.dynamic = true;
                out.text.push_str(raw);
                if raw.contains("$(") || raw.contains('`') {
                    out.unreadable = Some(format!(
                        "a command substitution inside the parameter expansion `{raw}`"
                    ));
                }
            }
            WordPiece::CommandSubstitution(body) => {
                out.dynamic = true;
                out.text.push_str(raw);
                out.substitutions.push(body.clone());
            }
            WordPiece::BackquotedCommandSubstitution(body) => {
                out.dynamic = true;
                out.text.push_str(raw);
                out.substitutions.push(unescape_backquoted(body));
            }
            WordPiece::EscapeSequence(e) => out.text.push_str(&unescape(e, quoted)),
            WordPiece::ArithmeticExpression(expr) => {
                out.dynamic = true;
                out.text.push_str(raw);
                // `$(( $(cmd) ))`: the substitutions inside run too.
                let inner = read(&expr.value, &ParserOptions::default());
                out.substitutions.extend(inner.substitutions);
                if inner.unreadable.is_some() || expr.value.contains('`') {
                    out.unreadable = Some(format!("the arithmetic expansion `{raw}`"));
                }
            }
        }
    }
}

/// An unquoted glob (`*`, `?`, `[`), extended glob or brace expansion.
fn is_pattern(text: &str) -> bool {
    if text.contains(['*', '?']) {
        return true;
    }
    // `[abc]`: a bracket with a closing one after it (`[` alone is `test`).
    if let Some(open) = text.find('[')
        && text[open + 1..].contains(']')
    {
        return true;
    }
    // `{a,b}` and `{1..3}`: brace expansion.
    match (text.find('{'), text.rfind('}')) {
        (Some(open), Some(close)) if open < close => {
            let inner = &text[open + 1..close];
            inner.contains(',') || inner.contains("..")
        }
        _ => false,
    }
}

/// `\x` outside double quotes is `x` (a backslash-newline is nothing);
/// inside them only `\$`, `` \` ``, `\"`, `\\` and a newline lose the
/// backslash.
fn unescape(e: &str, quoted: bool) -> String {
    let rest = e.strip_prefix('\\').unwrap_or(e);
    match rest {
        "\n" => String::new(),
        r if !quoted => r.to_string(),
        "$" | "`" | "\"" | "\\" => rest.to_string(),
        _ => e.to_string(),
    }
}

/// A backquoted substitution's body: `\\`, `` \` `` and `\$` lose the
/// backslash before the body is parsed.
fn unescape_backquoted(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && matches!(n, '\\' | '`' | '$')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// The value of ANSI-C quoted text (`$'…'`, the quotes already removed):
/// `\xHH`, `\NNN` (octal), `\uHHHH`, `\UHHHHHHHH`, `\cX` and the C escapes.
pub fn ansi_c(t: &str) -> String {
    let t = t
        .strip_prefix("$'")
        .and_then(|s| s.strip_suffix('\''))
        .unwrap_or(t);
    let mut out = String::with_capacity(t.len());
    let chars: Vec<char> = t.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                i -= 1;
                (8, 3)
            }
            'c' => {
                if let Some(&x) = chars.get(i) {
                    i += 1;
                    out.push(char::from((x as u32 & 0x1f) as u8));
                }
                continue;
            }
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let digits: String = chars[i..]
            .iter()
            .take(max)
            .take_while(|d| d.is_digit(radix))
            .collect();
        i += digits.chars().count();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) => out.push(ch),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}
