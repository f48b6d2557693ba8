use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

// chosen to make the size of the cell struct 32 bytes
const CONTENT_BYTES: usize = 22;

const IS_WIDE: u8 = 0b1000_0000;
const IS_WIDE_CONTINUATION: u8 = 0b0100_0000;
const LEN_BITS: u8 = 0b0001_1111;

/// Represents a single terminal cell.
// fork: also `Copy`, so rows are copied and filled with memcpy/memset.
#[derive(Clone, Copy, Debug, Eq)]
pub struct Cell {
    contents: [u8; CONTENT_BYTES],
    len: u8,
    attrs: crate::attrs::Attrs,
}
const _: () = assert!(core::mem::size_of::<Cell>() == 32);

impl PartialEq<Self> for Cell {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        if self.len != other.len {
            return false;
        }
        if self.attrs != other.attrs {
            return false;
        }
        // fork: a byte loop instead of a slice comparison, which called
        // memcmp for the usual 0- or 1-byte contents.
        let len = self.len();
        let mut i = 0;
        while i < len {
            if self.contents[i] != other.contents[i] {
                return false;
            }
            i += 1;
        }
        true
    }
}

impl Cell {
    pub(crate) const DEFAULT: Self = Self::new();

    pub(crate) const fn new() -> Self {
        Self {
            contents: [0; CONTENT_BYTES],
            len: 0,
            attrs: crate::attrs::Attrs::new(),
        }
    }

    fn len(&self) -> usize {
        usize::from(self.len & LEN_BITS)
    }

    pub(crate) fn set(&mut self, c: char, a: crate::attrs::Attrs) {
        self.len = 0;
        self.append_char(0, c);
        // if we're setting a single character, we can just look at that one
        // character to determine the cell width
        self.set_wide(c.width().unwrap_or(1) > 1);
        self.attrs = a;
    }

    /// `self.set(char::from(b), a)` for printable ASCII (`b' '..=b'~'`):
    /// one byte of contents, not wide, no continuation flag. (fork)
    #[inline]
    pub(crate) fn set_ascii(&mut self, b: u8, a: crate::attrs::Attrs) {
        debug_assert!((b' '..=b'~').contains(&b));
        self.contents[0] = b;
        self.len = 1;
        self.attrs = a;
    }

    /// For a cell with `is_default()`: whether it is also byte for byte
    /// `Cell::new()`. A cell's first content byte is written before any
    /// other and is never 0 (U+0000 is not drawn), so the contents are all
    /// zero iff the first byte is. (fork)
    #[inline]
    pub(crate) fn is_new_given_default(&self) -> bool {
        debug_assert!(self.is_default());
        self.contents[0] == 0
    }

    /// `*self == Self::DEFAULT`, without comparing contents. (fork)
    #[inline]
    pub(crate) fn is_default(&self) -> bool {
        self.len == 0 && self.attrs == crate::attrs::Attrs::new()
    }

    pub(crate) fn append(&mut self, c: char) {
        let len = self.len();
        if len >= CONTENT_BYTES - 4 {
            return;
        }
        if len == 0 {
            self.contents[0] = b' ';
            self.len += 1;
        }

        // we already checked that we have space for another codepoint
        self.append_char(self.len(), c);
    }

    pub(crate) fn set_contents(&mut self, s: &str, a: crate::attrs::Attrs) {
        let mut chars = s.chars();
        let Some(c) = chars.next() else {
            return;
        };
        self.set(c, a);
        for c in chars {
            self.append(c);
        }
    }

    // Writes bytes representing c at start
    // Requires caller to verify start <= CODEPOINTS_IN_CELL * 4
    fn append_char(&mut self, start: usize, c: char) {
        c.encode_utf8(&mut self.contents[start..]);
        self.len += u8::try_from(c.len_utf8()).unwrap();
        // if we're appending characters, we have to account for emoji
        // presentation being requested, which can turn a base character that
        // is otherwise considered to be narrow into a wide character
        if c == '\u{FE0F}' {
            self.set_wide(self.contents().width() > 1);
        }
    }

    pub(crate) fn clear(&mut self, attrs: crate::attrs::Attrs) {
        self.len = 0;
        self.attrs = attrs;
    }

    /// Returns the text contents of the cell.
    ///
    /// Can include multiple unicode characters if combining characters are
    /// used, but will contain at most one character with a non-zero character
    /// width.
    // Since contents has been constructed by appending chars encoded as UTF-8 it will be valid UTF-8
    #[allow(clippy::missing_panics_doc)]
    #[must_use]
    pub fn contents(&self) -> &str {
        core::str::from_utf8(&self.contents[..self.len()]).unwrap()
    }

    /// Appends the cell's text to `out`; a one-byte ASCII character without
    /// validating it as UTF-8 again (the usual cell of a screen read as
    /// text). (fork)
    ///
    /// A cell of one character of two to four bytes (a box-drawing rule,
    /// a glyph) is decoded here and pushed as a `char`: no validation of
    /// the whole contents, no copy call for three bytes. (fork)
    #[inline]
    pub(crate) fn push_contents(&self, out: &mut String) {
        let first = self.contents[0];
        let len = self.len();
        if len == 1 && first.is_ascii() {
            out.push(char::from(first));
            return;
        }
        if let Some(c) = self.single_char(len) {
            out.push(c);
            return;
        }
        out.push_str(self.contents());
    }

    /// The cell's one character when its `len` bytes are exactly one
    /// multi-byte UTF-8 sequence (else `None`: combining characters).
    #[inline]
    fn single_char(&self, len: usize) -> Option<char> {
        let b = &self.contents;
        let tail = |i: usize| u32::from(b[i] & 0x3F);
        let scalar = match (len, b[0]) {
            (2, 0xC0..=0xDF) => (u32::from(b[0] & 0x1F) << 6) | tail(1),
            (3, 0xE0..=0xEF) => {
                (u32::from(b[0] & 0x0F) << 12) | (tail(1) << 6) | tail(2)
            }
            (4, 0xF0..=0xF7) => {
                (u32::from(b[0] & 0x07) << 18)
                    | (tail(1) << 12)
                    | (tail(2) << 6)
                    | tail(3)
            }
            _ => return None,
        };
        char::from_u32(scalar)
    }

    /// Returns whether the cell contains any text data.
    #[must_use]
    pub fn has_contents(&self) -> bool {
        self.len() > 0
    }

    /// Returns whether the text data in the cell represents a wide character.
    #[must_use]
    pub fn is_wide(&self) -> bool {
        self.len & IS_WIDE != 0
    }

    /// Returns whether the cell contains the second half of a wide character
    /// (in other words, whether the previous cell in the row contains a wide
    /// character)
    #[must_use]
    pub fn is_wide_continuation(&self) -> bool {
        self.len & IS_WIDE_CONTINUATION != 0
    }

    fn set_wide(&mut self, wide: bool) {
        if wide {
            self.len |= IS_WIDE;
        } else {
            self.len &= !IS_WIDE;
        }
    }

    pub(crate) fn set_wide_continuation(&mut self, wide: bool) {
        if wide {
            self.len |= IS_WIDE_CONTINUATION;
        } else {
            self.len &= !IS_WIDE_CONTINUATION;
        }
    }

    pub(crate) fn attrs(&self) -> &crate::attrs::Attrs {
        &self.attrs
    }

    /// Returns the foreground color of the cell.
    #[must_use]
    pub fn fgcolor(&self) -> crate::Color {
        self.attrs.fgcolor
    }

    /// Returns the background color of the cell.
    #[must_use]
    pub fn bgcolor(&self) -> crate::Color {
        self.attrs.bgcolor
    }

    /// Returns whether the cell should be rendered with the bold text
    /// attribute.
    #[must_use]
    pub fn bold(&self) -> bool {
        self.attrs.bold()
    }

    /// Returns whether the cell should be rendered with the dim text
    /// attribute.
    #[must_use]
    pub fn dim(&self) -> bool {
        self.attrs.dim()
    }

    /// Returns whether the cell should be rendered with the italic text
    /// attribute.
    #[must_use]
    pub fn italic(&self) -> bool {
        self.attrs.italic()
    }

    /// Returns whether the cell should be rendered with the underlined text
    /// attribute.
    #[must_use]
    pub fn underline(&self) -> bool {
        self.attrs.underline()
    }

    /// Returns whether the cell should be rendered with the inverse text
    /// attribute.
    #[must_use]
    pub fn inverse(&self) -> bool {
        self.attrs.inverse()
    }
}
