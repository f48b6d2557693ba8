//! Cell style → inline CSS.
//!
//! Colours are inline styles so the terminal looks right with no stylesheet.
//! The 16 ANSI colours and the default foreground/background go through CSS
//! custom properties with built-in fallbacks, so a theme can override them:
//! `--ht-fg`, `--ht-bg`, `--ht-c0` … `--ht-c15`. The 256-colour cube,
//! the grey ramp and truecolor are literal `#rrggbb`.

use std::fmt::Write as _;

use harness_term::vt100::{self, Color};

/// Default foreground (`--ht-fg` fallback).
pub const DEFAULT_FG: &str = "#d3d7cf";
/// Default background (`--ht-bg` fallback).
pub const DEFAULT_BG: &str = "#1e1e1e";

/// Fallbacks for `--ht-c0` … `--ht-c15` (the Tango palette xterm.js uses).
pub const ANSI: [&str; 16] = [
    "#2e3436", "#cc0000", "#4e9a06", "#c4a000", "#3465a4", "#75507b", "#06989a", "#d3d7cf",
    "#555753", "#ef2929", "#8ae234", "#fce94f", "#729fcf", "#ad7fa8", "#34e2e2", "#eeeeec",
];

/// The drawing attributes of a cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellStyle {
    /// Foreground colour.
    pub fg: Color,
    /// Background colour.
    pub bg: Color,
    /// SGR 1.
    pub bold: bool,
    /// SGR 2.
    pub dim: bool,
    /// SGR 3.
    pub italic: bool,
    /// SGR 4.
    pub underline: bool,
    /// SGR 7.
    pub inverse: bool,
}

impl CellStyle {
    /// The style of a `vt100` cell.
    pub fn of(cell: &vt100::Cell) -> Self {
        Self {
            fg: cell.fgcolor(),
            bg: cell.bgcolor(),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }

    /// True when a blank cell with this style looks like empty space (so
    /// trailing blanks can be left out of a row).
    pub fn is_invisible_when_blank(&self) -> bool {
        self.bg == Color::Default && !self.inverse && !self.underline
    }

    /// Appends the inline CSS for this style to `out` (nothing for the
    /// default style). `cursor` draws the cell as the block cursor (colours
    /// inverted once more).
    pub fn write_css(&self, cursor: bool, out: &mut String) {
        let mut fg = self.fg;
        // Bold draws the 8 base colours in their bright variants (xterm's
        // default, and xterm.js's `drawBoldTextInBrightColors`).
        if self.bold
            && let Color::Idx(i @ 0..=7) = fg
        {
            fg = Color::Idx(i + 8);
        }
        let (fg, bg) = if self.inverse != cursor {
            (Paint::from_bg(self.bg), Paint::from_fg(fg))
        } else {
            (Paint::from_fg(fg), Paint::from_bg(self.bg))
        };
        if fg != Paint::DefaultFg {
            out.push_str("color:");
            fg.write(out);
            out.push(';');
        }
        if bg != Paint::DefaultBg {
            out.push_str("background:");
            bg.write(out);
            out.push(';');
        }
        if self.bold {
            out.push_str("font-weight:bold;");
        }
        if self.dim {
            out.push_str("opacity:.5;");
        }
        if self.italic {
            out.push_str("font-style:italic;");
        }
        if self.underline {
            out.push_str("text-decoration:underline;");
        }
    }

    /// The inline CSS for this style (see [`write_css`](Self::write_css)).
    pub fn css(&self, cursor: bool) -> String {
        let mut s = String::new();
        self.write_css(cursor, &mut s);
        s
    }
}

/// A resolved colour: the theme defaults stay symbolic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Paint {
    DefaultFg,
    DefaultBg,
    Color(Color),
}

impl Paint {
    fn from_fg(c: Color) -> Self {
        match c {
            Color::Default => Self::DefaultFg,
            c => Self::Color(c),
        }
    }

    fn from_bg(c: Color) -> Self {
        match c {
            Color::Default => Self::DefaultBg,
            c => Self::Color(c),
        }
    }

    fn write(self, out: &mut String) {
        match self {
            Self::DefaultFg => {
                let _ = write!(out, "var(--ht-fg,{DEFAULT_FG})");
            }
            Self::DefaultBg => {
                let _ = write!(out, "var(--ht-bg,{DEFAULT_BG})");
            }
            Self::Color(Color::Idx(i)) if i < 16 => {
                let _ = write!(out, "var(--ht-c{i},{})", ANSI[usize::from(i)]);
            }
            Self::Color(Color::Idx(i)) => {
                let (r, g, b) = palette_rgb(i);
                let _ = write!(out, "#{r:02x}{g:02x}{b:02x}");
            }
            Self::Color(Color::Rgb(r, g, b)) => {
                let _ = write!(out, "#{r:02x}{g:02x}{b:02x}");
            }
            // `Paint::from_*` never wraps `Default`.
            Self::Color(Color::Default) => out.push_str("inherit"),
        }
    }
}

/// RGB of xterm 256-colour palette entries 16–255 (the 6×6×6 cube and the
/// grey ramp); entries below 16 return the built-in ANSI fallbacks.
pub fn palette_rgb(i: u8) -> (u8, u8, u8) {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match i {
        0..=15 => {
            let hex = ANSI[usize::from(i)];
            let p = |at: usize| u8::from_str_radix(&hex[at..at + 2], 16).unwrap_or(0);
            (p(1), p(3), p(5))
        }
        16..=231 => {
            let n = i - 16;
            (
                LEVELS[usize::from(n / 36)],
                LEVELS[usize::from((n / 6) % 6)],
                LEVELS[usize::from(n % 6)],
            )
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style() -> CellStyle {
        CellStyle::default()
    }

    #[test]
    fn default_style_has_no_css() {
        assert_eq!(style().css(false), "");
    }

    #[test]
    fn ansi_colours_use_theme_variables() {
        let s = CellStyle {
            fg: Color::Idx(1),
            bg: Color::Idx(12),
            ..style()
        };
        assert_eq!(
            s.css(false),
            "color:var(--ht-c1,#cc0000);background:var(--ht-c12,#729fcf);"
        );
    }

    #[test]
    fn palette_256_and_truecolor_are_literal() {
        let s = CellStyle {
            fg: Color::Idx(196),
            bg: Color::Idx(244),
            ..style()
        };
        assert_eq!(s.css(false), "color:#ff0000;background:#808080;");
        let s = CellStyle {
            fg: Color::Rgb(1, 2, 255),
            ..style()
        };
        assert_eq!(s.css(false), "color:#0102ff;");
    }

    #[test]
    fn palette_table() {
        assert_eq!(palette_rgb(16), (0, 0, 0));
        assert_eq!(palette_rgb(21), (0, 0, 255));
        assert_eq!(palette_rgb(46), (0, 255, 0));
        assert_eq!(palette_rgb(196), (255, 0, 0));
        assert_eq!(palette_rgb(231), (255, 255, 255));
        assert_eq!(palette_rgb(232), (8, 8, 8));
        assert_eq!(palette_rgb(255), (238, 238, 238));
        assert_eq!(palette_rgb(1), (0xcc, 0, 0));
    }

    #[test]
    fn attributes() {
        let s = CellStyle {
            bold: true,
            dim: true,
            italic: true,
            underline: true,
            ..style()
        };
        assert_eq!(
            s.css(false),
            "font-weight:bold;opacity:.5;font-style:italic;text-decoration:underline;"
        );
    }

    #[test]
    fn bold_brightens_the_base_colours_only() {
        let s = CellStyle {
            fg: Color::Idx(2),
            bold: true,
            ..style()
        };
        assert_eq!(
            s.css(false),
            "color:var(--ht-c10,#8ae234);font-weight:bold;"
        );
        let s = CellStyle {
            fg: Color::Idx(100),
            bold: true,
            ..style()
        };
        assert_eq!(s.css(false), "color:#878700;font-weight:bold;");
    }

    #[test]
    fn inverse_swaps_including_defaults() {
        let s = CellStyle {
            inverse: true,
            ..style()
        };
        assert_eq!(
            s.css(false),
            "color:var(--ht-bg,#1e1e1e);background:var(--ht-fg,#d3d7cf);"
        );
        let s = CellStyle {
            fg: Color::Idx(3),
            inverse: true,
            ..style()
        };
        assert_eq!(
            s.css(false),
            "color:var(--ht-bg,#1e1e1e);background:var(--ht-c3,#c4a000);"
        );
    }

    #[test]
    fn cursor_inverts_once_more() {
        assert_eq!(
            style().css(true),
            CellStyle {
                inverse: true,
                ..style()
            }
            .css(false)
        );
        let inv = CellStyle {
            inverse: true,
            ..style()
        };
        assert_eq!(inv.css(true), "");
    }

    #[test]
    fn blank_visibility() {
        assert!(style().is_invisible_when_blank());
        assert!(
            CellStyle {
                bold: true,
                fg: Color::Idx(1),
                ..style()
            }
            .is_invisible_when_blank()
        );
        assert!(
            !CellStyle {
                bg: Color::Idx(1),
                ..style()
            }
            .is_invisible_when_blank()
        );
        assert!(
            !CellStyle {
                inverse: true,
                ..style()
            }
            .is_invisible_when_blank()
        );
        assert!(
            !CellStyle {
                underline: true,
                ..style()
            }
            .is_invisible_when_blank()
        );
    }
}
