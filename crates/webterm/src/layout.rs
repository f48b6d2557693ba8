//! Container size → terminal size.

use harness_term::MIN_SIZE;

/// The largest size the browser terminal asks for: the one bound of every
/// terminal size (`harness_term::clamp_size`).
pub use harness_term::{MAX_COLS, MAX_ROWS};

/// The `(rows, cols)` that fit a `width` × `height` pixel box with
/// `cell_w` × `cell_h` pixel character cells, clamped to
/// [`MIN_SIZE`]..=[`MAX_ROWS`]/[`MAX_COLS`]. `None` when the measurement is
/// unusable (a hidden container measures 0 × 0; the size is then kept).
pub fn grid_size(width: f64, height: f64, cell_w: f64, cell_h: f64) -> Option<(u16, u16)> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !(ok(width) && ok(height) && ok(cell_w) && ok(cell_h)) {
        return None;
    }
    // A hair of tolerance: 800 px / (800/80 px) must give 80, not 79.
    let fit = |space: f64, cell: f64, max: u16| {
        let n = ((space + 0.01) / cell).floor();
        (n.clamp(f64::from(MIN_SIZE), f64::from(max))) as u16
    };
    Some((fit(height, cell_h, MAX_ROWS), fit(width, cell_w, MAX_COLS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_whole_cells() {
        assert_eq!(grid_size(800.0, 480.0, 10.0, 20.0), Some((24, 80)));
        assert_eq!(grid_size(809.9, 499.0, 10.0, 20.0), Some((24, 80)));
        // Fractional cell widths (e.g. 8.4 px at 14 px font).
        assert_eq!(grid_size(672.0, 408.0, 8.4, 17.0), Some((24, 80)));
        assert_eq!(grid_size(671.9, 407.9, 8.4, 17.0), Some((23, 79)));
        assert_eq!(
            grid_size(1000.0, 100.0, 7.0 + 1.0 / 3.0, 16.0),
            Some((6, 136))
        );
    }

    #[test]
    fn clamps() {
        assert_eq!(grid_size(5.0, 5.0, 10.0, 20.0), Some((2, 2)));
        assert_eq!(grid_size(1e7, 1e7, 1.0, 1.0), Some((MAX_ROWS, MAX_COLS)));
    }

    #[test]
    fn unusable_measurements() {
        for (w, h, cw, ch) in [
            (0.0, 480.0, 10.0, 20.0),
            (800.0, 0.0, 10.0, 20.0),
            (800.0, 480.0, 0.0, 20.0),
            (800.0, 480.0, 10.0, f64::NAN),
            (f64::INFINITY, 480.0, 10.0, 20.0),
            (-1.0, 480.0, 10.0, 20.0),
        ] {
            assert_eq!(grid_size(w, h, cw, ch), None);
        }
    }
}
