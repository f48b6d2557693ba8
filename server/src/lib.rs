//! The `harness` server: axum wiring of the web UI (Leptos SSR + hydration),
//! the admin REST API, the internal agent/gateway API and the MCP endpoint.
//! Every handler is a thin adapter over `harness_core::Harness`.

pub mod assets;
pub mod config;
pub mod datalock;
pub mod demo_agent;
pub mod doctor;
mod doctor_pg;
pub mod error;
pub mod extract;
pub mod hook_stop;
pub mod hooks;
pub mod isolation;
pub mod json_errors;
pub mod launch;
pub mod login;
mod login_page;
pub mod mcp;
pub mod metrics;
pub mod node;
pub mod node_call;
pub mod private_exe;
pub mod report_work;
pub mod routes;
pub mod secrets;
pub mod security;
pub mod serve;
pub mod service;
pub mod signed;
pub mod sse;
pub mod state;
pub mod supervised;
pub mod terminals;
pub mod ungated_watch;
pub mod web;
pub mod workers;

pub use config::ServeConfig;
pub use launch::{Running, launch};
