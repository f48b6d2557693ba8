//! A holder as a [`PtySession`]: the server's view of a held agent.
//!
//! [`attach_session`] connects to a holder's socket, attaches (a snapshot of
//! the screen first, then live output) and returns a session whose output,
//! viewers and terminal model work as for a PTY the server owns. Writes,
//! replies, resizes and signals go to the holder ([`HolderIo`]); a reply's
//! key is typed at most once by the holder's own ledger, across servers.
//!
//! The connection ending without an `Exit` frame means the holder is gone:
//! the exit is read from its `exit.json` if it wrote one, else reported as
//! lost. A detached session (server shutdown) reports nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use harness_pty::remote::BoxFuture;
use harness_pty::{
    ExitStatus, InjectOptions, PtyError, PtySession, RemotePty, RemoteReply, RemoteStart,
    SessionOptions,
};
use tokio::sync::{mpsc, oneshot};

use crate::client::EventSink;
use crate::{ExitInfo, HolderClient, HolderError, HolderEvent, HolderInfo};
use crate::{InputMode, InputOutcome, read_exit_file};

/// Controls queued to the holder without waiting (resizes, signals, acks).
const CONTROL_QUEUE: usize = 64;

/// A held agent attached as a session.
#[derive(Debug)]
pub struct Attached {
    /// The session.
    pub session: Arc<PtySession>,
    /// What the holder said in its hello.
    pub info: HolderInfo,
}

/// Connects to the holder listening on `socket` as `build` and attaches.
/// `program` names the agent in logs.
pub async fn attach_session(
    socket: &Path,
    build: &str,
    program: &str,
    opts: SessionOptions,
) -> Result<Attached, HolderError> {
    let (out_tx, output) = mpsc::channel(opts.read_queue.max(1));
    let (exit_tx, exit) = oneshot::channel();
    let detached = Arc::new(AtomicBool::new(false));
    // The holder's output goes from the client's reader task straight into
    // the session's queue: no task between them.
    let feed = Feed {
        output: Some(out_tx),
        exit: Some(exit_tx),
        detached: detached.clone(),
        run_dir: socket.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let client = HolderClient::connect_to(socket, build, feed).await?;
    let info = client.info().clone();
    client.attach(None).await?;
    let client = Arc::new(client);
    let (ctl_tx, ctl_rx) = mpsc::channel(CONTROL_QUEUE);
    let io = Arc::new(HolderIo {
        client: Mutex::new(Some(client.clone())),
        controls: ctl_tx,
        detached,
    });
    tokio::spawn(controls(Arc::downgrade(&client), ctl_rx));
    let session = PtySession::attach_remote(
        RemoteStart {
            pid: info.child_pid,
            program: program.to_owned(),
            rows: info.rows,
            cols: info.cols,
            output,
            exit,
            io,
        },
        opts,
    )
    .map_err(|e| HolderError::Protocol(format!("cannot attach a session: {e}")))?;
    Ok(Attached { session, info })
}

enum Control {
    Resize(u16, u16),
    Signal(i32),
    ExitAck,
}

/// The holder's controls, one at a time and in order. Holds the client
/// weakly: [`HolderIo::detach`] drops the one strong reference, which
/// closes the connection.
async fn controls(client: Weak<HolderClient>, mut rx: mpsc::Receiver<Control>) {
    while let Some(ctl) = rx.recv().await {
        let Some(client) = client.upgrade() else {
            return;
        };
        let result = match ctl {
            Control::Resize(rows, cols) => client.resize(rows, cols).await,
            Control::Signal(sig) => client.signal(sig).await,
            Control::ExitAck => client.ack_exit().await,
        };
        if let Err(e) = result {
            tracing::debug!(error = %e, "holder control not sent");
        }
    }
}

/// Holder events into the session, called by the client's reader task:
/// output in order, then the exit. The connection ending without an `Exit`
/// (the reader task ends and drops the feed) reports the exit the holder
/// left in its run directory, or a lost one; a detached feed reports
/// nothing.
struct Feed {
    /// Closed after the exit, so the session stops waiting for output.
    output: Option<mpsc::Sender<Bytes>>,
    exit: Option<oneshot::Sender<ExitStatus>>,
    detached: Arc<AtomicBool>,
    run_dir: PathBuf,
}

impl Feed {
    async fn output(&mut self, data: Vec<u8>) {
        let Some(out) = &self.output else { return };
        if out.send(Bytes::from(data)).await.is_err() {
            // The session is gone: nothing more to feed.
            self.output = None;
        }
    }
}

impl EventSink for Feed {
    async fn event(&mut self, event: HolderEvent) {
        match event {
            HolderEvent::Output { data, .. } => self.output(data).await,
            // A redraw: after an attach with nothing, or after this server
            // fell behind the holder's buffer.
            HolderEvent::Snapshot { snapshot, lagged } => {
                if lagged {
                    tracing::debug!(seq = snapshot.seq, "behind the holder's buffer: redrawn");
                }
                self.output(snapshot.data).await;
            }
            HolderEvent::Replaying { .. } => {}
            HolderEvent::Exit { status, .. } => {
                self.output = None;
                if let Some(exit) = self.exit.take() {
                    let _ = exit.send(exit_status(&status));
                }
            }
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let Some(exit) = self.exit.take() else {
            return;
        };
        if self.detached.load(Ordering::Acquire) {
            // Shutdown or hand-over: the agent runs on and nothing is
            // reported. The session's output and exit stay open (its
            // pump waits, as for a quiet program) until the process ends.
            std::mem::forget(exit);
            if let Some(out) = self.output.take() {
                std::mem::forget(out);
            }
            return;
        }
        let status = match read_exit_file(&self.run_dir) {
            Ok(Some(record)) => exit_status(&record.status),
            _ => ExitStatus {
                code: 1,
                signal: Some("the agent's holder is gone".into()),
            },
        };
        let _ = exit.send(status);
    }
}

/// A holder's exit report as the session's exit status.
pub fn exit_status(info: &ExitInfo) -> ExitStatus {
    match (info.code, info.signal) {
        (_, Some(sig)) => ExitStatus {
            code: 1,
            signal: Some(signal_name(sig)),
        },
        (Some(code), None) => ExitStatus {
            code: u32::try_from(code).unwrap_or(1),
            signal: None,
        },
        (None, None) => ExitStatus {
            code: 1,
            signal: Some("unknown".into()),
        },
    }
}

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGHUP => "Hangup".into(),
        libc::SIGINT => "Interrupt".into(),
        libc::SIGKILL => "Killed".into(),
        libc::SIGTERM => "Terminated".into(),
        libc::SIGSEGV => "Segmentation fault".into(),
        libc::SIGABRT => "Aborted".into(),
        other => format!("signal {other}"),
    }
}

/// [`RemotePty`] over a holder connection.
pub struct HolderIo {
    client: Mutex<Option<Arc<HolderClient>>>,
    controls: mpsc::Sender<Control>,
    detached: Arc<AtomicBool>,
}

impl HolderIo {
    fn client(&self) -> Result<Arc<HolderClient>, PtyError> {
        self.client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .ok_or(PtyError::Exited)
    }

    fn control(&self, ctl: Control) {
        if self.controls.try_send(ctl).is_err() {
            tracing::warn!("holder controls queue full or closed: one dropped");
        }
    }
}

fn write_error(e: HolderError) -> PtyError {
    PtyError::Write(std::io::Error::other(e.to_string()))
}

fn outcome(o: InputOutcome) -> Result<RemoteReply, PtyError> {
    match o {
        InputOutcome::Accepted => Ok(RemoteReply::Typed),
        InputOutcome::Duplicate => Ok(RemoteReply::Duplicate),
        InputOutcome::Exited => Err(PtyError::Exited),
        InputOutcome::Busy => Err(PtyError::Write(std::io::Error::other(
            "the holder's input queue is full (1 MiB); try again",
        ))),
        InputOutcome::Invalid => Err(PtyError::Write(std::io::Error::other(
            "the holder refused the input as invalid",
        ))),
    }
}

impl RemotePty for HolderIo {
    fn write<'a>(&'a self, data: &'a [u8]) -> BoxFuture<'a, Result<(), PtyError>> {
        Box::pin(async move {
            let client = self.client()?;
            outcome(
                client
                    .input("", InputMode::Raw, data)
                    .await
                    .map_err(write_error)?,
            )
            .map(drop)
        })
    }

    fn reply<'a>(
        &'a self,
        key: &'a str,
        text: &'a str,
        opts: InjectOptions,
    ) -> BoxFuture<'a, Result<RemoteReply, PtyError>> {
        Box::pin(async move {
            let client = self.client()?;
            let mode = InputMode::Reply {
                submit: opts.submit,
                paste: opts.paste,
                settle_ms: u32::try_from(opts.settle.min(Duration::from_secs(60)).as_millis())
                    .unwrap_or(u32::MAX),
            };
            outcome(
                client
                    .input(key, mode, text.as_bytes())
                    .await
                    .map_err(write_error)?,
            )
        })
    }

    fn resize(&self, rows: u16, cols: u16) {
        self.control(Control::Resize(rows, cols));
    }

    fn signal(&self, signal: i32) {
        self.control(Control::Signal(signal));
    }

    fn exit_recorded(&self) {
        self.control(Control::ExitAck);
    }

    fn detach(&self) {
        self.detached.store(true, Ordering::Release);
        // The last reference to the client closes the socket (the controls
        // task lets go of its own once the session's sender is dropped).
        self.client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
    }
}
