//! Notification-center server functions: list (keyset pages), reply, ignore,
//! dismiss, pending count, channel status.

use harness_types::{ChannelHealth, MessageView};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::Page;
#[cfg(feature = "ssr")]
use super::{PAGE_SIZE, ssr};

/// The outcome of a reply, as shown to the person who sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyResult {
    pub task_id: String,
    pub mode: harness_types::ResumeMode,
    pub deduped: bool,
    /// The reply's delivery into the terminal (`None`: the agent never ran).
    pub delivery_id: Option<String>,
    /// `delivered`, `queued`, `failed`, `unverified` or `none`.
    pub delivery: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverviewData {
    pub pending: u64,
    pub tasks: usize,
}

#[cfg(feature = "ssr")]
fn query(
    view: MessageView,
    q: &str,
    cursor: Option<&str>,
    task_id: Option<String>,
    limit: u32,
    from: Option<&str>,
) -> Result<harness_core::model::MessageQuery, ServerFnError> {
    use harness_core::{
        CoreError,
        model::{Cursor, MessageQuery},
    };
    let cursor = match cursor.map(str::trim) {
        None | Some("") => None,
        Some(c) => Some(
            Cursor::decode(c)
                .ok_or_else(|| ssr::to_sfn(CoreError::invalid("cursor", "invalid cursor")))?,
        ),
    };
    // `children`: only messages of derived children (the REST `?from=`).
    let from_children = match from.map(str::trim) {
        None | Some("") | Some("all") => false,
        Some("children") => true,
        Some(_) => {
            return Err(ssr::to_sfn(CoreError::invalid(
                "from",
                "from must be children or all",
            )));
        }
    };
    Ok(MessageQuery {
        view,
        search: Some(q.to_string()),
        task_id,
        cursor,
        limit,
        from_children,
    })
}

/// `sort`: nothing (newest first), or `blocking` — the pending view most
/// blocking first, in one page.
#[cfg(feature = "ssr")]
fn most_blocking(view: MessageView, sort: Option<&str>) -> Result<bool, ServerFnError> {
    match sort.map(str::trim) {
        None | Some("") | Some("newest") => Ok(false),
        Some("blocking") if view == MessageView::Pending => Ok(true),
        Some("blocking") => Err(ssr::to_sfn(harness_core::CoreError::invalid(
            "sort",
            "most blocking first is an order of the pending view",
        ))),
        Some(_) => Err(ssr::to_sfn(harness_core::CoreError::invalid(
            "sort",
            "sort must be newest or blocking",
        ))),
    }
}

/// The pending rows of `query`, most blocking first: the morning report's
/// rank (`Reports::pending_most_blocking`), with the plan tasks read by
/// the server's reader.
#[cfg(feature = "ssr")]
async fn blocking_page(
    h: &harness_core::Harness,
    query: harness_core::model::MessageQuery,
) -> Result<harness_core::model::MessagePage, ServerFnError> {
    let work = use_context::<super::report::ReportWork>();
    let none = harness_core::report::NoWork;
    let reader: &dyn harness_core::report::WorkReader = match &work {
        Some(w) => w.0.as_ref(),
        None => &none,
    };
    h.reports()
        .pending_most_blocking(&harness_core::auth::Identity::Browser, query, reader)
        .await
        .map_err(ssr::to_sfn)
}

/// One page of rows of a view, optionally filtered by a search text, older
/// than `cursor` when given; `sort=blocking`: the pending view most
/// blocking first (one page).
#[server(prefix = "/sfn", endpoint = "messages")]
pub async fn list_page(
    view: MessageView,
    q: String,
    cursor: Option<String>,
    task_id: Option<String>,
    #[server(default)] from: Option<String>,
    #[server(default)] sort: Option<String>,
) -> Result<Page, ServerFnError> {
    let h = ssr::harness()?;
    let query = query(
        view,
        &q,
        cursor.as_deref(),
        task_id,
        PAGE_SIZE,
        from.as_deref(),
    )?;
    let page = if most_blocking(view, sort.as_deref())? {
        blocking_page(&h, query).await?
    } else {
        h.asks().list_messages(query).await.map_err(ssr::to_sfn)?
    };
    let rows = page.rows.into_iter().map(ssr::row).collect();
    let rows = ssr::with_deliveries(&h, rows).await?;
    let rows = super::choices::with_choices(&h, rows).await?;
    Ok(Page {
        rows: super::reminders::with_follow_ups(&h, rows).await?,
        next: page.next_cursor,
    })
}

/// The first `count` rows from `start` (the top when `None`): what a page that
/// already shows `count` rows reloads after a live event.
#[server(prefix = "/sfn", endpoint = "messages_window")]
pub async fn list_window(
    view: MessageView,
    q: String,
    start: Option<String>,
    task_id: Option<String>,
    count: u32,
    #[server(default)] from: Option<String>,
    #[server(default)] sort: Option<String>,
) -> Result<Page, ServerFnError> {
    const MAX_WINDOW: usize = 5000;
    let h = ssr::harness()?;
    if most_blocking(view, sort.as_deref())? {
        // One page: every row again, in the rank of now.
        let q = query(view, &q, None, task_id, PAGE_SIZE, from.as_deref())?;
        let page = blocking_page(&h, q).await?;
        let rows = page.rows.into_iter().map(ssr::row).collect();
        let rows = ssr::with_deliveries(&h, rows).await?;
        let rows = super::choices::with_choices(&h, rows).await?;
        return Ok(Page {
            rows: super::reminders::with_follow_ups(&h, rows).await?,
            next: None,
        });
    }
    let want = (count as usize).clamp(1, MAX_WINDOW);
    let mut out = Page::default();
    let mut cursor = start;
    loop {
        let limit = (want - out.rows.len()).min(500) as u32;
        let page = h
            .asks()
            .list_messages(query(
                view,
                &q,
                cursor.as_deref(),
                task_id.clone(),
                limit,
                from.as_deref(),
            )?)
            .await
            .map_err(ssr::to_sfn)?;
        out.rows.extend(page.rows.into_iter().map(ssr::row));
        out.next = page.next_cursor.clone();
        match page.next_cursor {
            Some(next) if out.rows.len() < want => cursor = Some(next),
            _ => break,
        }
    }
    out.rows = ssr::with_deliveries(&h, out.rows).await?;
    out.rows = super::choices::with_choices(&h, out.rows).await?;
    out.rows = super::reminders::with_follow_ups(&h, out.rows).await?;
    Ok(out)
}

/// Answer a task's open question; the task resumes. `request_id`: the
/// question's row (an answer to an approval replaced meanwhile is refused,
/// never given to the newer one).
#[server(prefix = "/sfn", endpoint = "reply_ask")]
pub async fn reply_ask(
    task_id: String,
    text: String,
    request_id: Option<String>,
) -> Result<ReplyResult, ServerFnError> {
    let h = ssr::harness()?;
    // Who answered, for the approval audit: the session (a hash prefix of
    // its id, never the id), or nothing for a script's bearer token.
    let headers: Option<http::HeaderMap> = leptos_axum::extract().await.ok();
    let session = headers
        .as_ref()
        .and_then(|h| h.get(http::header::COOKIE))
        .and_then(|v| v.to_str().ok())
        .and_then(harness_core::sessions::ui_session_label);
    // `2`, `2.` or a label answers with that option: mapped by
    // the core's reply, as for REST and MCP.
    let out = h
        .asks()
        .reply_aimed(
            &harness_core::auth::Identity::Browser
                .person()
                .map_err(ssr::to_sfn)?,
            &task_id,
            Some(&text),
            true,
            None,
            harness_core::messaging::Aim {
                request_id: request_id.as_deref(),
                via: Some("ui"),
                who: session.as_deref(),
            },
        )
        .await
        .map_err(ssr::to_sfn)?;
    Ok(ReplyResult {
        task_id: out.task_id,
        mode: out.mode,
        deduped: out.deduped,
        delivery_id: out.delivery_id,
        delivery: out.delivery.to_string(),
    })
}

/// OPEN ask → IGNORED.
#[server(prefix = "/sfn", endpoint = "ignore_ask")]
pub async fn ignore_ask(id: String) -> Result<String, ServerFnError> {
    let h = ssr::harness()?;
    let message = h.asks().ignore(&id).await.map_err(ssr::to_sfn)?;
    Ok(message.id)
}

/// Delete a notify line.
#[server(prefix = "/sfn", endpoint = "dismiss_message")]
pub async fn dismiss_message(id: String) -> Result<String, ServerFnError> {
    let h = ssr::harness()?;
    h.asks().dismiss(&id).await.map_err(ssr::to_sfn)?;
    Ok(id)
}

/// Whether questions can reach a person outside the browser (the banner of
/// `/harness`; the judgement is `harness_core::outbox::health`).
#[server(prefix = "/sfn", endpoint = "channel_state")]
pub async fn channel_state() -> Result<ChannelHealth, ServerFnError> {
    ssr::harness()?
        .outbox()
        .channel_health()
        .await
        .map_err(ssr::to_sfn)
}

#[server(prefix = "/sfn", endpoint = "overview")]
pub async fn get_overview() -> Result<OverviewData, ServerFnError> {
    let h = ssr::harness()?;
    Ok(OverviewData {
        // The one "waits for you" count (the badge's).
        pending: h
            .reports()
            .waiting(&harness_core::auth::Identity::Browser)
            .await
            .map_err(ssr::to_sfn)?
            .total,
        tasks: h.tasks().list_tasks().await.map_err(ssr::to_sfn)?.len(),
    })
}
