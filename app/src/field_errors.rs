//! The validation errors of one form, each shown next to its input: a
//! server error that names a field (`<field>\u{1f}<message>`, see
//! [`crate::api::field_error`]) goes by that input (`#<prefix>-<field>-error`,
//! the input `aria-invalid`); any other error goes to the form's status line.

use leptos::prelude::*;

/// The last error of a form's action, split by field.
#[derive(Clone, Copy)]
pub struct FieldErrors {
    current: Signal<Option<(Option<String>, String)>>,
    /// `id` prefix of the error paragraphs (`target`, `destination`).
    prefix: &'static str,
    /// The fields the form shows errors for.
    fields: &'static [&'static str],
}

impl FieldErrors {
    /// `error` answers the action's last error, if any.
    pub fn new(
        error: impl Fn() -> Option<ServerFnError> + Send + Sync + 'static,
        prefix: &'static str,
        fields: &'static [&'static str],
    ) -> Self {
        Self {
            current: Signal::derive(move || error().map(|e| crate::api::field_error(&e))),
            prefix,
            fields,
        }
    }

    /// An error that belongs to no field of the form (for the status line).
    pub fn general(&self) -> Option<String> {
        self.current
            .get()
            .filter(|(f, _)| !f.as_deref().is_some_and(|f| self.fields.contains(&f)))
            .map(|(_, m)| m)
    }

    /// [`Self::general`], else the error of another action of the page
    /// (a remove): what the form's status line shows.
    pub fn general_or(&self, other: Option<ServerFnError>) -> Option<String> {
        self.general()
            .or_else(|| other.map(|e| crate::components::error_text(&e)))
    }

    /// The error paragraph of `field` (nothing when it has none).
    pub fn by(&self, field: &'static str) -> impl Fn() -> Option<AnyView> + use<> {
        let (current, prefix) = (self.current, self.prefix);
        move || {
            current
                .get()
                .filter(|(f, _)| f.as_deref() == Some(field))
                .map(|(_, m)| {
                    view! { <p class="error field-error" role="alert" id=format!("{prefix}-{field}-error")>{m}</p> }
                        .into_any()
                })
        }
    }

    /// `aria-invalid` of `field`'s input.
    pub fn invalid(&self, field: &'static str) -> impl Fn() -> Option<&'static str> + use<> {
        let current = self.current;
        move || {
            current
                .get()
                .is_some_and(|(f, _)| f.as_deref() == Some(field))
                .then_some("true")
        }
    }
}

/// Empties `form` once its action succeeded, so the next entry starts blank
/// (the settings forms kept the added channel's values).
pub fn clear_after_success(ok: impl Fn() -> bool + 'static, form: NodeRef<leptos::html::Form>) {
    Effect::new(move |_| {
        let done = ok();
        #[cfg(feature = "hydrate")]
        if done && let Some(f) = form.get_untracked() {
            f.reset();
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (done, &form);
    });
}
