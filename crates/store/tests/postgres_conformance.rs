//! The store conformance suite (`conformance/`) against PostgreSQL: one
//! fresh database per case (`harness_test_<id>`), dropped when the case
//! ends; `connect` opens another `PgStore` (its own pool) on it, as a
//! second server would.
//!
//! The server is `HARNESS_TEST_POSTGRES_URL` (any database on it: the
//! cases create their own), else `postgres://postgres@127.0.0.1:5432/postgres`
//! when something answers there. With neither, every case prints
//! "skipped: no PostgreSQL" and passes.

#[macro_use]
mod conformance;

use std::{sync::Arc, time::Duration};

use conformance::{Backend, Connect};
use harness_core::{ids, store::Store};
use harness_store::{PgOptions, PgStore};
use sqlx::{AssertSqlSafe, Connection, PgConnection};

const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// The admin URL of the server under test, if there is one.
fn server_url() -> Option<String> {
    if let Ok(url) = std::env::var("HARNESS_TEST_POSTGRES_URL")
        && !url.trim().is_empty()
    {
        return Some(url);
    }
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 5432));
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300))
        .ok()
        .map(|_| DEFAULT_URL.to_string())
}

/// `url` with its database replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{database}{query}", &base[..host_end])
}

/// Drops the case's database when the case ends (on a thread of its own:
/// `Drop` cannot await, and the test's runtime may be shutting down).
struct DropDatabase {
    admin: String,
    name: String,
}

impl Drop for DropDatabase {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let mut conn = PgConnection::connect(&admin)
                    .await
                    .map_err(|e| e.to_string())?;
                sqlx::query(AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await
                .map_err(|e| e.to_string())?;
                conn.close().await.map_err(|e| e.to_string())
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test database {}: {dropped:?}", self.name);
        }
    }
}

/// A fresh, empty database on the server (not migrated yet).
async fn fresh_database(admin: &str) -> (String, DropDatabase) {
    let name = format!("harness_test_{}", ids::new_id());
    let mut conn = PgConnection::connect(admin).await.unwrap();
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    let url = with_database(admin, &name);
    (
        url,
        DropDatabase {
            admin: admin.to_string(),
            name,
        },
    )
}

async fn postgres() -> Option<Backend> {
    let Some(admin) = server_url() else {
        eprintln!(
            "skipped: no PostgreSQL (set HARNESS_TEST_POSTGRES_URL or run one on 127.0.0.1:5432)"
        );
        return None;
    };
    let (url, guard) = fresh_database(&admin).await;
    let store = PgStore::open(PgOptions::new(&url))
        .await
        .unwrap()
        .with_node_dead_after(conformance::nodes::NODE_DEAD_AFTER);
    let connect: Connect = Arc::new(move || {
        let url = url.clone();
        Box::pin(async move {
            let store = PgStore::open(PgOptions::new(&url))
                .await
                .unwrap()
                .with_node_dead_after(conformance::nodes::NODE_DEAD_AFTER);
            Arc::new(store) as Arc<dyn Store>
        })
    });
    Some(Backend {
        store: Arc::new(store),
        connect,
        _guard: Box::new(guard),
    })
}

conformance_suite!(postgres);

/// Two servers starting at once on an empty database: both open, and the
/// migrations ran once (sqlx's migrator holds `pg_advisory_lock`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_opening_an_empty_database_migrate_once() {
    let Some(admin) = server_url() else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let (url, _guard) = fresh_database(&admin).await;
    let (a, b) = tokio::join!(
        PgStore::open(PgOptions::new(&url)),
        PgStore::open(PgOptions::new(&url))
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let runs: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(a.pool())
            .await
            .unwrap();
    let files = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../migrations/postgres"
    ))
    .unwrap()
    .count();
    assert_eq!(runs.len(), files, "one row per migration: {runs:?}");
    assert!(runs.iter().all(|(_, ok)| *ok));
    a.close().await;
    b.close().await;
}

/// Migration 0002 keys the delivery mapping per chat on a database that
/// already holds mappings: they keep their id and values and get the
/// gateway of their outbound row ('' when it is gone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_delivery_mapping_becomes_per_chat_with_its_rows() {
    use harness_core::store::GatewayStore;
    let Some(admin) = server_url() else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let (url, _guard) = fresh_database(&admin).await;
    let store = PgStore::open(PgOptions::new(&url)).await.unwrap();
    // Back to the schema of 0001, with mappings written then.
    for sql in [
        "DROP TABLE gateway_replies",
        "DROP TABLE gateway_task_links",
        "DROP TABLE gateway_inbound",
        "DROP TABLE gateway_nonces",
        "DROP INDEX harness_delivery_map_message",
        "ALTER TABLE harness_delivery_map DROP CONSTRAINT harness_delivery_map_pkey",
        "ALTER TABLE harness_delivery_map DROP COLUMN gateway",
        "ALTER TABLE harness_delivery_map ADD PRIMARY KEY (id)",
        "INSERT INTO harness_outbound (id, dedup_key, gateway, scope, message, state, created_at, \
         updated_at) VALUES ('o1', 'k1', 'openclaw', 'work', 'm', 'DELIVERED', 1, 1)",
        "INSERT INTO harness_delivery_map (id, harness_message_id, task_id, outbound_id, platform, \
         chat_id, platform_message_id, scope, expect_reply, created_at) VALUES ('telegram:77', \
         NULL, 'ct', 'o1', 'telegram', '-100111', '77', 'work', 1, 1000)",
        "INSERT INTO harness_delivery_map (id, harness_message_id, task_id, outbound_id, platform, \
         chat_id, platform_message_id, scope, expect_reply, created_at) VALUES ('feishu:om_1', \
         NULL, 'cu', 'gone', 'feishu', 'oc_a', 'om_1', 'unattended', 0, 2000)",
        "DELETE FROM _sqlx_migrations WHERE version = 2",
    ] {
        sqlx::query(sql).execute(store.pool()).await.unwrap();
    }
    store.close().await;

    let store = PgStore::open(PgOptions::new(&url)).await.unwrap();
    let kept = store
        .delivery_mappings("openclaw", "telegram", "77")
        .await
        .unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (
            kept[0].id.as_str(),
            kept[0].gateway.as_str(),
            kept[0].task_id.as_deref()
        ),
        ("telegram:77", "openclaw", Some("ct"))
    );
    assert!(kept[0].expect_reply);
    let orphan = store
        .delivery_mappings("hermes", "feishu", "om_1")
        .await
        .unwrap();
    assert_eq!(orphan.len(), 1);
    assert_eq!(orphan[0].gateway, "");
    sqlx::query(
        "INSERT INTO harness_delivery_map (id, gateway, task_id, platform, chat_id, \
         platform_message_id, scope, created_at) \
         VALUES ('o2', 'openclaw', 'cv', 'telegram', '-100222', '77', 'work', 3000)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    assert_eq!(
        store
            .delivery_mappings("openclaw", "telegram", "77")
            .await
            .unwrap()
            .len(),
        2,
        "the same id in a second chat is a second row"
    );
    store.close().await;
}

/// Leases are judged by PostgreSQL's clock, not the caller's: a
/// node whose clock runs an hour ahead cannot steal a live lease or find it
/// expired, and a node whose clock runs an hour behind still holds its lease
/// for its whole length.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_skewed_node_clock_cannot_steal_or_shorten_a_live_lease() {
    use chrono::{Duration, Utc};
    use conformance::support::{harness_on, new_task};
    use harness_core::{deliveries::NewInput, outbox::PushInput, settings::NotifyTarget};
    let Some(b) = postgres().await else {
        return;
    };
    let (a, skewed) = (b.another().await, b.another().await);
    let t = new_task(a.as_ref(), "leases").await;
    let input = |key: &str| NewInput {
        id: ids::new_id(),
        task_id: t.clone(),
        node_id: None,
        text: key.into(),
        submit: true,
        dedup_key: key.into(),
        resume: false,
        now: Utc::now(),
    };
    a.enqueue_input(input("d1")).await.unwrap();
    let h = harness_on(a.clone(), "node-a");
    h.settings()
        .set_notify_targets(vec![NotifyTarget {
            id: None,
            label: "chat".into(),
            gateway: "openclaw".into(),
            downstream: Some("telegram".into()),
            dest: Some("-100".into()),
            profile: None,
            scope: "work".into(),
            active: true,
            include_screen: false,
            report_at: None,
            report_time_zone: None,
            report_since: None,
            language: None,
        }])
        .await
        .unwrap();
    h.outbox()
        .push_to_human(PushInput {
            task_id: Some(t.clone()),
            message: Some("hello".into()),
            scope: Some("work".into()),
            expect_reply: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    // Node A leases both for 60 s (its clock is right).
    let now = Utc::now();
    let lease = now + Duration::seconds(60);
    let d = a
        .claim_deliveries("node-a:1", "node-a", true, now, lease, 10)
        .await
        .unwrap();
    assert_eq!(d.rows.len(), 1);
    let o = a.claim_outbound("node-a:1", now, lease, 10).await.unwrap();
    assert_eq!(o.len(), 1);
    // A node an hour ahead: the leases are live by the database's clock.
    let ahead = Utc::now() + Duration::hours(1);
    let stolen = skewed
        .claim_deliveries(
            "node-b:1",
            "node-a",
            true,
            ahead,
            ahead + Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    assert!(stolen.rows.is_empty() && stolen.unverified.is_empty());
    let lapsed = harness_core::store::Lapsed::Expired;
    let outbox = &harness_core::store::OUTBOX;
    assert!(
        skewed
            .recover_work(outbox, lapsed, ahead)
            .await
            .unwrap()
            .is_empty()
    );
    let turn = skewed
        .claim_outbound("node-b:1", ahead, ahead + Duration::seconds(60), 10)
        .await
        .unwrap();
    assert!(turn.is_empty(), "a live lease is not stolen: {turn:?}");
    assert_eq!(
        a.get_delivery(&d.rows[0].id)
            .await
            .unwrap()
            .unwrap()
            .lease_owner
            .as_deref(),
        Some("node-a:1")
    );
    // A node an hour behind takes a 60 s lease: it ends 60 s after the
    // database's now, not an hour ago, and the row is due for it (due times
    // use the later clock).
    let d2 = a.enqueue_input(input("d2")).await.unwrap().0;
    let behind = Utc::now() - Duration::hours(1);
    let late = skewed
        .claim_deliveries(
            "node-c:1",
            "node-a",
            true,
            behind,
            behind + Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        late.rows.iter().map(|r| &r.id).collect::<Vec<_>>(),
        vec![&d2.id]
    );
    let db_now = skewed.db_now().await.unwrap();
    let end = late.rows[0].lease_expires_at.unwrap();
    assert!(
        end > db_now + Duration::seconds(50),
        "its lease ends {end}, the database's now is {db_now}"
    );
    let again = a
        .claim_deliveries(
            "node-a:2",
            "node-a",
            true,
            Utc::now(),
            Utc::now() + Duration::seconds(60),
            10,
        )
        .await
        .unwrap();
    assert!(again.rows.is_empty(), "every lease is live: {again:?}");
}

/// The pool pings only connections idle for a while (`PING_IDLE_AFTER`,
/// 1 s): connections the server cut while they were idle are replaced, so
/// the next call after a database restart or a proxy's idle timeout works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_cut_while_idle_are_replaced_before_use() {
    use harness_core::store::TaskStore;
    let Some(admin) = server_url() else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let (url, _guard) = fresh_database(&admin).await;
    let store = PgStore::open(PgOptions::new(&url)).await.unwrap();
    // Several pooled connections, all idle afterwards.
    let reads = tokio::join!(
        store.get_task("nosuch"),
        store.get_task("nosuch"),
        store.get_task("nosuch"),
        store.get_task("nosuch")
    );
    for read in [reads.0, reads.1, reads.2, reads.3] {
        assert!(read.unwrap().is_none());
    }
    let mut admin_conn = PgConnection::connect(&url).await.unwrap();
    let own_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut admin_conn)
        .await
        .unwrap();
    let cut: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> $1",
    )
    .bind(own_pid)
    .fetch_all(&mut admin_conn)
    .await
    .unwrap();
    assert!(!cut.is_empty(), "the store's connections were cut");
    // Past the idle threshold, every call works on a fresh connection.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    for _ in 0..8 {
        assert!(store.get_task("nosuch").await.unwrap().is_none());
    }
    admin_conn.close().await.unwrap();
    store.close().await;
}

/// A node's heartbeat does not wait for a pooled connection: with every
/// one of them held (a burst of requests), it still commits at once — a
/// busy node is never declared dead and fenced for being busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_is_written_while_every_pooled_connection_is_busy() {
    use harness_core::store::NodeStore;
    let Some(admin) = server_url() else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let (url, _guard) = fresh_database(&admin).await;
    let mut options = PgOptions::new(&url);
    options.max_connections = 2;
    let store = PgStore::open(options).await.unwrap();
    assert!(
        store
            .node_heartbeat("n1", "boot-1", None, None)
            .await
            .unwrap()
    );
    let held = (
        store.pool().acquire().await.unwrap(),
        store.pool().acquire().await.unwrap(),
    );
    let beat = tokio::time::timeout(
        Duration::from_secs(5),
        store.node_heartbeat("n1", "boot-1", None, None),
    )
    .await;
    assert!(
        matches!(beat, Ok(Ok(true))),
        "the heartbeat waited for the busy pool: {beat:?}"
    );
    drop(held);
    store.close().await;
}

/// Whether some connection waits for an advisory lock, read from
/// `pg_locks`: a two-key one (a task's) or a one-key one (the store's).
async fn waiting_for(pool: &sqlx::PgPool, two_keys: bool) -> bool {
    let objsubid = if two_keys { 2 } else { 1 };
    sqlx::query_scalar::<_, i64>(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
         AND objsubid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .bind(objsubid)
    .fetch_one(pool)
    .await
    .unwrap()
        > 0
}

async fn until_waiting(pool: &sqlx::PgPool, two_keys: bool, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !waiting_for(pool, two_keys).await {
        assert!(std::time::Instant::now() < deadline, "{what} never waited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The store's write lock is narrowed for asks: with one task's ask in
/// flight (a transaction holding what `harness_record_ask` holds: the store
/// lock shared and the task's lock), an ask of another task commits at
/// once, an ask of the same task waits for it, and a write that needs the
/// store alone (creating a task) waits too; both go through when it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_ask_waits_only_for_its_own_task_and_a_store_wide_write_waits_for_both() {
    use conformance::support::{ask, new_task, now};
    use harness_core::store::MessageStore;
    let Some(admin) = server_url() else {
        eprintln!("skipped: no PostgreSQL");
        return;
    };
    let (url, _guard) = fresh_database(&admin).await;
    let store = Arc::new(PgStore::open(PgOptions::new(&url)).await.unwrap());
    let (t1, t2) = (
        new_task(store.as_ref(), "held").await,
        new_task(store.as_ref(), "free").await,
    );
    let mut held = store.pool().begin().await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock_shared(29380541684216691)")
        .execute(&mut *held)
        .await
        .unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock(1751216755, hashtext($1))")
        .bind(&t1)
        .execute(&mut *held)
        .await
        .unwrap();

    tokio::time::timeout(
        Duration::from_secs(10),
        store.record_ask(ask(&t2, "another task?", now())),
    )
    .await
    .expect("an ask of another task waited for the held one")
    .unwrap();

    let s = store.clone();
    let same = tokio::spawn({
        let t1 = t1.clone();
        async move { s.record_ask(ask(&t1, "the same task?", now())).await }
    });
    until_waiting(store.pool(), true, "an ask of the held task").await;
    assert!(!same.is_finished());

    let s = store.clone();
    let wide = tokio::spawn(async move { new_task(s.as_ref(), "store-wide").await });
    until_waiting(store.pool(), false, "a store-wide write").await;
    assert!(!wide.is_finished());

    held.rollback().await.unwrap();
    let asked = tokio::time::timeout(Duration::from_secs(10), same)
        .await
        .expect("the ask of the held task went through after it")
        .unwrap()
        .unwrap();
    assert_eq!(asked.message.task_id, t1);
    tokio::time::timeout(Duration::from_secs(10), wide)
        .await
        .expect("the store-wide write went through after it")
        .unwrap();
    assert!(store.open_ask(&t1).await.unwrap().is_some());
    assert!(store.open_ask(&t2).await.unwrap().is_some());
}
