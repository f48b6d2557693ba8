//! The schemas the tools list: derived from the argument and result types,
//! with the core's limits, and every profile name a real tool.

use harness_core::{options, outbox, validate};
use rmcp::model::Tool;
use serde_json::{Value, json};

use super::{AGENT_TOOLS, GATEWAY_TOOLS, tools};

fn listed() -> Vec<Tool> {
    tools::router().list_all()
}

fn input(name: &str) -> Value {
    listed()
        .into_iter()
        .find(|t| t.name == name)
        .map(|t| Value::Object(t.input_schema.as_ref().clone()))
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn every_profile_name_is_a_tool_and_every_tool_has_an_object_output_schema() {
    let tools = listed();
    for name in AGENT_TOOLS.iter().chain(GATEWAY_TOOLS) {
        assert!(tools.iter().any(|t| t.name == *name), "{name}");
    }
    assert_eq!(tools.len(), 26);
    // The approval tools: the admin's only, never an agent's or a gateway's.
    for name in super::approval_tools::APPROVAL_TOOLS {
        assert!(tools.iter().any(|t| t.name == *name), "{name}");
        assert!(
            !AGENT_TOOLS.contains(name) && !GATEWAY_TOOLS.contains(name),
            "{name}"
        );
    }
    for tool in &tools {
        let output = tool.output_schema.as_ref().map(|s| s["type"].clone());
        assert_eq!(output, Some(json!("object")), "{}", tool.name);
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
    }
}

#[test]
fn limits_are_the_core_constants() {
    let ask = input("ask_human");
    let props = &ask["properties"];
    assert_eq!(props["question"]["maxLength"], validate::MAX_QUESTION_CHARS);
    assert_eq!(props["question"]["minLength"], 1);
    assert_eq!(
        props["idempotencyKey"]["maxLength"],
        validate::MAX_IDEMPOTENCY_KEY_CHARS
    );
    assert_eq!(props["options"]["maxItems"], options::MAX_OPTIONS);
    let label = &props["options"]["items"]["properties"]["label"];
    assert_eq!(label["maxLength"], options::MAX_LABEL_CHARS);
    let push = input("push_to_human");
    assert_eq!(
        push["properties"]["message"]["maxLength"],
        outbox::MAX_PUSH_CHARS
    );
    assert_eq!(push["properties"]["to"]["maxLength"], outbox::MAX_TO_CHARS);
    let typed = input("send_task_terminal_input");
    assert_eq!(
        typed["properties"]["text"]["maxLength"],
        validate::MAX_TERMINAL_INPUT_CHARS
    );
    assert_eq!(
        input("reply_to_ask")["properties"]["text"]["maxLength"],
        validate::MAX_REPLY_CHARS
    );
}

#[test]
fn optional_arguments_are_omitted_not_null_and_only_the_needed_are_required() {
    let ask = input("ask_human");
    assert_eq!(ask["required"], json!(["question"]));
    assert_eq!(ask["properties"]["taskId"]["type"], "string");
    assert_eq!(
        ask["properties"]["urgency"],
        json!({"type": "string", "enum": ["low", "normal", "high"]})
    );
    assert_eq!(
        ask["properties"]["deadline"]["type"],
        json!(["integer", "string"])
    );
    assert_eq!(
        input("send_task_terminal_input")["required"],
        json!(["taskId", "text"])
    );
    assert_eq!(input("set_goal_mode")["required"], json!(["on"]));
    let goal = input("set_goal_mode");
    assert!(goal["properties"].get("wakeAfterSeconds").is_none());
    let create = input("create_task");
    assert_eq!(create["properties"]["agent"]["type"], "object");
}

#[test]
fn the_gateway_tools_have_the_references_parameters_and_the_core_limits() {
    use harness_core::gateway::{context, continuation};
    let resolve = input("resolve_gateway_task_context");
    assert_eq!(
        resolve["required"],
        json!(["gateway", "platform", "chatId"])
    );
    assert_eq!(
        resolve["properties"]["gateway"],
        json!({"type": "string", "enum": ["hermes", "openclaw"]})
    );
    assert_eq!(
        resolve["properties"]["quotedText"]["maxLength"],
        context::MAX_QUOTED_CHARS
    );
    let cont = input("continue_bound_task");
    let mut required: Vec<String> = serde_json::from_value(cont["required"].clone()).unwrap();
    required.sort();
    assert_eq!(
        required,
        [
            "chatId",
            "content",
            "gateway",
            "platform",
            "platformMessageId"
        ]
    );
    assert_eq!(
        cont["properties"]["content"]["maxLength"],
        continuation::MAX_CONTENT_CHARS
    );
    assert_eq!(cont["properties"]["senderId"]["type"], "string");
    assert_eq!(input("relay_channel_reply")["required"], json!(["text"]));
}

/// Every limit (`maxLength`, `maxItems`, `maximum`) in every tool's input
/// schema, as `tool path.to.field keyword` → value.
fn schema_limits() -> std::collections::BTreeMap<String, Value> {
    fn walk(at: &str, schema: &Value, out: &mut std::collections::BTreeMap<String, Value>) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    match key.as_str() {
                        "maxLength" | "maxItems" | "maximum" => {
                            out.insert(format!("{at} {key}"), value.clone());
                        }
                        "properties" | "$defs" | "definitions" => {
                            if let Value::Object(fields) = value {
                                for (name, field) in fields {
                                    walk(&format!("{at}.{name}"), field, out);
                                }
                            }
                        }
                        "items" => walk(&format!("{at}[]"), value, out),
                        _ => walk(at, value, out),
                    }
                }
            }
            Value::Array(list) => list.iter().for_each(|v| walk(at, v, out)),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeMap::new();
    for tool in listed() {
        walk(
            &tool.name,
            &Value::Object(tool.input_schema.as_ref().clone()),
            &mut out,
        );
    }
    out
}

/// Point 3 of no limit in a schema is a literal copy — each one
/// is listed here with the core constant the validation uses, and a limit
/// added without an entry fails.
#[test]
fn every_schema_limit_is_a_core_constant() {
    use harness_core::{
        approvals,
        gateway::{access, context, continuation, route_input, workbench_callbacks as cb},
    };
    let batch = validate::MAX_BATCH_ARG_CHARS;
    let id = context::MAX_ID_CHARS;
    let mut expected: Vec<(String, usize)> = Vec::new();
    let mut add = |tool: &str, limits: &[(&str, usize)]| {
        for (at, limit) in limits {
            expected.push((format!("{tool}.{at}"), *limit));
        }
    };
    for tool in [
        "ack_workbench_batch",
        "heartbeat_workbench_batch",
        "resolve_workbench_batch",
    ] {
        add(
            tool,
            &[
                ("batchId maxLength", batch),
                ("leaseToken maxLength", batch),
            ],
        );
    }
    let choices = [
        ("options maxItems", options::MAX_OPTIONS),
        ("options[].label maxLength", options::MAX_LABEL_CHARS),
        (
            "options[].description maxLength",
            options::MAX_OPTION_DESCRIPTION_CHARS,
        ),
    ];
    add("ask_human", &choices);
    add(
        "ask_human",
        &[
            ("question maxLength", validate::MAX_QUESTION_CHARS),
            (
                "idempotencyKey maxLength",
                validate::MAX_IDEMPOTENCY_KEY_CHARS,
            ),
        ],
    );
    add("push_to_human", &choices);
    add(
        "push_to_human",
        &[
            ("message maxLength", outbox::MAX_PUSH_CHARS),
            ("to maxLength", outbox::MAX_TO_CHARS),
            ("dedupKey maxLength", outbox::MAX_DEDUP_KEY_CHARS),
        ],
    );
    add(
        "notify_human",
        &[("message maxLength", validate::MAX_NOTIFY_CHARS)],
    );
    add(
        "reply_to_ask",
        &[
            ("text maxLength", validate::MAX_REPLY_CHARS),
            ("senderId maxLength", validate::MAX_SENDER_ID_CHARS),
        ],
    );
    add(
        "send_task_terminal_input",
        &[
            ("text maxLength", validate::MAX_TERMINAL_INPUT_CHARS),
            ("idempotencyKey maxLength", validate::MAX_INPUT_KEY_CHARS),
        ],
    );
    add(
        "create_task",
        &[("title maxLength", validate::MAX_TITLE_CHARS)],
    );
    add(
        "list_approvals",
        &[("limit maximum", approvals::MAX_LIST_LIMIT as usize)],
    );
    add(
        "decide_approval",
        &[("reason maxLength", approvals::MAX_REASON_CHARS)],
    );
    add(
        "confirm_gateway_task_created",
        &[
            ("inboundId maxLength", cb::MAX_ID_CHARS),
            ("taskId maxLength", cb::MAX_ID_CHARS),
        ],
    );
    add(
        "complete_gateway_discussion",
        &[
            ("inboundId maxLength", cb::MAX_ID_CHARS),
            ("response maxLength", cb::MAX_RESPONSE_CHARS),
        ],
    );
    add(
        "complete_gateway_work",
        &[
            ("inboundId maxLength", cb::MAX_ID_CHARS),
            ("taskId maxLength", cb::MAX_ID_CHARS),
            ("resultSummary maxLength", cb::MAX_SUMMARY_CHARS),
        ],
    );
    let where_from = [
        ("platform maxLength", context::MAX_PLATFORM_CHARS),
        ("chatId maxLength", id),
        ("quotedText maxLength", context::MAX_QUOTED_CHARS),
        ("taskId maxLength", context::MAX_TASK_ID_CHARS),
    ];
    add(
        "get_report",
        &[(
            "since maxLength",
            harness_core::report::service::MAX_SINCE_CHARS,
        )],
    );
    add("resolve_gateway_task_context", &where_from);
    add(
        "resolve_gateway_task_context",
        &[("replyToMessageId maxLength", id)],
    );
    add("continue_bound_task", &where_from);
    add(
        "continue_bound_task",
        &[
            ("replyToMessageId maxLength", id),
            ("platformMessageId maxLength", id),
            ("senderId maxLength", id),
            ("content maxLength", continuation::MAX_CONTENT_CHARS),
        ],
    );
    add("relay_channel_reply", &where_from);
    add(
        "relay_channel_reply",
        &[
            ("platformMessageId maxLength", id),
            ("text maxLength", validate::MAX_REPLY_CHARS),
            ("senderId maxLength", validate::MAX_SENDER_ID_CHARS),
        ],
    );
    add("route_gateway_message", &where_from);
    add(
        "route_gateway_message",
        &[
            ("platformMessageId maxLength", id),
            ("senderId maxLength", id),
            ("chatName maxLength", route_input::MAX_CHAT_NAME_CHARS),
            ("threadId maxLength", id),
            ("rootMessageId maxLength", id),
            ("replyToMessageId maxLength", id),
            ("project maxLength", id),
            ("content maxLength", route_input::MAX_CONTENT_CHARS),
        ],
    );
    add(
        "route_gateway_query",
        &[
            ("platform maxLength", context::MAX_PLATFORM_CHARS),
            ("chatId maxLength", id),
            ("senderId maxLength", id),
            ("project maxLength", id),
            ("question maxLength", route_input::MAX_QUESTION_CHARS),
        ],
    );
    add(
        "manage_gateway_channel_access",
        &[
            ("gatewayInboundId maxLength", access::MAX_ID_CHARS),
            ("workspace maxLength", access::MAX_QUERY_CHARS),
            ("projects maxItems", access::MAX_PROJECTS),
            ("chatName maxLength", access::MAX_CHAT_NAME_CHARS),
        ],
    );
    let found = schema_limits();
    let expected: std::collections::BTreeMap<String, Value> = expected
        .into_iter()
        .map(|(at, limit)| (at, json!(limit)))
        .collect();
    let unlisted: Vec<_> = found
        .iter()
        .filter(|(at, _)| !expected.contains_key(*at))
        .collect();
    assert!(
        unlisted.is_empty(),
        "limits without a core constant here: {unlisted:#?}"
    );
    for (at, limit) in &expected {
        assert_eq!(found.get(at), Some(limit), "{at}");
    }
}

#[test]
fn the_batch_tools_have_a_typed_output_schema() {
    for name in [
        "ack_workbench_batch",
        "heartbeat_workbench_batch",
        "resolve_workbench_batch",
    ] {
        let tool = listed().into_iter().find(|t| t.name == name).unwrap();
        let out = Value::Object(tool.output_schema.unwrap().as_ref().clone());
        let mut required: Vec<String> = serde_json::from_value(out["required"].clone()).unwrap();
        required.sort();
        assert_eq!(
            required,
            ["batchId", "eventCount", "noOp", "state"],
            "{name}"
        );
        assert!(out["properties"].get("leaseExpiresAt").is_some(), "{name}");
        assert_eq!(out["properties"]["noOp"]["type"], "boolean", "{name}");
    }
}
