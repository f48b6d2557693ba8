//! Harness core: the domain of relay messaging (ask / notify / reply), tasks and
//! executions, and the credentials that bind agents to their task.
//!
//! Transport-free: REST handlers, MCP tools and Leptos server functions are thin
//! adapters over [`Harness`]. All persistence goes through the [`store::Store`]
//! port; the SQL lives in the `harness-store` crate.

#![forbid(unsafe_code)]

pub mod access;
pub mod agent_actions;
pub mod agent_state;
pub mod agent_states;
pub mod analytics;
pub mod answer_screen;
pub mod approvals;
pub mod asks;
pub mod auth;
pub mod choice_reply;
pub mod cluster;
pub mod control;
pub mod deadline;
pub mod deliveries;
pub mod delivery_attempt;
pub mod drain;
pub mod error;
pub mod escalation;
pub mod events;
pub mod evidence;
pub mod gateway;
pub mod ids;
pub mod inbox;
mod inbox_lease;
mod inbox_prompt;
pub mod inbox_ready;
pub mod ladder;
pub mod messaging;
pub mod model;
pub mod native_question;
pub mod nodes;
pub mod options;
pub mod outbox;
pub mod project_check;
pub mod quiet_hours;
pub mod rate_limit;
pub mod reachability;
pub mod reboot;
mod reboot_words;
pub mod receipt;
pub mod redact;
pub mod reminders;
pub mod report;
pub mod runtime;
pub mod service;
pub mod sessions;
pub mod setting_lists;
pub mod settings;
pub mod store;
pub mod sweeper;
pub mod tasks;
pub mod typed_text;
pub mod unattended;
pub mod ungated;
pub mod unreadable_holder;
pub mod validate;
pub mod work;
pub mod workbench;
pub mod workbench_runtime;

pub use error::{CoreError, CoreResult};
pub use events::{EventBus, HarnessEvent, InProcessBus};
pub use service::{Harness, HarnessConfig};
