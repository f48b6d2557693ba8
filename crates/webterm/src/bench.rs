//! Parse + render benchmark exports (feature `bench`), for the benchmark
//! page (`bench/index.html`) run in headless Chromium next to xterm.js's
//! published 28–33 MB/s `Terminal.write` rate.

use wasm_bindgen::prelude::*;
use web_sys::Element;

use crate::{core::Core, core::SCROLLBACK, web::Dom};

/// Chunk size fed per frame.
pub const CHUNK: usize = 64 * 1024;

fn now() -> Result<f64, JsValue> {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .ok_or_else(|| JsValue::from_str("no performance clock"))
}

fn mb_per_s(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / 1e6 / (ms.max(1e-3) / 1e3)
}

/// Feeds `bytes` in 64 KiB chunks into a terminal mounted in `container`
/// (sized to fit it), drawing the changed rows to the DOM synchronously
/// after every chunk. Returns MB/s (10^6 bytes per second).
#[wasm_bindgen]
pub fn bench(container: &Element, bytes: &[u8]) -> Result<f64, JsValue> {
    bench_with(container, bytes, CHUNK, false, 0, 0)
}

/// [`bench`] with a chunk size, optionally forcing style and layout after
/// each frame (reads `offsetHeight`, so the browser's own work on the new
/// rows is measured too), and a fixed `rows` × `cols` size (0 × 0: fit the
/// container).
#[wasm_bindgen(js_name = benchWith)]
pub fn bench_with(
    container: &Element,
    bytes: &[u8],
    chunk: usize,
    force_layout: bool,
    rows: u16,
    cols: u16,
) -> Result<f64, JsValue> {
    let mut dom = Dom::new(container)?;
    let fitted = dom.fit();
    let (rows, cols) = if rows > 0 && cols > 0 {
        (rows, cols)
    } else {
        fitted.unwrap_or((24, 80))
    };
    let mut core = Core::new(rows, cols, SCROLLBACK);
    core.on_open();
    let start = now()?;
    for piece in bytes.chunks(chunk.max(1)) {
        core.on_binary(piece);
        dom.draw(&mut core);
        core.take_outbox();
        if force_layout {
            let _ = dom.root.offset_height();
        }
    }
    let ms = now()? - start;
    dom.root.remove();
    Ok(mb_per_s(bytes.len(), ms))
}

/// The model alone (no DOM), same chunks: MB/s.
#[wasm_bindgen(js_name = benchParseOnly)]
pub fn bench_parse_only(bytes: &[u8], rows: u16, cols: u16) -> Result<f64, JsValue> {
    let mut core = Core::new(rows, cols, SCROLLBACK);
    core.on_open();
    let start = now()?;
    for piece in bytes.chunks(CHUNK) {
        core.feed(piece);
    }
    let ms = now()? - start;
    Ok(mb_per_s(bytes.len(), ms))
}
