//! One agent in one PTY.
//!
//! Threads and tasks per session (portable-pty's I/O is blocking):
//! * a reader thread: `read()` → bounded channel (backpressure reaches the
//!   child through the kernel's PTY buffer, never unbounded memory);
//! * a waiter thread: `wait()` for the child's exit status;
//! * a writer thread: ordered writes from a bounded queue;
//! * a pump task: filters terminal queries and fans output out to
//!   subscribers at PTY speed, and queues it for the model; after the child
//!   exits it drains the PTY to EOF (bounded by a quiet period), waits for
//!   the model to catch up, and only then reports the exit;
//! * a model thread: parses the queued (filtered) output into the terminal
//!   model lazily, off the fan-out path: when the output pauses, when
//!   someone waits for the model, or when slow output has waited long
//!   (`model` module). Whoever reads the model first parses what is still
//!   queued, so the screen read reflects every byte read before. The queue
//!   is bounded: under a flood the oldest queued text is skipped unparsed
//!   (its mode-setting sequences are kept), so a flood costs no parsing and
//!   the screen is exact again right after it.

use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use harness_term::ScreenText;
use portable_pty::{CommandBuilder, MasterPty, PtySize};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::inject::{self, Claim, InjectOptions, InjectOutcome, InjectionLedger, PasteMode};
use crate::model::model_loop;
use crate::output::{self, SubscriberLimits, Subscription, ViewerGuard};
use crate::remote::RemotePty;
use crate::stream::{Shared, WriteReq, lock, pump, read_loop, write_loop};
use crate::{PtyError, SpawnSpec, kill};

/// Longest [`PtySession::sync_model`] waits.
const SYNC_MODEL_MAX: Duration = Duration::from_secs(10);

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitStatus {
    /// Exit code (1 when killed by a signal, as portable-pty reports it).
    pub code: u32,
    /// Name of the signal that killed it, if any.
    pub signal: Option<String>,
}

impl ExitStatus {
    /// Exit code 0 and no signal.
    pub fn success(&self) -> bool {
        self.code == 0 && self.signal.is_none()
    }

    /// WebSocket close code for the end of a terminal: `4000 + (code & 0xFF)`.
    pub fn ws_close_code(&self) -> u16 {
        4000 + u16::from(self.code.to_le_bytes()[0])
    }
}

impl From<portable_pty::ExitStatus> for ExitStatus {
    fn from(s: portable_pty::ExitStatus) -> Self {
        Self {
            code: s.exit_code(),
            signal: s.signal().map(str::to_owned),
        }
    }
}

/// Tuning of a session. The defaults suit agents.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// Chunks buffered between the reader thread and the pump.
    pub read_queue: usize,
    /// Read buffer size of the reader thread.
    pub read_buf: usize,
    /// Writes queued for the writer thread.
    pub write_queue: usize,
    /// Scrollback rows of the terminal model.
    pub scrollback: usize,
    /// Rows of scrollback included in a subscriber's snapshot.
    pub snapshot_history: usize,
    /// After the child exits, stop draining when no output arrived for this
    /// long (a descendant may keep the terminal open).
    pub drain_quiet: Duration,
    /// After the child exits, stop draining after this long in any case.
    pub drain_max: Duration,
    /// Injection ids remembered.
    pub ledger_capacity: usize,
    /// Default queue limits of subscribers.
    pub subscriber: SubscriberLimits,
    /// Most output bytes queued for the terminal model; beyond it the
    /// oldest queued text is skipped (see the module docs).
    pub model_lag_max: usize,
    /// An injection ledger to share (e.g. the one of the previous session
    /// of the same execution); `None` creates a fresh one.
    pub ledger: Option<Arc<InjectionLedger>>,
    /// Longest the exit report waits for the terminal model to catch up.
    pub model_sync_exit: Duration,
    /// The output paused this long: the model thread parses what is queued.
    pub model_parse_quiet: Duration,
    /// Output queued this long is parsed even without a pause (unless it
    /// floods: half of `model_lag_max` queued).
    pub model_parse_max_delay: Duration,
    /// Test hook: the model thread panics on output containing these bytes.
    #[doc(hidden)]
    pub model_panic_marker: Option<Vec<u8>>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            read_queue: 64,
            read_buf: 64 * 1024,
            write_queue: 64,
            scrollback: harness_term::DEFAULT_SCROLLBACK,
            snapshot_history: 200,
            drain_quiet: Duration::from_millis(300),
            drain_max: Duration::from_secs(3),
            ledger_capacity: inject::DEFAULT_LEDGER_CAPACITY,
            subscriber: SubscriberLimits::default(),
            model_lag_max: 1024 * 1024,
            ledger: None,
            model_sync_exit: Duration::from_secs(5),
            model_parse_quiet: crate::model::PARSE_QUIET,
            model_parse_max_delay: crate::model::PARSE_MAX_DELAY,
            model_panic_marker: None,
        }
    }
}

/// Result of waiting for an input boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// The provider reported the end of its turn ([`PtySession::mark_turn_complete`]).
    TurnComplete,
    /// No output for the requested quiet period: idle at its prompt.
    Idle,
    /// The maximum wait elapsed first.
    TimedOut,
    /// The process exited.
    Exited,
}

/// A live (or exited) program in a PTY. Cheap to share as `Arc<PtySession>`.
/// Dropping the last handle kills it (see [`PtySession::kill`]), unless an
/// agent holder owns the PTY: then it only detaches.
pub struct PtySession {
    pub(crate) pid: u32,
    pub(crate) program: String,
    pub(crate) shared: Arc<Shared>,
    pub(crate) control: Control,
    pub(crate) writer: mpsc::Sender<WriteReq>,
    pub(crate) ledger: Arc<InjectionLedger>,
    pub(crate) exit_rx: watch::Receiver<Option<ExitStatus>>,
    pub(crate) sizes: crate::sizing::ViewerSizes,
}

/// Who owns the PTY master: this process, or an agent holder reached
/// through [`RemotePty`] (see `remote`).
pub(crate) enum Control {
    Local(Mutex<Box<dyn MasterPty + Send>>),
    Remote(Arc<dyn RemotePty>),
}

impl std::fmt::Debug for PtySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtySession")
            .field("pid", &self.pid)
            .field("program", &self.program)
            .field("exit", &*self.exit_rx.borrow())
            .finish_non_exhaustive()
    }
}

struct Spawned {
    master: Box<dyn MasterPty + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    reader: Box<dyn Read + Send>,
    writer: Box<dyn Write + Send>,
    pid: u32,
}

fn open_and_spawn(spec: &SpawnSpec) -> Result<Spawned, PtyError> {
    let program = spec.argv.first().ok_or(PtyError::EmptyArgv)?;
    let (rows, cols) = harness_term::clamp_size(spec.rows, spec.cols);
    let size = PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    };
    let pair = portable_pty::native_pty_system()
        .openpty(size)
        .map_err(|e| PtyError::spawn(program, e))?;
    let mut cmd = CommandBuilder::from_argv(spec.argv.iter().map(Into::into).collect());
    cmd.env_clear();
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    cmd.cwd(&spec.cwd);
    let child = pair
        .slave
        .spawn_command(cmd)
        .map_err(|e| PtyError::spawn(program, e))?;
    // The parent must not keep the slave open, or EOF never arrives.
    drop(pair.slave);
    let mut child = child;
    let pid = child.process_id().unwrap_or(0);
    let io = pair
        .master
        .try_clone_reader()
        .and_then(|r| Ok((r, pair.master.take_writer()?)));
    match io {
        Ok((reader, writer)) => Ok(Spawned {
            master: pair.master,
            child,
            reader,
            writer,
            pid,
        }),
        Err(e) => {
            let _ = child.kill();
            Err(PtyError::spawn(program, e))
        }
    }
}

fn thread(name: String, f: impl FnOnce() + Send + 'static) -> Result<(), PtyError> {
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(f)
        .map(drop)
        .map_err(|e| PtyError::spawn(&name, e))
}

impl PtySession {
    /// Spawns `spec` with default [`SessionOptions`].
    pub async fn spawn(spec: SpawnSpec) -> Result<Arc<Self>, PtyError> {
        Self::spawn_with(spec, SessionOptions::default()).await
    }

    /// Spawns `spec` in a new PTY (blocking work runs on the blocking pool).
    /// Must be called inside a tokio runtime.
    pub async fn spawn_with(spec: SpawnSpec, opts: SessionOptions) -> Result<Arc<Self>, PtyError> {
        let program = spec.argv.first().cloned().ok_or(PtyError::EmptyArgv)?;
        if !spec.cwd.is_dir() {
            return Err(PtyError::InvalidCwd(spec.cwd.clone()));
        }
        let (rows, cols) = harness_term::clamp_size(spec.rows, spec.cols);
        let spawned = tokio::task::spawn_blocking(move || open_and_spawn(&spec))
            .await
            .map_err(|_| PtyError::TaskGone)??;
        let Spawned {
            master,
            mut child,
            reader,
            writer,
            pid,
        } = spawned;
        tracing::debug!(pid, program = %program, "spawned in pty");

        let (exit_tx, exit_rx) = watch::channel(None);
        let shared = Arc::new(Shared::new(rows, cols, &opts, exit_tx));

        let (chunk_tx, chunk_rx) = mpsc::channel::<Bytes>(opts.read_queue.max(1));
        let (status_tx, status_rx) = oneshot::channel::<ExitStatus>();
        let (write_tx, write_rx) = mpsc::channel::<WriteReq>(opts.write_queue.max(1));

        let read_buf = opts.read_buf.max(1024);
        let counter = shared.clone();
        let started = thread(format!("pty-read-{pid}"), move || {
            read_loop(reader, &chunk_tx, read_buf, &counter.reads);
        })
        .and_then(|()| {
            thread(format!("pty-write-{pid}"), move || {
                write_loop(writer, write_rx)
            })
        })
        .and_then(|()| {
            let shared = shared.clone();
            thread(format!("pty-model-{pid}"), move || model_loop(&shared))
        });
        if let Err(e) = started {
            let _ = child.kill();
            shared.close();
            return Err(e);
        }
        let waiter = thread(format!("pty-wait-{pid}"), move || {
            let status = match child.wait() {
                Ok(s) => ExitStatus::from(s),
                Err(e) => {
                    tracing::warn!(pid, error = %e, "wait for child failed");
                    ExitStatus {
                        code: 1,
                        signal: Some(format!("wait failed: {e}")),
                    }
                }
            };
            let _ = status_tx.send(status);
        });
        if let Err(e) = waiter {
            let _ = kill::signal_session(pid, libc::SIGKILL);
            shared.close();
            return Err(e);
        }
        tokio::spawn(pump(shared.clone(), chunk_rx, status_rx, opts.clone(), pid));

        Ok(Self::assemble(
            (pid, program),
            shared,
            Control::Local(Mutex::new(master)),
            write_tx,
            exit_rx,
            &opts,
            (rows, cols),
        ))
    }

    /// A session from its running parts (a local PTY or a holder's).
    pub(crate) fn assemble(
        (pid, program): (u32, String),
        shared: Arc<Shared>,
        control: Control,
        writer: mpsc::Sender<WriteReq>,
        exit_rx: watch::Receiver<Option<ExitStatus>>,
        opts: &SessionOptions,
        (rows, cols): (u16, u16),
    ) -> Arc<Self> {
        Arc::new(Self {
            pid,
            program,
            shared,
            control,
            writer,
            ledger: opts
                .ledger
                .clone()
                .unwrap_or_else(|| Arc::new(InjectionLedger::new(opts.ledger_capacity))),
            exit_rx,
            sizes: crate::sizing::ViewerSizes::new(rows, cols),
        })
    }

    /// The child's pid (= its process group and session id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// argv\[0\].
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The exit status, once the process exited and its output was drained.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exit_rx.borrow().clone()
    }

    /// True once [`exit_status`](Self::exit_status) is set.
    pub fn has_exited(&self) -> bool {
        self.exit_rx.borrow().is_some()
    }

    /// When the exit was reported.
    pub fn exited_at(&self) -> Option<Instant> {
        lock(&self.shared.stream).exited_at
    }

    /// Waits for the exit (reported only after all output was drained).
    pub async fn wait_exit(&self) -> Result<ExitStatus, PtyError> {
        let mut rx = self.exit_rx.clone();
        let status = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| PtyError::TaskGone)?;
        status.clone().ok_or(PtyError::TaskGone)
    }

    /// Subscribes a viewer with the session's default queue limits.
    pub fn subscribe(&self) -> Subscription {
        self.subscribe_with(self.shared.limits)
    }

    /// Subscribes a viewer: a snapshot of the current screen plus every later
    /// output chunk (terminal queries stripped), gap-free. Counts as a
    /// viewer for the keepalive until dropped.
    pub fn subscribe_with(&self, limits: SubscriberLimits) -> Subscription {
        self.shared.viewers.fetch_add(1, Ordering::AcqRel);
        self.shared.notify_observers();
        let shared = self.shared.clone();
        let guard = ViewerGuard {
            on_drop: Some(Box::new(move || {
                if shared.viewers.fetch_sub(1, Ordering::AcqRel) == 1 {
                    *lock(&shared.last_viewer_left) = Some(Instant::now());
                }
                shared.notify_observers();
            })),
        };
        let model = self.shared.current_model();
        let mut st = lock(&self.shared.stream);
        // Output queued since the model caught up: the snapshot is the
        // model's redraw followed by that output.
        let mut snapshot = model.snapshot_with_history(self.shared.snapshot_history);
        for b in &st.pending {
            snapshot.extend_from_slice(b);
        }
        drop(model);
        let (sub, subscription) = output::pair(snapshot, limits, self.exit_rx.clone(), guard);
        if st.exited_at.is_none() {
            st.subscribers.push(sub);
        }
        subscription
    }

    /// Number of live subscriptions.
    pub fn viewers(&self) -> usize {
        self.shared.viewers.load(Ordering::Acquire)
    }

    /// When the viewer count last dropped to zero.
    pub fn last_viewer_left(&self) -> Option<Instant> {
        *lock(&self.shared.last_viewer_left)
    }

    /// Registers a `Notify` poked on viewer changes and on exit.
    pub fn add_observer(&self, notify: Arc<Notify>) {
        lock(&self.shared.observers).push(notify);
    }

    /// Waits until the terminal model has processed all output read so far
    /// (the model thread parses it now). Bounded (10 s); `false` when it did
    /// not catch up. The readers of the model ([`screen_text`](Self::screen_text),
    /// [`snapshot`](Self::snapshot), …) catch up by themselves: this is for
    /// a caller that wants the parse done off its own thread.
    pub async fn sync_model(&self) -> bool {
        self.shared.wait_model(SYNC_MODEL_MAX).await
    }

    /// True when the terminal model panicked: the screen model was reset and
    /// is no longer updated, the output still streams to viewers.
    pub fn model_failed(&self) -> bool {
        self.shared.model_failed.load(Ordering::Acquire)
    }

    /// Character cells the terminal model holds (memory accounting: a cell
    /// is 32 bytes; bounded by the size clamp, given back on a shrink).
    pub fn model_allocated_cells(&self) -> usize {
        lock(&self.shared.model).allocated_cells()
    }

    /// The screen as text (`GET /api/tasks/{id}/screen`), reflecting every
    /// byte read before the call. Cheap when nothing new arrived: the
    /// output is parsed once, by the model thread at the last pause or by
    /// the first reader after it (see [`output_generation`](Self::output_generation)
    /// to skip reading an unchanged screen).
    pub fn screen_text(&self) -> ScreenText {
        self.shared.current_model().screen_text()
    }

    /// Bytes that redraw the current screen on a fresh terminal.
    pub fn snapshot(&self) -> Vec<u8> {
        self.shared.current_model().snapshot()
    }

    /// True when the application enabled bracketed paste (as of every byte
    /// read before the call).
    pub fn bracketed_paste_enabled(&self) -> bool {
        self.shared.current_model().bracketed_paste_enabled()
    }

    /// A number that changes whenever the screen may have changed: bumped
    /// by every output chunk that reaches the viewers and by every resize.
    /// Equal values mean the screen is the same (a watcher can skip reading
    /// [`screen_text`](Self::screen_text)); it only grows.
    pub fn output_generation(&self) -> u64 {
        self.shared.output_generation.load(Ordering::Acquire)
    }

    /// `(rows, cols)` of the terminal.
    pub fn size(&self) -> (u16, u16) {
        lock(&self.shared.model).size()
    }

    /// Total output bytes read from the PTY.
    pub fn bytes_out(&self) -> u64 {
        lock(&self.shared.stream).bytes_out
    }

    /// True when, after the exit, the PTY stayed open past the drain bounds
    /// (a descendant holds it); output after that point is not captured.
    pub fn drain_timed_out(&self) -> bool {
        self.shared.lingering.load(Ordering::Acquire)
    }

    /// Output bytes the terminal model skipped under floods.
    pub fn model_skipped(&self) -> u64 {
        lock(&self.shared.stream).skipped
    }

    /// Output bytes queued for the terminal model and not parsed yet (the
    /// model is parsed lazily; reading it parses these first).
    pub fn model_backlog(&self) -> usize {
        lock(&self.shared.stream).pending_bytes
    }

    /// Writes raw bytes (typed keys, terminal replies). Completes when the
    /// bytes were written to the PTY.
    pub async fn write(&self, data: &[u8]) -> Result<(), PtyError> {
        if self.has_exited() {
            return Err(PtyError::Exited);
        }
        let (done, rx) = oneshot::channel();
        self.writer
            .send(WriteReq {
                data: data.to_vec(),
                done,
            })
            .await
            .map_err(|_| PtyError::Exited)?;
        rx.await
            .map_err(|_| PtyError::Exited)?
            .map_err(PtyError::Write)
    }

    /// Resizes the PTY (the program gets SIGWINCH) and the terminal model.
    /// Sizes are clamped by the one rule, `harness_term::clamp_size`
    /// (2..=500 rows, 2..=1000 columns), as at spawn and in the size votes.
    pub fn resize(&self, rows: u16, cols: u16) -> Result<(), PtyError> {
        let (rows, cols) = harness_term::clamp_size(rows, cols);
        match &self.control {
            Control::Local(master) => lock(master)
                .resize(PtySize {
                    rows,
                    cols,
                    pixel_width: 0,
                    pixel_height: 0,
                })
                .map_err(|e| PtyError::Resize(format!("{e:#}")))?,
            Control::Remote(io) => io.resize(rows, cols),
        }
        // What was written for the old size is parsed at the old size.
        self.shared.current_model().resize(rows, cols);
        self.shared
            .output_generation
            .fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// SIGKILLs the whole process group (and session) now. After the exit
    /// was reported, only descendants left in the agent's session are
    /// signalled (pid-reuse safe, Linux).
    pub fn kill(&self) -> Result<(), PtyError> {
        if self.has_exited() {
            kill::signal_orphans(self.pid, libc::SIGKILL);
            return Ok(());
        }
        self.signal(libc::SIGKILL)
    }

    /// Signals the process group: through its holder when another process
    /// owns the PTY (and directly as well, in case the holder is gone).
    fn signal(&self, signal: i32) -> Result<(), PtyError> {
        if let Control::Remote(io) = &self.control {
            io.signal(signal);
        }
        kill::signal_session(self.pid, signal)
    }

    /// SIGTERM (and SIGHUP) to the process group, then SIGKILL after `grace`
    /// if it has not exited. Returns the exit status.
    pub async fn terminate(&self, grace: Duration) -> Result<ExitStatus, PtyError> {
        if !self.has_exited() {
            self.signal(libc::SIGHUP)?;
            self.signal(libc::SIGTERM)?;
            if let Ok(status) = tokio::time::timeout(grace, self.wait_exit()).await {
                return status;
            }
        }
        self.kill()?;
        self.wait_exit().await
    }

    /// Records that the provider reported the end of its turn (Stop hook).
    pub fn mark_turn_complete(&self) {
        self.shared.turn_complete.store(true, Ordering::Release);
        self.shared.turn_notify.notify_waiters();
    }

    /// True between a turn-complete report and the next submitted input.
    pub fn turn_complete(&self) -> bool {
        self.shared.turn_complete.load(Ordering::Acquire)
    }

    /// Waits until no output arrived for `quiet` (the agent idles at its
    /// prompt), or `max` elapsed.
    pub async fn wait_for_idle(&self, quiet: Duration, max: Duration) -> Boundary {
        self.wait_boundary(quiet, max, false).await
    }

    /// Waits for a real input boundary (docs/decisions.md D6): the provider's
    /// turn-end report, or idle for `quiet`, bounded by `max`.
    pub async fn wait_for_input_boundary(&self, quiet: Duration, max: Duration) -> Boundary {
        self.wait_boundary(quiet, max, true).await
    }

    async fn wait_boundary(&self, quiet: Duration, max: Duration, turns: bool) -> Boundary {
        let deadline = Instant::now() + max;
        let mut exit = self.exit_rx.clone();
        loop {
            let notified = self.shared.turn_notify.notified();
            if self.has_exited() {
                return Boundary::Exited;
            }
            if turns && self.turn_complete() {
                return Boundary::TurnComplete;
            }
            let idle_at = lock(&self.shared.stream).last_output + quiet;
            let now = Instant::now();
            if now >= idle_at {
                return Boundary::Idle;
            }
            if now >= deadline {
                return Boundary::TimedOut;
            }
            tokio::select! {
                () = tokio::time::sleep_until(idle_at.min(deadline)) => {}
                () = notified => {}
                _ = exit.changed() => {}
            }
        }
    }

    /// The ledger of injected ids.
    pub fn ledger(&self) -> &Arc<InjectionLedger> {
        &self.ledger
    }

    /// Injects `text` exactly once per `id` (docs/decisions.md D5): concurrent or
    /// repeated calls with the same id write nothing and report
    /// `AlreadyInjected` / `InProgress`. The text goes as bracketed paste
    /// when the application enabled it, then (if `submit`) the submit key
    /// after `settle`, as a separate write. Once started, the write sequence
    /// completes even if the caller stops waiting.
    pub async fn inject(
        self: &Arc<Self>,
        id: &str,
        text: &str,
        opts: InjectOptions,
    ) -> Result<InjectOutcome, PtyError> {
        match self.ledger.claim(id) {
            Claim::Done => return Ok(InjectOutcome::AlreadyInjected),
            Claim::Pending => return Ok(InjectOutcome::InProgress),
            Claim::Claimed => {}
        }
        let this = self.clone();
        let (id, text) = (id.to_owned(), text.to_owned());
        tokio::spawn(async move { this.write_input(&text, opts, Some(&id)).await })
            .await
            .map_err(|_| PtyError::TaskGone)?
    }

    /// Like [`inject`](Self::inject) without an id (no deduplication).
    pub async fn send_input(
        self: &Arc<Self>,
        text: &str,
        opts: InjectOptions,
    ) -> Result<InjectOutcome, PtyError> {
        let this = self.clone();
        let text = text.to_owned();
        tokio::spawn(async move { this.write_input(&text, opts, None).await })
            .await
            .map_err(|_| PtyError::TaskGone)?
    }

    async fn write_input(
        &self,
        text: &str,
        opts: InjectOptions,
        id: Option<&str>,
    ) -> Result<InjectOutcome, PtyError> {
        if let Control::Remote(io) = &self.control {
            return self.reply_through(io, text, opts, id).await;
        }
        let body = inject::body(text, opts.submit);
        let mut accepted = false;
        if !body.is_empty() {
            let paste = match opts.paste {
                // The model takes in the app's latest output first.
                PasteMode::Auto => self.bracketed_paste_enabled(),
                PasteMode::Always => true,
                PasteMode::Never => false,
            };
            let bytes = if paste {
                inject::bracketed(body.as_bytes())
            } else {
                body.as_bytes().to_vec()
            };
            if let Err(e) = self.write(&bytes).await {
                if let Some(id) = id {
                    self.ledger.release(id);
                }
                return Err(e);
            }
            // The text is in the PTY: this id must never be written again.
            if let Some(id) = id {
                self.ledger.accept(id);
            }
            accepted = true;
        }
        if opts.submit {
            if !body.is_empty() {
                tokio::time::sleep(opts.settle).await;
            }
            self.shared.turn_complete.store(false, Ordering::Release);
            let result = self.write(b"\r").await;
            if let Some(id) = id.filter(|_| !accepted) {
                match &result {
                    Ok(()) => self.ledger.accept(id),
                    Err(_) => self.ledger.release(id),
                }
            }
            result?;
        }
        Ok(InjectOutcome::Written)
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if self.is_held() {
            // The holder keeps the agent; dropping the handle only detaches.
            return;
        }
        if !self.has_exited() {
            tracing::debug!(pid = self.pid, "dropping a live pty session: killing it");
        }
        let _ = self.kill();
    }
}
