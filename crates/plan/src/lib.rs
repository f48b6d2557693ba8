//! The long-running task-list loop (seed 002, docs/plan-loop.md §A, docs/decisions.md D16/docs/decisions.md D17):
//! `harness-tasks.json` + `harness-progress.txt` state files, OS locks, one eligibility
//! module, validation under a process-group timeout, rollback that preserves the state
//! files, session-start recovery, Claude Code hooks and the `harness run` driver.
//!
//! Entry points for the `harness` binary: [`cli::cli_main`] and [`hooks::hook_main`].

pub mod cli;
pub mod driver;
pub mod eligibility;
pub mod error;
pub mod git;
pub mod hooks;
pub mod lock;
pub mod model;
pub mod progress_log;
pub mod recovery;
pub mod state_file;
pub mod transitions;
pub mod validate;
pub mod view;

pub use error::{PlanError, Result};
pub use hooks::{HookOutcome, find_hook_root, hook_main};
pub use state_file::{StateRoot, discover as discover_state_root, find_root_from};

/// The state root for `cwd` when the task-list loop is active there: `HARNESS_STATE_ROOT`,
/// else the nearest ancestor holding `harness-tasks.json`, and only if `.harness-active`
/// exists in it. `harness hook stop` can use this to decide whether to apply the stop gate.
pub fn active_state_root(cwd: &std::path::Path) -> Option<StateRoot> {
    state_file::discover(cwd).ok().filter(StateRoot::is_active)
}
