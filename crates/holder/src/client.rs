//! The server's side of the holder protocol (tokio).
//!
//! [`HolderClient::connect`] reads the holder's preamble and hello and
//! either answers with this build's hello or refuses an incompatible holder
//! (telling it why, and returning [`HolderError::Incompatible`] that says
//! what the server does instead). A reader task then routes the holder's
//! frames: stream events (output, snapshots, exit) to an [`EventSink`] —
//! [`HolderEvents`], a bounded channel, or the attached session's own output
//! queue (`session.rs`), so output reaches the session with no task between
//! (a server that does not read makes the holder fall back to a snapshot,
//! never grow memory) — and answers to the waiting calls.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot};

use crate::HolderError;
use crate::protocol::{
    self, ExitInfo, Frame, FrameReader, HolderFrame, InputMode, InputOutcome, ServerFrame,
    SnapshotKind,
};

/// What a server does with a holder whose protocol it cannot read.
pub const INCOMPATIBLE_INSTEAD: &str = "the server leaves this holder and its agent running \
     untouched and reports the execution as held by an incompatible holder; a server build that \
     reads this version can take it over";

/// Longest the handshake may take.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a call waits for the holder's answer. Answers are read by the
/// same task as the stream events: a consumer that stops reading
/// [`HolderEvents`] also stalls answers, and the calls fail after this.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// Stream events buffered between the reader task and the consumer: at
/// most 16 output frames of up to 64 KiB, 1 MiB per holder, so a server
/// with many holders and a slow consumer stays bounded (the holder falls
/// back to a snapshot instead).
const EVENT_QUEUE: usize = 16;

/// What the holder said about itself in its hello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HolderInfo {
    /// Protocol version the holder speaks.
    pub version: u16,
    /// The holder's build id.
    pub build: String,
    /// The holder's pid.
    pub holder_pid: u32,
    /// The held program's pid (process group and session id).
    pub child_pid: u32,
    /// Rows at the time of the hello.
    pub rows: u16,
    /// Columns at the time of the hello.
    pub cols: u16,
}

/// A terminal snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Stream position the screen reflects.
    pub seq: u64,
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
    /// Bytes that redraw the screen on a fresh terminal.
    pub data: Vec<u8>,
}

/// A stream event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HolderEvent {
    /// The attach position was still buffered: output follows from `seq`.
    Replaying {
        /// First replayed position.
        seq: u64,
    },
    /// Output starting at stream position `seq`.
    Output {
        /// Position of `data[0]`.
        seq: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// The screen at `snapshot.seq`; live output continues from there.
    /// `lagged` when this server fell behind the buffer (bytes skipped),
    /// otherwise the attach position was not buffered.
    Snapshot {
        /// The snapshot.
        snapshot: Snapshot,
        /// Sent because the server fell behind.
        lagged: bool,
    },
    /// The program exited; all output before `seq` was delivered.
    Exit {
        /// End of the stream.
        seq: u64,
        /// The status.
        status: ExitInfo,
    },
}

/// Where the reader task puts the stream events, in stream order. It ends
/// with the connection (or the client), dropping the sink: a sink that
/// must report the end does so in its `Drop`.
pub(crate) trait EventSink: Send + 'static {
    /// One event; waits while the consumer is full.
    fn event(&mut self, event: HolderEvent) -> impl std::future::Future<Output = ()> + Send;
}

impl EventSink for mpsc::Sender<HolderEvent> {
    async fn event(&mut self, event: HolderEvent) {
        if self.send(event).await.is_err() {
            tracing::debug!("holder events dropped: no consumer");
        }
    }
}

/// The stream events of one connection; `None` once the connection closed.
#[derive(Debug)]
pub struct HolderEvents {
    rx: mpsc::Receiver<HolderEvent>,
}

impl HolderEvents {
    /// The next event, `None` when the connection is closed.
    pub async fn next(&mut self) -> Option<HolderEvent> {
        self.rx.recv().await
    }
}

#[derive(Default)]
struct Pending {
    inputs: HashMap<u64, oneshot::Sender<InputOutcome>>,
    snapshots: HashMap<u64, oneshot::Sender<Snapshot>>,
    pings: HashMap<u64, oneshot::Sender<()>>,
}

/// A connection to one holder.
pub struct HolderClient {
    info: HolderInfo,
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicU64,
    reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for HolderClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HolderClient")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Drop for HolderClient {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn lock(p: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    p.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn read_frame(
    stream: &mut OwnedReadHalf,
    reader: &mut FrameReader,
    buf: &mut [u8],
) -> Result<HolderFrame, HolderError> {
    loop {
        if let Some(frame) = reader.next_frame::<HolderFrame>()? {
            return Ok(frame);
        }
        let n = stream
            .read(buf)
            .await
            .map_err(HolderError::io("read from holder"))?;
        if n == 0 {
            return Err(HolderError::Closed);
        }
        reader.push(&buf[..n]);
    }
}

impl HolderClient {
    /// Connects to the holder at `socket`, checks its version and says
    /// hello as `build`. Returns the client and its event stream; call
    /// [`attach`](Self::attach) to start the output.
    pub async fn connect(socket: &Path, build: &str) -> Result<(Self, HolderEvents), HolderError> {
        let (tx, rx) = mpsc::channel(EVENT_QUEUE);
        let client = Self::connect_to(socket, build, tx).await?;
        Ok((client, HolderEvents { rx }))
    }

    /// [`connect`](Self::connect) with the stream events going to `sink`,
    /// called by the reader task itself.
    pub(crate) async fn connect_to<S: EventSink>(
        socket: &Path,
        build: &str,
        sink: S,
    ) -> Result<Self, HolderError> {
        let stream = UnixStream::connect(socket)
            .await
            .map_err(HolderError::io("connect to holder"))?;
        tokio::time::timeout(HANDSHAKE_TIMEOUT, Self::handshake(stream, build, sink))
            .await
            .map_err(|_| HolderError::Protocol("the holder did not say hello in time".into()))?
    }

    async fn handshake<S: EventSink>(
        stream: UnixStream,
        build: &str,
        sink: S,
    ) -> Result<Self, HolderError> {
        let (mut rd, mut wr) = stream.into_split();
        let mut reader = FrameReader::new();
        let mut buf = vec![0u8; 64 * 1024];
        let version = loop {
            if let Some(v) = reader.preamble()? {
                break v;
            }
            let n = rd
                .read(&mut buf)
                .await
                .map_err(HolderError::io("read from holder"))?;
            if n == 0 {
                return Err(HolderError::Closed);
            }
            reader.push(&buf[..n]);
        };
        let mut hello_out = protocol::preamble(protocol::VERSION).to_vec();
        if !(protocol::MIN_VERSION..=protocol::VERSION).contains(&version) {
            // The frames of another version may differ; its build id is
            // not readable. Tell it why, then leave it alone.
            let err = HolderError::Incompatible {
                holder_version: version,
                holder_build: String::from("unknown"),
                min: protocol::MIN_VERSION,
                max: protocol::VERSION,
                instead: INCOMPATIBLE_INSTEAD.into(),
            };
            ServerFrame::Refuse {
                reason: err.to_string(),
            }
            .encode(&mut hello_out);
            let _ = wr.write_all(&hello_out).await;
            return Err(err);
        }
        let info = match read_frame(&mut rd, &mut reader, &mut buf).await? {
            HolderFrame::Hello {
                build: holder_build,
                holder_pid,
                child_pid,
                rows,
                cols,
            } => HolderInfo {
                version,
                build: holder_build,
                holder_pid,
                child_pid,
                rows,
                cols,
            },
            HolderFrame::Refuse { reason } => return Err(HolderError::Refused(reason)),
            other => {
                return Err(HolderError::Protocol(format!(
                    "expected the holder's hello, got {other:?}"
                )));
            }
        };
        ServerFrame::Hello {
            build: build.to_owned(),
        }
        .encode(&mut hello_out);
        wr.write_all(&hello_out)
            .await
            .map_err(HolderError::io("write to holder"))?;
        let pending = Arc::new(Mutex::new(Pending::default()));
        let reader_task = tokio::spawn(route(rd, reader, buf, sink, pending.clone()));
        Ok(Self {
            info,
            writer: tokio::sync::Mutex::new(wr),
            pending,
            next_id: AtomicU64::new(1),
            reader: reader_task,
        })
    }

    /// What the holder said in its hello.
    pub fn info(&self) -> &HolderInfo {
        &self.info
    }

    async fn send(&self, frame: &ServerFrame) -> Result<(), HolderError> {
        let mut bytes = Vec::new();
        frame.encode(&mut bytes);
        self.writer
            .lock()
            .await
            .write_all(&bytes)
            .await
            .map_err(|_| HolderError::Closed)
    }

    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Starts the stream. `have` is the stream position this server already
    /// has (the `seq` after its last byte); `None` for nothing. The holder
    /// replays from there while its buffer holds it, else sends a snapshot.
    pub async fn attach(&self, have: Option<u64>) -> Result<(), HolderError> {
        self.send(&ServerFrame::Attach { have }).await
    }

    /// Types `data`. A non-empty `key` is typed at most once per holder
    /// (also across re-attaches and servers).
    pub async fn input(
        &self,
        key: &str,
        mode: InputMode,
        data: &[u8],
    ) -> Result<InputOutcome, HolderError> {
        if key.len() > protocol::MAX_STRING {
            return Err(HolderError::Protocol(format!(
                "input key of {} bytes exceeds {}",
                key.len(),
                protocol::MAX_STRING
            )));
        }
        if data.len() > protocol::MAX_FRAME / 2 {
            return Err(HolderError::FrameTooLarge {
                len: data.len(),
                max: protocol::MAX_FRAME / 2,
            });
        }
        let id = self.id();
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).inputs.insert(id, tx);
        self.send(&ServerFrame::Input {
            id,
            key: key.to_owned(),
            mode,
            data: data.to_vec(),
        })
        .await?;
        answer("input", rx).await
    }

    /// Resizes the terminal.
    pub async fn resize(&self, rows: u16, cols: u16) -> Result<(), HolderError> {
        self.send(&ServerFrame::Resize { rows, cols }).await
    }

    /// A snapshot of the screen with up to `history` rows of scrollback.
    pub async fn snapshot(&self, history: u32) -> Result<Snapshot, HolderError> {
        let id = self.id();
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).snapshots.insert(id, tx);
        self.send(&ServerFrame::SnapshotRequest { id, history })
            .await?;
        answer("snapshot", rx).await
    }

    /// Acknowledges the exit: the holder may leave.
    pub async fn ack_exit(&self) -> Result<(), HolderError> {
        self.send(&ServerFrame::ExitAck).await
    }

    /// Signals the program's process group (SIGHUP, SIGINT, SIGTERM or
    /// SIGKILL; others are ignored by the holder).
    pub async fn signal(&self, signal: i32) -> Result<(), HolderError> {
        self.send(&ServerFrame::Signal { signal }).await
    }

    /// Round-trip time of a ping.
    pub async fn ping(&self) -> Result<Duration, HolderError> {
        let nonce = self.id();
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).pings.insert(nonce, tx);
        let start = Instant::now();
        self.send(&ServerFrame::Ping { nonce }).await?;
        answer("ping", rx).await?;
        Ok(start.elapsed())
    }
}

/// Waits (at most [`ANSWER_TIMEOUT`]) for the answer to a request.
async fn answer<T>(what: &'static str, rx: oneshot::Receiver<T>) -> Result<T, HolderError> {
    match tokio::time::timeout(ANSWER_TIMEOUT, rx).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(_)) => Err(HolderError::Closed),
        Err(_) => Err(HolderError::NoAnswer {
            what,
            waited_ms: ANSWER_TIMEOUT.as_millis(),
        }),
    }
}

/// The reader task: frames to events and answers.
async fn route<S: EventSink>(
    mut rd: OwnedReadHalf,
    mut reader: FrameReader,
    mut buf: Vec<u8>,
    mut sink: S,
    pending: Arc<Mutex<Pending>>,
) {
    loop {
        let frame = match read_frame(&mut rd, &mut reader, &mut buf).await {
            Ok(frame) => frame,
            Err(e) => {
                tracing::debug!(error = %e, "holder connection ended");
                break;
            }
        };
        let event = match frame {
            HolderFrame::Output { seq, data } => HolderEvent::Output { seq, data },
            HolderFrame::Replaying { seq } => HolderEvent::Replaying { seq },
            HolderFrame::Exit { seq, status } => HolderEvent::Exit { seq, status },
            HolderFrame::Snapshot {
                kind,
                seq,
                rows,
                cols,
                data,
            } => {
                let snapshot = Snapshot {
                    seq,
                    rows,
                    cols,
                    data,
                };
                match kind {
                    SnapshotKind::Requested(id) => {
                        if let Some(t) = lock(&pending).snapshots.remove(&id) {
                            let _ = t.send(snapshot);
                        }
                        continue;
                    }
                    SnapshotKind::Attach => HolderEvent::Snapshot {
                        snapshot,
                        lagged: false,
                    },
                    SnapshotKind::Lagged => HolderEvent::Snapshot {
                        snapshot,
                        lagged: true,
                    },
                }
            }
            HolderFrame::InputResult { id, outcome } => {
                if let Some(t) = lock(&pending).inputs.remove(&id) {
                    let _ = t.send(outcome);
                }
                continue;
            }
            HolderFrame::Pong { nonce } => {
                if let Some(t) = lock(&pending).pings.remove(&nonce) {
                    let _ = t.send(());
                }
                continue;
            }
            HolderFrame::Hello { .. } | HolderFrame::Refuse { .. } => {
                tracing::warn!("unexpected handshake frame from the holder");
                break;
            }
        };
        // Waits while the consumer's queue is full (the holder then holds
        // the program back or falls back to a snapshot). Nobody reading
        // any more drops the events; answers still matter.
        sink.event(event).await;
    }
    // Waiting calls fail with `Closed`.
    *lock(&pending) = Pending::default();
}
