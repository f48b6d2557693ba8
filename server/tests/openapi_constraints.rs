//! The OpenAPI document states what the validation enforces, from the
//! core's constants: every length, count, bound, pattern and word list of
//! every schema and parameter is listed here with the constant it comes
//! from, so a literal, a stale or an unlisted constraint fails.

use std::collections::BTreeMap;

use harness_core::{
    agent_actions::policy as recovery,
    approvals::{self, flow, policy},
    gateway::{access, context, continuation, route_input, workbench_callbacks as cb},
    ids, messaging, options, outbox,
    outbox::{destination, destination_edits as dest, platforms},
    report, settings, validate,
};
use harness_server::routes::{constraints as c, openapi_rules::*};
use serde_json::{Value, json};

/// The keywords that constrain a value beyond its type.
const KEYWORDS: [&str; 9] = [
    "uniqueItems",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maximum",
    "minimum",
    "pattern",
    "enum",
];

fn walk(at: &str, schema: &Value, out: &mut BTreeMap<String, Value>) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map {
        match key.as_str() {
            // utoipa writes `minimum: 0` for every unsigned integer: the
            // type's, not a rule's.
            "minimum" if *value == json!(0) => {}
            k if KEYWORDS.contains(&k) => {
                out.insert(format!("{at} {k}"), value.clone());
            }
            "properties" => {
                for (name, field) in value.as_object().into_iter().flatten() {
                    walk(&format!("{at}.{name}"), field, out);
                }
            }
            "items" => walk(&format!("{at}[]"), value, out),
            "additionalProperties" => walk(&format!("{at}{{}}"), value, out),
            "allOf" => {
                for part in value.as_array().into_iter().flatten() {
                    walk(at, part, out);
                }
            }
            // A rule between fields: `Schema|anyOf<i>.field keyword`.
            "oneOf" | "anyOf" => {
                for (i, part) in value.as_array().into_iter().flatten().enumerate() {
                    walk(&format!("{at}|anyOf{i}"), part, out);
                }
            }
            _ => {}
        }
    }
}

/// Every constraint of the served document: `Schema.field keyword` for the
/// component schemas (the enums of the core's Rust enums, a component each,
/// are types and left out) and `METHOD path param keyword` for parameters.
fn found() -> BTreeMap<String, Value> {
    let doc = harness_server::routes::openapi_json();
    let mut out = BTreeMap::new();
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        if schema.get("enum").is_some() {
            continue;
        }
        walk(name, schema, &mut out);
    }
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for param in op["parameters"].as_array().into_iter().flatten() {
                let at = format!(
                    "{} {path} {}",
                    method.to_uppercase(),
                    param["name"].as_str().unwrap()
                );
                walk(&at, &param["schema"], &mut out);
            }
            let body = &op["requestBody"]["content"]["application/json"]["schema"];
            assert!(
                body.get("$ref").is_some() || body.is_null(),
                "{method} {path}: an inline request body ({body}); name it (ToSchema)"
            );
        }
    }
    out
}

struct Expected(BTreeMap<String, Value>);

impl Expected {
    fn add(&mut self, at: &str, keyword: &str, value: Value) {
        self.0.insert(format!("{at} {keyword}"), value);
    }
    fn max(&mut self, at: &str, max: usize) {
        self.add(at, "maxLength", json!(max));
    }
    /// `rules::text`: required, non-blank, at most `max`.
    fn text(&mut self, at: &str, max: usize) {
        self.max(at, max);
        self.add(at, "minLength", json!(1));
        self.add(at, "pattern", json!(NON_BLANK));
    }
    fn gateway_text(&mut self, at: &str, max: usize) {
        self.text(at, max);
        self.add(at, "pattern", json!(NON_BLANK_NO_NUL));
    }
    fn gateway_optional(&mut self, at: &str, max: usize) {
        self.max(at, max);
        self.add(at, "pattern", json!(NO_NUL));
    }
    fn cuid(&mut self, at: &str) {
        self.add(at, "pattern", json!(ids::CUID_PATTERN));
    }
    fn words(&mut self, at: &str, words: &[&str], nullable: bool) {
        let mut list = json!(words);
        if nullable {
            list.as_array_mut().unwrap().push(Value::Null);
        }
        self.add(at, "enum", list);
    }
    fn range(&mut self, at: &str, lo: i64, hi: i64) {
        self.add(at, "minimum", json!(lo));
        self.add(at, "maximum", json!(hi));
    }
}

fn expected() -> BTreeMap<String, Value> {
    let mut e = Expected(BTreeMap::new());
    let id = context::MAX_ID_CHARS;
    let platform = context::MAX_PLATFORM_CHARS;

    e.text("CreateProject.name", validate::MAX_NAME_CHARS);
    e.text("CreateProject.path", validate::MAX_PATH_CHARS);
    e.add("CreateProject.path", "pattern", json!(c::ABSOLUTE_PATH));
    e.max("CreateProject.workspace", validate::MAX_NAME_CHARS);
    e.text("UpdateProject.name", validate::MAX_NAME_CHARS);
    e.text("UpdateProject.path", validate::MAX_PATH_CHARS);
    e.add("UpdateProject.path", "pattern", json!(c::ABSOLUTE_PATH));
    e.text("CreateTask.title", validate::MAX_TITLE_CHARS);
    e.max("CreateTask.description", validate::MAX_DESCRIPTION_CHARS);
    e.cuid("CreateTask.projectId");
    e.cuid("CreateTask.parentTaskId");
    let wait = recovery::MAX_WAIT_SECS as i64;
    e.range("RecoveryOverride.usageLimitWaitSecs", 60, wait);
    e.range("RecoveryOverride.apiErrorBackoffSecs", 1, wait);
    for field in [
        "usageLimitMarginSecs",
        "selfWaitCheckSecs",
        "crashRestartDelaySecs",
    ] {
        e.add(&format!("RecoveryOverride.{field}"), "maximum", json!(wait));
    }
    for field in ["apiErrorMaxPerHour", "crashMaxPerHour"] {
        e.add(
            &format!("RecoveryOverride.{field}"),
            "maximum",
            json!(recovery::MAX_PER_HOUR),
        );
    }
    e.max("RecoveryOverride.stalledNudge", recovery::MAX_NUDGE_CHARS);
    e.add(
        "RecoveryOverride.stalledNudge",
        "pattern",
        json!(NO_CONTROL),
    );
    e.max("AgentInput.cwd", validate::MAX_PATH_CHARS);
    e.max("StartBody.prompt", validate::MAX_PROMPT_CHARS);
    e.text("InputBody.text", validate::MAX_TERMINAL_INPUT_CHARS);
    e.max("InputBody.idempotencyKey", validate::MAX_INPUT_KEY_CHARS);
    e.add("InputBody.idempotencyKey", "minLength", json!(1));

    e.cuid("AskBody.taskId");
    e.text("AskBody.question", validate::MAX_QUESTION_CHARS);
    e.max(
        "AskBody.idempotencyKey",
        validate::MAX_IDEMPOTENCY_KEY_CHARS,
    );
    e.add("AskBody.idempotencyKey", "pattern", json!(NO_CONTROL));
    e.text("AskOption.label", options::MAX_LABEL_CHARS);
    e.max(
        "AskOption.description",
        options::MAX_OPTION_DESCRIPTION_CHARS,
    );
    e.add(
        "ChoicesInput.options",
        "maxItems",
        json!(options::MAX_OPTIONS),
    );
    e.add("ChoicesInput.options", "uniqueItems", json!(true));
    e.add(
        "ChoicesInput.deadline|anyOf0",
        "minimum",
        json!(options::MIN_DEADLINE_SECS),
    );
    e.add(
        "ChoicesInput|anyOf0.multiSelect",
        "enum",
        json!([false, null]),
    );
    e.add(
        "ChoicesInput|anyOf1.options",
        "minItems",
        json!(options::MIN_MULTI_SELECT_OPTIONS),
    );
    e.cuid("NotifyBody.taskId");
    e.text("NotifyBody.message", validate::MAX_NOTIFY_CHARS);
    e.cuid("ReplyBody.taskId");
    e.text("ReplyBody.text", validate::MAX_REPLY_CHARS);
    e.max("ReplyBody.senderId", validate::MAX_SENDER_ID_CHARS);
    e.cuid("ReplyBody.requestId");
    e.cuid("SessionBody.taskId");
    e.cuid("StopBody.taskId");
    e.cuid("StopBody.executionId");
    e.cuid("CheckBody.taskId");
    e.cuid("RanBody.taskId");
    e.text("ToolCall.tool", flow::MAX_CALL_TOOL_CHARS);
    e.cuid("PushInput.taskId");
    e.text("PushInput.message", outbox::MAX_PUSH_CHARS);
    e.max("PushInput.to", outbox::MAX_TO_CHARS);
    e.max("PushInput.requestedTo", outbox::MAX_TO_CHARS);
    e.max("PushInput.dedupKey", outbox::MAX_DEDUP_KEY_CHARS);
    e.words("PushInput.scope", c::SCOPES, true);
    e.words("PushInput.gateway", c::GATEWAYS, true);
    e.max("PushInput.downstream", outbox::MAX_DOWNSTREAM_CHARS);
    e.max("PushInput.dest", outbox::MAX_DEST_CHARS);
    e.max("PushInput.profile", outbox::MAX_PROFILE_CHARS);

    e.words("DecideBody.decision", c::DECISIONS, false);
    e.max("DecideBody.reason", approvals::MAX_REASON_CHARS);
    e.add("Policy.rules", "maxItems", json!(policy::MAX_RULES));
    e.max("Rule.tool", policy::MAX_TOOL_CHARS);
    e.add("Rule.tool", "pattern", json!(c::TOOL_GLOB));
    e.text("Rule.pattern", policy::MAX_PATTERN_CHARS);
    e.max("Rule.note", policy::MAX_NOTE_CHARS);

    e.words("NotifyTarget.gateway", c::GATEWAYS, false);
    e.words("NotifyTarget.scope", c::SCOPES, false);
    e.max("NotifyTarget.label", validate::MAX_NAME_CHARS);
    e.max("NotifyTarget.downstream", outbox::MAX_DOWNSTREAM_CHARS);
    e.max("NotifyTarget.dest", outbox::MAX_DEST_CHARS);
    e.max("NotifyTarget.profile", outbox::MAX_PROFILE_CHARS);
    e.add(
        "NotifyTarget.reportAt",
        "pattern",
        json!(report::daily::TIME_PATTERN),
    );
    e.max("NotifyTarget.reportTimeZone", report::daily::MAX_ZONE_CHARS);
    e.words("NotifyTarget.language", c::LANGUAGES, true);
    e.add("Targets.targets", "maxItems", json!(settings::MAX_TARGETS));
    e.max("Destination.alias", dest::MAX_ALIAS_CHARS);
    e.max("Destination.label", dest::MAX_LABEL_CHARS);
    e.words("Destination.gateway", c::GATEWAYS, true);
    e.max("Destination.platform", dest::MAX_PLATFORM_CHARS);
    e.words("Destination.scope", c::SCOPES, true);
    e.text("Destination.dest", outbox::MAX_DEST_CHARS);
    e.add(
        "DestinationsBody.destinations",
        "maxItems",
        json!(destination::MAX_DESTINATIONS),
    );

    for schema in [
        "TaskContextInput",
        "ContinueInput",
        "RouteInput",
        "QueryInput",
    ] {
        e.words(&format!("{schema}.gateway"), c::GATEWAYS, false);
        e.gateway_text(&format!("{schema}.platform"), platform);
        e.gateway_text(&format!("{schema}.chatId"), id);
    }
    for schema in ["TaskContextInput", "ContinueInput", "RouteInput"] {
        e.gateway_optional(&format!("{schema}.replyToMessageId"), id);
        e.gateway_optional(&format!("{schema}.quotedText"), context::MAX_QUOTED_CHARS);
        e.cuid(&format!("{schema}.taskId"));
    }
    for schema in ["ContinueInput", "RouteInput"] {
        e.gateway_text(&format!("{schema}.platformMessageId"), id);
        e.gateway_optional(&format!("{schema}.senderId"), id);
    }
    e.gateway_text("ContinueInput.content", continuation::MAX_CONTENT_CHARS);
    e.gateway_optional("RouteInput.chatName", route_input::MAX_CHAT_NAME_CHARS);
    e.gateway_optional("RouteInput.threadId", id);
    e.gateway_optional("RouteInput.rootMessageId", id);
    e.gateway_optional("RouteInput.project", id);
    e.words("RouteInput.intent", c::INTENTS, false);
    e.gateway_text("RouteInput.content", route_input::MAX_CONTENT_CHARS);
    e.words("RouteInput.sessionAction", c::SESSION_ACTIONS, true);
    e.gateway_optional("QueryInput.senderId", id);
    e.gateway_optional("QueryInput.project", id);
    e.gateway_text("QueryInput.question", route_input::MAX_QUESTION_CHARS);
    e.words("AccessInput.action", c::ACCESS_ACTIONS, false);
    e.cuid("AccessInput.gatewayInboundId");
    e.gateway_optional("AccessInput.workspace", access::MAX_QUERY_CHARS);
    e.add(
        "AccessInput.projects",
        "maxItems",
        json!(access::MAX_PROJECTS),
    );
    e.gateway_text("AccessInput.projects[]", access::MAX_QUERY_CHARS);
    e.gateway_optional("AccessInput.chatName", access::MAX_CHAT_NAME_CHARS);
    e.words("CallbackInput.action", c::CALLBACK_ACTIONS, false);
    e.cuid("CallbackInput.inboundId");
    e.cuid("CallbackInput.taskId");
    e.gateway_optional("CallbackInput.response", cb::MAX_RESPONSE_CHARS);
    e.gateway_optional("CallbackInput.resultSummary", cb::MAX_SUMMARY_CHARS);
    e.cuid("CallbackInput.reviewerTaskId");
    e.cuid("CompletionInput.inboundId");
    e.max("BatchBody.batchId", validate::MAX_BATCH_ARG_CHARS);
    e.cuid("BatchBody.batchId");
    e.text("BatchBody.leaseToken", validate::MAX_BATCH_ARG_CHARS);
    e.cuid("BatchBody.parentTaskId");
    e.words("BatchBody.action", c::BATCH_ACTIONS, false);
    e.text(
        "SessionBody.sessionId",
        harness_core::tasks::MAX_SESSION_ID_CHARS,
    );
    // One target added or edited: the list's rules and `check_one`'s.
    for (k, v) in e.0.clone() {
        if let Some(rest) = k.strip_prefix("NotifyTarget.") {
            e.0.insert(format!("NotifyTargetEntry.{rest}"), v);
        }
    }
    e.words("NotifyTargetEntry.downstream", platforms::PLATFORMS, true);
    e.add("NotifyTargetEntry.dest", "pattern", json!(c::DEST));
    // The rules between fields (`constraints.rs`): OpenClaw names its
    // platform, Hermes its platform or a destination; a work target has a
    // destination; a discussion answers, the other callbacks name a task;
    // a gateway lookup names a message, a quote or a task.
    let blank = json!(NON_BLANK);
    e.add(
        "NotifyTargetEntry|anyOf0.downstream",
        "pattern",
        blank.clone(),
    );
    e.add(
        "NotifyTargetEntry|anyOf1.gateway",
        "enum",
        json!(["hermes"]),
    );
    e.add("NotifyTargetEntry|anyOf1.dest", "pattern", blank.clone());
    e.add(
        "NotifyTargetEntry|anyOf0.scope",
        "enum",
        json!(["unattended"]),
    );
    e.add("CallbackInput|anyOf0.action", "enum", json!(["discussion"]));
    e.add("CallbackInput|anyOf0.response", "pattern", blank.clone());
    e.add(
        "CallbackInput|anyOf1.action",
        "enum",
        json!(["task_created", "final"]),
    );
    for schema in ["TaskContextInput", "ContinueInput"] {
        for (i, field) in ["replyToMessageId", "quotedText", "taskId"]
            .iter()
            .enumerate()
        {
            e.add(
                &format!("{schema}|anyOf{i}.{field}"),
                "pattern",
                blank.clone(),
            );
        }
    }

    // Parameters: every `{id}` / `{task_id}` is a CUID, but a node's, a
    // destination's and a notify target's.
    let doc = harness_server::routes::openapi_json();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for param in op["parameters"].as_array().into_iter().flatten() {
                if param["in"] == "path"
                    && !path.starts_with("/api/nodes/")
                    && !path.starts_with("/api/settings/")
                {
                    let name = param["name"].as_str().unwrap();
                    e.cuid(&format!("{} {path} {name}", method.to_uppercase()));
                }
            }
        }
    }
    for method in ["GET", "PATCH"] {
        let at = format!("{method} /api/nodes/{{id}} id");
        e.max(&at, validate::MAX_NODE_ID_CHARS);
        e.add(&at, "minLength", json!(1));
        e.add(&at, "pattern", json!(c::NODE_ID));
    }
    e.words("GET /api/report lang", c::LANGUAGES, false);
    e.words("POST /api/report/{id}/reply lang", c::LANGUAGES, false);
    e.cuid("GET /api/approvals taskId");
    e.cuid("GET /api/approvals before");
    e.range(
        "GET /api/approvals limit",
        1,
        i64::from(approvals::MAX_LIST_LIMIT),
    );
    e.words("GET /api/approvals format", c::FORMATS, false);
    e.cuid("GET /api/internal/harness/pending taskId");
    e.cuid("GET /api/harness/messages taskId");
    e.range(
        "GET /api/harness/messages limit",
        1,
        i64::from(messaging::MAX_PAGE_ROWS),
    );
    e.words("GET /api/harness/messages from", c::FROM, false);
    e.range(
        "GET /api/projects/{id}/plan lines",
        1,
        harness_server::routes::MAX_PLAN_LOG_LINES as i64,
    );
    e.words(
        "GET /api/internal/harness/delivery-map gateway",
        c::GATEWAYS,
        false,
    );
    e.gateway_text("GET /api/internal/harness/delivery-map platform", platform);
    e.gateway_text("GET /api/internal/harness/delivery-map chatId", id);
    e.0
}

#[test]
fn every_constraint_of_the_document_is_a_core_constant() {
    let found = found();
    let expected = expected();
    let unlisted: Vec<_> = found
        .iter()
        .filter(|(at, _)| !expected.contains_key(*at))
        .collect();
    assert!(
        unlisted.is_empty(),
        "constraints without a core constant here: {unlisted:#?}"
    );
    for (at, value) in &expected {
        assert_eq!(found.get(at), Some(value), "{at}");
    }
}

#[test]
fn every_constraint_names_a_field_of_the_document() {
    assert!(
        harness_server::routes::openapi_unmatched_constraints().is_empty(),
        "{:?}",
        harness_server::routes::openapi_unmatched_constraints()
    );
}

/// A route input that passes every check, for varying one field.
fn route_input() -> route_input::RouteInput {
    route_input::RouteInput {
        gateway: Some("hermes".into()),
        platform: Some("telegram".into()),
        chat_id: Some("-100123".into()),
        platform_message_id: Some("m1".into()),
        intent: Some("TOWER".into()),
        content: Some("hello".into()),
        ..Default::default()
    }
}

/// Every word of a list the document states is one the core's validation
/// takes, and a word outside it is refused naming the field: the lists in
/// `constraints.rs` cannot drift from the rules they describe.
#[test]
fn every_word_list_is_what_the_core_accepts() {
    let field_of =
        |r: Result<_, harness_core::CoreError>| r.err().and_then(|e| e.field().map(str::to_string));
    for w in c::GATEWAYS {
        let input = route_input::RouteInput {
            gateway: Some(w.to_string()),
            ..route_input()
        };
        assert_eq!(field_of(input.check().map(|_| ())), None, "{w}");
    }
    for w in c::INTENTS {
        let input = route_input::RouteInput {
            intent: Some(w.to_string()),
            ..route_input()
        };
        assert_eq!(field_of(input.check().map(|_| ())), None, "{w}");
    }
    for w in c::SESSION_ACTIONS {
        let input = route_input::RouteInput {
            session_action: Some(w.to_string()),
            ..route_input()
        };
        assert_eq!(field_of(input.check().map(|_| ())), None, "{w}");
    }
    for (field, bad) in [
        (
            "gateway",
            route_input::RouteInput {
                gateway: Some("telegram".into()),
                ..route_input()
            },
        ),
        (
            "intent",
            route_input::RouteInput {
                intent: Some("CHAT".into()),
                ..route_input()
            },
        ),
        (
            "sessionAction",
            route_input::RouteInput {
                session_action: Some("PAUSE".into()),
                ..route_input()
            },
        ),
    ] {
        assert_eq!(field_of(bad.check().map(|_| ())).as_deref(), Some(field));
    }
    for w in c::CALLBACK_ACTIONS {
        assert!(cb::Callback::parse(Some(w)).is_ok(), "{w}");
    }
    assert!(cb::Callback::parse(Some("done")).is_err());
    for w in c::FORMATS {
        assert!(approvals::audit::Format::parse(Some(w)).is_ok(), "{w}");
    }
    assert!(approvals::audit::Format::parse(Some("xml")).is_err());
    let target = |gateway: &str, scope: &str| harness_core::settings::NotifyTarget {
        id: None,
        label: String::new(),
        gateway: gateway.into(),
        downstream: Some("telegram".into()),
        dest: Some("-100123".into()),
        profile: None,
        scope: scope.into(),
        active: true,
        include_screen: false,
        report_at: None,
        report_time_zone: None,
        report_since: None,
        language: None,
    };
    for g in c::GATEWAYS {
        for s in c::SCOPES {
            assert!(
                harness_core::outbox::target_edits::check_one(&target(g, s)).is_ok(),
                "{g} {s}"
            );
        }
    }
    assert!(harness_core::outbox::target_edits::check_one(&target("hermes", "team")).is_err());
    for l in c::LANGUAGES {
        let mut t = target("hermes", "unattended");
        t.language = Some((*l).into());
        assert!(
            harness_core::outbox::target_edits::check_one(&t).is_ok(),
            "{l}"
        );
    }
    let mut t = target("hermes", "unattended");
    t.language = Some("fr".into());
    assert!(harness_core::outbox::target_edits::check_one(&t).is_err());
}

/// A request for one word: method, path, body.
type Request<'a> = dyn Fn(&str) -> (String, String, Option<Value>) + 'a;

/// The lists only a route checks, asked of the server: each word gets past
/// its field (the request may still fail further on), an outsider is a 400
/// naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_word_list_of_a_route_is_what_the_route_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let s = crate::common::start(dir.path()).await;
    let id = ids::new_id();
    let named = |body: &Value| body["field"].as_str().map(str::to_string);
    let cases: Vec<(&str, &[&str], Box<Request<'_>>)> = vec![
        (
            "decision",
            c::DECISIONS,
            Box::new(|w| {
                (
                    "POST".into(),
                    format!("/api/approvals/{id}/decide"),
                    Some(json!({"decision": w})),
                )
            }),
        ),
        (
            "action",
            c::ACCESS_ACTIONS,
            Box::new(|w| {
                (
                    "POST".into(),
                    "/api/internal/harness/gateway-access".into(),
                    Some(
                        json!({"action": w, "gatewayInboundId": id, "workspace": "w", "projects": ["p"]}),
                    ),
                )
            }),
        ),
        (
            "action",
            c::BATCH_ACTIONS,
            Box::new(|w| {
                (
                    "PUT".into(),
                    "/api/internal/workbench/batch".into(),
                    Some(
                        json!({"action": w, "parentTaskId": id, "batchId": "b", "leaseToken": "t"}),
                    ),
                )
            }),
        ),
        (
            "from",
            c::FROM,
            Box::new(|w| {
                (
                    "GET".into(),
                    format!("/api/harness/messages?from={w}"),
                    None,
                )
            }),
        ),
    ];
    for (field, words, request) in &cases {
        for w in words.iter().copied().chain(["bogus"]) {
            let (method, path, body) = request(w);
            let (status, out) = s.admin(&method, &path, body).await;
            if w == "bogus" {
                assert_eq!(
                    status,
                    reqwest::StatusCode::BAD_REQUEST,
                    "{path} {w}: {out}"
                );
                assert_eq!(named(&out).as_deref(), Some(*field), "{path} {w}: {out}");
            } else {
                assert_ne!(
                    named(&out).as_deref(),
                    Some(*field),
                    "{path} {w}: {status} {out}"
                );
            }
        }
    }
    s.shutdown().await;
}
