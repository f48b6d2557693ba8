//! English and Chinese UI strings, and how the language is chosen: the
//! `harness_lang` cookie (set by the switch), else the browser's
//! Accept-Language, else English. In the browser the language is read back
//! from `<html lang>`, which the server rendered.

use std::{
    collections::HashMap,
    sync::{LazyLock, OnceLock},
};

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
        let pick = |tables: &'static Tables| match self {
            Self::En => &tables.en,
            Self::Zh => &tables.zh,
        };
        pick(&MAIN)
            .get(key)
            .or_else(|| PAGES.get().and_then(|pages| pick(pages).get(key)))
            .copied()
            .unwrap_or(key)
    }
}

/// One set of texts in both languages.
struct Tables {
    en: HashMap<&'static str, &'static str>,
    zh: HashMap<&'static str, &'static str>,
}

type Table = &'static [(&'static str, &'static str)];

impl Tables {
    fn new(en: &[Table], zh: &[Table]) -> Self {
        let map = |tables: &[Table]| tables.iter().flat_map(|t| t.iter().copied()).collect();
        Self {
            en: map(en),
            zh: map(zh),
        }
    }
}

/// The texts [`Locale::t`] always has. In the browser (the hydrate build)
/// the shell's, `/harness`' and the shared components' ([`EN`]): the lazy
/// pages' texts are not in the main module (`/harness` downloads
/// only what it shows). On the server every text (it renders every page,
/// the login page too).
static MAIN: LazyLock<Tables> = LazyLock::new(main_tables);

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
fn main_tables() -> Tables {
    Tables::new(&[EN], &[ZH])
}

#[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
fn main_tables() -> Tables {
    Tables::new(&[EN, EN_PAGES, EN_SERVER], &[ZH, ZH_PAGES, ZH_SERVER])
}

/// The lazy pages' texts in the browser, once a lazy page's code loaded
/// them ([`load_page_texts`]).
static PAGES: OnceLock<Tables> = OnceLock::new();

/// Make the lazy pages' texts available: called by each lazy route's view
/// (`lazy_pages.rs`) before it renders, so in the browser these tables are
/// part of the code the lazy pages load, not of the main module. On the
/// server [`MAIN`] has them already.
pub fn load_page_texts() {
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    PAGES.get_or_init(|| Tables::new(&[EN_PAGES], &[ZH_PAGES]));
}

mod en;
mod zh;

pub use en::{EN, EN_PAGES, EN_SERVER};
pub use zh::{ZH, ZH_PAGES, ZH_SERVER};

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    const NAMESPACES: &[&str] = &[
        "action",
        "alerts",
        "analytics",
        "badge",
        "chip",
        "choices",
        "col",
        "common",
        "delivery",
        "demo",
        "detail",
        "gateway",
        "harness",
        "home",
        "inbox",
        "kind",
        "login",
        "logout",
        "nav",
        "notfound",
        "outbound",
        "plan",
        "projects",
        "recovery",
        "result",
        "settings",
        "task",
        "tasks",
        "term",
        "time",
        "workbench",
    ];

    const EN_ALL: [Table; 3] = [EN, EN_PAGES, EN_SERVER];
    const ZH_ALL: [Table; 3] = [ZH, ZH_PAGES, ZH_SERVER];

    fn keys(tables: &[Table]) -> BTreeSet<&'static str> {
        tables
            .iter()
            .flat_map(|t| t.iter().map(|(k, _)| *k))
            .collect()
    }

    fn count(tables: &[Table]) -> usize {
        tables.iter().map(|t| t.len()).sum()
    }

    #[test]
    fn both_languages_have_the_same_keys_and_no_empty_or_duplicate_text() {
        for (en, zh) in EN_ALL.iter().zip(&ZH_ALL) {
            assert_eq!(keys(&[en]), keys(&[zh]), "the tables of one part differ");
        }
        assert_eq!(keys(&EN_ALL).len(), count(&EN_ALL), "duplicate key in EN");
        assert_eq!(keys(&ZH_ALL).len(), count(&ZH_ALL), "duplicate key in ZH");
        for (k, v) in EN_ALL.iter().chain(&ZH_ALL).flat_map(|t| t.iter()) {
            assert!(!v.trim().is_empty(), "empty text for {k}");
        }
        for (k, en) in EN_ALL.iter().flat_map(|t| t.iter()) {
            let zh = Locale::Zh.t(k);
            assert_eq!(
                en.contains("{n}"),
                zh.contains("{n}"),
                "placeholder mismatch for {k}"
            );
        }
    }

    /// The sources of the lazy pages (`lazy_pages.rs`): only their code may
    /// use a text of [`EN_PAGES`] (in the browser those come with the lazy
    /// pages' code).
    const LAZY_PAGE_SOURCES: &[&str] = &[
        "pages/tasks/",
        "pages/settings",
        "pages/project",
        "pages/home.rs",
        "pages/analytics.rs",
        "pages/gateway.rs",
        "terminal.rs",
        "api/demo.rs",
    ];

    /// The key literals of every source file under `src/` (but the
    /// tables), by path relative to `src/`.
    fn keys_used() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![root.clone()];
        let mut used = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && !path.parent().is_some_and(|p| p.ends_with("i18n"))
                {
                    let file = path
                        .strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
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
                            used.push((file.clone(), lit.to_string()));
                        }
                    }
                }
            }
        }
        used
    }

    /// Every key literal in the sources exists in the tables.
    #[test]
    fn every_key_used_in_the_sources_is_translated() {
        let used: BTreeSet<String> = keys_used().into_iter().map(|(_, k)| k).collect();
        assert!(used.len() > 50, "key scan found too little: {used:?}");
        let en = keys(&EN_ALL);
        let missing: Vec<_> = used.iter().filter(|k| !en.contains(k.as_str())).collect();
        assert!(missing.is_empty(), "untranslated keys: {missing:?}");
    }

    /// Code outside the lazy pages (the shell, `/harness`, shared
    /// components: the browser's main module) uses only texts of the main
    /// table — a lazy page's text would show as its key there; the browser
    /// never uses a server-only text.
    #[test]
    fn the_main_module_has_every_text_it_shows() {
        let main = keys(&[EN]);
        let server = keys(&[EN_SERVER]);
        for (file, key) in keys_used() {
            assert!(
                !server.contains(key.as_str()),
                "{file} uses the server-only text {key}"
            );
            if !LAZY_PAGE_SOURCES.iter().any(|p| file.starts_with(p)) {
                assert!(
                    main.contains(key.as_str()),
                    "{file} uses {key}, which is not in the main table (EN)"
                );
            }
        }
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
