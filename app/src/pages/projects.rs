//! `/projects` (the projects and a link to each task list) and
//! `/projects/:id/plan`: the project's `harness-tasks.json` as an indented
//! dependency tree with statuses, attempts, last errors, claims and what
//! blocks each task, the counts, and the live tail of `harness-progress.txt`.
//!
//! The task list is a file the `harness` CLI writes, not a core event, so the
//! page polls its server function every 2 s (and on every live event).

use harness_types::{PlanState, PlanStatus};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::{
    api::{PlanData, PlanTaskRow, ProjectRow, list_projects, project_plan},
    components::{TimeCell, error_text},
    i18n::{Locale, use_locale},
    live::use_live,
};

/// How often the task-list page re-reads the files.
pub const PLAN_POLL: std::time::Duration = std::time::Duration::from_secs(2);

#[component]
pub fn ProjectListPage() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    // The first read renders the page (on the server, and again for the
    // hydration); later reads, one per live tick, only update `rows`. Rows
    // are keyed by their project: a row keeps its DOM and its Workbench
    // cell while the list changes around it. Rebuilt on every tick, by
    // position, a click could land on the button of the row that had just
    // moved into that place (projects added before it).
    let first = Resource::new(|| (), |_| list_projects());
    let rows = RwSignal::new(Vec::<ProjectRow>::new());
    let failed = RwSignal::new(None::<String>);
    let asked = StoredValue::new(0u64);
    let shown = StoredValue::new(0u64);
    Effect::new(move |previous: Option<()>| {
        live.tick.track();
        if previous.is_none() {
            return;
        }
        let Some(n) = asked.try_update_value(|n| {
            *n += 1;
            *n
        }) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let answer = list_projects().await;
            // An older answer never replaces a newer one.
            let newer = shown.try_update_value(|shown| {
                let newer = n > *shown;
                if newer {
                    *shown = n;
                }
                newer
            });
            if newer != Some(true) {
                return;
            }
            // A failed read keeps the rows and says so until a read succeeds.
            match answer {
                Ok(list) => {
                    rows.try_set(list);
                    failed.try_set(None);
                }
                Err(e) => {
                    failed.try_set(Some(error_text(&e)));
                }
            }
        });
    });
    let empty = Memo::new(move |_| rows.with(Vec::is_empty));
    super::project_edit::Editing::provide();
    view! {
        <crate::alerts::PageTitle text=l.t("projects.title") />
        <header class="page-head">
            <h1>{l.t("projects.title")}</h1>
            <p class="sub">{l.t("projects.subtitle")}</p>
            <p class="sub" id="projects-names-help">{l.t("projects.names_help")}</p>
        </header>
        <crate::pages::project_form::AddProjectForm />
        <super::project_edit::EditProjectForm />
        <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match first.await {
                    Ok(list) => {
                        rows.set(list);
                        view! {
                            {move || failed.get().map(|e| view! {
                                <p class="error" role="alert" id="projects-refresh-error">{e}</p>
                            })}
                            {move || if empty.get() {
                                view! { <p class="empty" id="projects-empty">{l.t("projects.empty")}</p> }.into_any()
                            } else {
                                project_table(rows).into_any()
                            }}
                        }
                        .into_any()
                    }
                    Err(e) => view! { <p class="error" role="alert">{error_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// The projects' table, a row per project (keyed: see `ProjectListPage`).
fn project_table(rows: RwSignal<Vec<ProjectRow>>) -> impl IntoView {
    let l = use_locale();
    view! {
        <div class="table-card">
            <table class="projects cards-on-phone">
                <thead>
                    <tr>
                        <th scope="col">{l.t("projects.name")}</th>
                        <th scope="col">{l.t("projects.path")}</th>
                        <th scope="col">{l.t("col.workspace")}</th>
                        <th scope="col"><span class="visually-hidden">{l.t("projects.plan")}</span></th>
                        <th scope="col">{l.t("workbench.col")}</th>
                    </tr>
                </thead>
                <tbody>
                    <For each=move || rows.get() key=|p| p.clone() let:p>
                        <ProjectTableRow p />
                    </For>
                </tbody>
            </table>
        </div>
    }
}

#[component]
fn ProjectTableRow(p: ProjectRow) -> impl IntoView {
    let l = use_locale();
    let row = p.clone();
    view! {
        <tr data-project-id=p.id.clone()>
            <td data-label=l.t("projects.name")><a href=format!("/projects/{}/plan", p.id)>{p.name}</a></td>
            <td data-label=l.t("projects.path")><code class="project-path">{p.path}</code></td>
            <td data-label=l.t("col.workspace")>{p.workspace}</td>
            <td><a href=format!("/projects/{}/plan", p.id) class="plan-link">{l.t("projects.plan")}</a>
                " " <super::project_edit::EditProjectButton project=row /></td>
            <td data-label=l.t("workbench.col")><super::project_workbench::WorkbenchCell project_id=p.id.clone() /></td>
        </tr>
    }
}

#[component]
pub fn PlanPage() -> impl IntoView {
    let l = use_locale();
    let live = use_live();
    let params = use_params_map();
    let id = Memo::new(move |_| params.with(|p| p.get("id").unwrap_or_default()));
    let poll = RwSignal::new(0u64);
    #[cfg(feature = "hydrate")]
    if let Ok(handle) = set_interval_with_handle(
        move || {
            poll.try_update(|n| *n += 1);
        },
        PLAN_POLL,
    ) {
        on_cleanup(move || handle.clear());
    }
    let plan = Resource::new(
        move || (id.get(), poll.get(), live.tick.get()),
        |(id, _, _)| project_plan(id),
    );
    view! {
        <crate::alerts::PageTitle text=l.t("plan.title") />
        <p class="crumbs"><a href="/projects">{l.t("projects.back")}</a></p>
        <Transition fallback=move || view! { <p class="loading">{l.t("common.loading")}</p> }>
            {move || Suspend::new(async move {
                match plan.await {
                    Err(e) => view! {
                        <h1>{l.t("projects.not_found")}</h1>
                        <p class="error" role="alert">{error_text(&e)}</p>
                    }
                    .into_any(),
                    Ok(d) => view! { <Plan d /> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn Plan(d: PlanData) -> impl IntoView {
    let l = use_locale();
    let body = match d.state {
        PlanState::Missing => view! {
            <p class="empty" id="plan-missing">
                {l.t("plan.missing")} " " <code>{format!("harness init {}", d.project.path)}</code>
            </p>
        }
        .into_any(),
        PlanState::Error => view! {
            <p class="error" role="alert" id="plan-error">{d.error.clone().unwrap_or_default()}</p>
        }
        .into_any(),
        PlanState::Ok => view! {
            <Summary d=d.clone() />
            <Tree tasks=d.tasks.clone() />
        }
        .into_any(),
    };
    let log = if d.log_tail.is_empty() {
        view! { <p class="empty">{l.t("plan.log_empty")}</p> }.into_any()
    } else {
        let lines = d.log_tail.len();
        view! {
            <ol class="plan-log" id="plan-log" data-lines=lines>
                {d.log_tail.into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
            </ol>
        }
        .into_any()
    };
    let project_id = d.project.id.clone();
    view! {
        <crate::alerts::PageTitle text=format!("{} · {}", l.t("plan.title"), d.project.name) />
        <header class="page-head">
            <h1 id="plan-title">{l.t("plan.title")} " · " {d.project.name.clone()}</h1>
            <p class="sub"><code id="plan-root">{d.project.path.clone()}</code></p>
        </header>
        <section class="card plan-workbench" aria-labelledby="plan-wb-h">
            <h2 id="plan-wb-h">{l.t("workbench.col")}</h2>
            <p class="sub">{l.t("workbench.help")}</p>
            <super::project_workbench::WorkbenchCell project_id />
        </section>
        {body}
        <section aria-labelledby="plan-log-h">
            <h2 id="plan-log-h">{l.t("plan.log")}</h2>
            <p class="sub">{l.t("plan.log_hint")}</p>
            {log}
        </section>
    }
    .into_any()
}

fn status_key(status: &PlanStatus) -> Option<&'static str> {
    Some(match status {
        PlanStatus::Pending => "plan.status.pending",
        PlanStatus::InProgress => "plan.status.in_progress",
        PlanStatus::Completed => "plan.status.completed",
        PlanStatus::Failed => "plan.status.failed",
        PlanStatus::Other(_) => return None,
    })
}

fn status_text(l: Locale, status: &PlanStatus) -> String {
    status_key(status)
        .map(|k| l.t(k).to_string())
        .unwrap_or_else(|| status.as_str().to_string())
}

#[component]
fn Summary(d: PlanData) -> impl IntoView {
    let l = use_locale();
    let counts = d
        .counts
        .iter()
        .map(|(status, n)| {
            view! {
                <li data-status=status.as_str().to_string()>
                    <span class=format!("badge plan-{}", status.as_str())>{status_text(l, status)}</span>
                    " " <strong>{*n}</strong>
                </li>
            }
        })
        .collect_view();
    let next = match d.next {
        Some((id, title)) => view! { <code>{id}</code> " " {title} }.into_any(),
        None => view! { <span class="none">"—"</span> }.into_any(),
    };
    // `.harness-active` says the loop is switched on (after `init`), not
    // that anything runs: "running" only while a task is claimed.
    let running = d
        .tasks
        .iter()
        .any(|t| t.status == PlanStatus::InProgress && t.claimed_by.is_some());
    let loop_state = d.active.then(|| {
        if running {
            view! { " " <span class="badge plan-in_progress" id="plan-loop" data-loop="running">{l.t("plan.active")}</span> }
                .into_any()
        } else {
            view! {
                " " <span class="badge" id="plan-loop" data-loop="idle">{l.t("plan.enabled")}</span>
                " " <span class="sub">{l.t("plan.enabled_hint")} " " <code>"harness run"</code></span>
            }
            .into_any()
        }
    });
    // A task without a validation command can never complete (the CLI warns
    // at `harness add`; the page says it too).
    let unchecked: Vec<String> = d
        .tasks
        .iter()
        .filter(|t| t.validation.is_none() && t.status != PlanStatus::Completed)
        .map(|t| t.id.clone())
        .collect();
    let no_validation = (!unchecked.is_empty()).then(|| {
        view! {
            <p class="banner" role="note" id="plan-no-validation">
                {l.t("plan.no_validation").replace("{n}", &unchecked.len().to_string())} " "
                <code>{unchecked.join(", ")}</code> " · "
                {l.t("plan.no_validation_fix")} " " <code>"tasks[].validation.command"</code>
            </p>
        }
    });
    view! {
        <ul class="plan-counts" id="plan-counts" data-total=d.total>
            {counts}
            <li data-status="blocked">
                <span class="badge plan-blocked">{l.t("plan.blocked")}</span> " " <strong>{d.blocked}</strong>
            </li>
            <li>{l.t("plan.total")} " " <strong>{d.total}</strong></li>
        </ul>
        <dl class="facts plan-facts">
            <dt>{l.t("plan.next")}</dt><dd id="plan-next">{next}</dd>
            <dt>{l.t("plan.sessions")}</dt>
            <dd>{d.session_count} " · " <span id="plan-last-session"><TimeCell ms=d.last_session_ms /></span></dd>
            <dt>{l.t("plan.mode")}</dt>
            <dd>
                {l.t(if d.concurrent { "plan.mode_concurrent" } else { "plan.mode_exclusive" })}
                {loop_state}
            </dd>
        </dl>
        {no_validation}
    }
    .into_any()
}

#[component]
fn Tree(tasks: Vec<PlanTaskRow>) -> impl IntoView {
    let l = use_locale();
    if tasks.is_empty() {
        return view! { <p class="empty" id="plan-no-tasks">{l.t("plan.no_tasks")}</p> }.into_any();
    }
    let rows = tasks
        .into_iter()
        .map(|t| view! { <TreeRow t /> })
        .collect_view();
    view! {
        <div class="table-card">
            <table class="plan cards-on-phone" id="plan-tree" aria-label=l.t("plan.tree")>
                <thead>
                    <tr>
                        <th scope="col">{l.t("col.task")}</th>
                        <th scope="col">{l.t("col.status")}</th>
                        <th scope="col">{l.t("plan.priority")}</th>
                        <th scope="col">{l.t("plan.attempts")}</th>
                        <th scope="col">{l.t("plan.last_error")}</th>
                        <th scope="col">{l.t("plan.dependencies")}</th>
                        <th scope="col">{l.t("plan.claim")}</th>
                        <th scope="col">{l.t("plan.runs")}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

#[component]
fn TreeRow(t: PlanTaskRow) -> impl IntoView {
    let l = use_locale();
    let flags = [
        (t.blocked, "plan-blocked", "plan.blocked"),
        (t.permanently_failed, "plan-failed", "plan.gave_up"),
        (t.needs_human, "pending", "plan.needs_human"),
        (t.retryable, "", "plan.retryable"),
    ]
    .into_iter()
    .filter(|(on, _, _)| *on)
    .map(|(_, class, key)| view! { " " <span class=format!("badge {class}")>{l.t(key)}</span> })
    .collect_view();
    let error = t.error_message.clone().map(|m| {
        view! {
            {t.error_category.clone().map(|c| view! { <span class="badge plan-failed err-cat">{c}</span> " " })}
            <span class="clamp err-msg">{m}</span>
        }
    });
    let others: Vec<String> = t
        .depends_on
        .iter()
        .filter(|d| Some(*d) != t.parent.as_ref())
        .cloned()
        .collect();
    let deps = if !t.blocked_by.is_empty() {
        Some((
            "blocked-by",
            l.t("plan.blocked_by"),
            t.blocked_by.join(", "),
        ))
    } else if !t.waiting_on.is_empty() {
        Some((
            "waiting-on",
            l.t("plan.waiting_on"),
            t.waiting_on.join(", "),
        ))
    } else if !others.is_empty() {
        Some(("also-after", l.t("plan.also_after"), others.join(", ")))
    } else {
        None
    }
    .map(|(class, label, ids)| view! { <span class=class>{label} " " <code>{ids}</code></span> });
    let claim = t.claimed_by.clone().map(|w| {
        view! {
            <code class="claimed-by">{w}</code>
            {t.lease_expires_ms.map(|ms| view! { <br /><span class="sub">{l.t("plan.lease_until")} " " <TimeCell ms=Some(ms) /></span> })}
        }
    });
    let depth = t.depth;
    view! {
        <tr
            data-task-id=t.id.clone()
            data-status=t.status.as_str().to_string()
            data-depth=depth
            data-blocked=t.blocked.to_string()
        >
            <td class="plan-task task-title" style=format!("--depth: {depth}")>
                {(depth > 0).then(|| view! { <span class="tree-mark" aria-hidden="true">"└ "</span> })}
                <code>{t.id.clone()}</code> " " <span class="title">{t.title.clone()}</span>
                {(t.checkpoints > 0).then(|| view! {
                    <span class="sub">" · " {l.t("plan.checkpoints").replace("{n}", &t.checkpoints.to_string())}</span>
                })}
            </td>
            <td class="nowrap" data-label=l.t("col.status")>
                <span class=format!("badge plan-{}", t.status.as_str()) data-status=t.status.as_str().to_string()>
                    {status_text(l, &t.status)}
                </span>
                {flags}
            </td>
            <td data-label=l.t("plan.priority")>{t.priority.clone().unwrap_or_else(|| "—".into())}</td>
            <td class="nowrap attempts" data-label=l.t("plan.attempts")>{format!("{}/{}", t.attempts, t.max_attempts)}</td>
            <td class="last-error" data-label=l.t("plan.last_error")>{error}</td>
            <td class="deps" data-label=l.t("plan.dependencies")>{deps}</td>
            <td class="claim" data-label=l.t("plan.claim")>{claim}</td>
            <td class="plan-runs" data-label=l.t("plan.runs")><PlanRuns runs=t.runs.clone() /></td>
        </tr>
    }
    .into_any()
}

/// The Harness tasks `harness run` created for a plan task (supervised
/// mode), newest first: a link to each with its run state and age.
#[component]
fn PlanRuns(runs: Vec<crate::api::PlanRun>) -> impl IntoView {
    if runs.is_empty() {
        return view! { <span class="none">"—"</span> }.into_any();
    }
    let items = runs
        .into_iter()
        .map(|r| {
            view! {
                <li data-run-task=r.task_id.clone()>
                    <a href=format!("/tasks/{}", r.task_id) class="plan-run-link" title=r.title.clone()>
                        <span class="visually-hidden">{r.title.clone()} " "</span>
                        <super::tasks::RunBadge state=r.run_state exit_code=r.exit_code />
                    </a>
                    " " <TimeCell ms=Some(r.created_ms) />
                </li>
            }
        })
        .collect_view();
    view! { <ul class="plan-run-list">{items}</ul> }.into_any()
}
