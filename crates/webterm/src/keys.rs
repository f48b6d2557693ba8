//! Keyboard and paste → the bytes an xterm sends.
//!
//! Pure functions over a small description of a DOM `KeyboardEvent`, so
//! they can be tested natively.

/// The parts of a DOM `KeyboardEvent` the encoder looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyInput<'a> {
    /// `KeyboardEvent.key` (`"a"`, `"A"`, `"Enter"`, `"ArrowUp"`, …).
    pub key: &'a str,
    /// `KeyboardEvent.code` (`"KeyA"`, `"Digit2"`, …): used for Ctrl
    /// combinations on non-Latin layouts.
    pub code: &'a str,
    /// Ctrl held.
    pub ctrl: bool,
    /// Alt (Option) held.
    pub alt: bool,
    /// Shift held.
    pub shift: bool,
    /// Meta (⌘ / Windows key) held.
    pub meta: bool,
    /// AltGr held (`getModifierState("AltGraph")`): Ctrl+Alt is then a
    /// layout's third level, not a control combination.
    pub alt_graph: bool,
}

/// Terminal modes that change what keys send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyModes {
    /// DECCKM (`CSI ? 1 h`): arrows/Home/End send `ESC O x`.
    pub application_cursor: bool,
}

/// Platform behaviour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyOptions {
    /// On macOS, Option+key types the layout's character (e.g. `å`) unless
    /// [`option_is_meta`](Self::option_is_meta) is set.
    pub mac: bool,
    /// Treat macOS Option as Meta (send `ESC` + key).
    pub option_is_meta: bool,
}

/// The xterm modifier parameter (`1 + shift + 2·alt + 4·ctrl`), `None`
/// without modifiers.
fn modifier_param(k: &KeyInput<'_>) -> Option<u8> {
    let m = u8::from(k.shift) + 2 * u8::from(k.alt) + 4 * u8::from(k.ctrl);
    (m != 0).then_some(m + 1)
}

/// `CSI 1 ; m x` with modifiers; else `SS3 x` (application) or `CSI x`.
fn cursor_key(final_byte: char, k: &KeyInput<'_>, app: bool) -> String {
    match modifier_param(k) {
        Some(m) => format!("\x1b[1;{m}{final_byte}"),
        None if app => format!("\x1bO{final_byte}"),
        None => format!("\x1b[{final_byte}"),
    }
}

/// `CSI n ~` / `CSI n ; m ~`.
fn tilde_key(n: u8, k: &KeyInput<'_>) -> String {
    match modifier_param(k) {
        Some(m) => format!("\x1b[{n};{m}~"),
        None => format!("\x1b[{n}~"),
    }
}

/// F1–F4 are `SS3 P..S` (`CSI 1 ; m P..S` with modifiers).
fn pf_key(final_byte: char, k: &KeyInput<'_>) -> String {
    match modifier_param(k) {
        Some(m) => format!("\x1b[1;{m}{final_byte}"),
        None => format!("\x1bO{final_byte}"),
    }
}

/// The control code Ctrl+`c` sends, if any.
fn control_code(c: char) -> Option<u8> {
    Some(match c {
        'a'..='z' => c as u8 - b'a' + 1,
        'A'..='Z' => c as u8 - b'A' + 1,
        '@' | ' ' | '2' | '`' => 0,
        '[' | '3' | '{' => 0x1b,
        '\\' | '4' | '|' => 0x1c,
        ']' | '5' | '}' => 0x1d,
        '^' | '6' | '~' => 0x1e,
        '_' | '-' | '/' | '7' => 0x1f,
        '8' | '?' => 0x7f,
        _ => return None,
    })
}

/// The letter of a `KeyA`…`KeyZ` code.
fn code_letter(code: &str) -> Option<char> {
    let rest = code.strip_prefix("Key")?;
    let mut chars = rest.chars();
    let c = chars.next()?;
    (chars.next().is_none() && c.is_ascii_uppercase()).then(|| c.to_ascii_lowercase())
}

fn single_char(key: &str) -> Option<char> {
    let mut chars = key.chars();
    let c = chars.next()?;
    chars.next().is_none().then_some(c)
}

/// What the key sends to the application, or `None` when the terminal does
/// not handle it (modifier keys alone, dead keys, IME processing, ⌘/Win
/// shortcuts — the browser keeps those).
pub fn encode_key(k: &KeyInput<'_>, modes: KeyModes, opts: KeyOptions) -> Option<String> {
    if k.meta {
        return None;
    }
    let app = modes.application_cursor;
    let esc_if_alt = |s: &str| {
        if k.alt {
            format!("\x1b{s}")
        } else {
            s.to_owned()
        }
    };
    let named = match k.key {
        "Enter" => Some(esc_if_alt("\r")),
        "Backspace" if k.ctrl => Some(esc_if_alt("\x08")),
        "Backspace" => Some(esc_if_alt("\x7f")),
        "Tab" if k.shift => Some("\x1b[Z".to_owned()),
        "Tab" => Some(esc_if_alt("\t")),
        "Escape" => Some(esc_if_alt("\x1b")),
        "ArrowUp" | "Up" => Some(cursor_key('A', k, app)),
        "ArrowDown" | "Down" => Some(cursor_key('B', k, app)),
        "ArrowRight" | "Right" => Some(cursor_key('C', k, app)),
        "ArrowLeft" | "Left" => Some(cursor_key('D', k, app)),
        "Home" => Some(cursor_key('H', k, app)),
        "End" => Some(cursor_key('F', k, app)),
        "Insert" => Some(tilde_key(2, k)),
        "Delete" | "Del" => Some(tilde_key(3, k)),
        "PageUp" => Some(tilde_key(5, k)),
        "PageDown" => Some(tilde_key(6, k)),
        "F1" => Some(pf_key('P', k)),
        "F2" => Some(pf_key('Q', k)),
        "F3" => Some(pf_key('R', k)),
        "F4" => Some(pf_key('S', k)),
        "F5" => Some(tilde_key(15, k)),
        "F6" => Some(tilde_key(17, k)),
        "F7" => Some(tilde_key(18, k)),
        "F8" => Some(tilde_key(19, k)),
        "F9" => Some(tilde_key(20, k)),
        "F10" => Some(tilde_key(21, k)),
        "F11" => Some(tilde_key(23, k)),
        "F12" => Some(tilde_key(24, k)),
        _ => None,
    };
    if named.is_some() {
        return named;
    }
    // Printable keys: `key` is the character the layout produced.
    let c = single_char(k.key)?;
    if k.alt_graph || (k.ctrl && k.alt && !c.is_ascii_alphabetic() && control_code(c).is_none()) {
        // AltGr (reported as Ctrl+Alt on Windows): the layout's character.
        return Some(c.to_string());
    }
    if k.ctrl {
        let code = control_code(c).or_else(|| code_letter(k.code).and_then(control_code))?;
        let s = char::from(code).to_string();
        return Some(if k.alt { format!("\x1b{s}") } else { s });
    }
    if k.alt {
        if opts.mac && !opts.option_is_meta {
            return Some(c.to_string());
        }
        return Some(format!("\x1b{c}"));
    }
    Some(c.to_string())
}

/// Start and end markers of a bracketed paste.
pub const PASTE_START: &str = "\x1b[200~";
/// See [`PASTE_START`].
pub const PASTE_END: &str = "\x1b[201~";

/// Prepares pasted text for the application: line breaks become `\r` (what
/// Enter sends), and when the application enabled bracketed paste the text
/// is wrapped in `ESC [200~` … `ESC [201~` with every paste marker inside it
/// removed, so pasted text cannot end the paste early and smuggle in
/// keystrokes (e.g. a command plus Enter).
pub fn encode_paste(text: &str, bracketed: bool) -> String {
    let text = text.replace("\r\n", "\r").replace('\n', "\r");
    if !bracketed {
        return text;
    }
    let mut body = text;
    // Removing one marker can join the pieces of another: repeat until none
    // is left.
    while body.contains(PASTE_END) || body.contains(PASTE_START) {
        body = body.replace(PASTE_END, "").replace(PASTE_START, "");
    }
    format!("{PASTE_START}{body}{PASTE_END}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: &'static str) -> KeyInput<'static> {
        KeyInput {
            key,
            code: "",
            ..KeyInput::default()
        }
    }
    fn ctrl(k: KeyInput<'static>) -> KeyInput<'static> {
        KeyInput { ctrl: true, ..k }
    }
    fn alt(k: KeyInput<'static>) -> KeyInput<'static> {
        KeyInput { alt: true, ..k }
    }
    fn shift(k: KeyInput<'static>) -> KeyInput<'static> {
        KeyInput { shift: true, ..k }
    }

    const NORMAL: KeyModes = KeyModes {
        application_cursor: false,
    };
    const APP: KeyModes = KeyModes {
        application_cursor: true,
    };
    const LINUX: KeyOptions = KeyOptions {
        mac: false,
        option_is_meta: false,
    };

    fn enc(k: KeyInput<'_>, modes: KeyModes) -> Option<String> {
        encode_key(&k, modes, LINUX)
    }

    #[test]
    fn table() {
        let cases: &[(KeyInput<'static>, KeyModes, Option<&str>)] = &[
            // Printable.
            (key("a"), NORMAL, Some("a")),
            (key("A"), NORMAL, Some("A")),
            (key(" "), NORMAL, Some(" ")),
            (key("é"), NORMAL, Some("é")),
            (key("中"), NORMAL, Some("中")),
            // Editing keys.
            (key("Enter"), NORMAL, Some("\r")),
            (alt(key("Enter")), NORMAL, Some("\x1b\r")),
            (key("Backspace"), NORMAL, Some("\x7f")),
            (ctrl(key("Backspace")), NORMAL, Some("\x08")),
            (alt(key("Backspace")), NORMAL, Some("\x1b\x7f")),
            (key("Tab"), NORMAL, Some("\t")),
            (shift(key("Tab")), NORMAL, Some("\x1b[Z")),
            (key("Escape"), NORMAL, Some("\x1b")),
            // Cursor keys, normal and application mode.
            (key("ArrowUp"), NORMAL, Some("\x1b[A")),
            (key("ArrowDown"), NORMAL, Some("\x1b[B")),
            (key("ArrowRight"), NORMAL, Some("\x1b[C")),
            (key("ArrowLeft"), NORMAL, Some("\x1b[D")),
            (key("ArrowUp"), APP, Some("\x1bOA")),
            (key("ArrowDown"), APP, Some("\x1bOB")),
            (key("ArrowRight"), APP, Some("\x1bOC")),
            (key("ArrowLeft"), APP, Some("\x1bOD")),
            (key("Home"), NORMAL, Some("\x1b[H")),
            (key("End"), NORMAL, Some("\x1b[F")),
            (key("Home"), APP, Some("\x1bOH")),
            (key("End"), APP, Some("\x1bOF")),
            // Modifiers always use the CSI form, in either mode.
            (ctrl(key("ArrowLeft")), NORMAL, Some("\x1b[1;5D")),
            (ctrl(key("ArrowLeft")), APP, Some("\x1b[1;5D")),
            (shift(key("ArrowUp")), NORMAL, Some("\x1b[1;2A")),
            (alt(key("ArrowRight")), APP, Some("\x1b[1;3C")),
            (shift(ctrl(key("End"))), NORMAL, Some("\x1b[1;6F")),
            // Tilde keys.
            (key("Insert"), NORMAL, Some("\x1b[2~")),
            (key("Delete"), NORMAL, Some("\x1b[3~")),
            (key("PageUp"), NORMAL, Some("\x1b[5~")),
            (key("PageDown"), APP, Some("\x1b[6~")),
            (ctrl(key("Delete")), NORMAL, Some("\x1b[3;5~")),
            // Function keys.
            (key("F1"), NORMAL, Some("\x1bOP")),
            (key("F2"), NORMAL, Some("\x1bOQ")),
            (key("F3"), NORMAL, Some("\x1bOR")),
            (key("F4"), NORMAL, Some("\x1bOS")),
            (shift(key("F1")), NORMAL, Some("\x1b[1;2P")),
            (key("F5"), NORMAL, Some("\x1b[15~")),
            (key("F6"), NORMAL, Some("\x1b[17~")),
            (key("F7"), NORMAL, Some("\x1b[18~")),
            (key("F8"), NORMAL, Some("\x1b[19~")),
            (key("F9"), NORMAL, Some("\x1b[20~")),
            (key("F10"), NORMAL, Some("\x1b[21~")),
            (key("F11"), NORMAL, Some("\x1b[23~")),
            (key("F12"), NORMAL, Some("\x1b[24~")),
            (ctrl(key("F5")), NORMAL, Some("\x1b[15;5~")),
            // Ctrl + letter → control codes.
            (ctrl(key("a")), NORMAL, Some("\x01")),
            (ctrl(key("c")), NORMAL, Some("\x03")),
            (ctrl(key("d")), NORMAL, Some("\x04")),
            (ctrl(key("z")), NORMAL, Some("\x1a")),
            (ctrl(shift(key("C"))), NORMAL, Some("\x03")),
            (ctrl(key("@")), NORMAL, Some("\x00")),
            (ctrl(key(" ")), NORMAL, Some("\x00")),
            (ctrl(key("2")), NORMAL, Some("\x00")),
            (ctrl(key("[")), NORMAL, Some("\x1b")),
            (ctrl(key("\\")), NORMAL, Some("\x1c")),
            (ctrl(key("]")), NORMAL, Some("\x1d")),
            (ctrl(key("6")), NORMAL, Some("\x1e")),
            (ctrl(key("-")), NORMAL, Some("\x1f")),
            (ctrl(key("/")), NORMAL, Some("\x1f")),
            (ctrl(key("8")), NORMAL, Some("\x7f")),
            (ctrl(key("1")), NORMAL, None),
            // Alt → ESC prefix.
            (alt(key("b")), NORMAL, Some("\x1bb")),
            (alt(key("B")), NORMAL, Some("\x1bB")),
            (alt(key(".")), NORMAL, Some("\x1b.")),
            (alt(ctrl(key("a"))), NORMAL, Some("\x1b\x01")),
            // Not ours.
            (key("Shift"), NORMAL, None),
            (key("Control"), NORMAL, None),
            (key("Dead"), NORMAL, None),
            (key("Process"), NORMAL, None),
            (key("Unidentified"), NORMAL, None),
            (key("CapsLock"), NORMAL, None),
            (
                KeyInput {
                    meta: true,
                    ..key("c")
                },
                NORMAL,
                None,
            ),
            (
                KeyInput {
                    meta: true,
                    ..key("ArrowUp")
                },
                NORMAL,
                None,
            ),
        ];
        for (i, (k, modes, want)) in cases.iter().enumerate() {
            assert_eq!(
                enc(*k, *modes).as_deref(),
                *want,
                "case {i}: {k:?} {modes:?}"
            );
        }
    }

    #[test]
    fn ctrl_letters_on_non_latin_layouts_use_the_code() {
        let k = KeyInput {
            key: "с", // Cyrillic es, on the C key
            code: "KeyC",
            ctrl: true,
            ..KeyInput::default()
        };
        assert_eq!(enc(k, NORMAL).as_deref(), Some("\x03"));
    }

    #[test]
    fn alt_graph_types_the_character() {
        // German AltGr+Q = '@', reported by Windows as Ctrl+Alt.
        let k = KeyInput {
            key: "@",
            code: "KeyQ",
            ctrl: true,
            alt: true,
            alt_graph: true,
            ..KeyInput::default()
        };
        assert_eq!(enc(k, NORMAL).as_deref(), Some("@"));
        let k = KeyInput {
            key: "€",
            code: "KeyE",
            ctrl: true,
            alt: true,
            ..KeyInput::default()
        };
        assert_eq!(enc(k, NORMAL).as_deref(), Some("€"));
    }

    #[test]
    fn mac_option_types_characters_unless_meta() {
        let k = alt(key("å"));
        let mac = KeyOptions {
            mac: true,
            option_is_meta: false,
        };
        assert_eq!(encode_key(&k, NORMAL, mac).as_deref(), Some("å"));
        let meta = KeyOptions {
            mac: true,
            option_is_meta: true,
        };
        assert_eq!(encode_key(&k, NORMAL, meta).as_deref(), Some("\x1bå"));
        // Named keys keep their Alt meaning on a Mac.
        assert_eq!(
            encode_key(&alt(key("ArrowLeft")), NORMAL, mac).as_deref(),
            Some("\x1b[1;3D")
        );
    }

    #[test]
    fn paste_plain() {
        assert_eq!(encode_paste("a\nb\r\nc\rd", false), "a\rb\rc\rd");
        assert_eq!(encode_paste("", false), "");
    }

    #[test]
    fn paste_bracketed_wraps() {
        assert_eq!(
            encode_paste("echo hi\n", true),
            "\x1b[200~echo hi\r\x1b[201~"
        );
        assert_eq!(encode_paste("", true), "\x1b[200~\x1b[201~");
    }

    #[test]
    fn paste_bracketed_strips_end_markers() {
        let evil = "harmless\x1b[201~rm -rf ~\r";
        let out = encode_paste(evil, true);
        assert_eq!(out, "\x1b[200~harmlessrm -rf ~\r\x1b[201~");
        // Only the final marker ends the paste.
        assert_eq!(out.matches(PASTE_END).count(), 1);
        assert!(out.ends_with(PASTE_END));
    }

    #[test]
    fn paste_bracketed_strips_nested_markers() {
        // Removing the inner marker would assemble an outer one.
        let evil = "x\x1b[20\x1b[201~1~y\x1b[2\x1b[200~01~z";
        let out = encode_paste(evil, true);
        assert_eq!(out.matches(PASTE_END).count(), 1);
        assert_eq!(out.matches(PASTE_START).count(), 1);
        assert!(out.starts_with(PASTE_START) && out.ends_with(PASTE_END));
        // A paste marker inside unbracketed text is left alone: the
        // application did not ask for bracketing.
        assert_eq!(encode_paste("a\x1b[201~", false), "a\x1b[201~");
    }
}
