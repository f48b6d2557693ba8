//! Terminal input like an interactive agent CLI: the terminal in
//! non-canonical, no-echo mode (the double echoes what it accepts), Enter
//! (`\r` or `\n`) submits, bracketed pastes (`ESC [200~ … ESC [201~`) are
//! taken whole (their newlines do not submit), other escape sequences
//! (arrow keys, focus reports) are ignored.

use std::io::{Read, Write};

/// Puts stdin in "raw-ish" mode and restores it on drop. A no-op when stdin
/// is not a terminal.
pub struct RawMode {
    saved: Option<libc::termios>,
}

impl RawMode {
    /// Enters the mode.
    pub fn enter() -> Self {
        // SAFETY: termios is plain data; tcgetattr fills it or fails.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd 0 and a valid pointer.
        if unsafe { libc::tcgetattr(0, &mut t) } != 0 {
            return Self { saved: None };
        }
        let saved = t;
        t.c_lflag &= !(libc::ICANON | libc::ECHO | libc::IEXTEN);
        t.c_iflag &= !(libc::ICRNL | libc::IXON);
        t.c_cc[libc::VMIN] = 1;
        t.c_cc[libc::VTIME] = 0;
        // SAFETY: fd 0 and a valid pointer.
        unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        Self { saved: Some(saved) }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Some(t) = self.saved {
            // SAFETY: restoring the attributes read in `enter`.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        }
    }
}

enum State {
    Normal,
    Esc,
    Csi(Vec<u8>),
    Paste(Vec<u8>),
}

/// What the user did.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// A submitted line (pasted newlines included).
    Line(String),
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D on an empty line, or end of input.
    Eof,
}

/// A line reader over raw bytes.
pub struct LineReader<R> {
    input: R,
    state: State,
    line: Vec<u8>,
    pending: std::collections::VecDeque<u8>,
}

impl<R: Read> LineReader<R> {
    /// Reads from `input`.
    pub fn new(input: R) -> Self {
        Self {
            input,
            state: State::Normal,
            line: Vec::new(),
            pending: std::collections::VecDeque::new(),
        }
    }

    fn next_byte(&mut self) -> Option<u8> {
        if let Some(b) = self.pending.pop_front() {
            return Some(b);
        }
        let mut buf = [0u8; 4096];
        loop {
            match self.input.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => {
                    self.pending.extend(&buf[1..n]);
                    return Some(buf[0]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    }

    /// Reads until a line is submitted, echoing accepted input to `echo`.
    pub fn read_line(&mut self, echo: &mut impl Write) -> Input {
        while let Some(b) = self.next_byte() {
            let state = std::mem::replace(&mut self.state, State::Normal);
            self.state = match state {
                State::Normal => match b {
                    b'\r' | b'\n' => {
                        let _ = echo.write_all(b"\r\n");
                        let _ = echo.flush();
                        let line = String::from_utf8_lossy(&self.line).into_owned();
                        self.line.clear();
                        return Input::Line(line);
                    }
                    0x03 => return Input::Interrupt,
                    0x04 if self.line.is_empty() => return Input::Eof,
                    0x7f | 0x08 => {
                        // Drop one UTF-8 character.
                        while let Some(last) = self.line.pop() {
                            if last & 0xc0 != 0x80 {
                                break;
                            }
                        }
                        let _ = echo.write_all(b"\x08 \x08");
                        State::Normal
                    }
                    0x1b => State::Esc,
                    b if b >= 0x20 || b == b'\t' => {
                        self.line.push(b);
                        let _ = echo.write_all(&[b]);
                        State::Normal
                    }
                    _ => State::Normal,
                },
                State::Esc => match b {
                    b'[' => State::Csi(Vec::new()),
                    _ => State::Normal, // Alt+key and friends: ignored
                },
                State::Csi(mut params) => {
                    params.push(b);
                    if (0x40..=0x7e).contains(&b) {
                        if params == b"200~" {
                            State::Paste(Vec::new())
                        } else {
                            State::Normal
                        }
                    } else if params.len() > 32 {
                        State::Normal
                    } else {
                        State::Csi(params)
                    }
                }
                State::Paste(mut text) => {
                    text.push(b);
                    if text.ends_with(b"\x1b[201~") {
                        text.truncate(text.len() - 6);
                        let _ = echo.write_all(&text);
                        self.line.extend_from_slice(&text);
                        State::Normal
                    } else {
                        State::Paste(text)
                    }
                }
            };
            let _ = echo.flush();
        }
        Input::Eof
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Input> {
        let mut r = LineReader::new(input);
        let mut echo = Vec::new();
        let mut out = Vec::new();
        loop {
            let i = r.read_line(&mut echo);
            let end = i == Input::Eof;
            out.push(i);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn typed_pasted_and_edited_lines() {
        let got = lines(b"abc\x7fd\r\x1b[200~multi\nline\x1b[201~\r\x1b[Ax\n");
        assert_eq!(
            got,
            vec![
                Input::Line("abd".into()),
                Input::Line("multi\nline".into()),
                Input::Line("x".into()),
                Input::Eof
            ]
        );
    }

    #[test]
    fn ctrl_keys() {
        assert_eq!(lines(b"\x03")[0], Input::Interrupt);
        assert_eq!(lines(b"\x04")[0], Input::Eof);
    }
}
