//! The language switch: remembered in a cookie.

use leptos::prelude::*;

/// Remember the UI language (`en` or `zh`). A plain form post is redirected
/// back to the page it came from.
#[server(prefix = "/sfn", endpoint = "set_locale")]
pub async fn set_locale(lang: String) -> Result<String, ServerFnError> {
    use http::header::{HeaderValue, SET_COOKIE};
    let locale = crate::i18n::Locale::parse(&lang).ok_or_else(|| {
        super::ssr::to_sfn(harness_core::CoreError::invalid(
            "lang",
            "lang must be en or zh",
        ))
    })?;
    let cookie = format!(
        "{}={}; Path=/; Max-Age=31536000; SameSite=Lax",
        crate::i18n::COOKIE,
        locale.code()
    );
    if let (Some(response), Ok(value)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        HeaderValue::from_str(&cookie),
    ) {
        response.insert_header(SET_COOKIE, value);
    }
    Ok(locale.code().to_string())
}
