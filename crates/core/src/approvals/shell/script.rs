//! Scripts a command runs (`./deploy.sh`, `bash x.sh`, `source x.sh`): the
//! gate reads them and checks their commands, one level deep. Reading is a
//! port ([`ScriptReader`]) so that the evaluation stays pure; the real
//! reader ([`WorkspaceScripts`]) reads only regular files inside the task's
//! working directory.

use std::{io::Read, path::Path};

/// The most of a script the gate reads; a longer text script is not
/// checked (the command asks).
pub const MAX_SCRIPT_BYTES: usize = 64 * 1024;

/// Reads a file a command runs.
pub trait ScriptReader: Sync {
    /// At most `limit` + 1 bytes of `path` (as the command names it,
    /// relative to `cwd` unless absolute), or why it cannot be read.
    fn read(&self, cwd: Option<&str>, path: &str, limit: usize) -> Result<Vec<u8>, String>;
}

impl<F> ScriptReader for F
where
    F: Fn(Option<&str>, &str, usize) -> Result<Vec<u8>, String> + Sync,
{
    fn read(&self, cwd: Option<&str>, path: &str, limit: usize) -> Result<Vec<u8>, String> {
        self(cwd, path, limit)
    }
}

/// Reads nothing: every script asks.
pub struct NoScripts;

impl ScriptReader for NoScripts {
    fn read(&self, _: Option<&str>, _: &str, _: usize) -> Result<Vec<u8>, String> {
        Err("scripts are not read here".into())
    }
}

/// The real reader: a regular file inside the working directory (after
/// resolving every symlink), opened without following a symlink, at most
/// `limit` + 1 bytes.
pub struct WorkspaceScripts;

impl ScriptReader for WorkspaceScripts {
    fn read(&self, cwd: Option<&str>, path: &str, limit: usize) -> Result<Vec<u8>, String> {
        let cwd = cwd
            .filter(|c| c.starts_with('/'))
            .ok_or("the working directory is not known")?;
        let root = Path::new(cwd)
            .canonicalize()
            .map_err(|e| format!("the working directory cannot be read ({e})"))?;
        let full = Path::new(cwd).join(path);
        let real = full
            .canonicalize()
            .map_err(|e| format!("`{path}` cannot be read ({e})"))?;
        if !real.starts_with(&root) {
            return Err(format!("`{path}` is outside the working directory"));
        }
        let file = open_no_follow(&real).map_err(|e| format!("`{path}` cannot be read ({e})"))?;
        let meta = file
            .metadata()
            .map_err(|e| format!("`{path}` cannot be read ({e})"))?;
        if !meta.is_file() {
            return Err(format!("`{path}` is not a regular file"));
        }
        let mut bytes = Vec::new();
        file.take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("`{path}` cannot be read ({e})"))?;
        Ok(bytes)
    }
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        // Never a symlink swapped in after the check; never block on a FIFO.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// What a file a command runs turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Script {
    /// Shell commands (a `sh`-family shebang, or text without one).
    Shell(String),
    /// A compiled program or a script for another interpreter: beyond what
    /// a command gate can read.
    Program,
    /// Not checkable: why.
    Unreadable(String),
}

/// Sort the bytes a reader returned. `as_shell`: run by a shell
/// explicitly (`bash x.sh`, `source x.sh`), whatever its first line says.
pub fn classify(path: &str, bytes: &[u8], as_shell: bool) -> Script {
    let binary = bytes.starts_with(b"\x7fELF") || bytes.contains(&0);
    if binary {
        return if as_shell {
            Script::Unreadable(format!("`{path}` is not a text file"))
        } else {
            Script::Program
        };
    }
    if bytes.len() > MAX_SCRIPT_BYTES {
        return Script::Unreadable(format!(
            "`{path}` is longer than {} KiB",
            MAX_SCRIPT_BYTES / 1024
        ));
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Script::Unreadable(format!("`{path}` is not UTF-8 text"));
    };
    if !as_shell
        && let Some(line) = text.lines().next().and_then(|l| l.strip_prefix("#!"))
        && !shebang_is_shell(line)
    {
        return Script::Program;
    }
    Script::Shell(text.to_string())
}

/// `#!/bin/sh`, `#!/usr/bin/env bash`, `#!/usr/bin/env -S bash -e`.
fn shebang_is_shell(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        // `#!` alone: the shell runs it.
        return true;
    };
    let mut interpreter = base_name(first);
    if interpreter == "env" {
        interpreter = words
            .find(|w| !w.starts_with('-') && !w.contains('='))
            .map(base_name)
            .unwrap_or_default();
    }
    super::wrappers::SHELLS.contains(&interpreter)
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
