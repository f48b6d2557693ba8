//! The SQL of browser sessions (`harness_sessions`, migration 0006), the
//! same on both backends.

/// `$1` id hash, `$2` now, `$3` expiry.
pub(crate) const INSERT: &str =
    "INSERT INTO harness_sessions (id_hash, created_at, expires_at) VALUES ($1, $2, $3)";
/// The id hash of a live session (`$1` id hash, `$2` now).
pub(crate) const ALIVE: &str = "SELECT id_hash FROM harness_sessions \
     WHERE id_hash = $1 AND revoked_at IS NULL AND expires_at > $2";
/// `$1` now, `$2` id hash.
pub(crate) const REVOKE: &str = "UPDATE harness_sessions SET revoked_at = $1 \
     WHERE id_hash = $2 AND revoked_at IS NULL";
/// `$1` now.
pub(crate) const REVOKE_ALL: &str = "UPDATE harness_sessions SET revoked_at = $1 \
     WHERE revoked_at IS NULL AND expires_at > $1";
/// `$1` the cut-off.
pub(crate) const PURGE: &str =
    "DELETE FROM harness_sessions WHERE expires_at <= $1 OR revoked_at <= $1";
