//! The holder's single-threaded event loop: `poll(2)` over the PTY master,
//! the listening socket, the attached server and the program's pidfd.
//!
//! Lifetimes:
//! * the program's output goes into the ring as it arrives, whether or not
//!   a server is attached, and is forwarded before the terminal model parses
//!   it (lazily, from the ring: see the `model` module);
//! * after the program exits, the PTY is drained (to EOF, or until it has
//!   been quiet for [`DRAIN_QUIET`], at most [`DRAIN_MAX`]); then the exit
//!   is final: `exit.json` is written and an exit frame follows the last
//!   output on every attach until the server acknowledges it;
//! * the holder leaves when the exit is final and acknowledged, or final
//!   and no server has been attached for the orphan timeout;
//! * with no server attached for the orphan timeout and the program still
//!   running, the holder sends SIGHUP to its process group, then SIGKILL
//!   after the grace.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use harness_term::TerminalModel;

use crate::conn::{Conn, ReadState, STALL, Stage};
use crate::hold::{ExitRecord, HoldConfig, write_exit_file};
use crate::model::{LazyModel, PARSE_BATCH, PARSE_QUIET};
use crate::protocol::{
    self, ExitInfo, HolderFrame, InputMode, InputOutcome, ServerFrame, SnapshotKind,
};
use crate::ring::Ring;
use crate::typing::Typing;
use crate::{HolderError, access, sys};

/// After the program exited: stop draining once the PTY was quiet this long.
pub const DRAIN_QUIET: Duration = Duration::from_millis(300);
/// After the program exited: stop draining after this long in any case.
pub const DRAIN_MAX: Duration = Duration::from_secs(3);
/// A connection that has not said hello within this long is closed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Reads of the PTY per loop turn (keeps the socket served under a flood).
const READS_PER_TURN: usize = 16;
/// Read buffer of the PTY and the socket. A PTY read returns about 4 KiB
/// under a flood; the buffer is resident in every holder.
const READ_BUF: usize = 16 * 1024;
/// Without a pidfd, how often the program is checked for exit.
const REAP_TICK: Duration = Duration::from_secs(1);
/// Scrollback rows a requested snapshot may include at most.
const MAX_SNAPSHOT_HISTORY: usize = 10_000;

struct Holder<'a> {
    cfg: &'a HoldConfig,
    build: &'a str,
    master: File,
    child: Child,
    child_pid: u32,
    pidfd: Option<OwnedFd>,
    listener: UnixListener,
    conn: Option<Conn>,
    ring: Ring,
    model: LazyModel,
    typing: Typing,
    /// Reaped status and when it was reaped.
    reaped: Option<(ExitInfo, Instant)>,
    last_output: Instant,
    pty_eof: bool,
    /// The exit, once output was drained: (status, end of stream).
    exit_final: Option<(ExitInfo, u64)>,
    exit_acked: bool,
    orphan_since: Option<Instant>,
    /// SIGHUP was sent at orphan time; SIGKILL follows at this instant.
    kill_at: Option<Instant>,
    killed_for_orphan: bool,
    buf: Vec<u8>,
}

/// Opens the PTY, starts the program, reports readiness on `ready` (the
/// detaching starter's pipe) and runs the loop to the end.
pub(crate) fn start(
    cfg: &HoldConfig,
    build: &str,
    listener: UnixListener,
    ready: Option<std::io::PipeWriter>,
) -> Result<(), HolderError> {
    let (rows, cols) = harness_term::clamp_size(cfg.rows, cfg.cols);
    let spawned = spawn_program(cfg, rows, cols);
    let (master, child) = match spawned {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(cfg.socket_path());
            if let Some(mut ready) = ready {
                let _ = writeln!(ready, "{e}");
            }
            return Err(e);
        }
    };
    let child_pid = child.id();
    if let Some(mut ready) = ready {
        let _ = writeln!(ready, "ok {child_pid}");
        drop(ready);
        sys::stdio_to_devnull()?;
    }
    let now = Instant::now();
    let mut holder = Holder {
        cfg,
        build,
        master,
        pidfd: sys::pidfd_open(child_pid),
        child,
        child_pid,
        listener,
        conn: None,
        ring: Ring::new(cfg.ring_bytes),
        model: LazyModel::new(TerminalModel::new(rows, cols)),
        typing: Typing::default(),
        reaped: None,
        last_output: now,
        pty_eof: false,
        exit_final: None,
        exit_acked: false,
        orphan_since: Some(now),
        kill_at: None,
        killed_for_orphan: false,
        buf: vec![0u8; READ_BUF],
    };
    let result = holder.run();
    let _ = std::fs::remove_file(cfg.socket_path());
    result
}

fn spawn_program(cfg: &HoldConfig, rows: u16, cols: u16) -> Result<(File, Child), HolderError> {
    let program = cfg.argv.first().ok_or(HolderError::Arg {
        field: "argv",
        reason: "empty".into(),
    })?;
    let (master, slave) = sys::openpty(rows, cols)?;
    let mut cmd = Command::new(program);
    cmd.args(&cfg.argv[1..]);
    if let Some(cwd) = &cfg.cwd {
        cmd.current_dir(cwd);
    }
    let child = sys::spawn_on_pty(&mut cmd, &slave).map_err(|e| HolderError::Spawn {
        program: program.to_string_lossy().into_owned(),
        reason: e.to_string(),
    })?;
    // The holder must not keep the slave open, or EOF never arrives.
    drop(slave);
    Ok((File::from(master), child))
}

fn exit_info(status: std::process::ExitStatus) -> ExitInfo {
    use std::os::unix::process::ExitStatusExt;
    ExitInfo {
        code: status.code(),
        signal: status.signal(),
    }
}

impl Holder<'_> {
    fn run(&mut self) -> Result<(), HolderError> {
        loop {
            let now = Instant::now();
            self.timers(now);
            // A timer may have made the exit final: frame it before sleeping.
            self.serve_conn();
            if self.done(now) {
                tracing::info!(pid = self.child_pid, "holder done");
                return Ok(());
            }
            let (mut fds, slots) = self.poll_set(now);
            let timeout = self
                .next_deadline(now)
                .map(|d| d.saturating_duration_since(now));
            sys::poll(&mut fds, timeout)?;
            let ready = |slot: Option<usize>| slot.is_some_and(|i| fds[i].revents != 0);
            if self.pidfd.is_none() || ready(slots.pidfd) {
                self.reap();
            }
            if ready(slots.master) {
                self.read_pty();
            }
            if ready(slots.listener) {
                self.accept();
            }
            if ready(slots.conn) {
                self.read_conn();
            }
            self.typing.flush(&mut self.master, Instant::now());
            self.serve_conn();
            self.parse_when_quiet(Instant::now());
        }
    }

    /// Parses a batch of the model's backlog once the PTY has been quiet
    /// for [`PARSE_QUIET`] (output is forwarded first, parsed later).
    fn parse_when_quiet(&mut self, now: Instant) {
        if self.model.backlog(&self.ring) > 0 && now >= self.last_output + PARSE_QUIET {
            self.model.parse(&self.ring, PARSE_BATCH);
        }
    }

    fn poll_set(&self, now: Instant) -> (Vec<libc::pollfd>, Slots) {
        let mut fds = Vec::with_capacity(4);
        let mut slots = Slots::default();
        let mut add = |fd: i32, events: i16| {
            fds.push(libc::pollfd {
                fd,
                events,
                revents: 0,
            });
            Some(fds.len() - 1)
        };
        slots.listener = add(self.listener.as_raw_fd(), libc::POLLIN);
        if !self.pty_eof && self.exit_final.is_none() {
            let mut events = 0;
            if !self.held_back(now) {
                events |= libc::POLLIN;
            }
            if self.typing.wants_write(now) {
                events |= libc::POLLOUT;
            }
            // Not even for hang-ups while held back: they would wake the
            // loop without end.
            if events != 0 {
                slots.master = add(self.master.as_raw_fd(), events);
            }
        }
        if let Some(conn) = &self.conn {
            let mut events = libc::POLLIN;
            // Also while output is owed but not framed yet: a flush that
            // emptied the queue can leave the rest of the ring to send, and
            // a quiet program would give no other wake-up.
            let owed = conn.stage == Stage::Attached && conn.sent < self.ring.end();
            if conn.pending() > 0 || owed {
                events |= libc::POLLOUT;
            }
            slots.conn = add(conn.stream.as_raw_fd(), events);
        }
        if let (Some(pidfd), None) = (&self.pidfd, &self.reaped) {
            slots.pidfd = add(pidfd.as_raw_fd(), libc::POLLIN);
        }
        (fds, slots)
    }

    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut at = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        if let Some(due) = self.typing.next_due(now) {
            at(due);
        }
        if self.model.backlog(&self.ring) > 0 {
            at(self.last_output + PARSE_QUIET);
        }
        if let Some(since) = self.orphan_since {
            at(since + self.cfg.orphan_timeout);
        }
        if let Some(t) = self.kill_at {
            at(t);
        }
        if let (Some((_, reaped_at)), None) = (self.reaped, self.exit_final) {
            at((self.last_output + DRAIN_QUIET).min(reaped_at + DRAIN_MAX));
        }
        if let Some(conn) = &self.conn
            && conn.stage == Stage::Handshake
        {
            at(conn.accepted_at + HANDSHAKE_TIMEOUT);
        }
        if self.held_back(now)
            && let Some(conn) = &self.conn
        {
            at(conn.last_progress + STALL);
        }
        if self.pidfd.is_none() && self.reaped.is_none() {
            at(now + REAP_TICK);
        }
        next
    }

    fn done(&self, now: Instant) -> bool {
        let Some(_) = self.exit_final else {
            return false;
        };
        self.exit_acked
            || self
                .orphan_since
                .is_some_and(|since| now >= since + self.cfg.orphan_timeout)
    }

    fn timers(&mut self, now: Instant) {
        if let Some(since) = self.orphan_since
            && now >= since + self.cfg.orphan_timeout
            && self.reaped.is_none()
            && !self.killed_for_orphan
        {
            tracing::warn!(
                pid = self.child_pid,
                "no server for the orphan timeout: ending the agent"
            );
            self.killed_for_orphan = true;
            let _ = sys::killpg(self.child_pid, libc::SIGHUP);
            self.kill_at = Some(now + self.cfg.kill_grace);
        }
        if let Some(t) = self.kill_at
            && now >= t
        {
            self.kill_at = None;
            if self.reaped.is_none() {
                let _ = sys::killpg(self.child_pid, libc::SIGKILL);
            }
        }
        if let (Some((status, reaped_at)), None) = (self.reaped, self.exit_final) {
            let drained = self.pty_eof
                || now >= self.last_output + DRAIN_QUIET
                || now >= reaped_at + DRAIN_MAX;
            if drained {
                self.finish(status);
            }
        }
        if self.conn.as_ref().is_some_and(|c| {
            c.stage == Stage::Handshake && now >= c.accepted_at + HANDSHAKE_TIMEOUT
        }) {
            tracing::debug!("server did not say hello in time: closing");
            self.drop_conn();
        }
    }

    /// The exit is final: record it and drop pending input.
    fn finish(&mut self, status: ExitInfo) {
        let seq = self.ring.end();
        self.exit_final = Some((status, seq));
        self.typing.clear();
        let record = ExitRecord {
            status,
            seq,
            child_pid: self.child_pid,
            holder_pid: std::process::id(),
            reason: if self.killed_for_orphan {
                "orphaned"
            } else {
                "exited"
            }
            .into(),
        };
        if let Err(e) = write_exit_file(&self.cfg.run_dir, &record) {
            tracing::error!(error = %e, "could not write exit.json");
        }
    }

    fn reap(&mut self) {
        if self.reaped.is_some() {
            return;
        }
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.reaped = Some((exit_info(status), Instant::now()));
                // The pidfd stays readable: stop polling it.
                self.pidfd = None;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "waitpid failed"),
        }
    }

    /// True while the attached server holds the program back (see
    /// [`Conn::holds_back`]). Not once the program exited: the drain after
    /// it reads until the PTY is quiet, and must not see a held-back PTY
    /// as a quiet one.
    fn held_back(&self, now: Instant) -> bool {
        self.reaped.is_none()
            && self
                .conn
                .as_ref()
                .is_some_and(|c| c.holds_back(&self.ring, now))
    }

    fn read_pty(&mut self) {
        // Never more than half the ring in one read: a server that holds
        // the program back stays within the ring.
        let len = self.buf.len().min(self.ring.capacity() / 2).max(1);
        for _ in 0..READS_PER_TURN {
            if self.held_back(Instant::now()) {
                break;
            }
            match self.master.read(&mut self.buf[..len]) {
                Ok(0) => {
                    self.pty_eof = true;
                    break;
                }
                Ok(n) => {
                    // The model parses later, from the ring; under a flood
                    // it skips what the ring is about to forget.
                    self.model.make_room(&self.ring, n);
                    self.ring.push(&self.buf[..n]);
                    self.last_output = Instant::now();
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // EIO: every slave descriptor is closed.
                    self.pty_eof = true;
                    break;
                }
            }
        }
        if self.pty_eof {
            // The program is probably gone: collect it now rather than on
            // the next tick.
            self.reap();
        }
    }

    fn accept(&mut self) {
        loop {
            let stream = match self.listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    return;
                }
            };
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let mut conn = Conn::new(stream, Instant::now());
            conn.queue_bytes(&protocol::preamble(protocol::VERSION));
            let me = sys::euid();
            let verdict = sys::peer_cred(conn.stream.as_fd())
                .map_err(|e| e.to_string())
                .and_then(|(uid, pid)| access::peer_allowed(uid, pid, me));
            match verdict {
                Ok(()) => {}
                Err(reason) => {
                    tracing::warn!(%reason, "refused a connection");
                    conn.queue(&HolderFrame::Refuse { reason });
                    // Best effort: the refusal is small and the socket new.
                    let _ = conn.flush();
                    continue;
                }
            }
            conn.queue(&HolderFrame::Hello {
                build: self.build.to_owned(),
                holder_pid: std::process::id(),
                child_pid: self.child_pid,
                rows: self.model.size().0,
                cols: self.model.size().1,
            });
            if self.conn.is_some() {
                tracing::info!("a newer server connected: it replaces the attached one");
                self.drop_conn();
            }
            self.conn = Some(conn);
        }
    }

    fn drop_conn(&mut self) {
        if self.conn.take().is_some() && self.orphan_since.is_none() {
            self.orphan_since = Some(Instant::now());
        }
    }

    fn read_conn(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        let keep = match conn.read(&mut self.buf) {
            Ok(state) => {
                let handled = self.handle_frames(&mut conn);
                match (handled, state) {
                    (Err(e), _) => {
                        tracing::warn!(error = %e, "closing server connection");
                        false
                    }
                    (Ok(()), ReadState::Eof) => false,
                    (Ok(()), ReadState::Open) => true,
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "server connection failed");
                false
            }
        };
        self.conn = Some(conn);
        if !keep {
            self.drop_conn();
        }
    }

    fn handle_frames(&mut self, conn: &mut Conn) -> Result<(), HolderError> {
        if !conn.got_preamble {
            let Some(version) = conn.reader.preamble()? else {
                return Ok(());
            };
            if version < protocol::MIN_VERSION {
                conn.queue(&HolderFrame::Refuse {
                    reason: format!(
                        "server protocol version {version} is older than {}",
                        protocol::MIN_VERSION
                    ),
                });
                conn.stage = Stage::Closing;
                return Ok(());
            }
            conn.got_preamble = true;
        }
        while conn.stage != Stage::Closing
            && let Some(frame) = conn.reader.next_frame::<ServerFrame>()?
        {
            self.on_frame(conn, frame)?;
        }
        Ok(())
    }

    fn on_frame(&mut self, conn: &mut Conn, frame: ServerFrame) -> Result<(), HolderError> {
        if conn.stage == Stage::Handshake {
            return match frame {
                ServerFrame::Hello { build } => {
                    tracing::info!(server_build = %build, "server attached");
                    conn.stage = Stage::Ready;
                    Ok(())
                }
                ServerFrame::Refuse { reason } => {
                    tracing::warn!(%reason, "the server refused this holder");
                    conn.stage = Stage::Closing;
                    Ok(())
                }
                _ => Err(HolderError::Protocol("expected the server's hello".into())),
            };
        }
        match frame {
            ServerFrame::Hello { .. } | ServerFrame::Refuse { .. } => {
                return Err(HolderError::Protocol("hello after the handshake".into()));
            }
            ServerFrame::Attach { have } => self.attach(conn, have),
            ServerFrame::Input {
                id,
                key,
                mode,
                data,
            } => {
                let outcome = self.input(&key, mode, data);
                conn.queue(&HolderFrame::InputResult { id, outcome });
            }
            ServerFrame::Resize { rows, cols } => {
                let (rows, cols) = harness_term::clamp_size(rows, cols);
                if let Err(e) = sys::set_winsize(self.master.as_fd(), rows, cols) {
                    tracing::debug!(error = %e, "resize failed");
                }
                self.model.resize(&self.ring, rows, cols);
            }
            ServerFrame::SnapshotRequest { id, history } => {
                let history = usize::try_from(history)
                    .unwrap_or(usize::MAX)
                    .min(MAX_SNAPSHOT_HISTORY);
                conn.queue_snapshot(
                    SnapshotKind::Requested(id),
                    self.ring.end(),
                    self.model.current(&self.ring),
                    history,
                );
            }
            ServerFrame::ExitAck => {
                if conn.exit_sent {
                    self.exit_acked = true;
                }
            }
            ServerFrame::Ping { nonce } => conn.queue(&HolderFrame::Pong { nonce }),
            ServerFrame::Signal { signal } => {
                if [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGKILL].contains(&signal)
                    && self.reaped.is_none()
                {
                    let _ = sys::killpg(self.child_pid, signal);
                }
            }
        }
        if conn.overloaded() {
            return Err(HolderError::Protocol(
                "the server does not read its answers".into(),
            ));
        }
        Ok(())
    }

    fn attach(&mut self, conn: &mut Conn, have: Option<u64>) {
        match have.filter(|&seq| self.ring.holds(seq)) {
            Some(seq) => {
                conn.queue(&HolderFrame::Replaying { seq });
                conn.sent = seq;
            }
            None => {
                conn.sent = self.ring.end();
                conn.queue_snapshot(
                    SnapshotKind::Attach,
                    conn.sent,
                    self.model.current(&self.ring),
                    self.cfg.snapshot_history,
                );
            }
        }
        conn.stage = Stage::Attached;
        conn.last_progress = Instant::now();
        conn.exit_sent = false;
        self.orphan_since = None;
    }

    fn input(&mut self, key: &str, mode: InputMode, data: Vec<u8>) -> InputOutcome {
        if self.reaped.is_some() || self.pty_eof {
            return InputOutcome::Exited;
        }
        // Auto paste follows the application's mode after all its output.
        let bracketed = match mode {
            InputMode::Reply {
                paste: harness_pty::PasteMode::Auto,
                ..
            } => self.model.current(&self.ring).bracketed_paste_enabled(),
            _ => false,
        };
        self.typing.input(key, mode, data, bracketed)
    }

    /// Frames output (and the exit, after the last output) for the
    /// attached server and writes what the socket takes.
    fn serve_conn(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        conn.fill(&self.ring, &mut self.model, self.cfg.snapshot_history);
        if let Some((status, seq)) = self.exit_final
            && conn.stage == Stage::Attached
            && !conn.exit_sent
            && conn.sent >= seq
        {
            conn.queue(&HolderFrame::Exit { seq, status });
            conn.exit_sent = true;
        }
        let closing = conn.stage == Stage::Closing;
        match conn.flush() {
            Ok(true) if closing => self.drop_conn(),
            Ok(_) => {}
            Err(e) => {
                tracing::debug!(error = %e, "server connection lost");
                self.drop_conn();
            }
        }
    }
}

#[derive(Default)]
struct Slots {
    listener: Option<usize>,
    master: Option<usize>,
    conn: Option<usize>,
    pidfd: Option<usize>,
}
