//! The SQL of settings (JSON values by key), the same on both backends.

/// `$1` key.
pub(crate) const GET: &str = "SELECT value FROM settings WHERE key = $1";
/// `$1` key, `$2` JSON text, `$3` now.
pub(crate) const UPSERT: &str = "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";
