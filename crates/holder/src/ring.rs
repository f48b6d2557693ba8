//! The bounded output buffer: the last `capacity` bytes of the agent's
//! output, addressed by stream position.

use std::collections::VecDeque;

/// Default capacity of the output buffer: 1 MiB per agent. A server that
/// re-attaches within this much output gets every byte it missed; beyond
/// it, a snapshot of the screen.
pub const DEFAULT_RING_BYTES: usize = 1024 * 1024;

/// The last bytes of a stream, by position.
#[derive(Debug)]
pub struct Ring {
    buf: VecDeque<u8>,
    /// Stream position of `buf[0]`.
    start: u64,
    capacity: usize,
}

impl Ring {
    /// An empty ring holding up to `capacity` bytes (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            buf: VecDeque::new(),
            start: 0,
            capacity: capacity.max(1),
        }
    }

    /// Position of the oldest byte still held.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Position after the newest byte (the total ever pushed).
    pub fn end(&self) -> u64 {
        self.start + self.buf.len() as u64
    }

    /// Bytes the ring holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// True if a reader at `seq` can continue from the ring.
    pub fn holds(&self, seq: u64) -> bool {
        (self.start..=self.end()).contains(&seq)
    }

    /// Appends bytes, forgetting the oldest beyond the capacity.
    pub fn push(&mut self, data: &[u8]) {
        let data = if data.len() > self.capacity {
            let skip = data.len() - self.capacity;
            self.start += (self.buf.len() + skip) as u64;
            self.buf.clear();
            &data[skip..]
        } else {
            data
        };
        let excess = (self.buf.len() + data.len()).saturating_sub(self.capacity);
        if excess > 0 {
            self.buf.drain(..excess);
            self.start += excess as u64;
        }
        self.buf.extend(data);
    }

    /// Appends up to `max` bytes from position `from` to `out`; returns how
    /// many, or `None` when `from` is no longer (or not yet) held.
    pub fn copy_from(&self, from: u64, max: usize, out: &mut Vec<u8>) -> Option<usize> {
        let (a, b) = self.slices(from, max)?;
        out.extend_from_slice(a);
        out.extend_from_slice(b);
        Some(a.len() + b.len())
    }

    /// Up to `max` bytes from position `from`, in order, as two slices
    /// (the ring may wrap); `None` when `from` is no longer (or not yet)
    /// held.
    pub fn slices(&self, from: u64, max: usize) -> Option<(&[u8], &[u8])> {
        if !self.holds(from) {
            return None;
        }
        let offset = usize::try_from(from - self.start).ok()?;
        let n = (self.buf.len() - offset).min(max);
        let (a, b) = self.buf.as_slices();
        let end = offset + n;
        let first = if offset < a.len() {
            &a[offset..end.min(a.len())]
        } else {
            &[]
        };
        let second = if end > a.len() {
            &b[offset.saturating_sub(a.len())..end - a.len()]
        } else {
            &[]
        };
        Some((first, second))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_bytes_by_position() {
        let mut r = Ring::new(8);
        r.push(b"abcdef");
        assert_eq!((r.start(), r.end()), (0, 6));
        r.push(b"ghij");
        assert_eq!((r.start(), r.end()), (2, 10));
        let mut out = Vec::new();
        assert_eq!(r.copy_from(4, 100, &mut out), Some(6));
        assert_eq!(out, b"efghij");
        assert_eq!(r.copy_from(1, 100, &mut out), None);
        assert_eq!(r.copy_from(11, 100, &mut out), None);
        out.clear();
        assert_eq!(r.copy_from(10, 100, &mut out), Some(0));
        r.push(b"0123456789xyz");
        assert_eq!((r.start(), r.end()), (15, 23));
        assert_eq!(r.copy_from(15, 3, &mut out), Some(3));
        assert_eq!(out, b"567");
    }

    #[test]
    fn copies_across_the_wrap() {
        let mut r = Ring::new(4);
        for chunk in [&b"ab"[..], b"cd", b"ef", b"g"] {
            r.push(chunk);
        }
        let mut out = Vec::new();
        assert_eq!(r.copy_from(3, 10, &mut out), Some(4));
        assert_eq!(out, b"defg");
    }
}
