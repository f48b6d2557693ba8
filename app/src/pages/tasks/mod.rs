//! `/tasks` (list + create form) and `/tasks/:id` (detail, message timeline,
//! children, and the place of the browser terminal).

mod agent_state;
mod approvals;
mod control;
mod detail;
mod form;
mod inbox;
mod list;
mod recovery;
mod reply;

pub use control::{RunBadge, TaskControls, run_label};
pub use detail::TaskDetailPage;
pub use list::TaskListPage;

use leptos::prelude::*;

use crate::i18n::use_locale;

/// A task status as a small badge.
#[component]
pub fn TaskStatus(status: harness_types::TaskStatus) -> impl IntoView {
    use harness_types::TaskStatus as S;
    let l = use_locale();
    let key = match status {
        S::Todo => "task.status.todo",
        S::InProgress => "task.status.in_progress",
        S::InReview => "task.status.in_review",
        S::Done => "task.status.done",
        S::Cancelled => "task.status.cancelled",
    };
    let status = status.as_str();
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
