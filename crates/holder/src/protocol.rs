//! The holder protocol: a 6-byte preamble, then length-prefixed binary
//! frames.
//!
//! * **Preamble** (each direction, first bytes on the wire, never to change):
//!   `b"HHLD"` then the sender's protocol version, `u16` big-endian. The
//!   holder sends its preamble and a [`HolderFrame::Hello`] as soon as it
//!   accepts; the server answers with its own preamble and a
//!   [`ServerFrame::Hello`], or with a [`ServerFrame::Refuse`] saying why
//!   and what it does instead, then closes.
//! * **Frames**: `u32` big-endian length of what follows, one type byte,
//!   the payload. Integers are big-endian; a string is a `u16` length and
//!   UTF-8 bytes; a frame's bulk data is the rest of its payload (no copy
//!   through a serializer on the output path). A frame is at most
//!   [`MAX_FRAME`] bytes; anything longer is refused before it is buffered.
//! * **Sequence numbers** are stream positions: an output frame's `seq` is
//!   the position of its first byte in everything the agent ever wrote
//!   (starting at 0), so a re-attaching server says how many bytes it has
//!   and gets exactly the rest, with no gap and no duplicate.
//!
//! Decoding never panics, whatever the bytes (property-tested).

use crate::HolderError;
use crate::payload::{Reader, bad};

/// First bytes of each direction.
pub const MAGIC: [u8; 4] = *b"HHLD";
/// The protocol version this build speaks.
pub const VERSION: u16 = 1;
/// The oldest holder protocol version this build reads.
pub const MIN_VERSION: u16 = 1;
/// Length of the preamble.
pub const PREAMBLE_LEN: usize = 6;
/// Largest frame (length field value) accepted in either direction: a
/// snapshot of the largest screen with history fits.
pub const MAX_FRAME: usize = 16 * 1024 * 1024;
/// Longest idempotency key, build id or reason string.
pub const MAX_STRING: usize = 1024;

/// The preamble announcing `version`.
pub fn preamble(version: u16) -> [u8; PREAMBLE_LEN] {
    let v = version.to_be_bytes();
    [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], v[0], v[1]]
}

/// The version announced by a preamble.
pub fn parse_preamble(bytes: &[u8; PREAMBLE_LEN]) -> Result<u16, HolderError> {
    if bytes[..4] != MAGIC {
        return Err(HolderError::NotAHolder);
    }
    Ok(u16::from_be_bytes([bytes[4], bytes[5]]))
}

/// Why a snapshot was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotKind {
    /// On attach: the server's position is no longer in the buffer (or it
    /// had none). Live output continues at the snapshot's `seq`.
    Attach,
    /// The server fell behind by more than the buffer: the bytes between
    /// what it got and the snapshot's `seq` are skipped.
    Lagged,
    /// The answer to [`ServerFrame::SnapshotRequest`] with this id; the live
    /// stream is unaffected.
    Requested(u64),
}

/// How the agent ended (as `waitpid` reported it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExitInfo {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// Signal number, when a signal killed it.
    pub signal: Option<i32>,
}

/// What became of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputOutcome {
    /// Queued to be typed (in order; the holder types it even if the server
    /// goes away now). Its key is in the ledger.
    Accepted,
    /// The key was typed before: nothing was written.
    Duplicate,
    /// The input queue is full: nothing was written, the key not recorded.
    Busy,
    /// The agent exited: nothing was written.
    Exited,
    /// A reply that is not UTF-8: nothing was written.
    Invalid,
}

/// How an input is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputMode {
    /// Bytes as they are (keystrokes).
    Raw,
    /// A reply, encoded like the server's injection: trailing newlines
    /// dropped when submitting, bracketed paste per `paste`, then the submit
    /// key after `settle_ms` when `submit`.
    Reply {
        /// Press the submit key after the text.
        submit: bool,
        /// Paste or type.
        paste: harness_pty::PasteMode,
        /// Delay between the text and the submit key.
        settle_ms: u32,
    },
}

/// Frames the holder sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HolderFrame {
    /// First frame after the preamble.
    Hello {
        /// The holder's build id.
        build: String,
        /// The holder's pid.
        holder_pid: u32,
        /// The held program's pid (its process group and session id).
        child_pid: u32,
        /// Current rows.
        rows: u16,
        /// Current columns.
        cols: u16,
    },
    /// Answer to an attach whose position is still buffered: output frames
    /// follow from `seq`.
    Replaying {
        /// First position replayed.
        seq: u64,
    },
    /// Output of the agent, starting at stream position `seq`.
    Output {
        /// Position of `data[0]`.
        seq: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// The terminal model's redraw of the screen at stream position `seq`.
    Snapshot {
        /// Why it was sent.
        kind: SnapshotKind,
        /// Stream position the screen reflects.
        seq: u64,
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
        /// Bytes that redraw the screen on a fresh terminal.
        data: Vec<u8>,
    },
    /// What became of the input with this request id.
    InputResult {
        /// The request id of [`ServerFrame::Input`].
        id: u64,
        /// The outcome.
        outcome: InputOutcome,
    },
    /// The agent exited; every output byte before `seq` was sent before
    /// this frame. Repeated on every attach until acknowledged.
    Exit {
        /// End of the stream.
        seq: u64,
        /// The status.
        status: ExitInfo,
    },
    /// Answer to a ping.
    Pong {
        /// The ping's nonce.
        nonce: u64,
    },
    /// The holder refuses this connection (another user, an unreadable
    /// version); the socket closes after it.
    Refuse {
        /// Why.
        reason: String,
    },
}

/// Frames the server sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerFrame {
    /// First frame after the server's preamble.
    Hello {
        /// The server's build id.
        build: String,
    },
    /// The server cannot use this holder; `reason` says why and what it
    /// does instead. The server closes after it.
    Refuse {
        /// Why, and what instead.
        reason: String,
    },
    /// Start the stream: `have` is the stream position the server already
    /// has (`None`: nothing, send a snapshot).
    Attach {
        /// Bytes the server has.
        have: Option<u64>,
    },
    /// Type something.
    Input {
        /// Request id, echoed in [`HolderFrame::InputResult`].
        id: u64,
        /// Idempotency key; empty for none. A key is typed at most once.
        key: String,
        /// How to write it.
        mode: InputMode,
        /// The bytes (UTF-8 for a reply).
        data: Vec<u8>,
    },
    /// Resize the terminal (clamped).
    Resize {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
    /// Ask for a snapshot with up to `history` rows of scrollback.
    SnapshotRequest {
        /// Request id, echoed in the snapshot's kind.
        id: u64,
        /// Scrollback rows.
        history: u32,
    },
    /// The server has recorded the exit: the holder may leave.
    ExitAck,
    /// Liveness check.
    Ping {
        /// Echoed in the pong.
        nonce: u64,
    },
    /// Signal the agent's process group: only SIGHUP, SIGINT, SIGTERM and
    /// SIGKILL are honoured.
    Signal {
        /// Signal number.
        signal: i32,
    },
}

/// A frame type that can be written and read.
pub trait Frame: Sized {
    /// Appends the frame (length, type, payload) to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Decodes a frame of type `ty` from its payload.
    fn decode(ty: u8, payload: &[u8]) -> Result<Self, HolderError>;
}

// Frame type bytes. Holder → server below 0x80, server → holder above.
const H_HELLO: u8 = 0x01;
const H_REPLAYING: u8 = 0x02;
const H_OUTPUT: u8 = 0x03;
const H_SNAPSHOT: u8 = 0x04;
const H_INPUT_RESULT: u8 = 0x05;
const H_EXIT: u8 = 0x06;
const H_PONG: u8 = 0x07;
const H_REFUSE: u8 = 0x08;
const S_HELLO: u8 = 0x81;
const S_REFUSE: u8 = 0x82;
const S_ATTACH: u8 = 0x83;
const S_INPUT: u8 = 0x84;
const S_RESIZE: u8 = 0x85;
const S_SNAPSHOT: u8 = 0x86;
const S_EXIT_ACK: u8 = 0x87;
const S_PING: u8 = 0x88;
const S_SIGNAL: u8 = 0x89;

/// Appends the frame header for a payload of `payload_len` bytes.
fn header(out: &mut Vec<u8>, ty: u8, payload_len: usize) {
    let len = u32::try_from(payload_len + 1).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.push(ty);
}

/// Writes a frame whose payload is built by `body` (the length is patched
/// in afterwards).
fn framed(out: &mut Vec<u8>, ty: u8, body: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    header(out, ty, 0);
    body(out);
    let len = u32::try_from(out.len() - start - 4).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Appends an output frame without building a [`HolderFrame`] first: the
/// hot path copies `data` once, from the ring into the socket buffer.
pub fn encode_output(out: &mut Vec<u8>, seq: u64, data: &[u8]) {
    header(out, H_OUTPUT, 8 + data.len());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(data);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // Longer strings are cut (at a char boundary) rather than refused: only
    // reasons and build ids are free text; keys are checked by the sender.
    let mut end = s.len().min(MAX_STRING);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let len = u16::try_from(end).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&s.as_bytes()[..end]);
}

fn put_opt_i32(out: &mut Vec<u8>, v: Option<i32>) {
    match v {
        Some(v) => {
            out.push(1);
            out.extend_from_slice(&v.to_be_bytes());
        }
        None => out.push(0),
    }
}

impl Frame for HolderFrame {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::Hello {
                build,
                holder_pid,
                child_pid,
                rows,
                cols,
            } => framed(out, H_HELLO, |o| {
                put_str(o, build);
                o.extend_from_slice(&holder_pid.to_be_bytes());
                o.extend_from_slice(&child_pid.to_be_bytes());
                o.extend_from_slice(&rows.to_be_bytes());
                o.extend_from_slice(&cols.to_be_bytes());
            }),
            Self::Replaying { seq } => {
                framed(out, H_REPLAYING, |o| {
                    o.extend_from_slice(&seq.to_be_bytes())
                });
            }
            Self::Output { seq, data } => encode_output(out, *seq, data),
            Self::Snapshot {
                kind,
                seq,
                rows,
                cols,
                data,
            } => framed(out, H_SNAPSHOT, |o| {
                let (k, id) = match kind {
                    SnapshotKind::Attach => (0u8, 0u64),
                    SnapshotKind::Lagged => (1, 0),
                    SnapshotKind::Requested(id) => (2, *id),
                };
                o.push(k);
                o.extend_from_slice(&id.to_be_bytes());
                o.extend_from_slice(&seq.to_be_bytes());
                o.extend_from_slice(&rows.to_be_bytes());
                o.extend_from_slice(&cols.to_be_bytes());
                o.extend_from_slice(data);
            }),
            Self::InputResult { id, outcome } => framed(out, H_INPUT_RESULT, |o| {
                o.extend_from_slice(&id.to_be_bytes());
                o.push(match outcome {
                    InputOutcome::Accepted => 0,
                    InputOutcome::Duplicate => 1,
                    InputOutcome::Busy => 2,
                    InputOutcome::Exited => 3,
                    InputOutcome::Invalid => 4,
                });
            }),
            Self::Exit { seq, status } => framed(out, H_EXIT, |o| {
                o.extend_from_slice(&seq.to_be_bytes());
                put_opt_i32(o, status.code);
                put_opt_i32(o, status.signal);
            }),
            Self::Pong { nonce } => {
                framed(out, H_PONG, |o| o.extend_from_slice(&nonce.to_be_bytes()));
            }
            Self::Refuse { reason } => framed(out, H_REFUSE, |o| put_str(o, reason)),
        }
    }

    fn decode(ty: u8, payload: &[u8]) -> Result<Self, HolderError> {
        let mut r = Reader::new(payload);
        let frame = match ty {
            H_HELLO => Self::Hello {
                build: r.string()?,
                holder_pid: r.u32()?,
                child_pid: r.u32()?,
                rows: r.u16()?,
                cols: r.u16()?,
            },
            H_REPLAYING => Self::Replaying { seq: r.u64()? },
            H_OUTPUT => Self::Output {
                seq: r.u64()?,
                data: r.rest(),
            },
            H_SNAPSHOT => {
                let k = r.u8()?;
                let id = r.u64()?;
                let kind = match k {
                    0 => SnapshotKind::Attach,
                    1 => SnapshotKind::Lagged,
                    2 => SnapshotKind::Requested(id),
                    other => return Err(bad("snapshot kind", other)),
                };
                Self::Snapshot {
                    kind,
                    seq: r.u64()?,
                    rows: r.u16()?,
                    cols: r.u16()?,
                    data: r.rest(),
                }
            }
            H_INPUT_RESULT => Self::InputResult {
                id: r.u64()?,
                outcome: match r.u8()? {
                    0 => InputOutcome::Accepted,
                    1 => InputOutcome::Duplicate,
                    2 => InputOutcome::Busy,
                    3 => InputOutcome::Exited,
                    4 => InputOutcome::Invalid,
                    other => return Err(bad("input outcome", other)),
                },
            },
            H_EXIT => Self::Exit {
                seq: r.u64()?,
                status: ExitInfo {
                    code: r.opt_i32()?,
                    signal: r.opt_i32()?,
                },
            },
            H_PONG => Self::Pong { nonce: r.u64()? },
            H_REFUSE => Self::Refuse {
                reason: r.string()?,
            },
            other => return Err(bad("holder frame type", other)),
        };
        r.finish()?;
        Ok(frame)
    }
}

impl Frame for ServerFrame {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::Hello { build } => framed(out, S_HELLO, |o| put_str(o, build)),
            Self::Refuse { reason } => framed(out, S_REFUSE, |o| put_str(o, reason)),
            Self::Attach { have } => framed(out, S_ATTACH, |o| match have {
                Some(seq) => {
                    o.push(1);
                    o.extend_from_slice(&seq.to_be_bytes());
                }
                None => o.push(0),
            }),
            Self::Input {
                id,
                key,
                mode,
                data,
            } => framed(out, S_INPUT, |o| {
                o.extend_from_slice(&id.to_be_bytes());
                put_str(o, key);
                match mode {
                    InputMode::Raw => o.push(0),
                    InputMode::Reply {
                        submit,
                        paste,
                        settle_ms,
                    } => {
                        o.push(1);
                        o.push(u8::from(*submit));
                        o.push(match paste {
                            harness_pty::PasteMode::Auto => 0,
                            harness_pty::PasteMode::Always => 1,
                            harness_pty::PasteMode::Never => 2,
                        });
                        o.extend_from_slice(&settle_ms.to_be_bytes());
                    }
                }
                o.extend_from_slice(data);
            }),
            Self::Resize { rows, cols } => framed(out, S_RESIZE, |o| {
                o.extend_from_slice(&rows.to_be_bytes());
                o.extend_from_slice(&cols.to_be_bytes());
            }),
            Self::SnapshotRequest { id, history } => framed(out, S_SNAPSHOT, |o| {
                o.extend_from_slice(&id.to_be_bytes());
                o.extend_from_slice(&history.to_be_bytes());
            }),
            Self::ExitAck => framed(out, S_EXIT_ACK, |_| {}),
            Self::Ping { nonce } => {
                framed(out, S_PING, |o| o.extend_from_slice(&nonce.to_be_bytes()));
            }
            Self::Signal { signal } => {
                framed(out, S_SIGNAL, |o| {
                    o.extend_from_slice(&signal.to_be_bytes())
                });
            }
        }
    }

    fn decode(ty: u8, payload: &[u8]) -> Result<Self, HolderError> {
        let mut r = Reader::new(payload);
        let frame = match ty {
            S_HELLO => Self::Hello { build: r.string()? },
            S_REFUSE => Self::Refuse {
                reason: r.string()?,
            },
            S_ATTACH => Self::Attach {
                have: match r.u8()? {
                    0 => None,
                    1 => Some(r.u64()?),
                    other => return Err(bad("attach flag", other)),
                },
            },
            S_INPUT => {
                let id = r.u64()?;
                let key = r.string()?;
                let mode = match r.u8()? {
                    0 => InputMode::Raw,
                    1 => InputMode::Reply {
                        submit: match r.u8()? {
                            0 => false,
                            1 => true,
                            other => return Err(bad("submit flag", other)),
                        },
                        paste: match r.u8()? {
                            0 => harness_pty::PasteMode::Auto,
                            1 => harness_pty::PasteMode::Always,
                            2 => harness_pty::PasteMode::Never,
                            other => return Err(bad("paste mode", other)),
                        },
                        settle_ms: r.u32()?,
                    },
                    other => return Err(bad("input mode", other)),
                };
                Self::Input {
                    id,
                    key,
                    mode,
                    data: r.rest(),
                }
            }
            S_RESIZE => Self::Resize {
                rows: r.u16()?,
                cols: r.u16()?,
            },
            S_SNAPSHOT => Self::SnapshotRequest {
                id: r.u64()?,
                history: r.u32()?,
            },
            S_EXIT_ACK => Self::ExitAck,
            S_PING => Self::Ping { nonce: r.u64()? },
            S_SIGNAL => Self::Signal { signal: r.i32()? },
            other => return Err(bad("server frame type", other)),
        };
        r.finish()?;
        Ok(frame)
    }
}

/// Splits a byte stream into frames. Buffers at most one frame (bounded by
/// [`MAX_FRAME`]) plus what one read delivered.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
    pos: usize,
}

impl FrameReader {
    /// An empty reader.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet consumed.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Takes the preamble, if all of it arrived.
    pub fn preamble(&mut self) -> Result<Option<u16>, HolderError> {
        let Some(bytes) = self.buf.get(self.pos..self.pos + PREAMBLE_LEN) else {
            return Ok(None);
        };
        let mut p = [0u8; PREAMBLE_LEN];
        p.copy_from_slice(bytes);
        let version = parse_preamble(&p)?;
        self.pos += PREAMBLE_LEN;
        Ok(Some(version))
    }

    /// The next complete frame, if one arrived. An error leaves the stream
    /// unusable: the connection must be closed.
    pub fn next_frame<F: Frame>(&mut self) -> Result<Option<F>, HolderError> {
        let avail = &self.buf[self.pos..];
        let Some(len) = avail.get(..4) else {
            return Ok(None);
        };
        let len = usize::try_from(u32::from_be_bytes([len[0], len[1], len[2], len[3]]))
            .unwrap_or(usize::MAX);
        if len > MAX_FRAME {
            return Err(HolderError::FrameTooLarge {
                len,
                max: MAX_FRAME,
            });
        }
        if len == 0 {
            return Err(HolderError::Protocol("empty frame".into()));
        }
        let Some(frame) = avail.get(4..4 + len) else {
            return Ok(None);
        };
        let decoded = F::decode(frame[0], &frame[1..]);
        self.pos += 4 + len;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 64 * 1024 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        decoded.map(Some)
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
