//! A task's displayed run status and its controls: Start (with an
//! optional first prompt), Stop, Restart, Resume and the unattended switch.
//! Which action is possible, and why not, comes from the server
//! (`harness_core::control`); this only shows it.

use harness_types::{Action, Blocked, RunState};
use leptos::prelude::*;

use crate::{
    api::{ControlTask, SetTaskUnattended, TaskRow},
    components::{Notice, NoticeLine, error_text},
    i18n::{Locale, use_locale},
    live::use_live,
};

/// The last control error per page, kept above the re-rendered task views
/// (a refetch after an action must not wipe the reason it failed).
#[derive(Debug, Clone, Copy)]
pub struct ControlNotices(RwSignal<Option<(String, String)>>);

/// The task page's first-prompt text, kept above the re-rendered task views
/// like [`ControlNotices`]: the controls are rebuilt on every live tick (the
/// event stream's first tick comes right after hydration), and a prompt
/// owned by them was wiped while being typed — Start then sent none.
#[derive(Debug, Clone, Copy)]
struct StartPrompt(RwSignal<String>);

/// Call once per page that shows [`TaskControls`].
pub fn provide_control_notices() {
    provide_context(ControlNotices(RwSignal::new(None)));
    provide_context(StartPrompt(RwSignal::new(String::new())));
}

/// The translated run status ("running", "waiting for you", "failed (exit 2)", …).
pub fn run_label(l: Locale, state: RunState, exit_code: Option<i64>) -> String {
    let key = match state {
        RunState::Running => "task.run.running",
        RunState::Waiting => "task.run.waiting",
        RunState::Finished => "task.run.finished",
        RunState::Failed if exit_code.is_some() => "task.run.failed_code",
        RunState::Failed => "task.run.failed",
        RunState::Stopped => "task.run.stopped",
        RunState::NotStarted => "task.run.not_started",
    };
    l.t(key).replace(
        "{code}",
        &exit_code.map(|c| c.to_string()).unwrap_or_default(),
    )
}

/// `approval`: what the task waits for is an approval ("waiting for
/// approval" instead of "waiting for you").
#[component]
pub fn RunBadge(
    state: RunState,
    exit_code: Option<i64>,
    #[prop(optional)] approval: bool,
) -> impl IntoView {
    let l = use_locale();
    let approval = approval && state == RunState::Waiting;
    let text = if approval {
        l.t("approvals.waiting").to_string()
    } else {
        run_label(l, state, exit_code)
    };
    let state = state.as_str();
    view! {
        <span class=format!("badge run-{state}") data-run-state=state
            data-waiting-approval=approval.then_some("true")>{text}</span>
    }
    .into_any()
}

fn action_label(action: Action) -> &'static str {
    match action {
        Action::Start => "task.action.start",
        Action::Stop => "task.action.stop",
        Action::Restart => "task.action.restart",
        Action::Resume => "task.action.resume",
    }
}

fn blocked_label(code: Blocked) -> &'static str {
    match code {
        Blocked::Running => "task.blocked.running",
        Blocked::NotRunning => "task.blocked.not_running",
        Blocked::NeverStarted => "task.blocked.never_started",
        Blocked::NoSession => "task.blocked.no_session",
    }
}

/// The buttons. `full`: with the first-prompt field, the reasons written
/// out and the unattended switch (task page); else compact (a `/tasks` row).
#[component]
pub fn TaskControls(task: TaskRow, #[prop(optional)] full: bool) -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let control = ServerAction::<ControlTask>::new();
    let unattended = ServerAction::<SetTaskUnattended>::new();
    let notices =
        use_context::<ControlNotices>().unwrap_or_else(|| ControlNotices(RwSignal::new(None)));
    // Only the full controls have the field; a row's own signal stays empty.
    let prompt = full
        .then(use_context::<StartPrompt>)
        .flatten()
        .map_or_else(|| RwSignal::new(String::new()), |p| p.0);
    let checked = RwSignal::new(task.unattended);
    let task_id = task.id.clone();
    // After an action: reload what the page shows (the change event does
    // too), or keep the reason it failed.
    let on_result = move |id: String, r: Result<TaskRow, ServerFnError>| match r {
        Ok(_) => {
            notices.0.set(None);
            live.tick.update(|t| *t += 1);
        }
        Err(e) => notices.0.set(Some((id, error_text(&e)))),
    };
    let (id1, id2) = (task_id.clone(), task_id.clone());
    // The prompt a start took: the field is cleared when it is sent, and
    // given back when the start fails (unless something new was typed).
    let sent = StoredValue::new(None::<String>);
    Effect::new(move |_| {
        if let Some(r) = control.value().get() {
            if r.is_err()
                && let Some(p) = sent.get_value()
                && prompt.get_untracked().is_empty()
            {
                prompt.set(p);
            }
            on_result(id1.clone(), r);
        }
    });
    Effect::new(move |_| {
        if let Some(r) = unattended.value().get() {
            if r.is_err() {
                checked.update(|c| *c = !*c);
            }
            on_result(id2.clone(), r);
        }
    });
    let notice = RwSignal::new(None::<Notice>);
    let id3 = task_id.clone();
    Effect::new(move |_| {
        notice.set(
            notices
                .0
                .get()
                .filter(|(id, _)| *id == id3)
                .map(|(_, text)| Notice { ok: false, text }),
        );
    });
    let busy = move || control.pending().get() || unattended.pending().get();
    let id = task.id.clone();
    let title = task.title.clone();
    let buttons = task
        .actions
        .iter()
        .map(|&(action, blocked)| {
            let id = id.clone();
            let reason = blocked.map(|b| l.t(blocked_label(b)));
            let is_blocked = blocked.is_some();
            let label = l.t(action_label(action));
            // A row's buttons name their task for screen readers.
            let name = (!full).then(|| format!("{label}: {title}"));
            let class = if matches!(action, Action::Start | Action::Resume) {
                "primary"
            } else {
                "ghost"
            };
            view! {
                <button
                    type="button"
                    class=class
                    data-action=action.as_str()
                    data-blocked=blocked.map(Blocked::as_str)
                    aria-label=name
                    title=reason
                    disabled=move || is_blocked || busy()
                    on:click=move |_| {
                        let p = prompt.get_untracked();
                        let sends = !p.trim().is_empty()
                            && matches!(action, Action::Start | Action::Restart);
                        if sends {
                            prompt.set(String::new());
                            sent.set_value(Some(p.clone()));
                        }
                        control.dispatch(ControlTask {
                            id: id.clone(),
                            action,
                            prompt: sends.then_some(p),
                        });
                    }
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    let reasons = full.then(|| {
        let lines = task
            .actions
            .iter()
            .filter_map(|&(a, b)| {
                let b = b?;
                // "not running" under Stop says nothing new when Start is possible.
                Some(format!(
                    "{} — {}",
                    l.t(action_label(a)),
                    l.t(blocked_label(b))
                ))
            })
            .collect::<Vec<_>>()
            .join(" · ");
        (!lines.is_empty()).then(|| view! { <p class="sub why" id="control-why">{lines}</p> })
    });
    let prompt_field = full.then(|| {
        let can_start = task
            .actions
            .iter()
            .any(|(a, b)| matches!(a, Action::Start | Action::Restart) && b.is_none());
        view! {
            <label class="start-prompt">
                <span>{l.t("task.control.prompt")}</span>
                <input
                    id="start-prompt"
                    type="text"
                    maxlength="100000"
                    placeholder=l.t("task.control.prompt_hint")
                    disabled=!can_start
                    prop:value=move || prompt.get()
                    on:input=move |ev| prompt.set(event_target_value(&ev))
                />
            </label>
        }
    });
    let switch = full.then(|| {
        let id = id.clone();
        view! {
            <label class="switch">
                <input
                    type="checkbox"
                    role="switch"
                    id="unattended-switch"
                    prop:checked=move || checked.get()
                    disabled=busy
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        checked.set(on);
                        unattended.dispatch(SetTaskUnattended { id: id.clone(), on });
                    }
                />
                <span>{l.t("tasks.unattended")}</span>
            </label>
        }
    });
    view! {
        <div class=if full { "task-controls full" } else { "task-controls" } data-task-id=task.id.clone()>
            {prompt_field}
            <div class="control-buttons" role="group" aria-label=l.t("task.control.label")>
                {buttons}
            </div>
            {switch}
            {reasons}
            <NoticeLine notice id=if full { "control-status" } else { "row-control-status" } />
        </div>
    }
    .into_any()
}
