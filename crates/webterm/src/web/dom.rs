//! The terminal's DOM (wasm32 only): the default stylesheet, the
//! `.ht-term` element tree, measuring the character cell and drawing the
//! rows [`Core`] reports as changed.

use wasm_bindgen::{JsCast, prelude::*};
use web_sys::{Document, Element, HtmlElement, Window};

use crate::{core::Core, layout::grid_size};

/// Default look, injected once per document. Every rule is wrapped in
/// `:where()` (zero specificity), so any stylesheet rule for the same class
/// overrides it.
const DEFAULT_CSS: &str = r#":where(.ht-term){position:relative;display:block;width:100%;height:100%;overflow:hidden;box-sizing:border-box;color:var(--ht-fg,#d3d7cf);background:var(--ht-bg,#1e1e1e);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace;font-size:14px;line-height:1.2;font-variant-ligatures:none;cursor:text;outline:none}
:where(.ht-viewport){position:relative;width:100%;height:100%;overflow:hidden}
:where(.ht-row){white-space:pre;overflow:hidden;height:var(--ht-row-h,1.2em)}
:where(.ht-probe){position:absolute;left:0;top:0;visibility:hidden;white-space:pre;pointer-events:none}
:where(.ht-input){position:absolute;left:0;top:0;width:1px;height:1px;padding:0;margin:0;border:0;opacity:0;resize:none;overflow:hidden;outline:none;color:transparent;background:transparent;caret-color:transparent;z-index:-1}
:where(.ht-status){position:absolute;top:4px;right:4px;padding:2px 8px;border-radius:3px;font-size:12px;background:rgba(0,0,0,.75);color:#fff;pointer-events:none}
:where(.ht-status[hidden]){display:none}
:where(.ht-term:not(.ht-focused) .ht-cursor){color:inherit!important;background:transparent!important;outline:1px solid var(--ht-fg,#d3d7cf);outline-offset:-1px}
"#;
const STYLE_ID: &str = "ht-default-style";
/// Characters in the measuring probe.
const PROBE_CHARS: usize = 64;
pub(crate) fn window() -> Result<Window, JsValue> {
    web_sys::window().ok_or_else(|| JsValue::from_str("no window"))
}

pub(crate) fn html_element(
    document: &Document,
    tag: &str,
    class: &str,
) -> Result<HtmlElement, JsValue> {
    let el: HtmlElement = document.create_element(tag)?.dyn_into()?;
    el.set_class_name(class);
    Ok(el)
}

fn inject_default_css(document: &Document) -> Result<(), JsValue> {
    if document.get_element_by_id(STYLE_ID).is_some() {
        return Ok(());
    }
    let style = document.create_element("style")?;
    style.set_id(STYLE_ID);
    style.set_text_content(Some(DEFAULT_CSS));
    match document.head() {
        Some(head) => head.prepend_with_node_1(&style)?,
        None => {
            if let Some(el) = document.document_element() {
                el.append_child(&style)?;
            }
        }
    }
    Ok(())
}

/// The terminal's DOM: `.ht-term` > `.ht-viewport` > rows, probe.
pub(crate) struct Dom {
    pub(crate) root: HtmlElement,
    pub(crate) viewport: HtmlElement,
    pub(crate) probe: HtmlElement,
    rows: Vec<HtmlElement>,
    pub(crate) document: Document,
    cell: Option<(f64, f64)>,
}

impl Dom {
    pub(crate) fn new(container: &Element) -> Result<Self, JsValue> {
        let document = window()?
            .document()
            .ok_or_else(|| JsValue::from_str("no document"))?;
        inject_default_css(&document)?;
        let root = html_element(&document, "div", "ht-term")?;
        root.set_attribute("role", "application")?;
        root.set_attribute("aria-roledescription", "terminal")?;
        root.set_tab_index(-1);
        let viewport = html_element(&document, "div", "ht-viewport")?;
        let probe = html_element(&document, "span", "ht-probe")?;
        probe.set_attribute("aria-hidden", "true")?;
        probe.set_text_content(Some(&"W".repeat(PROBE_CHARS)));
        viewport.append_child(&probe)?;
        root.append_child(&viewport)?;
        container.append_child(&root)?;
        Ok(Self {
            root,
            viewport,
            probe,
            rows: Vec::new(),
            document,
            cell: None,
        })
    }

    /// Measures the character cell; returns the `(rows, cols)` that fit the
    /// viewport, `None` while it is hidden or unmeasurable.
    pub(crate) fn fit(&mut self) -> Option<(u16, u16)> {
        let rect = self.probe.get_bounding_client_rect();
        let (cw, ch) = (rect.width() / PROBE_CHARS as f64, rect.height());
        if cw > 0.0 && ch > 0.0 && self.cell != Some((cw, ch)) {
            self.cell = Some((cw, ch));
            let _ = self
                .viewport
                .style()
                .set_property("--ht-row-h", &format!("{ch}px"));
        }
        let w = f64::from(self.viewport.client_width());
        let h = f64::from(self.viewport.client_height());
        grid_size(w, h, cw, ch)
    }

    pub(crate) fn cell(&self) -> Option<(f64, f64)> {
        self.cell
    }

    fn ensure_rows(&mut self, n: usize) -> Result<(), JsValue> {
        while self.rows.len() > n {
            if let Some(row) = self.rows.pop() {
                row.remove();
            }
        }
        while self.rows.len() < n {
            let row = html_element(&self.document, "div", "ht-row")?;
            self.viewport.insert_before(&row, Some(&self.probe))?;
            self.rows.push(row);
        }
        Ok(())
    }

    /// Draws the rows of `core` that changed; returns the cursor cell.
    pub(crate) fn draw(&mut self, core: &mut Core) -> Option<(u16, u16)> {
        let rows = usize::from(core.size().0);
        if self.ensure_rows(rows).is_err() {
            core.invalidate();
        }
        let els = &self.rows;
        core.frame(|row, html| {
            if let Some(el) = els.get(row) {
                // Without markup or entities the HTML is the text itself:
                // a text node is cheaper to set than HTML to parse.
                if html.bytes().any(|b| b == b'<' || b == b'&') {
                    el.set_inner_html(html);
                } else {
                    el.set_text_content(Some(html));
                }
            }
        })
    }

    pub(crate) fn remove(&self) {
        self.root.remove();
    }
}
