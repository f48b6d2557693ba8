//! Live updates for the web UI: server-sent events fed by the core's event
//! bus (`Harness::subscribe`). Owned by the notification-center work.

use axum::Router;

use crate::state::AppState;

/// Routes for live events (mounted at the root by `launch::build_router`).
pub fn routes() -> Router<AppState> {
    Router::new()
}
