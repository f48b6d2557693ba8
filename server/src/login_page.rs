//! The login and logout pages: plain HTML without any script (their CSP
//! allows inline styles only), in the visitor's language (the same choice as
//! the app's pages: the `harness_lang` cookie, else `Accept-Language`), light
//! or dark from the system like the app.

use app::i18n::Locale;
use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Response},
};

/// The login page's own policy: no script at all, inline styles only.
const LOGIN_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                         frame-ancestors 'none'; base-uri 'none'";

/// The app's colours (`style/main.css`) for the two pages.
const STYLE: &str = r#"
:root { color-scheme: light dark; --bg: #f7f8fa; --card: #fff; --fg: #1d2330; --muted: #5d6678;
  --line: #d0d5dd; --accent: #2b6cb0; --accent-fg: #fff; --err: #b42318;
  font-family: system-ui, -apple-system, "Segoe UI", "PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", sans-serif;
  font-size: 15px; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1216; --card: #161a20; --fg: #e6e8eb; --muted: #a3acba;
  --line: #3a414c; --accent: #63a4ff; --accent-fg: #0b1220; --err: #f97066; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.5; }
main { max-width: 28rem; margin: 12vh auto 2rem; padding: 1.5rem 1.5rem 1.25rem; background: var(--card);
  border: 1px solid var(--line); border-radius: 12px; }
@media (max-width: 480px) { main { margin: 1rem .75rem; padding: 1.25rem 1rem 1rem; } }
h1 { font-size: 1.35rem; margin: 0 0 .25rem; }
.brand { font-weight: 700; color: var(--muted); margin: 0 0 1rem; letter-spacing: .02em; }
p { margin: .5rem 0; }
.help { color: var(--muted); font-size: .92rem; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .88em;
  background: color-mix(in srgb, var(--fg) 8%, transparent); border-radius: 4px; padding: 0 .25rem;
  overflow-wrap: anywhere; }
form { margin: 1rem 0 0; }
label { display: block; font-weight: 600; margin-bottom: .3rem; }
input[type=password] { width: 100%; font: inherit; color: inherit; background: var(--bg);
  border: 1px solid var(--line); border-radius: 8px; padding: .6rem .7rem; min-height: 44px; }
button { font: inherit; min-height: 44px; padding: .5rem 1.1rem; border-radius: 8px; cursor: pointer;
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); font-weight: 600; }
button.ghost { background: transparent; color: var(--fg); border-color: var(--line); font-weight: 500; }
.actions { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; margin-top: 1rem; }
.alert { color: var(--err); font-weight: 600; }
a { color: var(--accent); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
"#;

/// The visitor's language, chosen like the app's pages.
pub fn locale(headers: &HeaderMap) -> Locale {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    Locale::choose(header(header::COOKIE), header(header::ACCEPT_LANGUAGE))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn page(l: Locale, status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        r#"<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>Harness · {title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<style>{STYLE}</style></head>
<body><main><p class="brand">Harness</p><h1>{title}</h1>{body}</main></body></html>"#,
        lang = l.html_lang(),
        title = escape(title),
    );
    let mut response = (status, Html(html)).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(LOGIN_CSP),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::VARY,
        HeaderValue::from_static("Accept-Language, Cookie"),
    );
    response
}

/// Why the login form is shown again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    None,
    WrongToken,
    /// Too many failures from this address: seconds to wait.
    Throttled(u64),
    Unavailable,
    /// `next=` is not a same-site path: why (shown after the translated text).
    BadNext(&'static str),
}

/// The login form (`next`: where to go after it).
pub fn login_form(l: Locale, status: StatusCode, next: &str, alert: Alert) -> Response {
    let alert = match alert {
        Alert::None => String::new(),
        Alert::WrongToken => l.t("login.wrong_token").to_string(),
        Alert::Throttled(wait) => l.t("login.throttled").replace("{n}", &wait.to_string()),
        Alert::Unavailable => l.t("login.unavailable").to_string(),
        Alert::BadNext(reason) => format!("{} ({reason})", l.t("login.bad_next")),
    };
    let alert = if alert.is_empty() {
        String::new()
    } else {
        format!(
            r#"<p role="alert" class="alert" id="login-alert">{}</p>"#,
            escape(&alert)
        )
    };
    let body = format!(
        r#"<p class="help">{help}</p>{alert}
<form method="post" action="/login"><input type="hidden" name="next" value="{next}">
<label for="token">{label}</label>
<input id="token" name="token" type="password" required autofocus autocomplete="off" aria-describedby="token-help">
<p class="help" id="token-help">{where_}</p>
<div class="actions"><button type="submit">{submit}</button></div></form>"#,
        help = l.t("login.help"),
        label = escape(l.t("login.token")),
        where_ = l.t("login.where"),
        submit = escape(l.t("login.submit")),
        next = escape(next),
    );
    page(l, status, l.t("login.title"), &body)
}

/// The two logout buttons: this browser, or every browser.
pub fn logout_page(l: Locale) -> Response {
    let body = format!(
        r#"<p class="help">{help}</p>
<form method="post" action="/logout"><div class="actions"><button type="submit" id="logout-here">{here}</button>
<a href="/harness">{back}</a></div></form>
<form method="post" action="/logout"><input type="hidden" name="everywhere" value="1">
<div class="actions"><button type="submit" class="ghost" id="logout-everywhere">{everywhere}</button></div>
<p class="help">{everywhere_help}</p></form>"#,
        help = escape(l.t("logout.help")),
        here = escape(l.t("logout.here")),
        back = escape(l.t("logout.back")),
        everywhere = escape(l.t("logout.everywhere")),
        everywhere_help = escape(l.t("logout.everywhere_help")),
    );
    page(l, StatusCode::OK, l.t("logout.title"), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_follow_accept_language() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("zh-CN,zh;q=0.9"),
        );
        assert_eq!(locale(&headers), Locale::Zh);
        assert_eq!(locale(&HeaderMap::new()), Locale::En);
        headers.insert(header::COOKIE, HeaderValue::from_static("harness_lang=en"));
        assert_eq!(locale(&headers), Locale::En, "the switch's cookie wins");
    }

    #[test]
    fn every_text_of_the_pages_is_translated() {
        for key in [
            "login.title",
            "login.help",
            "login.token",
            "login.where",
            "login.submit",
            "login.wrong_token",
            "login.throttled",
            "login.unavailable",
            "logout.title",
            "logout.help",
            "logout.here",
            "logout.back",
            "logout.everywhere",
            "logout.everywhere_help",
        ] {
            assert_ne!(Locale::En.t(key), key, "{key} missing in English");
            assert_ne!(Locale::Zh.t(key), key, "{key} missing in Chinese");
        }
    }
}
