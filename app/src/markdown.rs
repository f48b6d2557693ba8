//! A small, safe Markdown renderer for agents' questions:
//! paragraphs, line breaks, fenced and indented code blocks (monospaced),
//! `inline code`, **bold**, *italic*, bullet and numbered lists, headings,
//! and links. Safe by construction: the text only ever becomes text nodes
//! and elements built here — raw HTML in the source is shown as text — and
//! only `http(s):` and `mailto:` links are made (opened with
//! `rel="noopener noreferrer nofollow"`).

use leptos::prelude::*;

/// A parsed block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Para(Vec<Inline>),
    Heading(Vec<Inline>),
    Code(String),
    List {
        ordered: bool,
        items: Vec<Vec<Inline>>,
    },
}

/// A parsed inline run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Break,
    Code(String),
    Strong(String),
    Em(String),
    Link { text: String, href: String },
}

fn list_item(line: &str) -> Option<(bool, &str)> {
    let t = line.trim_start();
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(bullet) {
            return Some((false, rest));
        }
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits < 10 {
        let rest = &t[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some((true, r));
        }
    }
    None
}

/// Parse `text` into blocks.
pub fn parse(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let flush = |para: &mut Vec<&str>, blocks: &mut Vec<Block>| {
        if !para.is_empty() {
            blocks.push(Block::Para(inlines_of_lines(para)));
            para.clear();
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if let Some(fence) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) {
            flush(&mut para, &mut blocks);
            let mut code = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with(fence) {
                code.push(lines[i]);
                i += 1;
            }
            blocks.push(Block::Code(code.join("\n")));
            i += 1;
            continue;
        }
        if para.is_empty() && (line.starts_with("    ") || line.starts_with('\t')) {
            let mut code = Vec::new();
            while i < lines.len()
                && (lines[i].starts_with("    ")
                    || lines[i].starts_with('\t')
                    || lines[i].trim().is_empty())
            {
                let l = lines[i];
                code.push(
                    l.strip_prefix("    ")
                        .or_else(|| l.strip_prefix('\t'))
                        .unwrap_or(l),
                );
                i += 1;
            }
            while code.last().is_some_and(|l| l.trim().is_empty()) {
                code.pop();
            }
            blocks.push(Block::Code(code.join("\n")));
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut para, &mut blocks);
            i += 1;
            continue;
        }
        if let Some(h) = trimmed.strip_prefix('#') {
            let h = h.trim_start_matches('#');
            if h.starts_with(' ') || h.is_empty() {
                flush(&mut para, &mut blocks);
                blocks.push(Block::Heading(inlines(h.trim())));
                i += 1;
                continue;
            }
        }
        if let Some((ordered, _)) = list_item(line) {
            flush(&mut para, &mut blocks);
            let mut items = Vec::new();
            while i < lines.len() {
                match list_item(lines[i]) {
                    Some((o, rest)) if o == ordered => items.push(inlines(rest)),
                    _ => break,
                }
                i += 1;
            }
            blocks.push(Block::List { ordered, items });
            continue;
        }
        para.push(line);
        i += 1;
    }
    flush(&mut para, &mut blocks);
    blocks
}

fn inlines_of_lines(lines: &[&str]) -> Vec<Inline> {
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            out.push(Inline::Break);
        }
        out.extend(inlines(line.trim_end()));
    }
    out
}

fn safe_href(href: &str) -> Option<String> {
    let h = href.trim();
    let lower = h.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with("mailto:"))
        .then(|| h.to_string())
}

/// Parse one line's inline markup.
pub fn inlines(text: &str) -> Vec<Inline> {
    let mut out = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    let push_plain = |plain: &mut String, out: &mut Vec<Inline>| {
        if !plain.is_empty() {
            out.push(Inline::Text(std::mem::take(plain)));
        }
    };
    while let Some(c) = rest.chars().next() {
        let token = match c {
            '`' => rest[1..]
                .find('`')
                .map(|end| (Inline::Code(rest[1..1 + end].to_string()), end + 2)),
            '*' | '_' if rest.len() > 2 && rest[1..].starts_with(c) => {
                let marker = &rest[..2];
                rest[2..]
                    .find(marker)
                    .filter(|&end| end > 0)
                    .map(|end| (Inline::Strong(rest[2..2 + end].to_string()), end + 4))
            }
            '*' | '_' => rest[1..]
                .find(c)
                .filter(|&end| end > 0 && !rest[1..].starts_with(' '))
                .map(|end| (Inline::Em(rest[1..1 + end].to_string()), end + 2)),
            '[' => rest.find("](").and_then(|mid| {
                let close = rest[mid + 2..].find(')')?;
                let label = &rest[1..mid];
                let href = safe_href(&rest[mid + 2..mid + 2 + close])?;
                Some((
                    Inline::Link {
                        text: label.to_string(),
                        href,
                    },
                    mid + 3 + close,
                ))
            }),
            'h' if rest.starts_with("https://") || rest.starts_with("http://") => {
                let end = rest
                    .find(|ch: char| ch.is_whitespace() || ch == '<' || ch == '>')
                    .unwrap_or(rest.len());
                let url = rest[..end].trim_end_matches(['.', ',', ')', ';', ':']);
                Some((
                    Inline::Link {
                        text: url.to_string(),
                        href: url.to_string(),
                    },
                    url.len(),
                ))
            }
            _ => None,
        };
        match token {
            Some((inline, len)) => {
                push_plain(&mut plain, &mut out);
                out.push(inline);
                rest = &rest[len..];
            }
            None => {
                plain.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    push_plain(&mut plain, &mut out);
    out
}

/// `text` without its markup: what a short preview shows (the Inbox list),
/// so `**orders service**` reads `orders service`. Lines and blocks stay on
/// lines of their own; list items start with `• ` (or their number).
pub fn plain(text: &str) -> String {
    fn inline_text(items: &[Inline], out: &mut String) {
        for item in items {
            match item {
                Inline::Text(t) | Inline::Code(t) | Inline::Strong(t) | Inline::Em(t) => {
                    out.push_str(t)
                }
                Inline::Link { text, .. } => out.push_str(text),
                Inline::Break => out.push('\n'),
            }
        }
    }
    let mut out = String::new();
    for block in parse(text) {
        if !out.is_empty() {
            out.push('\n');
        }
        match block {
            Block::Para(i) | Block::Heading(i) => inline_text(&i, &mut out),
            Block::Code(c) => out.push_str(&c),
            Block::List { ordered, items } => {
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push('\n');
                    }
                    if ordered {
                        out.push_str(&format!("{}. ", n + 1));
                    } else {
                        out.push_str("• ");
                    }
                    inline_text(item, &mut out);
                }
            }
        }
    }
    out
}

fn inline_view(inline: Inline) -> AnyView {
    match inline {
        Inline::Text(t) => t.into_any(),
        Inline::Break => view! { <br /> }.into_any(),
        Inline::Code(c) => view! { <code>{c}</code> }.into_any(),
        Inline::Strong(t) => view! { <strong>{t}</strong> }.into_any(),
        Inline::Em(t) => view! { <em>{t}</em> }.into_any(),
        Inline::Link { text, href } => view! {
            <a href=href target="_blank" rel="noopener noreferrer nofollow">{text}</a>
        }
        .into_any(),
    }
}

fn inline_views(items: Vec<Inline>) -> Vec<AnyView> {
    items.into_iter().map(inline_view).collect()
}

/// `text` as Markdown.
#[component]
pub fn Markdown(text: String) -> impl IntoView {
    let blocks = parse(&text)
        .into_iter()
        .map(|b| match b {
            Block::Para(i) => view! { <p>{inline_views(i)}</p> }.into_any(),
            Block::Heading(i) => view! { <p class="md-heading"><strong>{inline_views(i)}</strong></p> }.into_any(),
            Block::Code(c) => view! { <pre class="md-code"><code>{c}</code></pre> }.into_any(),
            Block::List { ordered: true, items } => view! {
                <ol>{items.into_iter().map(|i| view! { <li>{inline_views(i)}</li> }).collect_view()}</ol>
            }
            .into_any(),
            Block::List { ordered: false, items } => view! {
                <ul>{items.into_iter().map(|i| view! { <li>{inline_views(i)}</li> }).collect_view()}</ul>
            }
            .into_any(),
        })
        .collect_view();
    view! { <div class="markdown">{blocks}</div> }.into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_inlines() {
        let b = parse(
            "Which **database**?\n\n```sql\nselect 1;\n```\n- `pg`\n- sqlite\n\nsee https://x.example/a.",
        );
        assert_eq!(b.len(), 4, "{b:?}");
        assert_eq!(
            b[0],
            Block::Para(vec![
                Inline::Text("Which ".into()),
                Inline::Strong("database".into()),
                Inline::Text("?".into())
            ])
        );
        assert_eq!(b[1], Block::Code("select 1;".into()));
        assert!(matches!(&b[2], Block::List { ordered: false, items } if items.len() == 2));
        assert!(matches!(&b[3], Block::Para(i) if i.contains(&Inline::Link {
            text: "https://x.example/a".into(), href: "https://x.example/a".into() })));
    }

    #[test]
    fn plain_text_drops_the_markup() {
        assert_eq!(
            plain(
                "Deploy the **orders service** to `prod`?\nNow?\n\n- [yes](https://a.example)\n- *no*"
            ),
            "Deploy the orders service to prod?\nNow?\n• yes\n• no"
        );
        assert_eq!(plain("2 * 3 = 6"), "2 * 3 = 6");
        assert_eq!(plain("  \n"), "");
    }

    #[test]
    fn html_stays_text_and_unsafe_links_are_not_links() {
        let i =
            inlines("<script>alert(1)</script> [x](javascript:alert(1)) [ok](https://a.example)");
        assert!(matches!(&i[0], Inline::Text(t) if t.starts_with("<script>")));
        assert!(
            !i.iter()
                .any(|x| matches!(x, Inline::Link { href, .. } if href.starts_with("javascript")))
        );
        assert!(i.contains(&Inline::Link {
            text: "ok".into(),
            href: "https://a.example".into()
        }));
        // Unclosed markers and lone stars are text.
        assert_eq!(
            inlines("2 * 3 = 6 and `x"),
            vec![Inline::Text("2 * 3 = 6 and `x".into())]
        );
    }
}
