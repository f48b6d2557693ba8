//! One server connection of the holder: a non-blocking socket, a frame
//! reader, and an outgoing buffer filled from the output ring.
//!
//! The ring *is* the send queue: the connection only remembers the stream
//! position it has framed up to (`sent`), and copies at most
//! [`OUT_HIGH`] bytes ahead into its socket buffer. A server that reads
//! slower than the agent writes therefore costs nothing but the ring; once
//! the ring has forgotten `sent`, the connection gets a
//! [`SnapshotKind::Lagged`] snapshot and continues live from there.
//!
//! A server that is reading but more than half a ring behind holds the
//! program back instead: the event loop stops reading the PTY (so the
//! program blocks in `write`, as on a terminal nobody reads fast enough)
//! until the server catches up — as long as the server took bytes within
//! [`STALL`]. A server that stopped reading does not hold the program back
//! longer than that.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use harness_term::TerminalModel;

use crate::HolderError;
use crate::model::LazyModel;
use crate::protocol::{self, Frame, FrameReader, HolderFrame, SnapshotKind};
use crate::ring::Ring;

/// Output bytes framed ahead of the socket at most.
pub(crate) const OUT_HIGH: usize = 256 * 1024;
/// An attached server that took no bytes for this long no longer holds the
/// program back (it falls behind the ring instead).
pub(crate) const STALL: Duration = Duration::from_secs(1);
/// Largest output frame's data.
const OUTPUT_FRAME_MAX: usize = 64 * 1024;
/// A connection whose unsent control frames (pongs, snapshots, results)
/// exceed this is dropped: the server asks without reading.
const OUT_MAX: usize = 4 * protocol::MAX_FRAME;

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Waiting for the server's preamble and hello.
    Handshake,
    /// Hello received; no stream yet.
    Ready,
    /// Streaming output from `sent`.
    Attached,
    /// Refused: flush what is queued, then close.
    Closing,
}

pub(crate) struct Conn {
    pub(crate) stream: UnixStream,
    pub(crate) reader: FrameReader,
    out: Vec<u8>,
    out_pos: usize,
    pub(crate) stage: Stage,
    pub(crate) got_preamble: bool,
    /// Stream position framed up to (meaningful once attached).
    pub(crate) sent: u64,
    pub(crate) exit_sent: bool,
    pub(crate) accepted_at: Instant,
    /// When the server last took bytes from the socket (or attached).
    pub(crate) last_progress: Instant,
}

/// What reading from the socket found.
pub(crate) enum ReadState {
    /// Bytes may be buffered; the socket stays open.
    Open,
    /// The server closed its side.
    Eof,
}

impl Conn {
    pub(crate) fn new(stream: UnixStream, now: Instant) -> Self {
        Self {
            stream,
            reader: FrameReader::new(),
            out: Vec::new(),
            out_pos: 0,
            stage: Stage::Handshake,
            got_preamble: false,
            sent: 0,
            exit_sent: false,
            accepted_at: now,
            last_progress: now,
        }
    }

    /// True when this server should hold the program back: attached,
    /// reading, and more than half of `ring` behind.
    pub(crate) fn holds_back(&self, ring: &Ring, now: Instant) -> bool {
        self.stage == Stage::Attached
            && ring.end().saturating_sub(self.sent) >= (ring.capacity() / 2) as u64
            && now < self.last_progress + STALL
    }

    /// Queues raw bytes (the preamble).
    pub(crate) fn queue_bytes(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    /// Queues a frame.
    pub(crate) fn queue(&mut self, frame: &HolderFrame) {
        frame.encode(&mut self.out);
    }

    /// Bytes queued but not yet written.
    pub(crate) fn pending(&self) -> usize {
        self.out.len() - self.out_pos
    }

    /// True when the server asked for more than it reads.
    pub(crate) fn overloaded(&self) -> bool {
        self.pending() > OUT_MAX
    }

    /// Queues a snapshot of `model`, which reflects the stream up to `seq`.
    pub(crate) fn queue_snapshot(
        &mut self,
        kind: SnapshotKind,
        seq: u64,
        model: &TerminalModel,
        history: usize,
    ) {
        let (rows, cols) = model.size();
        self.queue(&HolderFrame::Snapshot {
            kind,
            seq,
            rows,
            cols,
            data: model.snapshot_with_history(history),
        });
    }

    /// Frames output from the ring until [`OUT_HIGH`] bytes are queued or
    /// the connection is at the ring's end. Falls back to a snapshot when
    /// the ring no longer holds `sent`.
    pub(crate) fn fill(&mut self, ring: &Ring, model: &mut LazyModel, history: usize) {
        if self.stage != Stage::Attached {
            return;
        }
        while self.pending() < OUT_HIGH && self.sent < ring.end() {
            if !ring.holds(self.sent) {
                tracing::debug!(
                    sent = self.sent,
                    start = ring.start(),
                    "server fell behind the buffer: snapshot"
                );
                self.sent = ring.end();
                self.queue_snapshot(
                    SnapshotKind::Lagged,
                    self.sent,
                    model.current(ring),
                    history,
                );
                break;
            }
            let start = self.out.len();
            // Header first, data straight from the ring, length patched.
            protocol::encode_output(&mut self.out, self.sent, &[]);
            let n = ring
                .copy_from(self.sent, OUTPUT_FRAME_MAX, &mut self.out)
                .unwrap_or(0);
            let len = u32::try_from(1 + 8 + n).unwrap_or(u32::MAX);
            self.out[start..start + 4].copy_from_slice(&len.to_be_bytes());
            self.sent += n as u64;
        }
    }

    /// Writes what is queued without blocking. `Ok(true)` when everything
    /// was written.
    pub(crate) fn flush(&mut self) -> Result<bool, HolderError> {
        while self.out_pos < self.out.len() {
            match self.stream.write(&self.out[self.out_pos..]) {
                Ok(0) => return Err(HolderError::Closed),
                Ok(n) => {
                    self.out_pos += n;
                    self.last_progress = Instant::now();
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(HolderError::Os {
                        op: "write to server",
                        source: e,
                    });
                }
            }
        }
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
            Ok(true)
        } else {
            if self.out_pos > OUT_HIGH {
                self.out.drain(..self.out_pos);
                self.out_pos = 0;
            }
            Ok(false)
        }
    }

    /// Reads what the server sent into the frame reader (bounded per call).
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<ReadState, HolderError> {
        for _ in 0..16 {
            match self.stream.read(buf) {
                Ok(0) => return Ok(ReadState::Eof),
                Ok(n) => self.reader.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(HolderError::Os {
                        op: "read from server",
                        source: e,
                    });
                }
            }
        }
        Ok(ReadState::Open)
    }
}
