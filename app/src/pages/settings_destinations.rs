//! `/settings` → Destinations: the aliases a message's destination may name
//! (`harness.destinations`, docs/tower-messaging.md §6.2), listed, added and
//! removed one at a time (a concurrent edit, or a directory hit cached by a
//! send, is never lost). Forms post to server functions (no JavaScript
//! needed); a validation error is shown next to its field.

use leptos::{form::ActionForm, prelude::*};

use crate::{
    api::{AddDestination, RemoveDestination, destination_aliases},
    components::error_text,
    i18n::use_locale,
};

/// The fields of the add form whose errors are shown by their input
/// (`#destination-<field>-error`); any other error goes to the status line.
const FIELDS: [&str; 6] = ["alias", "dest", "gateway", "platform", "scope", "label"];

#[component]
pub fn Destinations() -> impl IntoView {
    let l = use_locale();
    let add = ServerAction::<AddDestination>::new();
    let remove = ServerAction::<RemoveDestination>::new();
    let rows = Resource::new(
        move || (add.version().get(), remove.version().get()),
        |_| destination_aliases(),
    );
    let errors = crate::field_errors::FieldErrors::new(
        move || add.value().get().and_then(Result::err),
        "destination",
        &FIELDS,
    );
    let status = move || {
        let general = errors.general_or(remove.value().get().and_then(Result::err));
        general.map(|m| view! { <p class="error" role="alert" id="destinations-status">{m}</p> })
    };
    let (field_error, invalid) = (move |f| errors.by(f), move |f| errors.invalid(f));
    let add_form = NodeRef::<leptos::html::Form>::new();
    crate::field_errors::clear_after_success(
        move || matches!(add.value().get(), Some(Ok(_))),
        add_form,
    );
    let any = l.t("settings.any");
    view! {
        <section id="destinations" aria-labelledby="destinations-h" class="card">
            <h2 id="destinations-h">{l.t("settings.destinations")}</h2>
            <p class="sub">{l.t("settings.destinations_help")}</p>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match rows.await {
                        Ok(list) if list.is_empty() => {
                            view! { <p class="empty" id="no-destinations">{l.t("settings.destinations_none")}</p> }.into_any()
                        }
                        Ok(list) => view! {
                            <ul class="targets destinations" id="destination-list">
                                {list.into_iter().map(|d| {
                                    let name = d.alias.clone().or_else(|| d.label.clone()).unwrap_or_else(|| d.dest.clone());
                                    let scope = if d.scope == "unattended" {
                                        l.t("settings.alias_scope_unattended")
                                    } else {
                                        l.t("settings.alias_scope_work")
                                    };
                                    let label = d.label.filter(|_| d.alias.is_some());
                                    let key = d.key.clone();
                                    view! {
                                    <li data-key=d.key>
                                        <strong class="alias">{name}</strong>
                                        " → " <code class="dest">{d.dest}</code>
                                        " · " <code>{d.gateway.unwrap_or_else(|| any.to_string())}</code>
                                        " · " <code>{d.platform.unwrap_or_else(|| any.to_string())}</code>
                                        " · " {scope}
                                        {label.map(|t| view! { " · " <span class="label">{t}</span> })}
                                        <ActionForm action=remove attr:class="inline">
                                            <input type="hidden" name="key" value=key />
                                            <button type="submit" class="ghost remove-destination">{l.t("settings.remove")}</button>
                                        </ActionForm>
                                    </li>
                                }}).collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
            {status}
            <h3>{l.t("settings.destinations_add")}</h3>
            <ActionForm action=add node_ref=add_form attr:class="form-grid" attr:id="add-destination">
                <label for="destination-alias">{l.t("settings.alias")}</label>
                <input id="destination-alias" name="alias" maxlength="200" placeholder="team, ops…"
                    aria-invalid=invalid("alias") aria-describedby="destination-alias-error" />
                {field_error("alias")}
                <label for="destination-dest">{l.t("settings.dest")}</label>
                <input id="destination-dest" name="dest" maxlength="1024" placeholder="telegram:-100123, feishu:oc_…"
                    aria-invalid=invalid("dest") aria-describedby="destination-dest-error" />
                {field_error("dest")}
                <label for="destination-gateway">{l.t("settings.gateway")}</label>
                <select id="destination-gateway" name="gateway" aria-invalid=invalid("gateway") aria-describedby="destination-gateway-error">
                    <option value="">{any}</option>
                    <option value="hermes">"hermes"</option>
                    <option value="openclaw">"openclaw"</option>
                </select>
                {field_error("gateway")}
                <label for="destination-platform">{l.t("settings.platform")}</label>
                <input id="destination-platform" name="platform" maxlength="64" placeholder="telegram, feishu, slack…"
                    aria-invalid=invalid("platform") aria-describedby="destination-platform-error" />
                {field_error("platform")}
                <label for="destination-scope">{l.t("settings.scope")}</label>
                <select id="destination-scope" name="scope" aria-invalid=invalid("scope") aria-describedby="destination-scope-error">
                    <option value="work">{l.t("settings.alias_scope_work")}</option>
                    <option value="unattended">{l.t("settings.alias_scope_unattended")}</option>
                </select>
                {field_error("scope")}
                <label for="destination-label">{l.t("settings.label")}</label>
                <input id="destination-label" name="label" maxlength="200"
                    aria-invalid=invalid("label") aria-describedby="destination-label-error" />
                {field_error("label")}
                <span></span>
                <button type="submit" class="primary">{l.t("settings.destinations_save")}</button>
            </ActionForm>
        </section>
    }
}
