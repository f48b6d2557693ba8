//! `/tasks` (list + create form) and `/tasks/:id` (detail, message timeline,
//! children, and the place of the browser terminal).

mod approvals;
mod control;
mod detail;
mod form;
mod inbox;
mod list;
mod reply;

pub use control::{RunBadge, TaskControls, run_label};
pub use detail::TaskDetailPage;
pub use list::TaskListPage;

use leptos::prelude::*;

use crate::i18n::use_locale;

/// A task status as a small badge.
#[component]
pub fn TaskStatus(status: String) -> impl IntoView {
    let l = use_locale();
    let key = match status.as_str() {
        "TODO" => "task.status.todo",
        "IN_PROGRESS" => "task.status.in_progress",
        "IN_REVIEW" => "task.status.in_review",
        "DONE" => "task.status.done",
        _ => "task.status.cancelled",
    };
    view! { <span class=format!("badge task-{}", status.to_lowercase()) data-status=status>{l.t(key)}</span> }
}

/// The open-ask badge, or nothing.
#[component]
pub fn OpenAsk(open: bool) -> impl IntoView {
    let l = use_locale();
    open.then(
        || view! { <span class="badge pending" data-open-ask="true">{l.t("task.open_ask")}</span> },
    )
}
