//! Every integration test of the server in ONE test binary: one link of the
//! server and the UI instead of one per file (each linked binary is ~170 MB,
//! so 45 of them were ~7 GB under `target/` and minutes of linking — CI ran
//! out of disk). A file here is a module; run one with
//! `cargo test -p server --test integration <file>::` (e.g. `kill::`).
//!
//! `server/Cargo.toml` sets `autotests = false`, so a new `tests/*.rs` file is
//! compiled only once it is declared below — `every_test_file_is_declared`
//! fails when one is not.

#[path = "common/mod.rs"]
mod common;

#[path = "agent_actions.rs"]
mod agent_actions;
#[path = "agent_actions_exit.rs"]
mod agent_actions_exit;
#[path = "agent_actions_kill.rs"]
mod agent_actions_kill;
#[path = "agent_actions_policy.rs"]
mod agent_actions_policy;
#[path = "agent_actions_real.rs"]
mod agent_actions_real;
#[path = "agent_argv.rs"]
mod agent_argv;
#[path = "agent_boundary.rs"]
mod agent_boundary;
#[path = "agent_hangup.rs"]
mod agent_hangup;
#[path = "agent_states.rs"]
mod agent_states;
#[path = "approval_reminders.rs"]
mod approval_reminders;
#[path = "approvals.rs"]
mod approvals;
#[path = "approvals_chat.rs"]
mod approvals_chat;
#[path = "approvals_server.rs"]
mod approvals_server;
#[path = "ask_idempotency.rs"]
mod ask_idempotency;
#[path = "assets.rs"]
mod assets;
#[path = "backup.rs"]
mod backup;
#[path = "channel_health.rs"]
mod channel_health;
#[path = "chat_language.rs"]
mod chat_language;
#[path = "cluster.rs"]
mod cluster;
#[path = "cluster_continue.rs"]
mod cluster_continue;
#[path = "cluster_drain.rs"]
mod cluster_drain;
#[path = "cluster_events.rs"]
mod cluster_events;
#[path = "cluster_fence.rs"]
mod cluster_fence;
#[path = "cluster_routing.rs"]
mod cluster_routing;
#[path = "codex_interactive.rs"]
mod codex_interactive;
#[path = "deadline_restart.rs"]
mod deadline_restart;
#[path = "deliveries.rs"]
mod deliveries;
#[path = "destination_edits.rs"]
mod destination_edits;
#[path = "doctor.rs"]
mod doctor;
#[path = "durability.rs"]
mod durability;
#[path = "escalations.rs"]
mod escalations;
#[path = "evidence.rs"]
mod evidence;
#[path = "evidence_leaks.rs"]
mod evidence_leaks;
#[path = "fuzz.rs"]
mod fuzz;
#[path = "gateway_acceptance.rs"]
mod gateway_acceptance;
#[path = "gateway_access.rs"]
mod gateway_access;
#[path = "gateway_callbacks.rs"]
mod gateway_callbacks;
#[path = "gateway_continue.rs"]
mod gateway_continue;
#[path = "gateway_inbound.rs"]
mod gateway_inbound;
#[path = "gateway_replies.rs"]
mod gateway_replies;
#[path = "gateway_replies_kill.rs"]
mod gateway_replies_kill;
#[path = "gateway_reply_actions.rs"]
mod gateway_reply_actions;
#[path = "gateway_routing.rs"]
mod gateway_routing;
#[path = "gateway_routing_kill.rs"]
mod gateway_routing_kill;
#[path = "gateway_workbench_start.rs"]
mod gateway_workbench_start;
#[path = "hermes_inbound_real.rs"]
mod hermes_inbound_real;
#[path = "hermes_skill_standin.rs"]
mod hermes_skill_standin;
#[path = "holders.rs"]
mod holders;
#[path = "hooks.rs"]
mod hooks;
#[path = "kill.rs"]
mod kill;
#[path = "limits.rs"]
mod limits;
#[path = "login_redirect.rs"]
mod login_redirect;
#[path = "mcp.rs"]
mod mcp;
#[path = "mcp_ready.rs"]
mod mcp_ready;
#[path = "mcp_ready_real.rs"]
mod mcp_ready_real;
#[path = "mcp_sdk.rs"]
mod mcp_sdk;
#[path = "metrics.rs"]
mod metrics;
#[path = "migrate_db.rs"]
mod migrate_db;
#[path = "morning_report.rs"]
mod morning_report;
#[path = "native_questions.rs"]
mod native_questions;
#[path = "node_calls.rs"]
mod node_calls;
#[path = "node_ownership.rs"]
mod node_ownership;
#[path = "notification_real.rs"]
mod notification_real;
#[path = "openapi.rs"]
mod openapi;
#[path = "openapi_constraints.rs"]
mod openapi_constraints;
#[path = "openclaw_inbound_real.rs"]
mod openclaw_inbound_real;
#[path = "outbox.rs"]
mod outbox;
#[path = "outbox_destinations.rs"]
mod outbox_destinations;
#[path = "outbox_kill.rs"]
mod outbox_kill;
#[path = "outbox_sender.rs"]
mod outbox_sender;
#[path = "plan_view.rs"]
mod plan_view;
#[path = "projects_edit.rs"]
mod projects_edit;
#[path = "push_choices.rs"]
mod push_choices;
#[path = "rate_limits.rs"]
mod rate_limits;
#[path = "real_cli.rs"]
mod real_cli;
#[path = "real_cli_approvals.rs"]
mod real_cli_approvals;
#[path = "real_cli_first_run.rs"]
mod real_cli_first_run;
#[path = "real_cli_gate_files.rs"]
mod real_cli_gate_files;
#[path = "real_gateways.rs"]
mod real_gateways;
#[path = "reboot_resume.rs"]
mod reboot_resume;
#[path = "reboot_resume_real.rs"]
mod reboot_resume_real;
#[path = "receipts.rs"]
mod receipts;
#[path = "reminders.rs"]
mod reminders;
#[path = "reminders_kill.rs"]
mod reminders_kill;
#[path = "reminders_real.rs"]
mod reminders_real;
#[path = "report_daily.rs"]
mod report_daily;
#[path = "report_lang.rs"]
mod report_lang;
#[path = "report_receipt.rs"]
mod report_receipt;
#[path = "report_reply_kill.rs"]
mod report_reply_kill;
#[path = "rest.rs"]
mod rest;
#[path = "security.rs"]
mod security;
#[path = "submit_confirm.rs"]
mod submit_confirm;
#[path = "supervised.rs"]
mod supervised;
#[path = "terminal_sizing.rs"]
mod terminal_sizing;
#[path = "terminals.rs"]
mod terminals;
#[path = "typed_text.rs"]
mod typed_text;
#[path = "typed_text_real.rs"]
mod typed_text_real;
#[path = "ungated_real.rs"]
mod ungated_real;
#[path = "ungated_support.rs"]
mod ungated_support;
#[path = "waiting_cost.rs"]
mod waiting_cost;
#[path = "waiting_count.rs"]
mod waiting_count;
#[path = "workbench.rs"]
mod workbench;
#[path = "workbench_kill.rs"]
mod workbench_kill;
#[path = "workbench_resume.rs"]
mod workbench_resume;

/// A `tests/*.rs` file that is not declared above would never compile or run
/// (`autotests = false`): this fails naming it.
#[test]
fn every_test_file_is_declared() {
    let here = include_str!("integration.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(module) = name.strip_suffix(".rs") else {
            continue;
        };
        if module != "integration"
            && !here.contains(&format!("#[path = \"{name}\"]\nmod {module};"))
        {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "declare these in server/tests/integration.rs: {missing:?}"
    );
}
