//! One notify target's "include the agent's screen in pushes" (docs/evidence.md):
//! off by default, because a chat platform is a third party.

use leptos::prelude::*;

use crate::{
    api::{SetTargetScreen, TargetRow},
    i18n::use_locale,
};

/// The checkbox with its own "Set" (a form: it works before hydration).
#[component]
pub fn ScreenForm(t: TargetRow, action: ServerAction<SetTargetScreen>) -> impl IntoView {
    let l = use_locale();
    let id = format!("screen-{}", t.key);
    let data_key = t.key.clone();
    view! {
        <ActionForm action=action attr:class="include-screen" attr:data-key=data_key>
            <input type="hidden" name="key" value=t.key />
            <input id=id.clone() type="checkbox" name="on" value="on" checked=t.include_screen />
            <label for=id>{l.t("settings.include_screen")}</label>
            <button type="submit" class="ghost set-screen">{l.t("settings.report_set")}</button>
        </ActionForm>
    }
}
