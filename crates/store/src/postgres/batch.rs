//! Several statements that share one set of parameters (`$1` … `$n`), run
//! one after the other on one connection, their rows in order: the
//! PostgreSQL form of the SQLite backend's multi-statement batches (a
//! prepared statement holds one command here). Every statement is sent
//! with the types of all the parameters; one that uses only some of them
//! is still valid.

use sqlx::{
    Arguments, AssertSqlSafe, PgConnection,
    postgres::{PgArguments, PgRow},
};

use crate::shared::Bind;

/// Run each `;`-separated statement of `sql` (constant text) with `args`.
pub(super) async fn run(
    conn: &mut PgConnection,
    sql: &str,
    args: &PgArguments,
) -> Result<Vec<PgRow>, sqlx::Error> {
    let mut rows = Vec::new();
    for statement in statements(sql) {
        // The prepared statement is cached by its text and declares the
        // parameters of its first use: the arity in a comment keeps a
        // statement shared by batches of different arity apart.
        let text = format!("{statement} /* {} */", sqlx::Arguments::len(args));
        let found = sqlx::query_with(AssertSqlSafe(text), args.clone())
            .fetch_all(&mut *conn)
            .await?;
        rows.extend(found);
    }
    Ok(rows)
}

/// The statements of `sql`: split at each `;` outside a quoted literal.
fn statements(sql: &str) -> impl Iterator<Item = &str> {
    let mut quoted = false;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in sql.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(&sql[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&sql[start..]);
    parts.into_iter().map(str::trim).filter(|s| !s.is_empty())
}

/// `binds` in order as arguments, for [`run`].
pub(super) fn args_of(binds: Vec<Bind>) -> Result<PgArguments, sqlx::Error> {
    let mut args = PgArguments::default();
    for b in binds {
        match b {
            Bind::Text(v) => args.add(v),
            Bind::OptText(v) => args.add(v),
            Bind::Int(v) => args.add(v),
            Bind::OptInt(v) => args.add(v),
            Bind::Float(v) => args.add(v),
        }
        .map_err(sqlx::Error::Encode)?;
    }
    Ok(args)
}
