//! Bounds-checked reading of a frame's payload: every read checks the
//! length first, so untrusted bytes give errors, never panics.

use crate::HolderError;
use crate::protocol::MAX_STRING;

pub(crate) fn bad(what: &str, value: u8) -> HolderError {
    HolderError::Protocol(format!("unknown {what} {value:#04x}"))
}

/// A bounds-checked reader over a payload.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], HolderError> {
        if self.bytes.len() < n {
            return Err(HolderError::Protocol(format!(
                "truncated frame: wanted {n} more bytes, {} left",
                self.bytes.len()
            )));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], HolderError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, HolderError> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, HolderError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, HolderError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32, HolderError> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, HolderError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    pub(crate) fn opt_i32(&mut self) -> Result<Option<i32>, HolderError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.i32()?)),
            other => Err(bad("option flag", other)),
        }
    }

    pub(crate) fn string(&mut self) -> Result<String, HolderError> {
        let len = usize::from(self.u16()?);
        if len > MAX_STRING {
            return Err(HolderError::Protocol(format!(
                "string of {len} bytes exceeds {MAX_STRING}"
            )));
        }
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| HolderError::Protocol("string is not UTF-8".into()))
    }

    pub(crate) fn rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes).to_vec()
    }

    pub(crate) fn finish(&self) -> Result<(), HolderError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(HolderError::Protocol(format!(
                "{} trailing bytes after the frame",
                self.bytes.len()
            )))
        }
    }
}
