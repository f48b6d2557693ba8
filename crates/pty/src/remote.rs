//! Sessions whose PTY another process owns: the agent holder (crate
//! `harness-holder`) keeps the PTY master, so the agent outlives this
//! process. Such a session is the same [`PtySession`] to its users: the
//! holder's output feeds the same pump (query filter, viewers, terminal
//! model), and writes, resizes, signals and replies go to the holder
//! through a [`RemotePty`].
//!
//! Differences from a local session:
//! * replies are typed by the holder, whose own ledger makes a key typed at
//!   most once across servers ([`RemoteReply::Duplicate`]);
//! * dropping the session (or [`PtySession::detach`]) leaves the agent
//!   running; [`PtySession::kill`] still ends it;
//! * [`PtySession::exit_recorded`] tells the holder the exit is durable.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, watch};

use crate::model::model_loop;
use crate::session::{Control, ExitStatus, PtySession, SessionOptions};
use crate::stream::{Shared, WriteReq, pump};
use crate::{InjectOptions, InjectOutcome, PtyError};

/// A boxed future, as the object-safe [`RemotePty`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What became of a reply sent to a holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteReply {
    /// Typed (or queued to be typed, in order) by the holder.
    Typed,
    /// The holder typed this key before: nothing was typed now.
    Duplicate,
}

/// The controls of a PTY another process owns.
pub trait RemotePty: Send + Sync + 'static {
    /// Types raw bytes (keys, terminal answers).
    fn write<'a>(&'a self, data: &'a [u8]) -> BoxFuture<'a, Result<(), PtyError>>;
    /// Types a reply (paste mode decided by the owner's own model when
    /// `opts.paste` is `Auto`); a non-empty `key` at most once.
    fn reply<'a>(
        &'a self,
        key: &'a str,
        text: &'a str,
        opts: InjectOptions,
    ) -> BoxFuture<'a, Result<RemoteReply, PtyError>>;
    /// Resizes the PTY (best effort, in order with other controls).
    fn resize(&self, rows: u16, cols: u16);
    /// Signals the program's process group.
    fn signal(&self, signal: i32);
    /// The exit was recorded: the owner may forget it.
    fn exit_recorded(&self);
    /// Stop listening without ending the program; no exit is reported.
    fn detach(&self);
}

/// A PTY owned elsewhere, ready to become a [`PtySession`].
pub struct RemoteStart {
    /// The program's pid (its process group and session id).
    pub pid: u32,
    /// argv\[0\], for logs.
    pub program: String,
    /// The PTY's size now.
    pub rows: u16,
    /// The PTY's size now.
    pub cols: u16,
    /// Output in stream order; closed after the exit status was sent.
    pub output: mpsc::Receiver<Bytes>,
    /// The exit status, sent once every output byte was.
    pub exit: oneshot::Receiver<ExitStatus>,
    /// The controls.
    pub io: Arc<dyn RemotePty>,
}

impl std::fmt::Debug for RemoteStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStart")
            .field("pid", &self.pid)
            .field("program", &self.program)
            .finish_non_exhaustive()
    }
}

impl PtySession {
    /// A session over a PTY another process owns. Must be called inside a
    /// tokio runtime.
    pub fn attach_remote(start: RemoteStart, opts: SessionOptions) -> Result<Arc<Self>, PtyError> {
        let RemoteStart {
            pid,
            program,
            rows,
            cols,
            output,
            exit,
            io,
        } = start;
        let (rows, cols) = harness_term::clamp_size(rows, cols);
        let (exit_tx, exit_rx) = watch::channel(None);
        let shared = Arc::new(Shared::new(rows, cols, &opts, exit_tx));
        {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(format!("pty-model-{pid}"))
                .spawn(move || model_loop(&shared))
                .map_err(|e| PtyError::spawn(&program, e))?;
        }
        let (write_tx, write_rx) = mpsc::channel::<WriteReq>(opts.write_queue.max(1));
        tokio::spawn(forward_writes(io.clone(), write_rx));
        tokio::spawn(pump(shared.clone(), output, exit, opts.clone(), pid));
        tracing::debug!(pid, program = %program, "attached to a held pty");
        Ok(Self::assemble(
            (pid, program),
            shared,
            Control::Remote(io),
            write_tx,
            exit_rx,
            &opts,
            (rows, cols),
        ))
    }
}

impl PtySession {
    /// True when an agent holder owns this PTY (the agent outlives this
    /// process; see [`detach`](Self::detach)).
    pub fn is_held(&self) -> bool {
        matches!(self.control, Control::Remote(_))
    }

    /// Leaves a held agent running: closes the connection to its holder
    /// without reporting an exit (server shutdown or upgrade). A session
    /// this process owns is killed instead, as on drop.
    pub fn detach(&self) {
        match &self.control {
            Control::Remote(io) => io.detach(),
            Control::Local(_) => {
                let _ = self.kill();
            }
        }
    }

    /// Tells the holder that the exit was recorded durably, so it may
    /// leave (no-op for a PTY this process owns).
    pub fn exit_recorded(&self) {
        if let Control::Remote(io) = &self.control {
            io.exit_recorded();
        }
    }

    /// Types a reply through the holder. Its own ledger decides across
    /// servers: a key it typed before (for a previous server) is a
    /// duplicate; this process's ledger records the outcome too.
    pub(crate) async fn reply_through(
        &self,
        io: &Arc<dyn RemotePty>,
        text: &str,
        opts: InjectOptions,
        id: Option<&str>,
    ) -> Result<InjectOutcome, PtyError> {
        if opts.submit {
            self.shared.turn_complete.store(false, Ordering::Release);
        }
        let result = io.reply(id.unwrap_or(""), text, opts).await;
        if let Some(id) = id {
            match &result {
                Ok(_) => self.ledger.accept(id),
                Err(_) => self.ledger.release(id),
            }
        }
        result.map(|reply| match reply {
            RemoteReply::Typed => InjectOutcome::Written,
            RemoteReply::Duplicate => InjectOutcome::AlreadyInjected,
        })
    }
}

/// Raw writes, in order, to the owner.
async fn forward_writes(io: Arc<dyn RemotePty>, mut rx: mpsc::Receiver<WriteReq>) {
    while let Some(req) = rx.recv().await {
        let result = io
            .write(&req.data)
            .await
            .map_err(|e| std::io::Error::other(e.to_string()));
        let _ = req.done.send(result);
    }
}

/// A [`RemotePty`] stand-in for tests of this crate: records what it was
/// asked, feeds nothing.
#[doc(hidden)]
#[derive(Default)]
pub struct RecordingRemote {
    /// Everything asked, in order, as text.
    pub log: Mutex<Vec<String>>,
}

impl RecordingRemote {
    fn push(&self, what: String) {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(what);
    }
}

impl RemotePty for RecordingRemote {
    fn write<'a>(&'a self, data: &'a [u8]) -> BoxFuture<'a, Result<(), PtyError>> {
        Box::pin(async move {
            self.push(format!("write {}", String::from_utf8_lossy(data)));
            Ok(())
        })
    }
    fn reply<'a>(
        &'a self,
        key: &'a str,
        text: &'a str,
        _opts: InjectOptions,
    ) -> BoxFuture<'a, Result<RemoteReply, PtyError>> {
        Box::pin(async move {
            self.push(format!("reply {key} {text}"));
            Ok(RemoteReply::Typed)
        })
    }
    fn resize(&self, rows: u16, cols: u16) {
        self.push(format!("resize {rows}x{cols}"));
    }
    fn signal(&self, signal: i32) {
        self.push(format!("signal {signal}"));
    }
    fn exit_recorded(&self) {
        self.push("exit recorded".into());
    }
    fn detach(&self) {
        self.push("detach".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn start(
        io: Arc<RecordingRemote>,
    ) -> (
        RemoteStart,
        mpsc::Sender<Bytes>,
        oneshot::Sender<ExitStatus>,
    ) {
        let (out_tx, output) = mpsc::channel(8);
        let (exit_tx, exit) = oneshot::channel();
        (
            RemoteStart {
                pid: 0,
                program: "held".into(),
                rows: 10,
                cols: 40,
                output,
                exit,
                io,
            },
            out_tx,
            exit_tx,
        )
    }

    #[tokio::test]
    async fn output_feeds_the_model_and_exit_follows_the_last_byte() {
        let io = Arc::new(RecordingRemote::default());
        let (st, out, exit) = start(io.clone());
        let s = PtySession::attach_remote(st, SessionOptions::default()).unwrap();
        let mut sub = s.subscribe();
        out.send(Bytes::from_static(b"hello held\r\n"))
            .await
            .unwrap();
        exit.send(ExitStatus {
            code: 3,
            signal: None,
        })
        .unwrap();
        drop(out);
        let status = tokio::time::timeout(Duration::from_secs(5), s.wait_exit())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status.code, 3);
        assert!(
            s.screen_text().text.contains("hello held"),
            "{:?}",
            s.screen_text()
        );
        let mut seen = Vec::new();
        while let crate::OutputEvent::Data(d) = sub.recv().await {
            seen.extend_from_slice(&d);
        }
        assert_eq!(seen, b"hello held\r\n");
    }

    #[tokio::test]
    async fn controls_go_to_the_owner_and_drop_only_detaches() {
        let io = Arc::new(RecordingRemote::default());
        let (st, _out, _exit) = start(io.clone());
        let s = PtySession::attach_remote(st, SessionOptions::default()).unwrap();
        s.write(b"k").await.unwrap();
        s.resize(30, 100).unwrap();
        assert_eq!(s.size(), (30, 100));
        let opts = InjectOptions::default();
        assert_eq!(
            s.inject("key-1", "yes", opts).await.unwrap(),
            crate::InjectOutcome::Written
        );
        assert_eq!(
            s.inject("key-1", "yes", opts).await.unwrap(),
            crate::InjectOutcome::AlreadyInjected
        );
        s.exit_recorded();
        assert!(s.is_held());
        drop(s);
        let log = io.log.lock().unwrap().clone();
        assert_eq!(
            log,
            [
                "write k",
                "resize 30x100",
                "reply key-1 yes",
                "exit recorded"
            ],
            "no signal on drop"
        );
    }
}
