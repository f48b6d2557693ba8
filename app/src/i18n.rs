//! English and Chinese UI strings, and how the language is chosen: the
//! `harness_lang` cookie (set by the switch), else the browser's
//! Accept-Language, else English. In the browser the language is read back
//! from `<html lang>`, which the server rendered.

use std::{collections::HashMap, sync::LazyLock};

use leptos::prelude::*;

pub const COOKIE: &str = "harness_lang";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Locale {
    #[default]
    En,
    Zh,
}

pub fn use_locale() -> Locale {
    use_context::<Locale>().unwrap_or_default()
}

impl Locale {
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().to_ascii_lowercase();
        if t == "zh" || t.starts_with("zh-") || t.starts_with("zh_") {
            Some(Self::Zh)
        } else if t == "en" || t.starts_with("en-") || t.starts_with("en_") {
            Some(Self::En)
        } else {
            None
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Zh => "zh",
        }
    }

    pub fn html_lang(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Zh => "zh-CN",
        }
    }

    /// The language's own name (for the switch).
    pub fn name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::Zh => "中文",
        }
    }

    pub fn other(self) -> Self {
        match self {
            Self::En => Self::Zh,
            Self::Zh => Self::En,
        }
    }

    /// Cookie first, then the Accept-Language list by quality, else English.
    pub fn choose(cookie: Option<&str>, accept_language: Option<&str>) -> Self {
        let from_cookie = cookie.and_then(|c| {
            c.split(';')
                .filter_map(|kv| kv.trim().split_once('='))
                .find(|(k, _)| *k == COOKIE)
                .and_then(|(_, v)| Self::parse(v))
        });
        if let Some(l) = from_cookie {
            return l;
        }
        let mut langs: Vec<(f32, Self)> = accept_language
            .unwrap_or_default()
            .split(',')
            .filter_map(|part| {
                let mut it = part.split(';');
                let lang = Self::parse(it.next()?)?;
                let q = it
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .unwrap_or(1.0);
                Some((q, lang))
            })
            .collect();
        // Stable: among equal qualities the first listed wins.
        langs.sort_by(|a, b| b.0.total_cmp(&a.0));
        langs.first().map(|(_, l)| *l).unwrap_or_default()
    }

    /// The language of the current request (server) or page (browser).
    pub fn detect() -> Self {
        #[cfg(feature = "ssr")]
        {
            use_context::<http::request::Parts>()
                .map(|p| {
                    let header = |name| p.headers.get(name).and_then(|v| v.to_str().ok());
                    Self::choose(
                        header(http::header::COOKIE),
                        header(http::header::ACCEPT_LANGUAGE),
                    )
                })
                .unwrap_or_default()
        }
        #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
        {
            web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.document_element())
                .and_then(|e| e.get_attribute("lang"))
                .and_then(|l| Self::parse(&l))
                .unwrap_or_default()
        }
        #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
        {
            Self::En
        }
    }

    /// The text for `key`; the key itself when missing (the tests make sure
    /// no key used in the sources is missing).
    pub fn t(self, key: &'static str) -> &'static str {
        let table = match self {
            Self::En => &*EN_MAP,
            Self::Zh => &*ZH_MAP,
        };
        table.get(key).copied().unwrap_or(key)
    }
}

static EN_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| EN.iter().copied().collect());
static ZH_MAP: LazyLock<HashMap<&'static str, &'static str>> =
    LazyLock::new(|| ZH.iter().copied().collect());

pub const EN: &[(&str, &str)] = &[
    ("nav.skip", "Skip to content"),
    ("nav.label", "Main"),
    ("nav.harness", "Notifications"),
    ("nav.tasks", "Tasks"),
    ("nav.settings", "Settings"),
    ("nav.logout", "Log out"),
    ("nav.language", "Switch language"),
    ("nav.pending_count", "{n} pending"),
    ("common.loading", "Loading…"),
    ("common.not_found", "Page not found."),
    ("common.yes", "yes"),
    ("common.no", "no"),
    (
        "home.lead",
        "Agents that work unattended, park when blocked, and resume the moment you answer.",
    ),
    ("home.pending", "{n} pending question(s)"),
    ("home.tasks", "{n} task(s)"),
    ("harness.title", "Notifications"),
    (
        "harness.subtitle",
        "Every question, progress line and reply of your agents. Answer here and the waiting agent resumes.",
    ),
    ("harness.views", "Views"),
    ("chip.pending", "Pending"),
    ("chip.answered", "Answered"),
    ("chip.all", "All"),
    ("harness.search_label", "Search task, content and reply"),
    ("harness.search_placeholder", "Search task, content, reply…"),
    ("harness.search", "Search"),
    (
        "harness.no_channel",
        "No notification channel is configured: questions are only shown here (you can still answer them).",
    ),
    ("harness.no_channel_link", "Settings → Notifications"),
    (
        "harness.empty",
        "Nothing here. When an agent asks you something it shows up here — Home shows how to connect one.",
    ),
    ("harness.rows_shown", "{n} shown"),
    ("harness.load_more", "Load more"),
    ("harness.newest", "Newest"),
    ("harness.end", "End of list"),
    ("harness.reply_label", "Reply"),
    ("harness.reply_placeholder", "Type your answer…"),
    ("harness.send_hint", "Ctrl/⌘ + Enter sends"),
    ("harness.unknown_task", "Unknown task"),
    ("harness.no_reply", "No reply."),
    ("col.workspace", "Workspace"),
    ("col.project", "Project"),
    ("col.task", "Task"),
    ("col.content", "Content"),
    ("col.sent_at", "Sent at"),
    ("col.reply", "Reply"),
    ("col.replied_at", "Replied at"),
    ("col.status", "Status"),
    ("col.actions", "Actions"),
    ("badge.pending", "pending"),
    ("badge.answered", "answered"),
    ("badge.muted", "muted"),
    ("kind.ask", "question"),
    ("kind.notify", "progress"),
    ("action.send", "Send"),
    ("action.ignore", "Ignore"),
    ("action.dismiss", "Dismiss"),
    ("action.handle", "Handle"),
    ("action.details", "Details"),
    ("action.close", "Close"),
    ("detail.sent", "Sent"),
    ("detail.reply", "Reply"),
    ("delivery.delivered", "typed into the terminal {time}"),
    ("delivery.queued", "queued for the terminal"),
    (
        "delivery.waiting",
        "waiting for the agent to finish its turn",
    ),
    ("delivery.resuming", "restarting the agent"),
    ("delivery.writing", "typing into the terminal"),
    ("delivery.failed", "failed: {reason}"),
    ("delivery.retry", "retry"),
    (
        "delivery.unverified",
        "unknown whether it arrived (the server stopped while typing)",
    ),
    ("delivery.again", "deliver again"),
    ("delivery.mark", "mark as delivered"),
    ("delivery.inputs", "Terminal input"),
    ("result.resumed", "Answered — the task resumed."),
    (
        "result.already_running",
        "Answered — the agent was already running.",
    ),
    (
        "result.not_running",
        "Answered — no agent is running; it gets the reply when it starts.",
    ),
    ("result.deduped", "Answered already with the same text."),
    (
        "result.ignored",
        "Ignored — the question is no longer pending.",
    ),
    ("result.dismissed", "Dismissed."),
    ("result.failed", "Not done:"),
    ("time.just_now", "just now"),
    ("time.minutes", "{n}m"),
    ("time.hours", "{n}h"),
    ("time.days", "{n}d"),
    ("tasks.title", "Tasks"),
    ("tasks.new", "New task"),
    ("tasks.field.title", "Title"),
    ("tasks.field.description", "Description"),
    ("tasks.field.command", "Command"),
    (
        "tasks.field.command_hint",
        "command: one shell line, run with sh -c (a first prompt is $1); claude/codex: the program to run instead (optional)",
    ),
    ("tasks.provider", "Provider"),
    ("tasks.parent", "Parent"),
    ("tasks.no_parent", "(none)"),
    ("tasks.create", "Create task"),
    ("tasks.created_ok", "Task created:"),
    ("tasks.unattended", "Unattended"),
    ("tasks.open_ask", "Open question"),
    ("tasks.created", "Created"),
    ("tasks.execution", "Latest run"),
    ("tasks.back", "← All tasks"),
    ("tasks.not_found", "Task not found"),
    ("tasks.terminal", "Terminal"),
    (
        "tasks.terminal_soon",
        "The live terminal of this task's agent: start the task to see it; click it to type.",
    ),
    ("tasks.children", "Child tasks"),
    ("inbox.title", "Inbox from child tasks"),
    ("inbox.empty", "No events from child tasks."),
    ("inbox.batches", "Batches typed into this task"),
    ("inbox.derive", "Derive a sub-task:"),
    ("inbox.derive_button", "Derive"),
    ("workbench.col", "Workbench"),
    ("workbench.create", "Create Workbench"),
    ("tasks.timeline", "Messages"),
    ("tasks.no_messages", "No messages yet."),
    ("task.open_ask", "waiting for you"),
    ("task.status.todo", "to do"),
    ("task.status.in_progress", "in progress"),
    ("task.status.in_review", "in review"),
    ("task.status.done", "done"),
    ("task.status.cancelled", "cancelled"),
    ("settings.title", "Settings"),
    ("settings.notifications", "Notifications"),
    (
        "settings.notifications_help",
        "Channels through which agents' questions reach you. Without any, questions wait in the notification center.",
    ),
    ("settings.none", "No channel configured."),
    ("settings.add", "Add a channel"),
    ("settings.label", "Label"),
    ("settings.gateway", "Gateway"),
    ("settings.dest", "Destination"),
    ("settings.scope", "Scope"),
    ("settings.scope_unattended", "unattended tasks"),
    ("settings.scope_work", "all work"),
    ("settings.save", "Add"),
    ("settings.remove", "Remove"),
    ("nav.projects", "Projects"),
    ("projects.title", "Projects"),
    (
        "projects.subtitle",
        "Directories with a task list (harness-tasks.json). Add one below (or with POST /api/projects {name, path}).",
    ),
    (
        "projects.empty",
        "No projects yet. Add a directory with the form above.",
    ),
    ("projects.name", "Name"),
    ("projects.path", "Directory"),
    ("projects.plan", "Task list"),
    ("projects.back", "← All projects"),
    ("projects.not_found", "Project not found"),
    ("plan.title", "Task list"),
    ("plan.missing", "No task list here yet. Create one with"),
    (
        "plan.no_tasks",
        "The task list is empty. Add tasks with harness add.",
    ),
    ("plan.tree", "Tasks by dependency"),
    ("plan.status.pending", "pending"),
    ("plan.status.in_progress", "in progress"),
    ("plan.status.completed", "completed"),
    ("plan.status.failed", "failed"),
    ("plan.blocked", "blocked"),
    ("plan.gave_up", "gave up"),
    ("plan.needs_human", "needs you"),
    ("plan.retryable", "will retry"),
    ("plan.total", "total"),
    ("plan.next", "Next"),
    ("plan.sessions", "Sessions"),
    ("plan.mode", "Mode"),
    ("plan.mode_exclusive", "exclusive"),
    ("plan.mode_concurrent", "concurrent"),
    ("plan.active", "loop active"),
    ("plan.priority", "Priority"),
    ("plan.attempts", "Attempts"),
    ("plan.last_error", "Last error"),
    ("plan.dependencies", "Dependencies"),
    ("plan.claim", "Claimed by"),
    ("plan.blocked_by", "blocked by"),
    ("plan.waiting_on", "waiting for"),
    ("plan.also_after", "also after"),
    ("plan.lease_until", "lease until"),
    ("plan.checkpoints", "{n} checkpoint(s)"),
    ("plan.log", "Progress log"),
    (
        "plan.log_hint",
        "The last 50 lines of harness-progress.txt, newest last; updated every 2 seconds.",
    ),
    ("plan.log_empty", "The progress log is empty."),
    ("nav.analytics", "Analytics"),
    ("analytics.title", "How long agents wait for you"),
    (
        "analytics.lead",
        "Questions from the last 7 days and every question still open.",
    ),
    ("analytics.response", "Time to answer"),
    ("analytics.parked", "Agents parked on a question"),
    ("analytics.last_24h", "Last 24 h:"),
    ("analytics.last_7d", "Last 7 days:"),
    (
        "analytics.percentiles",
        "median {p50}, 90% within {p90} ({n} answered)",
    ),
    ("analytics.no_answers", "no answered questions"),
    ("analytics.per_project", "Questions per project (7 days)"),
    ("analytics.unanswered", "Unanswered questions by age"),
    ("analytics.no_project", "(no project)"),
    ("analytics.no_questions", "No questions in the last 7 days."),
    ("analytics.age.lt1h", "under 1 h"),
    ("analytics.age.h1to6", "1–6 h"),
    ("analytics.age.h6to24", "6–24 h"),
    ("analytics.age.d1to7", "1–7 days"),
    ("analytics.age.gt7d", "over 7 days"),
    ("choices.default", "default"),
    ("choices.default_in", "default in {n}"),
    ("choices.deadline_in", "answer within {n}"),
    (
        "choices.default_due",
        "deadline passed: applying the default",
    ),
    ("choices.deadline_passed", "deadline passed"),
    (
        "choices.keys_hint",
        "Keys 1–8 choose an option; you can also write an answer.",
    ),
    ("choices.label", "Options"),
    ("choices.by_default", "default after deadline"),
    // issue 15: task control, form, home, alerts
    ("task.run.not_started", "not started"),
    ("task.run.running", "running"),
    ("task.run.waiting", "waiting for you"),
    ("task.run.finished", "finished"),
    ("task.run.failed", "failed"),
    ("task.run.failed_code", "failed (exit code {code})"),
    ("task.run.stopped", "stopped"),
    ("task.action.start", "Start"),
    ("task.action.stop", "Stop"),
    ("task.action.restart", "Restart"),
    ("task.action.resume", "Resume"),
    ("task.blocked.running", "the agent is running"),
    ("task.blocked.not_running", "the agent is not running"),
    ("task.blocked.never_started", "never started yet"),
    ("task.blocked.no_session", "no session id known"),
    ("task.control.label", "Agent controls"),
    ("task.control.prompt", "First prompt"),
    (
        "task.control.prompt_hint",
        "optional, for Start and Restart",
    ),
    ("tasks.field.cwd", "Working directory"),
    (
        "tasks.field.cwd_hint",
        "absolute path; default: the project's directory, else your home",
    ),
    ("tasks.field.project", "Project"),
    ("tasks.field.prompt", "Initial prompt"),
    (
        "tasks.field.prompt_hint",
        "sent when the agent starts now; otherwise type it at Start on the task page",
    ),
    ("tasks.field.start_now", "Start now"),
    ("tasks.no_project", "(none)"),
    ("tasks.project_plan", "task list"),
    (
        "tasks.start_failed",
        "Created, but the agent did not start:",
    ),
    ("tasks.empty", "No tasks yet."),
    (
        "tasks.empty_hint",
        "Create one above, or let an agent create them through MCP (create_task).",
    ),
    ("home.title", "Home"),
    ("home.active", "Running now"),
    (
        "home.nothing_running",
        "No agent is running and nothing waits for you.",
    ),
    ("home.connect", "Connect an agent in three steps"),
    ("home.step_url", "The MCP endpoint:"),
    (
        "home.step_token",
        "A token: the admin token file, whose path",
    ),
    (
        "home.step_token_more",
        "prints at start (secrets/admin.token in the data directory). Agents started from this page get their own token.",
    ),
    (
        "home.step_add",
        "Add the server to your agent, e.g. Claude Code:",
    ),
    (
        "home.step_tasks",
        "Or create a task and start its agent here:",
    ),
    ("home.copy", "Copy"),
    ("home.copied", "Copied"),
    ("home.copy_url", "Copy the MCP URL"),
    ("alerts.heading", "Alerts in this browser"),
    ("alerts.enable", "Enable browser notifications"),
    (
        "alerts.granted",
        "Notifications are on for new questions while this tab is in the background.",
    ),
    (
        "alerts.denied",
        "Notifications are blocked in this browser's site settings.",
    ),
    ("alerts.unsupported", "This browser has no notifications."),
    ("alerts.off", "Notifications are off."),
    ("alerts.sound", "Play a sound for new questions"),
    ("alerts.title", "Harness: an agent needs you"),
    ("alerts.body", "{n} question(s) waiting for your reply"),
    ("task.replaced", "replaced by a newer question"),
    ("task.reply_label", "The agent waits for your reply"),
    ("task.reply_send", "Send reply"),
    ("task.reply_sent", "Reply sent."),
    ("projects.add", "Add a project"),
    ("projects.added", "Project added:"),
    ("projects.field.name", "Name"),
    ("projects.field.path", "Directory"),
    ("projects.field.workspace", "Workspace"),
    ("nav.menu", "Menu"),
    ("projects.edit", "Edit"),
    ("projects.edit_named", "Edit {name}"),
    ("projects.edit_title", "Edit project {name}"),
    ("projects.save", "Save"),
    ("projects.cancel", "Cancel"),
    ("projects.saved", "Project saved:"),
    ("plan.runs", "Runs"),
    ("workbench.pending", "{n} pending event(s)"),
    ("workbench.oldest", "oldest"),
    ("workbench.state.IDLE", "idle"),
    ("workbench.state.BUSY", "busy"),
    ("workbench.state.DEGRADED", "degraded"),
    ("workbench.state.STOPPED", "stopped"),
    (
        "workbench.reason.not_running",
        "The Workbench terminal is not running.",
    ),
    (
        "workbench.reason.no_live_session",
        "Its execution is recorded as running but no live terminal session exists.",
    ),
    (
        "workbench.reason.processing_batch",
        "Processing a durable batch.",
    ),
    (
        "workbench.reason.turn_in_progress",
        "A turn is in progress.",
    ),
    (
        "workbench.reason.awaiting_dispatch",
        "Work is waiting to be typed in at its next turn end.",
    ),
    ("harness.from_children", "From child tasks"),
    (
        "harness.from_children_hint",
        "Show only messages of tasks derived from a parent task",
    ),
    ("term.connecting", "connecting…"),
    ("term.connected", "connected"),
    ("term.reconnecting", "reconnecting…"),
    ("term.exited", "exited (code {code})"),
    ("term.fullscreen", "Full screen"),
    ("term.exit_fullscreen", "Leave full screen"),
    ("term.leave_hint", "Shift+Esc leaves the terminal"),
    ("detail.open_task", "Open the task"),
    ("detail.open_terminal", "its terminal"),
    ("outbound.PENDING", "queued for the gateway"),
    ("outbound.SENDING", "sending through the gateway"),
    ("outbound.DELIVERED", "sent through the gateway"),
    (
        "outbound.SENT_UNVERIFIED",
        "maybe sent (no confirmation from the gateway); not sent again",
    ),
    ("outbound.FAILED", "sending failed; retried automatically"),
    ("outbound.DEAD", "sending gave up"),
    ("outbound.attempts", "attempts: {n}"),
    ("outbound.retry", "retry now"),
    ("outbound.mark", "mark as delivered"),
    ("settings.test", "send a test message"),
    ("settings.test_result", "Test message: {state}"),
    ("settings.downstream", "Platform (downstream)"),
    ("settings.gateways", "Gateways"),
    (
        "settings.gateways_help",
        "The gateway CLIs Harness runs to send messages: binary, profile and extra environment.",
    ),
    ("settings.cli_path", "CLI path"),
    ("settings.profile", "Profile"),
    ("settings.env", "Environment (NAME=value per line)"),
    ("settings.save_gateway", "Save"),
    ("settings.saved", "Saved."),
];

pub const ZH: &[(&str, &str)] = &[
    ("nav.skip", "跳到正文"),
    ("nav.label", "主导航"),
    ("nav.harness", "通知中心"),
    ("nav.tasks", "任务"),
    ("nav.settings", "设置"),
    ("nav.logout", "退出登录"),
    ("nav.language", "切换语言"),
    ("nav.pending_count", "{n} 个待回复"),
    ("common.loading", "加载中…"),
    ("common.not_found", "页面不存在。"),
    ("common.yes", "是"),
    ("common.no", "否"),
    (
        "home.lead",
        "让智能体无人值守地工作：受阻时停下等待，你一回答就立即继续。",
    ),
    ("home.pending", "{n} 个待回复的问题"),
    ("home.tasks", "{n} 个任务"),
    ("harness.title", "通知中心"),
    (
        "harness.subtitle",
        "智能体的所有提问、进度和回复。在这里回答，等待中的智能体会立即继续。",
    ),
    ("harness.views", "视图"),
    ("chip.pending", "待回复"),
    ("chip.answered", "已回复"),
    ("chip.all", "全部"),
    ("harness.search_label", "搜索任务、内容和回复"),
    ("harness.search_placeholder", "搜索任务、内容、回复…"),
    ("harness.search", "搜索"),
    (
        "harness.no_channel",
        "尚未配置通知渠道：问题只会显示在这里（仍然可以在此回答）。",
    ),
    ("harness.no_channel_link", "设置 → 通知"),
    (
        "harness.empty",
        "暂无内容。智能体向你提问时会出现在这里——首页介绍了如何连接智能体。",
    ),
    ("harness.rows_shown", "已显示 {n} 条"),
    ("harness.load_more", "加载更多"),
    ("harness.newest", "最新"),
    ("harness.end", "已到末尾"),
    ("harness.reply_label", "回复"),
    ("harness.reply_placeholder", "输入你的回答…"),
    ("harness.send_hint", "Ctrl/⌘ + Enter 发送"),
    ("harness.unknown_task", "未知任务"),
    ("harness.no_reply", "没有回复。"),
    ("col.workspace", "工作区"),
    ("col.project", "项目"),
    ("col.task", "任务"),
    ("col.content", "内容"),
    ("col.sent_at", "发送时间"),
    ("col.reply", "回复"),
    ("col.replied_at", "回复时间"),
    ("col.status", "状态"),
    ("col.actions", "操作"),
    ("badge.pending", "待回复"),
    ("badge.answered", "已回复"),
    ("badge.muted", "已静默"),
    ("kind.ask", "提问"),
    ("kind.notify", "进度"),
    ("action.send", "发送"),
    ("action.ignore", "忽略"),
    ("action.dismiss", "移除"),
    ("action.handle", "处理"),
    ("action.details", "详情"),
    ("action.close", "关闭"),
    ("detail.sent", "发送内容"),
    ("detail.reply", "回复"),
    ("delivery.delivered", "已输入终端 {time}"),
    ("delivery.queued", "等待输入终端"),
    ("delivery.waiting", "等待智能体结束当前回合"),
    ("delivery.resuming", "正在重新启动智能体"),
    ("delivery.writing", "正在输入终端"),
    ("delivery.failed", "失败：{reason}"),
    ("delivery.retry", "重试"),
    (
        "delivery.unverified",
        "无法确认是否送达（输入时服务器停止）",
    ),
    ("delivery.again", "再次发送"),
    ("delivery.mark", "标记为已送达"),
    ("delivery.inputs", "终端输入"),
    ("result.resumed", "已回复——任务已继续。"),
    ("result.already_running", "已回复——智能体本来就在运行。"),
    (
        "result.not_running",
        "已回复——当前没有运行中的智能体，启动时会收到回复。",
    ),
    ("result.deduped", "已经用相同内容回复过。"),
    ("result.ignored", "已忽略——该问题不再待回复。"),
    ("result.dismissed", "已移除。"),
    ("result.failed", "未完成："),
    ("time.just_now", "刚刚"),
    ("time.minutes", "{n} 分钟前"),
    ("time.hours", "{n} 小时前"),
    ("time.days", "{n} 天前"),
    ("tasks.title", "任务"),
    ("tasks.new", "新建任务"),
    ("tasks.field.title", "标题"),
    ("tasks.field.description", "描述"),
    ("tasks.field.command", "命令"),
    (
        "tasks.field.command_hint",
        "command：一行 shell 命令，用 sh -c 运行（首个提示为 $1）；claude/codex：代替默认程序（可选）",
    ),
    ("tasks.provider", "提供方"),
    ("tasks.parent", "父任务"),
    ("tasks.no_parent", "（无）"),
    ("tasks.create", "创建任务"),
    ("tasks.created_ok", "任务已创建："),
    ("tasks.unattended", "无人值守"),
    ("tasks.open_ask", "待回复问题"),
    ("tasks.created", "创建时间"),
    ("tasks.execution", "最近运行"),
    ("tasks.back", "← 全部任务"),
    ("tasks.not_found", "任务不存在"),
    ("tasks.terminal", "终端"),
    (
        "tasks.terminal_soon",
        "该任务智能体的实时终端：启动任务后显示，点击即可输入。",
    ),
    ("tasks.children", "子任务"),
    ("inbox.title", "来自子任务的收件箱"),
    ("inbox.empty", "还没有来自子任务的事件。"),
    ("inbox.batches", "已输入本任务的批次"),
    ("inbox.derive", "派生子任务："),
    ("inbox.derive_button", "派生"),
    ("workbench.col", "工作台"),
    ("workbench.create", "创建工作台"),
    ("tasks.timeline", "消息"),
    ("tasks.no_messages", "还没有消息。"),
    ("task.open_ask", "等待你回复"),
    ("task.status.todo", "待办"),
    ("task.status.in_progress", "进行中"),
    ("task.status.in_review", "审核中"),
    ("task.status.done", "已完成"),
    ("task.status.cancelled", "已取消"),
    ("settings.title", "设置"),
    ("settings.notifications", "通知"),
    (
        "settings.notifications_help",
        "智能体的问题通过这些渠道送达你。没有渠道时，问题会在通知中心等待。",
    ),
    ("settings.none", "尚未配置渠道。"),
    ("settings.add", "添加渠道"),
    ("settings.label", "名称"),
    ("settings.gateway", "网关"),
    ("settings.dest", "目标"),
    ("settings.scope", "范围"),
    ("settings.scope_unattended", "无人值守任务"),
    ("settings.scope_work", "全部工作"),
    ("settings.save", "添加"),
    ("settings.remove", "删除"),
    ("nav.projects", "项目"),
    ("projects.title", "项目"),
    (
        "projects.subtitle",
        "带任务清单（harness-tasks.json）的目录。在下方添加（或用 POST /api/projects {name, path}）。",
    ),
    ("projects.empty", "还没有项目。用上方的表单添加一个目录。"),
    ("projects.name", "名称"),
    ("projects.path", "目录"),
    ("projects.plan", "任务清单"),
    ("projects.back", "← 全部项目"),
    ("projects.not_found", "项目不存在"),
    ("plan.title", "任务清单"),
    ("plan.missing", "这里还没有任务清单。创建方法："),
    ("plan.no_tasks", "任务清单是空的。用 harness add 添加任务。"),
    ("plan.tree", "按依赖排列的任务"),
    ("plan.status.pending", "待开始"),
    ("plan.status.in_progress", "进行中"),
    ("plan.status.completed", "已完成"),
    ("plan.status.failed", "失败"),
    ("plan.blocked", "受阻"),
    ("plan.gave_up", "已放弃"),
    ("plan.needs_human", "需要你处理"),
    ("plan.retryable", "将重试"),
    ("plan.total", "共"),
    ("plan.next", "下一个"),
    ("plan.sessions", "会话"),
    ("plan.mode", "模式"),
    ("plan.mode_exclusive", "独占"),
    ("plan.mode_concurrent", "并发"),
    ("plan.active", "循环进行中"),
    ("plan.priority", "优先级"),
    ("plan.attempts", "尝试次数"),
    ("plan.last_error", "最近错误"),
    ("plan.dependencies", "依赖"),
    ("plan.claim", "认领者"),
    ("plan.blocked_by", "受阻于"),
    ("plan.waiting_on", "等待"),
    ("plan.also_after", "还依赖"),
    ("plan.lease_until", "租约至"),
    ("plan.checkpoints", "{n} 个检查点"),
    ("plan.log", "进度日志"),
    (
        "plan.log_hint",
        "harness-progress.txt 的最后 50 行，最新的在最后；每 2 秒更新。",
    ),
    ("plan.log_empty", "进度日志是空的。"),
    ("nav.analytics", "统计"),
    ("analytics.title", "智能体等你多久"),
    (
        "analytics.lead",
        "最近 7 天的提问，以及所有仍未回答的提问。",
    ),
    ("analytics.response", "回答用时"),
    ("analytics.parked", "智能体因提问而暂停"),
    ("analytics.last_24h", "最近 24 小时："),
    ("analytics.last_7d", "最近 7 天："),
    (
        "analytics.percentiles",
        "中位数 {p50}，90% 在 {p90} 内（已回答 {n} 个）",
    ),
    ("analytics.no_answers", "没有已回答的提问"),
    ("analytics.per_project", "各项目的提问数（7 天）"),
    ("analytics.unanswered", "未回答提问的等待时长"),
    ("analytics.no_project", "（无项目）"),
    ("analytics.no_questions", "最近 7 天没有提问。"),
    ("analytics.age.lt1h", "1 小时内"),
    ("analytics.age.h1to6", "1–6 小时"),
    ("analytics.age.h6to24", "6–24 小时"),
    ("analytics.age.d1to7", "1–7 天"),
    ("analytics.age.gt7d", "超过 7 天"),
    ("choices.default", "默认"),
    ("choices.default_in", "{n} 后采用默认"),
    ("choices.deadline_in", "请在 {n} 内回答"),
    ("choices.default_due", "已过期限：正在采用默认"),
    ("choices.deadline_passed", "已过期限"),
    ("choices.keys_hint", "按 1–8 选择选项；也可以直接写回答。"),
    ("choices.label", "选项"),
    ("choices.by_default", "期限已过，采用默认"),
    // issue 15: task control, form, home, alerts
    ("task.run.not_started", "未启动"),
    ("task.run.running", "运行中"),
    ("task.run.waiting", "等待你回复"),
    ("task.run.finished", "已结束"),
    ("task.run.failed", "失败"),
    ("task.run.failed_code", "失败（退出码 {code}）"),
    ("task.run.stopped", "已停止"),
    ("task.action.start", "启动"),
    ("task.action.stop", "停止"),
    ("task.action.restart", "重启"),
    ("task.action.resume", "恢复会话"),
    ("task.blocked.running", "智能体正在运行"),
    ("task.blocked.not_running", "智能体未在运行"),
    ("task.blocked.never_started", "尚未启动过"),
    ("task.blocked.no_session", "没有已知的会话 ID"),
    ("task.control.label", "智能体控制"),
    ("task.control.prompt", "首个提示"),
    ("task.control.prompt_hint", "可选，用于启动和重启"),
    ("tasks.field.cwd", "工作目录"),
    (
        "tasks.field.cwd_hint",
        "绝对路径；默认：项目目录，否则为你的主目录",
    ),
    ("tasks.field.project", "项目"),
    ("tasks.field.prompt", "初始提示"),
    (
        "tasks.field.prompt_hint",
        "立即启动时发送；否则在任务页点“启动”时输入",
    ),
    ("tasks.field.start_now", "立即启动"),
    ("tasks.no_project", "（无）"),
    ("tasks.project_plan", "任务清单"),
    ("tasks.start_failed", "已创建，但智能体未能启动："),
    ("tasks.empty", "还没有任务。"),
    (
        "tasks.empty_hint",
        "在上方创建，或让智能体通过 MCP（create_task）创建。",
    ),
    ("home.title", "首页"),
    ("home.active", "正在运行"),
    (
        "home.nothing_running",
        "没有正在运行的智能体，也没有等你回复的问题。",
    ),
    ("home.connect", "三步连接一个智能体"),
    ("home.step_url", "MCP 端点："),
    ("home.step_token", "令牌：管理员令牌文件，其路径由"),
    (
        "home.step_token_more",
        "启动时打印（数据目录下的 secrets/admin.token）。从本页启动的智能体会获得自己的令牌。",
    ),
    (
        "home.step_add",
        "把服务器加入你的智能体，例如 Claude Code：",
    ),
    ("home.step_tasks", "或者创建任务并在这里启动它的智能体："),
    ("home.copy", "复制"),
    ("home.copied", "已复制"),
    ("home.copy_url", "复制 MCP 地址"),
    ("alerts.heading", "本浏览器中的提醒"),
    ("alerts.enable", "开启浏览器通知"),
    ("alerts.granted", "此标签页在后台时，新问题会以通知提醒。"),
    ("alerts.denied", "通知已在本浏览器的网站设置中被阻止。"),
    ("alerts.unsupported", "此浏览器不支持通知。"),
    ("alerts.off", "通知未开启。"),
    ("alerts.sound", "新问题时播放提示音"),
    ("alerts.title", "Harness：有智能体在等你"),
    ("alerts.body", "{n} 个问题等待你回复"),
    ("task.replaced", "已被更新的问题取代"),
    ("task.reply_label", "智能体正在等你回复"),
    ("task.reply_send", "发送回复"),
    ("task.reply_sent", "回复已发送。"),
    ("projects.add", "添加项目"),
    ("projects.added", "项目已添加："),
    ("projects.field.name", "名称"),
    ("projects.field.path", "目录"),
    ("projects.field.workspace", "工作区"),
    ("nav.menu", "菜单"),
    ("projects.edit", "编辑"),
    ("projects.edit_named", "编辑 {name}"),
    ("projects.edit_title", "编辑项目 {name}"),
    ("projects.save", "保存"),
    ("projects.cancel", "取消"),
    ("projects.saved", "项目已保存："),
    ("plan.runs", "运行"),
    ("workbench.pending", "{n} 个待处理事件"),
    ("workbench.oldest", "最早"),
    ("workbench.state.IDLE", "空闲"),
    ("workbench.state.BUSY", "忙碌"),
    ("workbench.state.DEGRADED", "异常"),
    ("workbench.state.STOPPED", "已停止"),
    ("workbench.reason.not_running", "工作台终端未运行。"),
    (
        "workbench.reason.no_live_session",
        "执行记录为运行中，但没有活动的终端会话。",
    ),
    (
        "workbench.reason.processing_batch",
        "正在处理一个持久批次。",
    ),
    ("workbench.reason.turn_in_progress", "当前轮次进行中。"),
    (
        "workbench.reason.awaiting_dispatch",
        "有工作等待在下一轮结束时输入。",
    ),
    ("harness.from_children", "来自子任务"),
    (
        "harness.from_children_hint",
        "只显示由父任务派生的子任务的消息",
    ),
    ("term.connecting", "连接中…"),
    ("term.connected", "已连接"),
    ("term.reconnecting", "重新连接中…"),
    ("term.exited", "已退出（退出码 {code}）"),
    ("term.fullscreen", "全屏"),
    ("term.exit_fullscreen", "退出全屏"),
    ("term.leave_hint", "Shift+Esc 离开终端"),
    ("detail.open_task", "打开任务"),
    ("detail.open_terminal", "它的终端"),
    ("outbound.PENDING", "等待网关发送"),
    ("outbound.SENDING", "正在通过网关发送"),
    ("outbound.DELIVERED", "已通过网关发送"),
    (
        "outbound.SENT_UNVERIFIED",
        "可能已发送（网关未确认），不会重发",
    ),
    ("outbound.FAILED", "发送失败，将自动重试"),
    ("outbound.DEAD", "已放弃发送"),
    ("outbound.attempts", "尝试次数：{n}"),
    ("outbound.retry", "立即重试"),
    ("outbound.mark", "标记为已送达"),
    ("settings.test", "发送测试消息"),
    ("settings.test_result", "测试消息：{state}"),
    ("settings.downstream", "平台（downstream）"),
    ("settings.gateways", "网关"),
    (
        "settings.gateways_help",
        "Harness 用来发送消息的网关命令行：程序、配置档和额外环境变量。",
    ),
    ("settings.cli_path", "命令行路径"),
    ("settings.profile", "配置档"),
    ("settings.env", "环境变量（每行 NAME=value）"),
    ("settings.save_gateway", "保存"),
    ("settings.saved", "已保存。"),
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    const NAMESPACES: &[&str] = &[
        "action",
        "analytics",
        "badge",
        "chip",
        "choices",
        "col",
        "common",
        "detail",
        "harness",
        "home",
        "kind",
        "nav",
        "plan",
        "projects",
        "result",
        "settings",
        "task",
        "tasks",
        "time",
    ];

    fn keys(table: &[(&str, &str)]) -> BTreeSet<&'static str> {
        table
            .iter()
            .map(|(k, _)| *k)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|k| -> &'static str {
                // All keys are 'static literals in this file.
                EN.iter()
                    .chain(ZH)
                    .find(|(x, _)| *x == k)
                    .map(|(x, _)| *x)
                    .unwrap_or("")
            })
            .collect()
    }

    #[test]
    fn both_languages_have_the_same_keys_and_no_empty_or_duplicate_text() {
        assert_eq!(keys(EN), keys(ZH));
        assert_eq!(keys(EN).len(), EN.len(), "duplicate key in EN");
        assert_eq!(keys(ZH).len(), ZH.len(), "duplicate key in ZH");
        for (k, v) in EN.iter().chain(ZH) {
            assert!(!v.trim().is_empty(), "empty text for {k}");
        }
        for (k, en) in EN {
            let zh = Locale::Zh.t(k);
            assert_eq!(
                en.contains("{n}"),
                zh.contains("{n}"),
                "placeholder mismatch for {k}"
            );
        }
    }

    /// Every key literal in the sources exists in the tables.
    #[test]
    fn every_key_used_in_the_sources_is_translated() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![root];
        let mut used = BTreeSet::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("i18n.rs")
                {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for lit in text.split('"').skip(1).step_by(2) {
                        let Some((ns, rest)) = lit.split_once('.') else {
                            continue;
                        };
                        if NAMESPACES.contains(&ns)
                            && !rest.is_empty()
                            && lit
                                .chars()
                                .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_')
                        {
                            used.insert(lit.to_string());
                        }
                    }
                }
            }
        }
        assert!(used.len() > 50, "key scan found too little: {used:?}");
        let en = keys(EN);
        let missing: Vec<_> = used.iter().filter(|k| !en.contains(k.as_str())).collect();
        assert!(missing.is_empty(), "untranslated keys: {missing:?}");
    }

    #[test]
    fn language_choice() {
        assert_eq!(Locale::choose(None, None), Locale::En);
        assert_eq!(
            Locale::choose(None, Some("zh-CN,zh;q=0.9,en;q=0.8")),
            Locale::Zh
        );
        assert_eq!(Locale::choose(None, Some("en-US,en;q=0.9")), Locale::En);
        assert_eq!(
            Locale::choose(None, Some("fr, en;q=0.5, zh;q=0.8")),
            Locale::Zh
        );
        assert_eq!(
            Locale::choose(Some("a=b; harness_lang=en"), Some("zh-CN")),
            Locale::En
        );
        assert_eq!(Locale::choose(Some("harness_lang=zh"), None), Locale::Zh);
        assert_eq!(
            Locale::choose(Some("harness_lang=xx"), Some("de")),
            Locale::En
        );
        assert_eq!(Locale::Zh.t("col.task"), "任务");
    }
}
