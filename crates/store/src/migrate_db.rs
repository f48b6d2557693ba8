//! `harness migrate-db`: every table of a SQLite database copied into an
//! empty, migrated PostgreSQL database in one transaction.
//!
//! The tables and their columns are read from both databases (never from a
//! list here): the PostgreSQL catalog gives the tables in foreign-key order,
//! and a table or column that one side has and the other lacks refuses the
//! copy before anything is written. The target's tables are locked and must
//! be empty; the row counts of every table are compared before the commit.
//! The source is opened read-only: the server must be stopped (the CLI
//! holds the data-directory lock).

use std::{
    collections::{BTreeMap, BTreeSet},
    str::FromStr,
};

use sqlx::{
    AssertSqlSafe, Connection, PgConnection, Postgres, Row, SqliteConnection,
    postgres::PgArguments,
    query::Query,
    sqlite::{SqliteConnectOptions, SqliteRow},
};

use crate::{PgOptions, PgStore, StoreOpenError, redact_url};

// Both table lists leave out `_sqlx_migrations`: each side keeps its own.
const SQLITE_TABLES: &str = "SELECT name FROM sqlite_master WHERE type = 'table' \
     AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations' ORDER BY name";
const SQLITE_COLUMNS: &str = "SELECT name FROM pragma_table_info(?1)";
const PG_TABLES: &str = "SELECT table_name::text FROM information_schema.tables \
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
     AND table_name <> '_sqlx_migrations' ORDER BY table_name";
const PG_COLUMNS: &str = "SELECT column_name::text, data_type::text \
     FROM information_schema.columns \
     WHERE table_schema = current_schema() AND table_name = $1 \
     ORDER BY ordinal_position";
/// (child, parent) for every foreign key between two tables of the schema.
const PG_FOREIGN_KEYS: &str = "SELECT c.relname::text, p.relname::text \
     FROM pg_constraint k \
     JOIN pg_class c ON c.oid = k.conrelid \
     JOIN pg_class p ON p.oid = k.confrelid \
     JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE k.contype = 'f' AND n.nspname = current_schema()";

/// PostgreSQL allows 65 535 bound parameters per statement.
const MAX_BINDS: usize = 30_000;

/// What was copied: each table with its row count, in copy order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateSummary {
    pub tables: Vec<(String, i64)>,
}

impl MigrateSummary {
    pub fn rows(&self) -> i64 {
        self.tables.iter().map(|(_, n)| n).sum()
    }
}

/// How a column's values travel: the PostgreSQL column type decides.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Int,
    Text,
    Float,
    Bool,
}

#[derive(Debug, Clone)]
struct Column {
    name: String,
    kind: Kind,
}

#[derive(Debug)]
enum Cell {
    Int(Option<i64>),
    Text(Option<String>),
    Float(Option<f64>),
    Bool(Option<bool>),
}

fn fail(msg: impl Into<String>) -> StoreOpenError {
    StoreOpenError::MigrateDb(msg.into())
}

fn db(what: &str) -> impl Fn(sqlx::Error) -> StoreOpenError + '_ {
    move |e| fail(format!("{what}: {e}"))
}

/// An identifier read from a schema, quoted for SQL text.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn scheme(url: &str) -> String {
    url.split_once(':')
        .map(|(s, _)| s.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Copy every table of the SQLite database `from` into the PostgreSQL
/// database `to` (migrated here if it is new; it must hold no rows).
pub async fn migrate_db(from: &str, to: &str) -> Result<MigrateSummary, StoreOpenError> {
    if scheme(from) != "sqlite" {
        return Err(fail(format!(
            "--from must be a sqlite://… url, not {:?}",
            redact_url(from)
        )));
    }
    if !matches!(scheme(to).as_str(), "postgres" | "postgresql") {
        return Err(fail(format!(
            "--to must be a postgres://… url, not {:?}",
            redact_url(to)
        )));
    }
    let options = SqliteConnectOptions::from_str(from)
        .map_err(|source| StoreOpenError::Url {
            url: redact_url(from),
            source,
        })?
        .read_only(true)
        .create_if_missing(false);
    let mut src = SqliteConnection::connect_with(&options)
        .await
        .map_err(db("cannot open the SQLite database"))?;
    // The target's schema is this version's: open it once as the server does.
    PgStore::open(PgOptions::new(to)).await?.close().await;
    let mut dst = PgConnection::connect(to)
        .await
        .map_err(db("cannot open the PostgreSQL database"))?;

    let order = copy_order(&mut dst).await?;
    let columns = compare_schemas(&mut src, &mut dst, &order).await?;

    let mut tx = dst.begin().await.map_err(db("begin"))?;
    let all = order
        .iter()
        .map(|t| quote(t))
        .collect::<Vec<_>>()
        .join(", ");
    sqlx::query(AssertSqlSafe(format!(
        "LOCK TABLE {all} IN ACCESS EXCLUSIVE MODE"
    )))
    .execute(&mut *tx)
    .await
    .map_err(db("cannot lock the target's tables"))?;
    let mut full = Vec::new();
    for table in &order {
        let n = count_pg(&mut tx, table).await?;
        if n > 0 {
            full.push(format!("{table} ({n} rows)"));
        }
    }
    if !full.is_empty() {
        return Err(fail(format!(
            "the target database {} is not empty: {}; migrate into a new, empty database",
            redact_url(to),
            full.join(", ")
        )));
    }
    let mut summary = Vec::new();
    for table in &order {
        let cols = &columns[table];
        let copied = copy_table(&mut src, &mut tx, table, cols).await?;
        let source = count_sqlite(&mut src, table).await?;
        let target = count_pg(&mut tx, table).await?;
        if source != target || copied != source {
            return Err(fail(format!(
                "{table}: {source} rows in SQLite, {copied} copied, {target} in PostgreSQL; nothing was committed"
            )));
        }
        summary.push((table.clone(), target));
    }
    tx.commit().await.map_err(db("commit"))?;
    let _ = src.close().await;
    let _ = dst.close().await;
    Ok(MigrateSummary { tables: summary })
}

/// The target's tables, every parent before its children.
async fn copy_order(dst: &mut PgConnection) -> Result<Vec<String>, StoreOpenError> {
    let tables: Vec<String> = sqlx::query_scalar(PG_TABLES)
        .fetch_all(&mut *dst)
        .await
        .map_err(db("cannot list the PostgreSQL tables"))?;
    let edges: Vec<(String, String)> = sqlx::query_as(PG_FOREIGN_KEYS)
        .fetch_all(&mut *dst)
        .await
        .map_err(db("cannot read the PostgreSQL foreign keys"))?;
    let mut parents: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for t in &tables {
        parents.entry(t).or_default();
    }
    for (child, parent) in &edges {
        if child != parent {
            parents.entry(child).or_default().insert(parent);
        }
    }
    let mut order: Vec<String> = Vec::new();
    while order.len() < tables.len() {
        let ready: Vec<&str> = parents
            .iter()
            .filter(|(t, ps)| {
                !order.iter().any(|o| o == *t) && ps.iter().all(|p| order.iter().any(|o| o == p))
            })
            .map(|(t, _)| *t)
            .collect();
        if ready.is_empty() {
            return Err(fail("the PostgreSQL schema has a foreign-key cycle"));
        }
        order.extend(ready.into_iter().map(str::to_string));
    }
    Ok(order)
}

/// Both databases' tables and columns must be the same (by name); the
/// columns of each table with their PostgreSQL kinds.
async fn compare_schemas(
    src: &mut SqliteConnection,
    dst: &mut PgConnection,
    order: &[String],
) -> Result<BTreeMap<String, Vec<Column>>, StoreOpenError> {
    let sqlite_tables: BTreeSet<String> = sqlx::query_scalar(SQLITE_TABLES)
        .fetch_all(&mut *src)
        .await
        .map_err(db("cannot list the SQLite tables"))?
        .into_iter()
        .collect();
    let pg_tables: BTreeSet<String> = order.iter().cloned().collect();
    let upgrade = "start `harness serve` on the SQLite database once with this version \
                   (it migrates it), stop it, then migrate";
    if sqlite_tables != pg_tables {
        let only_sqlite: Vec<_> = sqlite_tables.difference(&pg_tables).collect();
        let only_pg: Vec<_> = pg_tables.difference(&sqlite_tables).collect();
        return Err(fail(format!(
            "the schemas differ: tables only in SQLite {only_sqlite:?}, only in PostgreSQL {only_pg:?}; {upgrade}"
        )));
    }
    let mut out = BTreeMap::new();
    for table in order {
        let sqlite_cols: BTreeSet<String> = sqlx::query_scalar(SQLITE_COLUMNS)
            .bind(table)
            .fetch_all(&mut *src)
            .await
            .map_err(db("cannot read the SQLite columns"))?
            .into_iter()
            .collect();
        let pg_cols: Vec<(String, String)> = sqlx::query_as(PG_COLUMNS)
            .bind(table)
            .fetch_all(&mut *dst)
            .await
            .map_err(db("cannot read the PostgreSQL columns"))?;
        let pg_names: BTreeSet<String> = pg_cols.iter().map(|(n, _)| n.clone()).collect();
        if sqlite_cols != pg_names {
            let only_sqlite: Vec<_> = sqlite_cols.difference(&pg_names).collect();
            let only_pg: Vec<_> = pg_names.difference(&sqlite_cols).collect();
            return Err(fail(format!(
                "the schemas differ in table {table}: columns only in SQLite {only_sqlite:?}, \
                 only in PostgreSQL {only_pg:?}; {upgrade}"
            )));
        }
        let mut cols = Vec::new();
        for (name, ty) in pg_cols {
            let kind = match ty.as_str() {
                "bigint" | "integer" | "smallint" => Kind::Int,
                "text" | "character varying" | "character" => Kind::Text,
                "double precision" | "real" => Kind::Float,
                "boolean" => Kind::Bool,
                other => {
                    return Err(fail(format!(
                        "{table}.{name}: PostgreSQL type {other} is not supported by migrate-db"
                    )));
                }
            };
            cols.push(Column { name, kind });
        }
        out.insert(table.clone(), cols);
    }
    Ok(out)
}

async fn count_sqlite(src: &mut SqliteConnection, table: &str) -> Result<i64, StoreOpenError> {
    sqlx::query_scalar(AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM {}",
        quote(table)
    )))
    .fetch_one(src)
    .await
    .map_err(db("cannot count the SQLite rows"))
}

async fn count_pg(dst: &mut PgConnection, table: &str) -> Result<i64, StoreOpenError> {
    sqlx::query_scalar(AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM {}",
        quote(table)
    )))
    .fetch_one(dst)
    .await
    .map_err(db("cannot count the PostgreSQL rows"))
}

/// One table's rows, read whole from SQLite and inserted in batches.
async fn copy_table(
    src: &mut SqliteConnection,
    dst: &mut PgConnection,
    table: &str,
    cols: &[Column],
) -> Result<i64, StoreOpenError> {
    let list = cols
        .iter()
        .map(|c| quote(&c.name))
        .collect::<Vec<_>>()
        .join(", ");
    let rows: Vec<SqliteRow> = sqlx::query(AssertSqlSafe(format!(
        "SELECT {list} FROM {}",
        quote(table)
    )))
    .fetch_all(&mut *src)
    .await
    .map_err(db("cannot read the SQLite rows"))?;
    let per_batch = (MAX_BINDS / cols.len().max(1)).clamp(1, 500);
    let mut copied = 0i64;
    for batch in rows.chunks(per_batch) {
        let mut cells = Vec::with_capacity(batch.len() * cols.len());
        for row in batch {
            for (i, col) in cols.iter().enumerate() {
                cells.push(cell(row, i, col).map_err(|e| {
                    fail(format!("{table}.{}: cannot read a value: {e}", col.name))
                })?);
            }
        }
        let sql = insert_sql(table, &list, cols.len(), batch.len());
        let mut query: Query<'_, Postgres, PgArguments> = sqlx::query(AssertSqlSafe(sql));
        for c in cells {
            query = match c {
                Cell::Int(v) => query.bind(v),
                Cell::Text(v) => query.bind(v),
                Cell::Float(v) => query.bind(v),
                Cell::Bool(v) => query.bind(v),
            };
        }
        let done = query
            .execute(&mut *dst)
            .await
            .map_err(|e| fail(format!("cannot insert into {table}: {e}")))?;
        copied += i64::try_from(done.rows_affected()).unwrap_or(i64::MAX);
    }
    Ok(copied)
}

fn cell(row: &SqliteRow, i: usize, col: &Column) -> Result<Cell, sqlx::Error> {
    Ok(match col.kind {
        Kind::Int => Cell::Int(row.try_get(i)?),
        Kind::Text => Cell::Text(row.try_get(i)?),
        Kind::Float => Cell::Float(row.try_get(i)?),
        Kind::Bool => Cell::Bool(row.try_get::<Option<i64>, _>(i)?.map(|v| v != 0)),
    })
}

/// `INSERT INTO "t" (cols) VALUES ($1, …), (…)` for `rows` rows.
fn insert_sql(table: &str, list: &str, width: usize, rows: usize) -> String {
    let mut sql = format!("INSERT INTO {} ({list}) VALUES ", quote(table));
    for r in 0..rows {
        if r > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        for c in 0..width {
            if c > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("${}", r * width + c + 1));
        }
        sql.push(')');
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_text_numbers_every_parameter() {
        assert_eq!(
            insert_sql("t", "\"a\", \"b\"", 2, 2),
            "INSERT INTO \"t\" (\"a\", \"b\") VALUES ($1, $2), ($3, $4)"
        );
        assert_eq!(quote("we\"ird"), "\"we\"\"ird\"");
    }
}
