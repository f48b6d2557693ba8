//! `harness doctor` on PostgreSQL: can this URL be reached, which server
//! answers, and is its schema the one this binary migrates to.

use std::{str::FromStr, time::Duration};

use sqlx::{Connection, postgres::PgConnectOptions, postgres::PgConnection};

use crate::StoreOpenError;

/// What a PostgreSQL database says about itself.
#[derive(Debug, Clone)]
pub struct PgProbe {
    /// `SHOW server_version`.
    pub server_version: String,
    /// The newest migration applied (`_sqlx_migrations`), `None` on a
    /// database Harness has not started on yet.
    pub schema_version: Option<i64>,
    /// The newest migration this binary has (`migrations/postgres/`).
    pub latest_schema: i64,
}

/// Connect to `url` (at most `timeout`), read the server's version and the
/// applied schema version; changes nothing.
pub async fn probe(url: &str, timeout: Duration) -> Result<PgProbe, StoreOpenError> {
    let options = PgConnectOptions::from_str(url).map_err(|source| StoreOpenError::Url {
        url: crate::redact_url(url),
        source,
    })?;
    let connect = PgConnection::connect_with(&options);
    let mut conn = match tokio::time::timeout(timeout, connect).await {
        Ok(conn) => conn.map_err(StoreOpenError::Connect)?,
        Err(_) => {
            return Err(StoreOpenError::Connect(sqlx::Error::PoolTimedOut));
        }
    };
    let server_version: String = sqlx::query_scalar("SHOW server_version")
        .fetch_one(&mut conn)
        .await
        .map_err(StoreOpenError::Connect)?;
    let migrated: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(&mut conn)
        .await
        .map_err(StoreOpenError::Connect)?;
    let schema_version: Option<i64> = if migrated {
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(&mut conn)
            .await
            .map_err(StoreOpenError::Connect)?
    } else {
        None
    };
    let _ = conn.close().await;
    let latest_schema = sqlx::migrate!("../../migrations/postgres")
        .migrations
        .iter()
        .map(|m| m.version)
        .max()
        .unwrap_or(0);
    Ok(PgProbe {
        server_version,
        schema_version,
        latest_schema,
    })
}
