//! What the validation enforces on each request body and parameter, stated
//! in the document from the core's constants (`rules.rs` says why here and
//! not in `#[schema]` attributes). A generated request that fits the
//! document then gets past the validation; `tests/openapi_constraints.rs`
//! lists every constraint with the constant it comes from, so a literal or
//! an unlisted one fails.
//!
//! Shapes (types, enums of the core's Rust enums) stay with the types'
//! `ToSchema`; this file adds the limits, patterns, word lists and
//! required fields that the types alone cannot say.

use harness_core::{
    agent_actions::policy as recovery,
    approvals::{self, policy},
    gateway::{access, context, continuation, route_input, workbench_callbacks as cb},
    options, outbox,
    outbox::destination_edits as dest,
    outbox::platforms,
    report::daily,
    settings, validate,
};
use serde_json::json;

use super::rules::{
    NO_CONTROL, NO_NUL, NON_BLANK, NON_BLANK_NO_NUL, Rule, and, both, cuid, is, one_of, optional,
    present, text,
};

/// The gateways (`hermes`, `openclaw`).
pub const GATEWAYS: &[&str] = &["hermes", "openclaw"];
/// A notify target's or a message's scope.
pub const SCOPES: &[&str] = &["work", "unattended"];
/// A notify target's language (`NotifyTarget::language`).
pub const LANGUAGES: &[&str] = &["en", "zh"];
/// A person's decision on an approval.
pub const DECISIONS: &[&str] = &["approve", "deny"];
/// The audit's formats.
pub const FORMATS: &[&str] = &["json", "csv"];
/// A routed gateway message's intent (`DIRECT` is refused).
pub const INTENTS: &[&str] = &["TOWER", "PROJECT_DISCUSSION", "PROJECT_WORK"];
/// What a routed message does to its chat's session.
pub const SESSION_ACTIONS: &[&str] = &["CONTINUE", "NEW", "CLOSE"];
/// `manage_gateway_channel_access`'s actions.
pub const ACCESS_ACTIONS: &[&str] = &[
    "authorize",
    "bind_workspace",
    "bind_projects",
    "unbind",
    "revoke",
    "get",
];
/// The Workbench callbacks (`PUT /api/internal/harness/gateway`).
pub const CALLBACK_ACTIONS: &[&str] = &["task_created", "discussion", "final"];
/// Which messages the notification center lists.
pub const FROM: &[&str] = &["children", "all"];
/// A Workbench batch's transitions.
pub const BATCH_ACTIONS: &[&str] = &["ack", "heartbeat", "resolve"];
/// A destination a platform can take: something alphanumeric
/// (`platforms::plausible_dest`, here in ASCII).
pub const DEST: &str = "[A-Za-z0-9]";
/// A rule's tool: non-blank alternatives separated by `|`.
pub const TOOL_GLOB: &str = r"^[^|]*\S[^|]*(\|[^|]*\S[^|]*)*$";
/// A project directory: absolute (`validate::project_dir`; that it exists
/// no schema can say), without a NUL character.
pub const ABSOLUTE_PATH: &str = r"^\s*/[^\u0000]*$";
/// A node id (`validate::is_node_id`).
pub const NODE_ID: &str = r"^[A-Za-z0-9_-]+$";

/// A required gateway text: non-blank, no NUL, at most `max`.
fn gateway_text(max: usize) -> Vec<Rule> {
    and(text(max), [Rule::Pattern(NON_BLANK_NO_NUL)])
}

/// An optional gateway text: no NUL, at most `max`.
fn gateway_optional(max: usize) -> Vec<Rule> {
    and(optional(max), [Rule::Pattern(NO_NUL)])
}

/// An optional CUID.
fn maybe_cuid() -> Vec<Rule> {
    vec![Rule::Cuid]
}

/// `(component schema, field, rules)`: a field is `name`, `name[]` (its
/// items) or `name{}` (its map values).
pub fn bodies() -> Vec<(&'static str, &'static str, Vec<Rule>)> {
    let id = context::MAX_ID_CHARS;
    let platform = context::MAX_PLATFORM_CHARS;
    let mut out = vec![
        // Projects and tasks.
        ("CreateProject", "name", text(validate::MAX_NAME_CHARS)),
        (
            "CreateProject",
            "path",
            and(
                text(validate::MAX_PATH_CHARS),
                [Rule::Pattern(ABSOLUTE_PATH)],
            ),
        ),
        (
            "CreateProject",
            "workspace",
            optional(validate::MAX_NAME_CHARS),
        ),
        (
            "UpdateProject",
            "name",
            and(
                optional(validate::MAX_NAME_CHARS),
                [Rule::MinLength(1), Rule::Pattern(NON_BLANK)],
            ),
        ),
        (
            "UpdateProject",
            "path",
            and(
                optional(validate::MAX_PATH_CHARS),
                [Rule::MinLength(1), Rule::Pattern(ABSOLUTE_PATH)],
            ),
        ),
        ("CreateTask", "title", text(validate::MAX_TITLE_CHARS)),
        (
            "CreateTask",
            "description",
            optional(validate::MAX_DESCRIPTION_CHARS),
        ),
        ("CreateTask", "projectId", maybe_cuid()),
        ("CreateTask", "parentTaskId", maybe_cuid()),
        ("AgentInput", "cwd", optional(validate::MAX_PATH_CHARS)),
        ("StartBody", "prompt", optional(validate::MAX_PROMPT_CHARS)),
        (
            "InputBody",
            "text",
            and(text(validate::MAX_TERMINAL_INPUT_CHARS), []),
        ),
        (
            "InputBody",
            "idempotencyKey",
            vec![
                Rule::MinLength(1),
                Rule::MaxLength(validate::MAX_INPUT_KEY_CHARS),
            ],
        ),
        ("Unattended", "on", vec![Rule::Required]),
        // The automatic recovery's settings (a global policy, a project's
        // or a task's override).
        (
            "RecoveryOverride",
            "usageLimitWaitSecs",
            vec![Rule::Range(60, recovery::MAX_WAIT_SECS as i64)],
        ),
        (
            "RecoveryOverride",
            "usageLimitMarginSecs",
            vec![Rule::Range(0, recovery::MAX_WAIT_SECS as i64)],
        ),
        (
            "RecoveryOverride",
            "selfWaitCheckSecs",
            vec![Rule::Range(0, recovery::MAX_WAIT_SECS as i64)],
        ),
        (
            "RecoveryOverride",
            "apiErrorBackoffSecs",
            vec![Rule::Range(1, recovery::MAX_WAIT_SECS as i64)],
        ),
        (
            "RecoveryOverride",
            "crashRestartDelaySecs",
            vec![Rule::Range(0, recovery::MAX_WAIT_SECS as i64)],
        ),
        (
            "RecoveryOverride",
            "apiErrorMaxPerHour",
            vec![Rule::Range(0, i64::from(recovery::MAX_PER_HOUR))],
        ),
        (
            "RecoveryOverride",
            "crashMaxPerHour",
            vec![Rule::Range(0, i64::from(recovery::MAX_PER_HOUR))],
        ),
        (
            "RecoveryOverride",
            "stalledNudge",
            vec![
                Rule::MaxLength(recovery::MAX_NUDGE_CHARS),
                Rule::Pattern(NO_CONTROL),
            ],
        ),
        // The agent's messaging API.
        ("AskBody", "taskId", cuid()),
        ("AskBody", "question", text(validate::MAX_QUESTION_CHARS)),
        (
            "AskBody",
            "idempotencyKey",
            and(
                optional(validate::MAX_IDEMPOTENCY_KEY_CHARS),
                [Rule::Pattern(NO_CONTROL)],
            ),
        ),
        (
            "AskOption",
            "label",
            vec![
                Rule::Required,
                Rule::MinLength(1),
                Rule::MaxLength(options::MAX_LABEL_CHARS),
                Rule::Pattern(NON_BLANK),
            ],
        ),
        (
            "AskOption",
            "description",
            optional(options::MAX_OPTION_DESCRIPTION_CHARS),
        ),
        (
            "ChoicesInput",
            "options",
            vec![Rule::MaxItems(options::MAX_OPTIONS), Rule::UniqueItems],
        ),
        (
            "ChoicesInput",
            "deadline",
            // Seconds from now. The validation also takes an RFC 3339 time
            // as far from now; a time relative to the request is beyond a
            // schema, so the document states the seconds only.
            vec![Rule::AnyOf(vec![
                json!({"type": "integer", "minimum": options::MIN_DEADLINE_SECS}),
                json!({"type": "null"}),
            ])],
        ),
        // A multi-select question has options to pick several of.
        (
            "ChoicesInput",
            "",
            vec![Rule::AnyOf(vec![
                json!({"properties": {"multiSelect": {"enum": [false, null]}}}),
                json!({"required": ["options"], "properties": {"options": {"type": "array", "minItems": options::MIN_MULTI_SELECT_OPTIONS}}}),
            ])],
        ),
        ("NotifyBody", "taskId", cuid()),
        ("NotifyBody", "message", text(validate::MAX_NOTIFY_CHARS)),
        ("ReplyBody", "taskId", cuid()),
        ("ReplyBody", "text", text(validate::MAX_REPLY_CHARS)),
        (
            "ReplyBody",
            "senderId",
            optional(validate::MAX_SENDER_ID_CHARS),
        ),
        ("ReplyBody", "requestId", maybe_cuid()),
        ("SessionBody", "taskId", cuid()),
        ("StopBody", "taskId", cuid()),
        ("StopBody", "executionId", maybe_cuid()),
        ("CheckBody", "taskId", cuid()),
        ("RanBody", "taskId", cuid()),
        (
            "ToolCall",
            "tool",
            text(approvals::flow::MAX_CALL_TOOL_CHARS),
        ),
        ("PushInput", "taskId", cuid()),
        ("PushInput", "message", text(outbox::MAX_PUSH_CHARS)),
        ("PushInput", "to", optional(outbox::MAX_TO_CHARS)),
        ("PushInput", "requestedTo", optional(outbox::MAX_TO_CHARS)),
        (
            "PushInput",
            "dedupKey",
            optional(outbox::MAX_DEDUP_KEY_CHARS),
        ),
        ("PushInput", "scope", vec![Rule::OneOf(SCOPES)]),
        ("PushInput", "gateway", vec![Rule::OneOf(GATEWAYS)]),
        (
            "PushInput",
            "downstream",
            optional(outbox::MAX_DOWNSTREAM_CHARS),
        ),
        ("PushInput", "dest", optional(outbox::MAX_DEST_CHARS)),
        ("PushInput", "profile", optional(outbox::MAX_PROFILE_CHARS)),
        // Approvals.
        ("DecideBody", "decision", one_of(DECISIONS)),
        (
            "DecideBody",
            "reason",
            optional(approvals::MAX_REASON_CHARS),
        ),
        ("Policy", "rules", vec![Rule::MaxItems(policy::MAX_RULES)]),
        (
            "Rule",
            "tool",
            vec![
                Rule::MaxLength(policy::MAX_TOOL_CHARS),
                Rule::Pattern(TOOL_GLOB),
            ],
        ),
        (
            "Rule",
            "pattern",
            and(
                optional(policy::MAX_PATTERN_CHARS),
                [Rule::MinLength(1), Rule::Pattern(NON_BLANK)],
            ),
        ),
        ("Rule", "note", optional(policy::MAX_NOTE_CHARS)),
        // Settings.
        ("NotifyTarget", "gateway", vec![Rule::OneOf(GATEWAYS)]),
        ("NotifyTarget", "scope", vec![Rule::OneOf(SCOPES)]),
        ("NotifyTarget", "label", optional(validate::MAX_NAME_CHARS)),
        (
            "NotifyTarget",
            "downstream",
            optional(outbox::MAX_DOWNSTREAM_CHARS),
        ),
        ("NotifyTarget", "dest", optional(outbox::MAX_DEST_CHARS)),
        (
            "NotifyTarget",
            "profile",
            optional(outbox::MAX_PROFILE_CHARS),
        ),
        (
            "NotifyTarget",
            "reportAt",
            vec![Rule::Pattern(daily::TIME_PATTERN)],
        ),
        (
            "NotifyTarget",
            "reportTimeZone",
            optional(daily::MAX_ZONE_CHARS),
        ),
        ("NotifyTarget", "language", vec![Rule::OneOf(LANGUAGES)]),
        (
            "Targets",
            "targets",
            vec![Rule::MaxItems(settings::MAX_TARGETS)],
        ),
        ("Destination", "alias", optional(dest::MAX_ALIAS_CHARS)),
        ("Destination", "label", optional(dest::MAX_LABEL_CHARS)),
        ("Destination", "gateway", vec![Rule::OneOf(GATEWAYS)]),
        (
            "Destination",
            "platform",
            optional(dest::MAX_PLATFORM_CHARS),
        ),
        ("Destination", "scope", vec![Rule::OneOf(SCOPES)]),
        ("Destination", "dest", text(outbox::MAX_DEST_CHARS)),
        (
            "DestinationsBody",
            "destinations",
            vec![Rule::MaxItems(outbox::destination::MAX_DESTINATIONS)],
        ),
        // The gateway API.
        ("TaskContextInput", "gateway", one_of(GATEWAYS)),
        ("TaskContextInput", "platform", gateway_text(platform)),
        ("TaskContextInput", "chatId", gateway_text(id)),
        ("TaskContextInput", "replyToMessageId", gateway_optional(id)),
        (
            "TaskContextInput",
            "quotedText",
            gateway_optional(context::MAX_QUOTED_CHARS),
        ),
        ("TaskContextInput", "taskId", maybe_cuid()),
        ("ContinueInput", "gateway", one_of(GATEWAYS)),
        ("ContinueInput", "platform", gateway_text(platform)),
        ("ContinueInput", "chatId", gateway_text(id)),
        ("ContinueInput", "platformMessageId", gateway_text(id)),
        ("ContinueInput", "senderId", gateway_optional(id)),
        ("ContinueInput", "replyToMessageId", gateway_optional(id)),
        (
            "ContinueInput",
            "quotedText",
            gateway_optional(context::MAX_QUOTED_CHARS),
        ),
        ("ContinueInput", "taskId", maybe_cuid()),
        (
            "ContinueInput",
            "content",
            gateway_text(continuation::MAX_CONTENT_CHARS),
        ),
        ("RouteInput", "gateway", one_of(GATEWAYS)),
        ("RouteInput", "platform", gateway_text(platform)),
        ("RouteInput", "chatId", gateway_text(id)),
        ("RouteInput", "platformMessageId", gateway_text(id)),
        ("RouteInput", "senderId", gateway_optional(id)),
        (
            "RouteInput",
            "chatName",
            gateway_optional(route_input::MAX_CHAT_NAME_CHARS),
        ),
        ("RouteInput", "threadId", gateway_optional(id)),
        ("RouteInput", "rootMessageId", gateway_optional(id)),
        ("RouteInput", "replyToMessageId", gateway_optional(id)),
        (
            "RouteInput",
            "quotedText",
            gateway_optional(context::MAX_QUOTED_CHARS),
        ),
        ("RouteInput", "taskId", maybe_cuid()),
        ("RouteInput", "project", gateway_optional(id)),
        ("RouteInput", "intent", one_of(INTENTS)),
        (
            "RouteInput",
            "content",
            gateway_text(route_input::MAX_CONTENT_CHARS),
        ),
        (
            "RouteInput",
            "sessionAction",
            vec![Rule::OneOf(SESSION_ACTIONS)],
        ),
        ("QueryInput", "gateway", one_of(GATEWAYS)),
        ("QueryInput", "platform", gateway_text(platform)),
        ("QueryInput", "chatId", gateway_text(id)),
        ("QueryInput", "senderId", gateway_optional(id)),
        ("QueryInput", "project", gateway_optional(id)),
        (
            "QueryInput",
            "question",
            gateway_text(route_input::MAX_QUESTION_CHARS),
        ),
        ("AccessInput", "action", one_of(ACCESS_ACTIONS)),
        ("AccessInput", "gatewayInboundId", cuid()),
        (
            "AccessInput",
            "workspace",
            gateway_optional(access::MAX_QUERY_CHARS),
        ),
        (
            "AccessInput",
            "projects",
            vec![Rule::MaxItems(access::MAX_PROJECTS)],
        ),
        (
            "AccessInput",
            "projects[]",
            gateway_text(access::MAX_QUERY_CHARS),
        ),
        (
            "AccessInput",
            "chatName",
            gateway_optional(access::MAX_CHAT_NAME_CHARS),
        ),
        ("CallbackInput", "action", one_of(CALLBACK_ACTIONS)),
        ("CallbackInput", "inboundId", cuid()),
        ("CallbackInput", "taskId", maybe_cuid()),
        (
            "CallbackInput",
            "response",
            gateway_optional(cb::MAX_RESPONSE_CHARS),
        ),
        (
            "CallbackInput",
            "resultSummary",
            gateway_optional(cb::MAX_SUMMARY_CHARS),
        ),
        ("CallbackInput", "reviewerTaskId", maybe_cuid()),
        ("CompletionInput", "inboundId", cuid()),
        (
            "BatchBody",
            "batchId",
            and(cuid(), [Rule::MaxLength(validate::MAX_BATCH_ARG_CHARS)]),
        ),
        (
            "BatchBody",
            "leaseToken",
            text(validate::MAX_BATCH_ARG_CHARS),
        ),
        ("BatchBody", "parentTaskId", cuid()),
        ("DrainInput", "draining", vec![Rule::Required]),
        ("BatchBody", "action", one_of(BATCH_ACTIONS)),
        (
            "SessionBody",
            "sessionId",
            text(harness_core::tasks::MAX_SESSION_ID_CHARS),
        ),
        (
            "NotifyTargetEntry",
            "downstream",
            vec![Rule::OneOf(platforms::PLATFORMS)],
        ),
        ("NotifyTargetEntry", "dest", vec![Rule::Pattern(DEST)]),
        // Between fields: OpenClaw names its platform, Hermes its platform
        // or a destination; a work target has a destination.
        (
            "NotifyTargetEntry",
            "",
            vec![
                Rule::AnyOf(vec![
                    present("downstream"),
                    both(is("gateway", &["hermes"]), present("dest")),
                ]),
                Rule::AnyOf(vec![
                    json!({"properties": {"scope": {"enum": ["unattended"]}}}),
                    present("dest"),
                ]),
            ],
        ),
        // The discussion's answer, or the task of the other two.
        (
            "CallbackInput",
            "",
            vec![Rule::AnyOf(vec![
                both(is("action", &["discussion"]), present("response")),
                both(
                    is("action", &["task_created", "final"]),
                    json!({"required": ["taskId"], "properties": {"taskId": {"type": "string"}}}),
                ),
            ])],
        ),
        (
            "TaskContextInput",
            "",
            vec![Rule::AnyOf(vec![
                present("replyToMessageId"),
                present("quotedText"),
                present("taskId"),
            ])],
        ),
        (
            "ContinueInput",
            "",
            vec![Rule::AnyOf(vec![
                present("replyToMessageId"),
                present("quotedText"),
                present("taskId"),
            ])],
        ),
    ];
    // One target added or edited keeps the list's rules too.
    let list: Vec<_> = out
        .iter()
        .filter(|(schema, _, _)| *schema == "NotifyTarget")
        .map(|(_, field, rules)| ("NotifyTargetEntry", *field, rules.clone()))
        .collect();
    out.extend(list);
    out.sort_by_key(|(schema, field, _)| (*schema, *field));
    out
}

/// `(schema, new schema, the operations (method, path) whose body it is)`.
pub type Derived = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// `(schema, new schema, operations)`: operations whose validation of a
/// body is stricter than that of the type's other uses get a copy of its
/// schema, for the table to add the stricter rules to. One target added or
/// edited at a time is checked by `target_edits::check_one` (a known
/// platform, a plausible destination, what each gateway and scope needs);
/// the list written whole and the answers keep the list's rules.
pub fn derived() -> Vec<Derived> {
    vec![(
        "NotifyTarget",
        "NotifyTargetEntry",
        &[
            ("post", "/api/settings/notify-targets/add"),
            ("put", "/api/settings/notify-targets/{id}"),
        ],
    )]
}

/// The CUID path parameters: every `{id}` and `{task_id}` but a node's,
/// a destination's and a notify target's.
pub(super) fn cuid_path(path: &str) -> bool {
    !path.starts_with("/api/nodes/") && !path.starts_with("/api/settings/")
}

/// `(method, path, parameter, rules)` for the parameters not covered by
/// [`cuid_path`].
pub fn params() -> Vec<(&'static str, &'static str, &'static str, Vec<Rule>)> {
    let node = vec![
        Rule::MinLength(1),
        Rule::MaxLength(validate::MAX_NODE_ID_CHARS),
        Rule::Pattern(NODE_ID),
    ];
    vec![
        ("get", "/api/nodes/{id}", "id", node.clone()),
        ("patch", "/api/nodes/{id}", "id", node),
        ("get", "/api/report", "lang", vec![Rule::OneOf(LANGUAGES)]),
        (
            "post",
            "/api/report/{id}/reply",
            "lang",
            vec![Rule::OneOf(LANGUAGES)],
        ),
        ("get", "/api/approvals", "taskId", maybe_cuid()),
        ("get", "/api/approvals", "before", maybe_cuid()),
        (
            "get",
            "/api/approvals",
            "limit",
            vec![Rule::Range(1, i64::from(approvals::MAX_LIST_LIMIT))],
        ),
        (
            "get",
            "/api/approvals",
            "format",
            vec![Rule::OneOf(FORMATS)],
        ),
        (
            "get",
            "/api/internal/harness/pending",
            "taskId",
            maybe_cuid(),
        ),
        ("get", "/api/harness/messages", "taskId", maybe_cuid()),
        (
            "get",
            "/api/harness/messages",
            "limit",
            vec![Rule::Range(
                1,
                i64::from(harness_core::messaging::MAX_PAGE_ROWS),
            )],
        ),
        (
            "get",
            "/api/harness/messages",
            "from",
            vec![Rule::OneOf(FROM)],
        ),
        (
            "get",
            "/api/projects/{id}/plan",
            "lines",
            vec![Rule::Range(1, super::super::MAX_PLAN_LOG_LINES as i64)],
        ),
        (
            "get",
            "/api/internal/harness/delivery-map",
            "gateway",
            one_of(GATEWAYS),
        ),
        (
            "get",
            "/api/internal/harness/delivery-map",
            "platform",
            gateway_text(context::MAX_PLATFORM_CHARS),
        ),
        (
            "get",
            "/api/internal/harness/delivery-map",
            "chatId",
            gateway_text(context::MAX_ID_CHARS),
        ),
    ]
}
