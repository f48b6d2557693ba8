//! `harness doctor` on PostgreSQL (`--database-url postgres://…`): the
//! database answers and has this binary's schema; and, since `harness
//! backup` copies only SQLite files, the exact `pg_dump` command to use.

use std::{path::Path, time::Duration};

use crate::doctor::Check;

const NAME: &str = "database";

/// The checks of the PostgreSQL database at `url` (credentials never shown).
pub(crate) fn checks(url: &str) -> Vec<Check> {
    vec![database(url), backup(url)]
}

fn database(url: &str) -> Check {
    let shown = harness_store::redact_url(url);
    let probed = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
        .and_then(|runtime| {
            runtime
                .block_on(harness_store::probe_postgres(url, Duration::from_secs(5)))
                .map_err(|e| e.to_string())
        });
    let probe = match probed {
        Ok(probe) => probe,
        Err(err) => {
            return Check::fail(
                NAME,
                format!("PostgreSQL at {shown} does not answer: {err}"),
                "check --database-url / DATABASE_URL, that the PostgreSQL server runs, and that \
                 its role may connect to the database (docs/postgresql.md)",
            );
        }
    };
    let at = format!("PostgreSQL {} at {shown}", probe.server_version);
    match probe.schema_version {
        Some(v) if v == probe.latest_schema => {
            Check::pass(NAME, format!("{at}, schema version {v} (current)"))
        }
        Some(v) if v < probe.latest_schema => Check::note(
            NAME,
            format!(
                "{at}, schema version {v}; this binary migrates it to {} at start",
                probe.latest_schema
            ),
            "start the server (`harness serve --database-url …`) to migrate it",
        ),
        Some(v) => Check::fail(
            NAME,
            format!(
                "{at}, schema version {v} is newer than this binary's ({})",
                probe.latest_schema
            ),
            "run the Harness version that migrated this database, or a newer one",
        ),
        None => Check::note(
            NAME,
            format!("{at}: no Harness tables yet"),
            "start the server (`harness serve --database-url …`); it creates them",
        ),
    }
}

/// `harness backup` / `restore` copy SQLite files: on PostgreSQL, the
/// commands to use instead.
fn backup(url: &str) -> Check {
    let file = Path::new("harness-$(date +%F).dump");
    Check::note(
        "backup",
        "`harness backup` / `harness restore` copy SQLite files; this database is PostgreSQL",
        format!(
            "back it up with: {} (restore: {})",
            harness_store::pg_dump_command(url, file),
            harness_store::pg_restore_command(url, file)
        ),
    )
}
