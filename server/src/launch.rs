//! Start and stop a server: data dir, store, core, background jobs, router.
//! Used by `harness serve` and, in-process, by the integration tests.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use axum::{Router, middleware};
use harness_core::{
    Harness, HarnessConfig, ids,
    nodes::NodeIdentity,
    work::{Kind, Recovery, Scope},
};
use harness_store::{AnyStore, redact_url};
use tokio::{net::TcpListener, task::JoinHandle};
use tokio_util::sync::CancellationToken;
use tower_http::limit::RequestBodyLimitLayer;

use crate::{
    ServeConfig, assets,
    extract::MAX_BODY_BYTES,
    mcp, routes,
    secrets::DataDir,
    security::OriginPolicy,
    security::same_origin,
    state::AppState,
    terminals::{TerminalConfig, Terminals, held::HolderSettings},
    web,
};

/// A running server.
pub struct Running {
    pub addr: SocketAddr,
    pub signal_dir: std::path::PathBuf,
    pub admin_token: String,
    /// Where the admin token comes from (its file, or the variable), for
    /// the start-up banner: never the token itself.
    pub admin_token_source: String,
    pub harness: Harness,
    pub data_dir: std::path::PathBuf,
    cancel: CancellationToken,
    server: JoinHandle<std::io::Result<()>>,
    jobs: Vec<JoinHandle<()>>,
    store: AnyStore,
    pub terminals: Terminals,
    /// Cancelled when the cluster declared this boot dead (its heartbeat
    /// was refused): the server stops and [`Running::shutdown`] errs.
    fenced: CancellationToken,
    /// One server per data directory (released when this is dropped).
    _lock: crate::datalock::DataLock,
}

impl Running {
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop accepting work, let in-flight requests finish, stop background
    /// jobs, close the database.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        crate::supervised::discovery::remove(&self.data_dir);
        self.cancel.cancel();
        if self.fenced.is_cancelled() {
            self.terminals.shutdown_ending_agents().await;
        } else {
            // Held agents keep running; the next start re-attaches them.
            self.terminals.shutdown();
        }
        // Every stage is bounded: a stuck stream, job or pooled connection
        // is reported and left behind, never a shutdown that hangs forever.
        let served = match tokio::time::timeout(SHUTDOWN_STAGE, self.server).await {
            Ok(joined) => joined.context("server task panicked")?,
            Err(_) => {
                tracing::warn!("connections still open after the shutdown drain; leaving them");
                Ok(())
            }
        };
        for job in self.jobs {
            if tokio::time::timeout(SHUTDOWN_STAGE, job).await.is_err() {
                tracing::warn!("a background job did not stop in time; leaving it");
            }
        }
        if tokio::time::timeout(SHUTDOWN_STAGE, self.store.close())
            .await
            .is_err()
        {
            tracing::warn!("database connections still in use at shutdown; closing anyway");
        }
        served.context("server error")?;
        anyhow::ensure!(
            !self.fenced.is_cancelled(),
            "this node was declared dead by the cluster (its heartbeat stalled past \
             --node-dead-after) and its work was taken over by the other nodes; it stopped \
             (its agents with it) so that nothing runs twice — start it again to rejoin"
        );
        Ok(())
    }

    /// The token that stops the server (cancel it to begin shutdown).
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// The longest each shutdown stage (connections, jobs, database) may take.
const SHUTDOWN_STAGE: std::time::Duration = std::time::Duration::from_secs(10);

pub async fn launch(config: ServeConfig, listener: TcpListener) -> anyhow::Result<Running> {
    let addr = listener
        .local_addr()
        .context("listener has no local address")?;
    anyhow::ensure!(
        config.node_dead_after >= config.node_heartbeat.saturating_mul(2),
        "the node dead-after ({:?}) must be at least twice the heartbeat interval ({:?})",
        config.node_dead_after,
        config.node_heartbeat
    );
    let data = DataDir::prepare_with(&config.data_dir, &config.secrets)?;
    let lock = crate::datalock::DataLock::acquire(&data.root)?;
    // The backend is chosen by the URL's scheme (sqlite:// today).
    let store = AnyStore::open(&config.database_url())
        .await
        .with_context(|| {
            format!(
                "cannot open the database {}",
                redact_url(&config.database_url())
            )
        })?
        .with_node_dead_after(config.node_dead_after);
    if let Some(path) = config.database_url().strip_prefix("sqlite://") {
        crate::secrets::restrict_database_files(std::path::Path::new(path));
    }
    let mut core_config = HarnessConfig::new(ids::token_hash(&data.admin_token));
    core_config.pending_ttl = config.pending_ttl;
    core_config.sweep_interval = config.sweep_interval;
    core_config.signal_dir = Some(data.signals.clone());
    core_config.node_id = crate::node::load_or_create(&data.root)?;
    core_config.delivery_wait = config.delivery_wait;
    // This boot's delivery worker: replies answered here are leased to it
    // by their own transaction (see `workers::deliveries`).
    let boot_owner = format!("{}:{}", core_config.node_id, ids::new_id());
    core_config.delivery_owner = Some(boot_owner.clone());
    core_config.outbox_wait = config.outbox_wait;
    core_config.outbox_max_attempts = config.outbox.max_attempts.max(1);
    core_config.rate_limits = config.rate_limits;
    core_config.approval_wait_max = config.approval_wait_max;
    core_config.approval_parent_step = config.approval_parent_step;
    core_config.internal_api_key = Some(data.internal_key.clone());
    core_config.node_key = Some(data.node_key.clone());
    let cancel = CancellationToken::new();
    // PostgreSQL: every node's events reach this one (LISTEN/NOTIFY).
    let (bus, bus_job) = store.event_bus(cancel.child_token()).await;
    let harness = Harness::with_bus(store.port(), bus, core_config);
    // This node's row in the registry, written before it serves.
    let mut me = NodeIdentity::from_owner(&boot_owner, config.node_url.clone())
        .context("the lease owner is not <node>:<boot>")?;
    me.name = config.node_name.clone().or_else(crate::node::default_name);
    harness_core::nodes::first_heartbeat(&harness, &me)
        .await
        .context("cannot write this node's heartbeat")?;
    // A drained node restarted stays drained (`harness_core::drain`): known
    // before any worker claims.
    harness.cluster().follow_drain().await;
    harness.attach_gateway_secret(data.gateway_secret());
    // A crash can leave signal files that disagree with the database: the
    // database wins. A failure here is logged, not fatal (the hook fails open).
    if let Err(err) = harness.tasks().reconcile_signals().await {
        tracing::error!(error = ?err, "cannot reconcile unattended signal files");
    }

    // Deliveries this node was doing when it stopped (the engine's one
    // recovery pass, `harness_core::work::recovery`): a row caught mid-write
    // becomes UNVERIFIED (never written twice), the others are due again.
    // The outbox and reply workers recover their own kinds as they start.
    let recovered = harness
        .cluster()
        .recover_work(Kind::Deliveries, Scope::Boot(&boot_owner))
        .await
        .context("cannot release the previous run's deliveries")?;
    if recovered != Recovery::default() {
        tracing::warn!(
            unverified = recovered.unverified,
            released = recovered.released,
            "deliveries of the previous run recovered at start-up"
        );
    }

    let mut jobs = vec![tokio::spawn(harness_core::sweeper::run(
        harness.clone(),
        cancel.child_token(),
    ))];
    jobs.extend(bus_job);
    // Other nodes' wakes and setting changes (`harness_core::cluster`).
    jobs.push(tokio::spawn(harness_core::cluster::run(
        harness.clone(),
        cancel.child_token(),
    )));
    // A boot the cluster declared dead (fenced) stops the whole node: see
    // `run_heartbeat`; `shutdown` then answers an error (a non-zero exit).
    let fenced = CancellationToken::new();
    jobs.push(tokio::spawn(harness_core::nodes::run_heartbeat(
        harness.clone(),
        me,
        config.node_heartbeat,
        cancel.child_token(),
        fenced.clone(),
    )));
    jobs.push(tokio::spawn({
        let (fenced, cancel) = (fenced.clone(), cancel.clone());
        async move {
            tokio::select! {
                () = fenced.cancelled() => cancel.cancel(),
                () = cancel.cancelled() => {}
            }
        }
    }));
    // What a dead node left is recovered by the survivors (every node runs
    // the pass; the database decides each row once).
    jobs.push(tokio::spawn(harness_core::nodes::run_recovery(
        harness.clone(),
        config.node_heartbeat,
        cancel.child_token(),
    )));
    // Defaults of structured questions whose deadline passed (also those
    // overdue while the server was down: its first pass runs now).
    jobs.push(tokio::spawn(harness_core::deadline::run(
        harness.clone(),
        cancel.child_token(),
    )));

    // Hooks and the sandbox launcher run from a private copy of this
    // executable that agents cannot change (`private_exe`).
    // Holders run from the small holder binary this build embeds, written
    // next to it the same way.
    let source = crate::private_exe::Source::for_configured(&config.harness_bin);
    let root = data.root.clone();
    let copy_started = std::time::Instant::now();
    let installed = tokio::task::spawn_blocking(move || {
        crate::private_exe::install(&root, &source, crate::private_exe::HolderImage::embedded())
    })
    .await
    .context("the copy of the harness executable did not finish")?
    .context("cannot make the private copy of the harness executable")?;
    tracing::info!(
        path = %installed.harness.display(),
        holder = %installed.holder.as_deref().map_or_else(|| "harness hold (none embedded)".into(), |p| p.display().to_string()),
        reused = installed.reused,
        took_ms = copy_started.elapsed().as_millis(),
        "hooks and the agent sandbox run from a private copy of this executable"
    );
    let harness_bin = installed.harness;
    let mut terminal_config =
        TerminalConfig::new(agent_base_url(addr), &data.root, data.signals.clone());
    terminal_config.harness_bin = harness_bin.clone();
    terminal_config.stall_after = config.agent_watch.stall_after;
    terminal_config.holder_bin = installed.holder;
    terminal_config.nodes = crate::node_call::NodeClient::new(data.node_key.clone());
    let database_dir = config
        .database_url()
        .strip_prefix("sqlite://")
        .and_then(|p| {
            std::path::Path::new(p)
                .parent()
                .map(std::path::Path::to_path_buf)
        });
    // The probe runs the launcher once (a child process): off the async workers.
    let (mode, launcher, root) = (config.agent_isolation, harness_bin, data.root.clone());
    // A cluster's shared secrets directory is hidden from agents too.
    let secrets_dir = std::fs::canonicalize(&data.secrets).ok();
    terminal_config.isolation = tokio::task::spawn_blocking(move || {
        crate::isolation::AgentIsolation::decide(
            mode,
            &launcher,
            &root,
            database_dir.as_deref(),
            secrets_dir.as_deref(),
        )
    })
    .await
    .context("the isolation probe did not finish")?
    .map_err(anyhow::Error::msg)?;
    if terminal_config.isolation.active() {
        tracing::info!("{}", terminal_config.isolation.describe());
    } else {
        tracing::warn!("{}", terminal_config.isolation.describe());
    }
    terminal_config.holders = config.holders.enabled.then(|| HolderSettings {
        dir: data.root.join("holders"),
        // In a cluster, a node down longer than --node-dead-after has its
        // runs taken over by the others: its held agents end by then, so
        // nothing runs twice.
        orphan_timeout: if config.node_url.is_some() {
            config.holders.orphan_timeout.min(config.node_dead_after)
        } else {
            config.holders.orphan_timeout
        },
    });
    let terminals = Terminals::new(harness.clone(), terminal_config);
    harness.attach_runtime(Arc::new(terminals.clone()));
    // Agents held by holders outlived the previous process: re-attached
    // before any worker types into them. The executions nothing holds any
    // more died with it (a reboot, holders off): marked interrupted; OPEN
    // asks stay answerable and tasks restartable.
    let reattach_started = std::time::Instant::now();
    let reattached = terminals.reattach_holders().await;
    if reattached.attached + reattached.exited + reattached.incompatible + reattached.ended > 0 {
        tracing::info!(
            took_ms = reattach_started.elapsed().as_millis(),
            attached = reattached.attached,
            exited = reattached.exited,
            incompatible = reattached.incompatible,
            ended = reattached.ended,
            "agents held across the restart"
        );
    }
    if reattached.incompatible > 0 {
        tracing::error!(
            agents = reattached.incompatible,
            protocols = ?reattached.incompatible_protocols,
            reads = %format!(
                "{}..={}",
                harness_holder::protocol::MIN_VERSION,
                harness_holder::protocol::VERSION
            ),
            "agents run in holders whose protocol this build cannot read: they are left \
             running (their tasks say so) and each ends its agent by its orphan timeout; Stop \
             on a task ends its holder and agent now, or run a Harness build that reads that \
             protocol to take them over (`harness doctor` lists them)"
        );
    }
    // What no holder holds died (a reboot): marked interrupted, each owed
    // its reboot decision (resumed below once the server listens).
    harness
        .tasks()
        .interrupt_orphaned_executions(&reattached.held)
        .await
        .context("cannot mark interrupted executions")?;
    // The outbox worker (gateway sends): recovers this node's sends caught
    // by the last stop, then claims due rows.
    let outbox = config.outbox.clone();
    // Replies to inbound gateway messages: the same CLIs and settings.
    jobs.push(tokio::spawn(crate::workers::gateway_replies::run(
        harness.clone(),
        boot_owner.clone(),
        outbox.clone(),
        cancel.child_token(),
    )));
    jobs.push(tokio::spawn(crate::workers::outbox::run(
        harness.clone(),
        boot_owner.clone(),
        outbox,
        cancel.child_token(),
    )));
    // The daily report per notify target, at its time in its zone
    // (`harness_core::report::daily`), once per target and local date.
    jobs.push(tokio::spawn(crate::workers::daily_reports::run(
        harness.clone(),
        cancel.child_token(),
    )));
    // Timed automatic actions on unattended agents (`harness_core::agent_actions`).
    jobs.push(tokio::spawn(crate::workers::agent_actions::run(
        terminals.clone(),
        boot_owner.clone(),
        cancel.child_token(),
    )));
    jobs.push(tokio::spawn(crate::workers::deliveries::run(
        terminals.clone(),
        boot_owner.clone(),
        config.deliveries.clone(),
        cancel.child_token(),
    )));
    jobs.push(tokio::spawn(crate::workers::inbox::run(
        terminals.clone(),
        std::time::Duration::from_millis(500),
        cancel.child_token(),
    )));
    // One truthful state per live agent (`terminals::agent_watch`).
    jobs.push(tokio::spawn(crate::terminals::agent_watch::run(
        terminals.clone(),
        config.agent_watch.clone(),
        cancel.child_token(),
    )));
    // Runs whose CLI ran tools no pre-tool check saw (`harness_core::ungated`).
    jobs.push(tokio::spawn(crate::ungated_watch::run(
        terminals.clone(),
        config.ungated_watch.clone(),
        cancel.child_token(),
    )));
    let site = assets::Site::load(config.site_root.as_deref());
    let mut leptos = web::leptos_options(
        config
            .site_root
            .as_deref()
            .unwrap_or(std::path::Path::new("")),
        addr,
    );
    // The bundle's content-hashed name: `/pkg/{name}.js`, `_bg.wasm`, `.css`.
    leptos.output_name = site.output_name().into();
    let state = AppState {
        harness: harness.clone(),
        leptos,
        origin: OriginPolicy::for_bind(addr, &with_node_host(&config)),
        terminals: terminals.clone(),
        login: crate::login::Login::new(harness_core::sessions::Sessions::new(
            store.sessions(),
            ids::token_hash(&data.admin_token),
            harness_core::sessions::Sessions::DEFAULT_TTL,
        )),
        streams: crate::serve::StreamLimits::new(&config.limits),
        metrics: crate::metrics::Metrics::new(&data.metrics_token),
        data_root: data.root.clone(),
    };
    let router = build_router(&state, &site, cancel.child_token());
    let server = tokio::spawn(crate::serve::serve(
        listener,
        router,
        config.limits.clone(),
        cancel.clone(),
    ));
    // Interrupted unattended tasks resumed once, off the start path
    // (`harness_core::reboot`; the starts in `terminals::reboot`).
    jobs.push(tokio::spawn(crate::terminals::reboot::run(
        terminals.clone(),
        boot_owner,
        cancel.child_token(),
    )));
    // `harness run` finds this server through `<data-dir>/server.json` (supervised mode).
    if let Err(err) = crate::supervised::discovery::write(&data.root, &agent_base_url(addr)) {
        tracing::warn!(%err, "cannot write the discovery file; `harness run` will not find this server");
    }
    Ok(Running {
        addr,
        signal_dir: data.signals.clone(),
        admin_token: data.admin_token,
        admin_token_source: if config.secrets.admin_token.is_some() {
            format!("${}", crate::secrets::ADMIN_TOKEN_ENV)
        } else {
            data.secrets.join("admin.token").display().to_string()
        },
        harness,
        data_dir: data.root,
        cancel,
        server,
        jobs,
        store,
        terminals,
        fenced,
        _lock: lock,
    })
}

pub fn build_router(state: &AppState, site: &assets::Site, cancel: CancellationToken) -> Router {
    let mcp = Router::new()
        .fallback_service(mcp::service(
            state.harness.clone(),
            state.terminals.clone(),
            cancel.clone(),
        ))
        .layer(middleware::from_fn(mcp::transport::guard))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            mcp::authenticate,
        ))
        .with_state(state.clone());
    Router::new()
        .merge(routes::health())
        .route("/metrics", axum::routing::get(crate::metrics::scrape))
        .merge(crate::sse::routes_until(cancel.child_token()))
        .nest(
            "/api",
            routes::api()
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    crate::signed::verify,
                ))
                .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
                .layer(middleware::from_fn(crate::json_errors::json_errors))
                .layer(assets::compression()),
        )
        .nest_service("/mcp", mcp)
        .route(
            "/ws/terminal/{task_id}",
            axum::routing::get(crate::terminals::ws::handler),
        )
        // Other nodes' calls (signed with the node key, `node_call.rs`).
        .merge(crate::node_call::routes::router(state))
        .route(
            "/login",
            axum::routing::get(crate::login::page).post(crate::login::submit),
        )
        .route(
            "/logout",
            axum::routing::get(crate::login::logout_page).post(crate::login::logout),
        )
        .merge(web::router(state, site).layer(assets::compression()))
        .merge(site.router())
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::metrics::track,
        ))
        .layer(middleware::map_response(assets::html_no_cache))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::login::require,
        ))
        .layer(middleware::from_fn(web::guard_server_fns))
        // Every route: Host allow-list + same-origin (DNS-rebinding defence).
        .layer(middleware::from_fn_with_state(state.clone(), same_origin))
        .layer(middleware::from_fn(crate::security::response_headers))
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(request_span))
        // Every response carries `x-request-id` (the client's, or a new UUID),
        // the same id as the request's log span.
        .layer(tower_http::request_id::PropagateRequestIdLayer::x_request_id())
        .layer(tower_http::request_id::SetRequestIdLayer::x_request_id(
            tower_http::request_id::MakeRequestUuid,
        ))
        .with_state(state.clone())
}

/// The span of one HTTP request: method, path (never the query string — it
/// can carry a login token) and request id.
fn request_span(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    tracing::info_span!(
        "request",
        method = %req.method(),
        path = %req.uri().path(),
        request_id = %id,
    )
}

/// The accepted extra hosts: the configured ones and this node's own URL's
/// (the other nodes of a cluster call it by that name).
fn with_node_host(config: &ServeConfig) -> Vec<String> {
    let mut hosts = config.allowed_hosts.clone();
    if let Some(url) = &config.node_url
        && let Some((_, rest)) = url.split_once("://")
    {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if !authority.is_empty() {
            hosts.push(authority.to_string());
        }
    }
    hosts
}

/// The URL agents use to reach this server: loopback when bound to all interfaces.
fn agent_base_url(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("http://127.0.0.1:{}", addr.port())
    } else {
        format!("http://{addr}")
    }
}
