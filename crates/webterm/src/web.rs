//! The DOM and WebSocket glue (wasm32 only): feeds [`Core`] with browser
//! events and draws its frames as DOM rows.

use std::{
    cell::RefCell,
    rc::{Rc, Weak},
};

use js_sys::{ArrayBuffer, Uint8Array};
use wasm_bindgen::{JsCast, prelude::*};
use web_sys::{
    AddEventListenerOptions, BinaryType, ClipboardEvent, CloseEvent, CompositionEvent, Element,
    Event, EventTarget, FocusEvent, FocusOptions, HtmlElement, HtmlTextAreaElement, InputEvent,
    KeyboardEvent, MessageEvent, MouseEvent, Node, ResizeObserver, WebSocket, WheelEvent, Window,
};

mod dom;

pub(crate) use dom::Dom;
use dom::{html_element, window};

use crate::{
    core::{Core, KeyOutcome, SCROLLBACK},
    keys::{KeyInput, KeyOptions},
    protocol::terminal_url,
};

/// Delay before an idle acknowledgement (ms): coalesces bursts of frames.
const IDLE_ACK_MS: i32 = 10;

struct Listener {
    target: EventTarget,
    kind: &'static str,
    callback: Closure<dyn FnMut(Event)>,
}

/// Closures registered with the browser. They hold only a `Weak` to the
/// terminal, are created once and live until `destroy`, so none is ever
/// dropped while it runs.
struct Callbacks {
    on_open: Closure<dyn FnMut(Event)>,
    on_message: Closure<dyn FnMut(MessageEvent)>,
    on_close: Closure<dyn FnMut(CloseEvent)>,
    on_error: Closure<dyn FnMut(Event)>,
    frame: Closure<dyn FnMut(f64)>,
    idle: Closure<dyn FnMut()>,
    reconnect: Closure<dyn FnMut()>,
    observer: ResizeObserver,
    _on_resize: Closure<dyn FnMut(js_sys::Array)>,
    listeners: Vec<Listener>,
}

struct Term {
    core: Core,
    dom: Dom,
    input: HtmlTextAreaElement,
    status: HtmlElement,
    window: Window,
    url: String,
    ws: Option<WebSocket>,
    raf: Option<i32>,
    idle_timer: Option<i32>,
    reconnect_timer: Option<i32>,
    /// A mouse button is down in the terminal (selecting): drawing waits,
    /// so redrawn rows do not drop the selection being made.
    selecting: bool,
    wheel_rest: f64,
    shown_status: Option<String>,
    destroyed: bool,
    callbacks: Option<Callbacks>,
}

type Shared = Rc<RefCell<Term>>;

/// Runs `f` on the terminal if it is still alive and not busy.
fn with_term(weak: &Weak<RefCell<Term>>, f: impl FnOnce(&mut Term)) {
    let Some(rc) = weak.upgrade() else { return };
    let Ok(mut term) = rc.try_borrow_mut() else {
        return;
    };
    if !term.destroyed {
        f(&mut term);
    }
}

impl Term {
    fn flush(&mut self) {
        let msgs = self.core.take_outbox();
        if let Some(ws) = &self.ws
            && ws.ready_state() == WebSocket::OPEN
        {
            for msg in msgs {
                let _ = ws.send_with_str(&msg.to_json());
            }
        }
    }

    /// Sends what the core queued, schedules a frame when needed and shows
    /// the status: called after every event.
    fn after_event(&mut self) {
        self.flush();
        if self.core.is_dirty() {
            self.schedule_frame();
        }
        self.show_status();
    }

    fn schedule_frame(&mut self) {
        if self.raf.is_some() || self.selecting {
            return;
        }
        if let Some(cb) = &self.callbacks {
            self.raf = self
                .window
                .request_animation_frame(cb.frame.as_ref().unchecked_ref())
                .ok();
        }
    }

    fn schedule_idle_ack(&mut self) {
        if self.idle_timer.is_some() {
            return;
        }
        if let Some(cb) = &self.callbacks {
            self.idle_timer = self
                .window
                .set_timeout_with_callback_and_timeout_and_arguments_0(
                    cb.idle.as_ref().unchecked_ref(),
                    IDLE_ACK_MS,
                )
                .ok();
        }
    }

    fn draw(&mut self) {
        self.raf = None;
        if self.selecting {
            return;
        }
        let cursor = self.dom.draw(&mut self.core);
        // Keep the input element at the cursor so IME windows open there.
        if let (Some((row, col)), Some((cw, ch))) = (cursor, self.dom.cell()) {
            let style = self.input.style();
            let _ = style.set_property("left", &format!("{}px", f64::from(col) * cw));
            let _ = style.set_property("top", &format!("{}px", f64::from(row) * ch));
        }
        self.show_status();
    }

    fn show_status(&mut self) {
        let text = self.core.status_text();
        if self.shown_status.as_deref() == Some(text.as_str()) {
            return;
        }
        self.status.set_text_content(Some(&text));
        self.status.set_hidden(text.is_empty());
        let _ = self
            .dom
            .root
            .set_attribute("data-state", self.core.status().name());
        self.shown_status = Some(text);
    }

    fn detach_socket(&mut self) -> Option<WebSocket> {
        let ws = self.ws.take()?;
        ws.set_onopen(None);
        ws.set_onmessage(None);
        ws.set_onclose(None);
        ws.set_onerror(None);
        Some(ws)
    }

    fn connect(&mut self) -> Result<(), JsValue> {
        self.reconnect_timer = None;
        if let Some(old) = self.detach_socket() {
            let _ = old.close();
        }
        let ws = WebSocket::new(&self.url)?;
        ws.set_binary_type(BinaryType::Arraybuffer);
        if let Some(cb) = &self.callbacks {
            ws.set_onopen(Some(cb.on_open.as_ref().unchecked_ref()));
            ws.set_onmessage(Some(cb.on_message.as_ref().unchecked_ref()));
            ws.set_onclose(Some(cb.on_close.as_ref().unchecked_ref()));
            ws.set_onerror(Some(cb.on_error.as_ref().unchecked_ref()));
        }
        self.ws = Some(ws);
        Ok(())
    }

    fn on_close(&mut self, code: u16) {
        self.detach_socket();
        if let Some(t) = self.idle_timer.take() {
            self.window.clear_timeout_with_handle(t);
        }
        if let Some(delay) = self.core.on_close(code, js_sys::Math::random())
            && let Some(cb) = &self.callbacks
        {
            self.reconnect_timer = self
                .window
                .set_timeout_with_callback_and_timeout_and_arguments_0(
                    cb.reconnect.as_ref().unchecked_ref(),
                    i32::try_from(delay).unwrap_or(i32::MAX),
                )
                .ok();
        }
        self.after_event();
    }

    fn on_resize(&mut self) {
        if let Some((rows, cols)) = self.dom.fit() {
            let before = self.core.size();
            self.core.resize(rows, cols);
            if self.core.size() != before {
                self.core.invalidate();
            }
        }
        // The cell size may have changed (fonts loaded): redraw the cursor.
        self.after_event();
    }

    fn has_selection(&self) -> bool {
        let Ok(Some(sel)) = self.window.get_selection() else {
            return false;
        };
        if sel.is_collapsed() {
            return false;
        }
        let root: &Node = self.dom.root.as_ref();
        sel.anchor_node().is_some_and(|n| root.contains(Some(&n)))
            || sel.focus_node().is_some_and(|n| root.contains(Some(&n)))
    }

    fn focus_input(&self) {
        let opts = FocusOptions::new();
        opts.set_prevent_scroll(true);
        let _ = self.input.focus_with_options(&opts);
    }

    fn on_key(&mut self, e: &KeyboardEvent) {
        if e.is_composing() || e.key_code() == 229 {
            return; // IME at work: compositionend delivers the text.
        }
        let key = e.key();
        let code = e.code();
        let k = KeyInput {
            key: &key,
            code: &code,
            ctrl: e.ctrl_key(),
            alt: e.alt_key(),
            shift: e.shift_key(),
            meta: e.meta_key(),
            alt_graph: e.get_modifier_state("AltGraph"),
        };
        let has_selection = self.has_selection();
        if self.core.key(&k, has_selection) == KeyOutcome::Handled {
            e.prevent_default();
            e.stop_propagation();
            let input: &Element = self.input.as_ref();
            if !has_selection && self.dom.document.active_element().as_ref() != Some(input) {
                self.focus_input();
            }
        }
        self.after_event();
    }

    fn on_wheel(&mut self, e: &WheelEvent) {
        if e.ctrl_key() {
            return; // pinch zoom
        }
        let ch = self.dom.cell().map_or(16.0, |c| c.1);
        let lines = match e.delta_mode() {
            WheelEvent::DOM_DELTA_LINE => e.delta_y(),
            WheelEvent::DOM_DELTA_PAGE => e.delta_y() * f64::from(self.core.size().0),
            _ => e.delta_y() / ch,
        };
        e.prevent_default();
        self.wheel_rest += -lines;
        let whole = self.wheel_rest.trunc();
        self.wheel_rest -= whole;
        if whole != 0.0 {
            self.core.wheel(whole.clamp(-1000.0, 1000.0) as i32);
        }
        self.after_event();
    }

    fn destroy(&mut self) {
        if self.destroyed {
            return;
        }
        self.destroyed = true;
        if let Some(ws) = self.detach_socket() {
            let _ = ws.close_with_code(1000);
        }
        if let Some(id) = self.raf.take() {
            let _ = self.window.cancel_animation_frame(id);
        }
        for t in [self.idle_timer.take(), self.reconnect_timer.take()]
            .into_iter()
            .flatten()
        {
            self.window.clear_timeout_with_handle(t);
        }
        if let Some(cb) = self.callbacks.take() {
            cb.observer.disconnect();
            for l in &cb.listeners {
                let _ = l.target.remove_event_listener_with_callback(
                    l.kind,
                    l.callback.as_ref().unchecked_ref(),
                );
            }
        }
        self.dom.remove();
    }
}

/// A mounted terminal. Dropping it (or `free()` from JS) destroys it.
#[wasm_bindgen]
pub struct TerminalHandle {
    term: Shared,
}

#[wasm_bindgen]
impl TerminalHandle {
    /// Closes the socket, removes the listeners and the terminal's DOM.
    /// Idempotent.
    pub fn destroy(&self) {
        if let Ok(mut t) = self.term.try_borrow_mut() {
            t.destroy();
        }
    }

    /// Focuses the terminal's input.
    pub fn focus(&self) {
        if let Ok(t) = self.term.try_borrow() {
            t.focus_input();
        }
    }

    /// Rows.
    pub fn rows(&self) -> u16 {
        self.term.try_borrow().map_or(0, |t| t.core.size().0)
    }

    /// Columns.
    pub fn cols(&self) -> u16 {
        self.term.try_borrow().map_or(0, |t| t.core.size().1)
    }

    /// The visible screen as text (rows joined by `\n`), for tests.
    pub fn text(&self) -> String {
        self.term
            .try_borrow()
            .map(|t| t.core.model().text())
            .unwrap_or_default()
    }

    /// `connecting`, `connected`, `reconnecting` or `exited`.
    pub fn state(&self) -> String {
        self.term
            .try_borrow()
            .map(|t| t.core.status().name().to_owned())
            .unwrap_or_default()
    }

    /// The exit code once the process exited.
    #[wasm_bindgen(js_name = exitCode)]
    pub fn exit_code(&self) -> Option<i32> {
        self.term
            .try_borrow()
            .ok()
            .and_then(|t| match t.core.status() {
                crate::core::Status::Exited(code) => Some(*code),
                _ => None,
            })
    }
}

impl Drop for TerminalHandle {
    fn drop(&mut self) {
        self.destroy();
    }
}

/// The terminal WebSocket URL of `task_id` on this page's origin.
#[wasm_bindgen(js_name = terminalUrl)]
pub fn terminal_url_for(task_id: &str) -> Result<String, JsValue> {
    let location = window()?.location();
    Ok(terminal_url(
        &location.protocol()?,
        &location.host()?,
        task_id,
    ))
}

fn listen<E: JsCast + 'static>(
    listeners: &mut Vec<Listener>,
    target: &EventTarget,
    kind: &'static str,
    passive: Option<bool>,
    mut f: impl FnMut(&E) + 'static,
) -> Result<(), JsValue> {
    let callback = Closure::<dyn FnMut(Event)>::new(move |e: Event| {
        if let Some(e) = e.dyn_ref::<E>() {
            f(e);
        }
    });
    match passive {
        Some(p) => {
            let opts = AddEventListenerOptions::new();
            opts.set_passive(p);
            target.add_event_listener_with_callback_and_add_event_listener_options(
                kind,
                callback.as_ref().unchecked_ref(),
                &opts,
            )?;
        }
        None => target.add_event_listener_with_callback(kind, callback.as_ref().unchecked_ref())?,
    }
    listeners.push(Listener {
        target: target.clone(),
        kind,
        callback,
    });
    Ok(())
}

fn is_mac(window: &Window) -> bool {
    let nav = window.navigator();
    let platform = nav.platform().unwrap_or_default();
    let agent = nav.user_agent().unwrap_or_default();
    ["Mac", "iPhone", "iPad"]
        .iter()
        .any(|p| platform.contains(p) || agent.contains(p))
}

/// Mounts a terminal into `container` (it fills the container, which must
/// have a size) and connects it to `ws_url`
/// (`ws(s)://<host>/ws/terminal/{taskId}`, see [`terminal_url_for`]).
#[wasm_bindgen]
pub fn mount(container: &Element, ws_url: &str) -> Result<TerminalHandle, JsValue> {
    let window = window()?;
    let mut dom = Dom::new(container)?;
    let document = dom.document.clone();
    let input: HtmlTextAreaElement = document.create_element("textarea")?.dyn_into()?;
    input.set_class_name("ht-input");
    for (name, value) in [
        ("aria-label", "Terminal input"),
        ("autocapitalize", "off"),
        ("autocomplete", "off"),
        ("autocorrect", "off"),
        ("spellcheck", "false"),
        ("tabindex", "0"),
    ] {
        input.set_attribute(name, value)?;
    }
    dom.viewport.append_child(&input)?;
    let status = html_element(&document, "div", "ht-status")?;
    status.set_attribute("role", "status")?;
    status.set_attribute("aria-live", "polite")?;
    dom.root.append_child(&status)?;

    let (rows, cols) = dom.fit().unwrap_or((24, 80));
    let mut core = Core::new(rows, cols, SCROLLBACK);
    core.set_key_options(KeyOptions {
        mac: is_mac(&window),
        option_is_meta: false,
    });
    let root = dom.root.clone();
    let viewport = dom.viewport.clone();
    let probe = dom.probe.clone();
    let term: Shared = Rc::new(RefCell::new(Term {
        core,
        dom,
        input: input.clone(),
        status,
        window: window.clone(),
        url: ws_url.to_owned(),
        ws: None,
        raf: None,
        idle_timer: None,
        reconnect_timer: None,
        selecting: false,
        wheel_rest: 0.0,
        shown_status: None,
        destroyed: false,
        callbacks: None,
    }));
    let weak = Rc::downgrade(&term);

    let w = weak.clone();
    let on_open = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
        with_term(&w, |t| {
            t.core.on_open();
            t.after_event();
        });
    });
    let w = weak.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        with_term(&w, |t| {
            let data = e.data();
            if let Some(buf) = data.dyn_ref::<ArrayBuffer>() {
                t.core.on_binary(&Uint8Array::new(buf).to_vec());
                t.schedule_idle_ack();
            } else if let Some(text) = data.as_string() {
                t.core.on_text(&text);
            }
            t.after_event();
        });
    });
    let w = weak.clone();
    let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |e: CloseEvent| {
        with_term(&w, |t| t.on_close(e.code()));
    });
    // An error is always followed by a close event, which reconnects.
    let on_error = Closure::<dyn FnMut(Event)>::new(|_: Event| {});
    let w = weak.clone();
    let frame = Closure::<dyn FnMut(f64)>::new(move |_: f64| with_term(&w, Term::draw));
    let w = weak.clone();
    let idle = Closure::<dyn FnMut()>::new(move || {
        with_term(&w, |t| {
            t.idle_timer = None;
            t.core.on_idle();
            t.flush();
        });
    });
    let w = weak.clone();
    let reconnect = Closure::<dyn FnMut()>::new(move || {
        with_term(&w, |t| {
            if t.connect().is_err() {
                t.on_close(1006);
            }
        });
    });
    let w = weak.clone();
    let on_resize = Closure::<dyn FnMut(js_sys::Array)>::new(move |_: js_sys::Array| {
        with_term(&w, Term::on_resize)
    });
    let observer = ResizeObserver::new(on_resize.as_ref().unchecked_ref())?;
    observer.observe(&viewport);
    // Web fonts arriving later change the probe's size.
    observer.observe(&probe);

    let mut listeners = Vec::new();
    let root_target: &EventTarget = root.as_ref();
    let w = weak.clone();
    listen::<KeyboardEvent>(&mut listeners, root_target, "keydown", None, move |e| {
        with_term(&w, |t| t.on_key(e));
    })?;
    let w = weak.clone();
    let input_el = input.clone();
    listen::<ClipboardEvent>(&mut listeners, root_target, "paste", None, move |e| {
        let text = e
            .clipboard_data()
            .and_then(|d| d.get_data("text/plain").ok())
            .unwrap_or_default();
        e.prevent_default();
        input_el.set_value("");
        with_term(&w, |t| {
            t.core.paste(&text);
            t.after_event();
        });
    })?;
    let w = weak.clone();
    let input_el = input.clone();
    listen::<InputEvent>(&mut listeners, input.as_ref(), "input", None, move |e| {
        if e.is_composing() {
            return;
        }
        let text = match e.input_type().as_str() {
            "insertText" | "insertReplacementText" => e.data().unwrap_or_default(),
            "insertLineBreak" | "insertParagraph" => "\r".to_owned(),
            "deleteContentBackward" => "\x7f".to_owned(),
            _ => String::new(),
        };
        input_el.set_value("");
        if !text.is_empty() {
            with_term(&w, |t| {
                t.core.text_input(&text);
                t.after_event();
            });
        }
    })?;
    let w = weak.clone();
    let input_el = input.clone();
    listen::<CompositionEvent>(
        &mut listeners,
        input.as_ref(),
        "compositionend",
        None,
        move |e| {
            let text = e.data().unwrap_or_default();
            input_el.set_value("");
            with_term(&w, |t| {
                t.core.text_input(&text);
                t.after_event();
            });
        },
    )?;
    let w = weak.clone();
    listen::<WheelEvent>(
        &mut listeners,
        root_target,
        "wheel",
        Some(false),
        move |e| {
            with_term(&w, |t| t.on_wheel(e));
        },
    )?;
    let w = weak.clone();
    listen::<MouseEvent>(&mut listeners, root_target, "mousedown", None, move |e| {
        if e.button() == 0 {
            with_term(&w, |t| t.selecting = true);
        }
    })?;
    let w = weak.clone();
    listen::<MouseEvent>(
        &mut listeners,
        document.as_ref(),
        "mouseup",
        None,
        move |_| {
            with_term(&w, |t| {
                if !t.selecting {
                    return;
                }
                t.selecting = false;
                if !t.has_selection() {
                    t.focus_input();
                }
                t.after_event();
                t.schedule_frame();
            });
        },
    )?;
    // Focus styling touches only the root element (focus events can fire
    // synchronously inside our own handlers).
    let r = root.clone();
    listen::<FocusEvent>(&mut listeners, root_target, "focusin", None, move |_| {
        let _ = r.class_list().add_1("ht-focused");
    })?;
    let r = root.clone();
    listen::<FocusEvent>(&mut listeners, root_target, "focusout", None, move |e| {
        let inside = e
            .related_target()
            .and_then(|t| t.dyn_into::<Node>().ok())
            .is_some_and(|n| r.contains(Some(&n)));
        if !inside {
            let _ = r.class_list().remove_1("ht-focused");
        }
    })?;

    {
        let mut t = term.borrow_mut();
        t.callbacks = Some(Callbacks {
            on_open,
            on_message,
            on_close,
            on_error,
            frame,
            idle,
            reconnect,
            observer,
            _on_resize: on_resize,
            listeners,
        });
        if let Err(e) = t.connect() {
            t.destroy();
            return Err(e);
        }
        t.after_event();
        t.schedule_frame();
    }
    Ok(TerminalHandle { term })
}
