//! The holder's terminal model, fed lazily from the output ring.
//!
//! Output is forwarded first and parsed later: the model remembers the
//! stream position it has taken in (`pos`), and the bytes between it and the
//! ring's end are its backlog. The event loop parses the backlog when the
//! PTY has been quiet for [`PARSE_QUIET`], a batch per turn, and always
//! catches up fully ([`LazyModel::current`]) before anything reads the
//! model: a snapshot (requested, attach or lag), a resize, and a reply whose
//! paste mode depends on the application's bracketed paste.
//!
//! Under a flood the quiet moment does not come. The backlog is never
//! allowed to fall out of the ring (nor to exceed [`LAG_MAX`]): before a
//! push would evict unparsed bytes, the oldest half of the ring's worth of
//! backlog is skipped — its
//! text dropped, its mode-setting sequences kept
//! ([`harness_term::ModeScanner`]), as `crates/pty`'s model thread does — so
//! the model holds the modes of everything and the text of the newest half
//! ring, and is exact again as soon as the output pauses. Skips start and
//! end on sequence boundaries: the model first finishes a sequence (or a
//! UTF-8 character) it is inside, and a sequence still open where the skip
//! ends is scanned to its end before parsing resumes.

use std::time::Duration;

use harness_term::{ModeScanner, TerminalModel};

use crate::ring::Ring;

/// The PTY quiet this long: the loop parses the model's backlog.
pub(crate) const PARSE_QUIET: Duration = Duration::from_millis(2);
/// Bytes parsed per loop turn while catching up when idle (about a
/// millisecond of parsing; the loop keeps serving between batches).
pub(crate) const PARSE_BATCH: usize = 64 * 1024;
/// The model is never further behind than this (nor than the ring holds):
/// catching up before a snapshot or a reply parses at most this much.
pub(crate) const LAG_MAX: usize = 1024 * 1024;
/// Bytes fed one at a time at most to finish a sequence the model is inside
/// before a skip (a longer string is cut; the next sequence ends it).
const ALIGN_MAX: usize = 4096;

pub(crate) struct LazyModel {
    model: TerminalModel,
    /// Stream position the model has taken in (parsed, or skipped keeping
    /// modes) up to.
    pos: u64,
    /// A sequence that began in skipped output and is still open: its rest
    /// is scanned (not parsed) before parsing resumes.
    skipping: Option<ModeScanner>,
    /// Bytes whose text was skipped under floods.
    skipped: u64,
}

impl LazyModel {
    pub(crate) fn new(model: TerminalModel) -> Self {
        Self {
            model,
            pos: 0,
            skipping: None,
            skipped: 0,
        }
    }

    pub(crate) fn size(&self) -> (u16, u16) {
        self.model.size()
    }

    /// Output in the ring the model has not taken in yet.
    pub(crate) fn backlog(&self, ring: &Ring) -> u64 {
        ring.end().saturating_sub(self.pos)
    }

    /// Bytes whose text was skipped under floods so far.
    #[cfg(test)]
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The model reflecting every byte in the ring (the backlog parsed).
    pub(crate) fn current(&mut self, ring: &Ring) -> &TerminalModel {
        while self.parse(ring, usize::MAX) {}
        &self.model
    }

    /// Resizes after parsing what was written for the old size.
    pub(crate) fn resize(&mut self, ring: &Ring, rows: u16, cols: u16) {
        self.current(ring);
        self.model.resize(rows, cols);
    }

    /// Parses up to `max` bytes of the backlog; true while some remain.
    pub(crate) fn parse(&mut self, ring: &Ring, max: usize) -> bool {
        if self.pos < ring.start() {
            // Not reached: `make_room` runs before every push. Bytes the
            // ring no longer holds cannot be parsed; the modes are lost.
            tracing::warn!(
                pos = self.pos,
                start = ring.start(),
                "terminal model lost output"
            );
            self.skipped += ring.start() - self.pos;
            self.pos = ring.start();
            self.skipping = None;
        }
        let Some((a, b)) = ring.slices(self.pos, max) else {
            return false;
        };
        let n = a.len() + b.len();
        for part in [a, b] {
            let rest = self.finish_skip(part);
            if !rest.is_empty() {
                self.model.feed(rest);
            }
        }
        self.pos += n as u64;
        self.pos < ring.end()
    }

    /// Before `incoming` bytes are pushed into `ring`: when the push would
    /// leave the model further behind than the ring holds (or [`LAG_MAX`]),
    /// skips the oldest backlog (keeping its modes) down to half that after
    /// the push.
    pub(crate) fn make_room(&mut self, ring: &Ring, incoming: usize) {
        let cap = ring.capacity().min(LAG_MAX) as u64;
        if self.backlog(ring) + incoming as u64 <= cap {
            return;
        }
        let target = (ring.end() + incoming as u64)
            .saturating_sub(cap / 2)
            .min(ring.end());
        self.skip_to(ring, target);
    }

    /// Takes in `[pos, target)` as skipped output: only its mode-setting
    /// sequences reach the model.
    fn skip_to(&mut self, ring: &Ring, target: u64) {
        if self.pos < ring.start() || target <= self.pos {
            return;
        }
        if self.skipping.is_none() {
            self.align(ring, target);
        }
        let Ok(len) = usize::try_from(target - self.pos) else {
            return;
        };
        let Some((a, b)) = ring.slices(self.pos, len) else {
            return;
        };
        let mut scanner = self.skipping.take().unwrap_or_default();
        let mut modes = Vec::new();
        scanner.scan(a, &mut modes);
        scanner.scan(b, &mut modes);
        let n = (a.len() + b.len()) as u64;
        self.model.feed(&modes);
        self.skipped += n;
        self.pos += n;
        if scanner.in_sequence() {
            self.skipping = Some(scanner);
        }
        tracing::debug!(
            skipped = self.skipped,
            "terminal model skipping a flood of output"
        );
    }

    /// Feeds the model byte by byte (at most [`ALIGN_MAX`], not past
    /// `target`) until it is outside any sequence, so a skip starts on a
    /// boundary.
    fn align(&mut self, ring: &Ring, target: u64) {
        let mut fed = 0;
        while self.model.in_sequence() && fed < ALIGN_MAX && self.pos < target {
            let Some((a, b)) = ring.slices(self.pos, 1) else {
                return;
            };
            let byte = if a.is_empty() { b } else { a };
            self.model.feed(byte);
            self.pos += 1;
            fed += 1;
        }
    }

    /// Scans the rest of a sequence left open by a skip (byte by byte, to
    /// find its end); returns what follows it, to be parsed.
    fn finish_skip<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let Some(scanner) = self.skipping.as_mut() else {
            return bytes;
        };
        let mut modes = Vec::new();
        let mut used = 0;
        while used < bytes.len() && scanner.in_sequence() {
            scanner.scan(&bytes[used..=used], &mut modes);
            used += 1;
        }
        self.skipped += used as u64;
        if !scanner.in_sequence() {
            self.skipping = None;
        }
        self.model.feed(&modes);
        &bytes[used..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes `data` in `chunk`-sized pieces the way the event loop does.
    fn push(ring: &mut Ring, model: &mut LazyModel, data: &[u8], chunk: usize) {
        for piece in data.chunks(chunk) {
            model.make_room(ring, piece.len());
            ring.push(piece);
        }
    }

    fn flood(lines: usize) -> Vec<u8> {
        (0..lines)
            .flat_map(|i| format!("flood line {i:06} ........................\r\n").into_bytes())
            .collect()
    }

    #[test]
    fn without_a_flood_the_model_is_exactly_the_eager_one() {
        let mut eager = TerminalModel::new(24, 80);
        let mut ring = Ring::new(64 * 1024);
        let mut lazy = LazyModel::new(TerminalModel::new(24, 80));
        let out = b"\x1b[?1049h\x1b[2;10rhello \xe2\x94\x80\x1b[31mred\x1b[m\r\nnext\x1b[?2004h";
        // Split everywhere, parsed in odd batches.
        for piece in out.chunks(3) {
            lazy.make_room(&ring, piece.len());
            ring.push(piece);
            eager.feed(piece);
            lazy.parse(&ring, 2);
        }
        assert_eq!(lazy.current(&ring).snapshot(), eager.snapshot());
        assert_eq!(lazy.skipped(), 0);
    }

    #[test]
    fn a_flood_skips_text_but_keeps_modes_and_the_final_screen() {
        let mut ring = Ring::new(16 * 1024);
        let mut lazy = LazyModel::new(TerminalModel::new(24, 80));
        let mut out = flood(2000);
        // Modes set in what will be skipped, a sequence split across reads.
        out.splice(100..100, b"\x1b[?2004h\x1b[?25l".iter().copied());
        out.extend_from_slice(&flood(30));
        out.extend_from_slice(b"THE END");
        push(&mut ring, &mut lazy, &out, 4095);
        assert!(lazy.skipped() > 0, "the flood was skipped");
        assert!(lazy.backlog(&ring) <= ring.capacity() as u64);
        let model = lazy.current(&ring);
        assert!(model.bracketed_paste_enabled());
        assert!(model.cursor_hidden());
        let mut eager = TerminalModel::new(24, 80);
        eager.feed(&out);
        assert_eq!(model.text(), eager.text());
        assert_eq!(model.snapshot(), eager.snapshot());
    }

    #[test]
    fn skips_start_and_end_on_sequence_boundaries() {
        // Every possible cut through a mode sequence and a colour sequence.
        for offset in 0..40 {
            let mut ring = Ring::new(256);
            let mut lazy = LazyModel::new(TerminalModel::new(24, 80));
            let mut out = vec![b'x'; 200 + offset];
            out.extend_from_slice(b"\x1b[?2004h\x1b[38;5;196m\xe2\x94\x80");
            out.extend_from_slice(&[b'y'; 300]);
            out.extend_from_slice(b"\r\n\x1b[?2004l\x1b[?2004hdone");
            for piece in out.chunks(7) {
                lazy.make_room(&ring, piece.len());
                ring.push(piece);
                lazy.parse(&ring, 2);
            }
            assert!(lazy.skipped() > 0);
            let model = lazy.current(&ring);
            let model_text = model.text();
            assert!(model.bracketed_paste_enabled(), "offset {offset}");
            assert!(
                model_text.contains("done"),
                "offset {offset}: {model_text:?}"
            );
            assert!(
                !model_text.contains('[') && !model_text.contains(';'),
                "a sequence leaked as text at offset {offset}: {model_text:?}"
            );
        }
    }
}
