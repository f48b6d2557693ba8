//! English and Chinese UI strings, and how the language is chosen: the
//! `harness_lang` cookie (set by the switch), else the browser's
//! Accept-Language, else English. In the browser the language is read back
//! from `<html lang>`, which the server rendered.

use std::{collections::HashMap, sync::LazyLock};

use leptos::prelude::*;

pub const COOKIE: &str = "harness_lang";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Locale {
    #[default]
    En,
    Zh,
}

pub fn use_locale() -> Locale {
    use_context::<Locale>().unwrap_or_default()
}

impl Locale {
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().to_ascii_lowercase();
        if t == "zh" || t.starts_with("zh-") || t.starts_with("zh_") {
            Some(Self::Zh)
        } else if t == "en" || t.starts_with("en-") || t.starts_with("en_") {
            Some(Self::En)
        } else {
            None
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Zh => "zh",
        }
    }

    pub fn html_lang(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Zh => "zh-CN",
        }
    }

    /// The language's own name (for the switch).
    pub fn name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::Zh => "中文",
        }
    }

    pub fn other(self) -> Self {
        match self {
            Self::En => Self::Zh,
            Self::Zh => Self::En,
        }
    }

    /// Cookie first, then the Accept-Language list by quality, else English.
    pub fn choose(cookie: Option<&str>, accept_language: Option<&str>) -> Self {
        let from_cookie = cookie.and_then(|c| {
            c.split(';')
                .filter_map(|kv| kv.trim().split_once('='))
                .find(|(k, _)| *k == COOKIE)
                .and_then(|(_, v)| Self::parse(v))
        });
        if let Some(l) = from_cookie {
            return l;
        }
        let mut langs: Vec<(f32, Self)> = accept_language
            .unwrap_or_default()
            .split(',')
            .filter_map(|part| {
                let mut it = part.split(';');
                let lang = Self::parse(it.next()?)?;
                let q = it
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .unwrap_or(1.0);
                Some((q, lang))
            })
            .collect();
        // Stable: among equal qualities the first listed wins.
        langs.sort_by(|a, b| b.0.total_cmp(&a.0));
        langs.first().map(|(_, l)| *l).unwrap_or_default()
    }

    /// The language of the current request (server) or page (browser).
    pub fn detect() -> Self {
        #[cfg(feature = "ssr")]
        {
            use_context::<http::request::Parts>()
                .map(|p| {
                    let header = |name| p.headers.get(name).and_then(|v| v.to_str().ok());
                    Self::choose(
                        header(http::header::COOKIE),
                        header(http::header::ACCEPT_LANGUAGE),
                    )
                })
                .unwrap_or_default()
        }
        #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
        {
            web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.document_element())
                .and_then(|e| e.get_attribute("lang"))
                .and_then(|l| Self::parse(&l))
                .unwrap_or_default()
        }
        #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
        {
            Self::En
        }
    }

    /// The text for `key`; the key itself when missing (the tests make sure
    /// no key used in the sources is missing).
    pub fn t(self, key: &'static str) -> &'static str {
        let table = match self {
            Self::En => &*EN_MAP,
            Self::Zh => &*ZH_MAP,
        };
        table.get(key).copied().unwrap_or(key)
    }
}

static EN_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| EN.iter().copied().collect());
static ZH_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| ZH.iter().copied().collect());

mod en;
mod zh;

pub use en::EN;
pub use zh::ZH;

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    const NAMESPACES: &[&str] = &[
        "action",
        "analytics",
        "badge",
        "chip",
        "choices",
        "col",
        "common",
        "demo",
        "detail",
        "harness",
        "home",
        "kind",
        "nav",
        "notfound",
        "plan",
        "projects",
        "result",
        "settings",
        "task",
        "tasks",
        "time",
    ];

    fn keys(table: &[(&str, &str)]) -> BTreeSet<&'static str> {
        table
            .iter()
            .map(|(k, _)| *k)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|k| -> &'static str {
                // All keys are 'static literals in this file.
                EN.iter()
                    .chain(ZH)
                    .find(|(x, _)| *x == k)
                    .map(|(x, _)| *x)
                    .unwrap_or("")
            })
            .collect()
    }

    #[test]
    fn both_languages_have_the_same_keys_and_no_empty_or_duplicate_text() {
        assert_eq!(keys(EN), keys(ZH));
        assert_eq!(keys(EN).len(), EN.len(), "duplicate key in EN");
        assert_eq!(keys(ZH).len(), ZH.len(), "duplicate key in ZH");
        for (k, v) in EN.iter().chain(ZH) {
            assert!(!v.trim().is_empty(), "empty text for {k}");
        }
        for (k, en) in EN {
            let zh = Locale::Zh.t(k);
            assert_eq!(
                en.contains("{n}"),
                zh.contains("{n}"),
                "placeholder mismatch for {k}"
            );
        }
    }

    /// Every key literal in the sources exists in the tables.
    #[test]
    fn every_key_used_in_the_sources_is_translated() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![root];
        let mut used = BTreeSet::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.parent().is_some_and(|p| p.ends_with("i18n"))
                {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for lit in text.split('"').skip(1).step_by(2) {
                        let Some((ns, rest)) = lit.split_once('.') else {
                            continue;
                        };
                        if NAMESPACES.contains(&ns)
                            && !rest.is_empty()
                            && lit
                                .chars()
                                .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_')
                        {
                            used.insert(lit.to_string());
                        }
                    }
                }
            }
        }
        assert!(used.len() > 50, "key scan found too little: {used:?}");
        let en = keys(EN);
        let missing: Vec<_> = used.iter().filter(|k| !en.contains(k.as_str())).collect();
        assert!(missing.is_empty(), "untranslated keys: {missing:?}");
    }

    #[test]
    fn language_choice() {
        assert_eq!(Locale::choose(None, None), Locale::En);
        assert_eq!(
            Locale::choose(None, Some("zh-CN,zh;q=0.9,en;q=0.8")),
            Locale::Zh
        );
        assert_eq!(Locale::choose(None, Some("en-US,en;q=0.9")), Locale::En);
        assert_eq!(
            Locale::choose(None, Some("fr, en;q=0.5, zh;q=0.8")),
            Locale::Zh
        );
        assert_eq!(
            Locale::choose(Some("a=b; harness_lang=en"), Some("zh-CN")),
            Locale::En
        );
        assert_eq!(Locale::choose(Some("harness_lang=zh"), None), Locale::Zh);
        assert_eq!(
            Locale::choose(Some("harness_lang=xx"), Some("de")),
            Locale::En
        );
        assert_eq!(Locale::Zh.t("col.task"), "任务");
    }
}
