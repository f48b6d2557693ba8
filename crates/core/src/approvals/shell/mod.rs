//! Reading a shell command the way the shell will run it, for the approval
//! policy (see docs/approvals.md). The command is parsed with
//! `brush-parser` (a maintained POSIX/bash parser; the comparison of the
//! candidates is in docs/approvals.md) and walked: every simple command —
//! inside lists, pipelines, `&`, subshells, groups, `if`/`while`/`for`/
//! `case`, `!`, function bodies, command and process substitutions, known
//! wrappers (`sudo`, `env`, `timeout`, `xargs`, `bash -c '…'`, …) and the
//! scripts it runs from the workspace (one level deep) — becomes a
//! [`Unit`] the rules are matched against; every file it writes
//! (redirections, `cp`/`mv`/`tee`/… destinations) a [`FileWrite`] the file
//! rules are matched against; and whatever the gate cannot read (`eval`,
//! a computed command name, a script it cannot open, a parse error) a
//! [`Hidden`] reason, which asks when the policy has rules to protect.

mod command;
mod inline;
pub mod script;
mod walk;
mod word;
mod wrappers;
mod writers;

pub use script::{MAX_SCRIPT_BYTES, NoScripts, ScriptReader, WorkspaceScripts};

/// The longest command the gate parses; a longer one asks.
pub const MAX_COMMAND_CHARS: usize = 64 * 1024;
/// How deep `bash -c '…'`, `eval '…'` and substitutions may nest.
const MAX_DEPTH: usize = 16;
/// The most command and process substitutions one text may hold (each
/// nests the parser deeper).
const MAX_SUBSTITUTIONS: usize = 256;
/// The parser runs on a thread of its own with this much stack (reserved,
/// not used), so that a deeply nested command cannot overflow the
/// caller's: the deepest nesting 64 KiB of text allows (3 000 `case`s,
/// 13 000 `{`s) needs under 100 MiB even in a debug build, and a script it
/// reads at most as much again.
const PARSER_STACK: usize = 256 * 1024 * 1024;

/// One simple command as it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Its words after quote removal, wrappers included
    /// (`sudo rm -r -f x`).
    pub raw: String,
    /// As it runs, for matching: wrappers and assignments dropped, the
    /// name without its directory, `git`'s global options dropped, `rm`'s
    /// flags spelled `-rf` / `-r` / `-f` (`rm -rf x`).
    pub normal: String,
    /// Its words as it runs, after quote removal: wrappers and
    /// assignments dropped, the name without its directory when it is a
    /// system program (`["bash", "-i"]`). A wrapper that runs nothing
    /// more (`sudo -s`, `env`) is its own words.
    pub argv: Vec<String>,
    /// Where its standard input comes from.
    pub stdin: Input,
    /// Where it was found, when not at the top (`inside bash -c`).
    pub via: Option<String>,
    /// The script it was read from, if any.
    pub script: Option<String>,
}

/// Where a simple command's standard input comes from, as far as its own
/// redirections and pipeline show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Left to whatever runs the command: the terminal, for a command the
    /// agent runs (also `< /dev/tty`).
    Terminal,
    /// The previous command of its pipeline.
    Pipe,
    /// A file, a here-document or a here-string of its own (or
    /// `/dev/null`, for a command `xargs` runs).
    Redirected,
}

/// A file a command writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// As written, joined to the directory a `cd` before it moved to.
    pub path: String,
    /// How (`redirection >`, `cp`, `tee`, …).
    pub how: String,
    /// The script it was read from, if any.
    pub script: Option<String>,
}

/// Something the gate cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    pub reason: String,
    /// About a file written (asks when the policy has file rules), else
    /// about a command run (asks when it has command rules).
    pub write: bool,
    /// The script it was read from, if any.
    pub script: Option<String>,
}

/// A script the command runs, and the command that runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptRun {
    /// As joined to the working directory (`scripts/ci.sh`).
    pub path: String,
    /// The simple command that runs it.
    pub by: Unit,
}

/// What a command runs and writes, as far as the gate can read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    pub units: Vec<Unit>,
    pub writes: Vec<FileWrite>,
    pub hidden: Vec<Hidden>,
    /// The scripts read (their commands are among the above, marked).
    pub scripts: Vec<ScriptRun>,
    /// The script being read now.
    reading: Option<String>,
}

impl Analysis {
    fn reading(&self) -> Option<&str> {
        self.reading.as_deref()
    }

    fn set_reading(&mut self, script: Option<String>) {
        self.reading = script;
    }

    fn hide(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.hidden.iter().any(|h| h.reason == reason) {
            self.hidden.push(Hidden {
                reason,
                write: false,
                script: self.reading.clone(),
            });
        }
    }

    fn hide_write(&mut self, reason: impl Into<String>) {
        self.hidden.push(Hidden {
            reason: reason.into(),
            write: true,
            script: self.reading.clone(),
        });
    }
}

/// Read `command` (run in `cwd`); scripts it runs are read through
/// `reader`. Never panics and never fails: what cannot be read is a
/// [`Hidden`] reason.
pub fn analyze(command: &str, cwd: Option<&str>, reader: &dyn ScriptReader) -> Analysis {
    if command.chars().count() > MAX_COMMAND_CHARS {
        let mut a = Analysis::default();
        a.hide(format!(
            "the command is longer than {MAX_COMMAND_CHARS} characters"
        ));
        return a;
    }
    let run = || {
        let mut ctx = walk::Ctx::new(cwd, reader);
        ctx.parse_text(command, None);
        for script in &ctx.scripts_run {
            if ctx.out.writes.iter().any(|w| &w.path == script) {
                ctx.out
                    .hide(format!("the command writes `{script}` and runs it"));
            }
        }
        ctx.out
    };
    let joined = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("approval-shell-parse".into())
            .stack_size(PARSER_STACK)
            .spawn_scoped(s, run)
            .map(|h| h.join())
    });
    match joined {
        Ok(Ok(a)) => a,
        Ok(Err(_)) => {
            tracing::warn!("the shell parser panicked on a command; it asks");
            let mut a = Analysis::default();
            a.hide("the shell parser failed on the command");
            a
        }
        Err(e) => {
            tracing::warn!(error = %e, "no thread for the shell parser; the command asks");
            let mut a = Analysis::default();
            a.hide("the command could not be checked (no thread for the parser)");
            a
        }
    }
}
