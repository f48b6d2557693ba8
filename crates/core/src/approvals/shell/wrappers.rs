//! The commands that run another command (`sudo git push`,
//! `timeout 5 git push`, `xargs rm -rf`), and the other tables the gate
//! reads commands with.

use super::word::ShellWord;

/// Shells: `<shell> -c '<text>'` is parsed, `<shell> x.sh` reads `x.sh`.
pub const SHELLS: [&str; 10] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish",
];

/// A command that runs the command after its own options (and after
/// `positionals` words of its own).
pub struct Wrapper {
    pub name: &'static str,
    /// Its options that take the next word as their value.
    pub value_opts: &'static [&'static str],
    pub positionals: usize,
    /// `NAME=value` words before the command are its own (`env`, `sudo`).
    pub assignments: bool,
}

const fn w(
    name: &'static str,
    value_opts: &'static [&'static str],
    positionals: usize,
    assignments: bool,
) -> Wrapper {
    Wrapper {
        name,
        value_opts,
        positionals,
        assignments,
    }
}

pub const WRAPPERS: [Wrapper; 40] = [
    w(
        "env",
        &[
            "-u",
            "-C",
            "-S",
            "-P",
            "--unset",
            "--chdir",
            "--split-string",
        ],
        0,
        true,
    ),
    w(
        "sudo",
        &[
            "-u",
            "-g",
            "-U",
            "-C",
            "-p",
            "-h",
            "-r",
            "-t",
            "-D",
            "-R",
            "-T",
            "--user",
            "--group",
            "--other-user",
            "--close-from",
            "--prompt",
            "--host",
            "--role",
            "--type",
            "--chdir",
            "--chroot",
            "--command-timeout",
        ],
        0,
        true,
    ),
    w("doas", &["-u", "-C"], 0, false),
    w(
        "timeout",
        &["-s", "-k", "--signal", "--kill-after"],
        1,
        false,
    ),
    w("nice", &["-n", "--adjustment"], 0, false),
    w(
        "ionice",
        &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        0,
        false,
    ),
    w("nohup", &[], 0, false),
    w("exec", &["-a"], 0, false),
    w("command", &[], 0, false),
    w("builtin", &[], 0, false),
    w("time", &["-f", "-o", "--format", "--output"], 0, false),
    w(
        "stdbuf",
        &["-i", "-o", "-e", "--input", "--output", "--error"],
        0,
        false,
    ),
    w("setsid", &[], 0, false),
    w(
        "xargs",
        &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-lines",
            "--max-chars",
            "--eof",
            "--replace",
            "--process-slot-var",
        ],
        0,
        false,
    ),
    w(
        "parallel",
        &["-j", "--jobs", "-S", "--sshlogin", "-I", "--joblog"],
        0,
        false,
    ),
    w("chronic", &[], 0, false),
    w("unbuffer", &[], 0, false),
    w(
        "flock",
        &["-w", "-E", "--timeout", "--conflict-exit-code"],
        1,
        false,
    ),
    w("taskset", &[], 1, false),
    w("chrt", &[], 1, false),
    w("chroot", &["--userspec", "--groups"], 1, false),
    w("busybox", &[], 0, false),
    w(
        "strace",
        &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X",
        ],
        0,
        false,
    ),
    w(
        "ltrace",
        &["-o", "-e", "-p", "-s", "-u", "-a", "-n"],
        0,
        false,
    ),
    w("valgrind", &[], 0, false),
    w("catchsegv", &[], 0, false),
    w(
        "unshare",
        &[
            "-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd",
        ],
        0,
        false,
    ),
    w("nsenter", &["-t", "--target", "-S", "-G"], 0, false),
    w("firejail", &[], 0, false),
    w(
        "systemd-run",
        &[
            "-p",
            "-u",
            "-E",
            "--unit",
            "--property",
            "--setenv",
            "--uid",
            "--gid",
        ],
        0,
        false,
    ),
    w("sg", &[], 1, false),
    w("numactl", &["-C", "-N", "-m", "-p", "-i"], 0, false),
    w("proxychains", &["-f"], 0, false),
    w("proxychains4", &["-f"], 0, false),
    w("torsocks", &["-u", "-p", "-a", "-P"], 0, false),
    w(
        "xvfb-run",
        &[
            "-n",
            "-s",
            "-e",
            "-f",
            "-p",
            "--server-num",
            "--server-args",
        ],
        0,
        false,
    ),
    w("dbus-run-session", &["--config-file"], 0, false),
    w("caffeinate", &["-t", "-w"], 0, false),
    w("ccache", &[], 0, false),
    w("watch", &["-n", "--interval", "-q", "--equexit"], 0, false),
];

/// Two-word wrappers (`uv run <cmd>`): the tool, its subcommand, the
/// options of theirs that take a value.
pub const SUB_WRAPPERS: [(&str, &str, &[&str]); 12] = [
    (
        "uv",
        "run",
        &["--with", "--python", "-p", "--package", "--directory"],
    ),
    ("poetry", "run", &[]),
    ("pipenv", "run", &[]),
    ("bundle", "exec", &[]),
    ("conda", "run", &["-n", "--name", "-p", "--prefix"]),
    ("mise", "exec", &[]),
    ("asdf", "exec", &[]),
    ("rbenv", "exec", &[]),
    ("pyenv", "exec", &[]),
    ("direnv", "exec", &[]),
    ("nix", "develop", &[]),
    ("pixi", "run", &[]),
];

pub fn wrapper(name: &str) -> Option<&'static Wrapper> {
    WRAPPERS.iter().find(|w| w.name == name)
}

/// The index in `words` (the wrapper's own word at 0) where the wrapped
/// command starts.
pub fn wrapped_start(wr: &Wrapper, words: &[ShellWord]) -> usize {
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let t = word.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with('-') && t.len() > 1 {
            i += if wr.value_opts.contains(&t) { 2 } else { 1 };
            continue;
        }
        if wr.assignments && is_assignment(t) {
            i += 1;
            continue;
        }
        break;
    }
    i + wr.positionals
}

/// The replace string of `xargs -I R` / `--replace[=R]` / `-i[R]`.
pub fn xargs_replace(args: &[ShellWord]) -> Option<String> {
    args.iter()
        .enumerate()
        .find_map(|(k, w)| {
            let t = w.text.as_str();
            if t == "-I" {
                args.get(k + 1).map(|r| r.text.clone())
            } else if let Some(r) = t
                .strip_prefix("-I")
                .or_else(|| t.strip_prefix("--replace="))
            {
                Some(r.to_string())
            } else if t == "-i" || t == "--replace" {
                Some("{}".to_string())
            } else {
                t.strip_prefix("-i").map(str::to_string)
            }
        })
        .filter(|r| !r.is_empty())
}

/// Whether `xargs` (its own words) leaves its command the terminal
/// (`-o`, `--open-tty`, also within a cluster of flags).
pub fn xargs_opens_tty(own: &[ShellWord]) -> bool {
    own.iter().skip(1).any(|w| {
        let t = w.text.as_str();
        t == "--open-tty" || (t.starts_with('-') && !t.starts_with("--") && t.contains('o'))
    })
}

/// Where `uv run <cmd>` and the like start their command, from `words[0]`.
pub fn sub_wrapped_start(name: &str, words: &[ShellWord]) -> Option<usize> {
    let (_, _, value_opts) = SUB_WRAPPERS
        .iter()
        .find(|(tool, sub, _)| *tool == name && words.get(1).is_some_and(|w| w.text == *sub))?;
    let mut k = 2;
    while let Some(w) = words.get(k) {
        let t = w.text.as_str();
        if t == "--" {
            return Some(k + 1);
        }
        if !t.starts_with('-') {
            break;
        }
        k += if value_opts.contains(&t) { 2 } else { 1 };
    }
    Some(k)
}

pub fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            name.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Directories whose programs are the system's own: `/usr/bin/git` is
/// `git`. A path anywhere else is a program file the gate reads.
pub const SYSTEM_DIRS: [&str; 9] = [
    "/bin/",
    "/sbin/",
    "/usr/bin/",
    "/usr/sbin/",
    "/usr/local/bin/",
    "/usr/local/sbin/",
    "/usr/libexec/",
    "/opt/homebrew/bin/",
    "/run/current-system/sw/bin/",
];

/// Commands whose first argument picks nothing to run (no subcommand, no
/// risky flag): a computed first argument does not hide what they do.
pub const DATA_COMMANDS: [&str; 52] = [
    "echo", "printf", "cd", "pushd", "popd", "ls", "cat", "head", "tail", "wc", "mkdir", "test",
    "[", "export", "local", "declare", "typeset", "readonly", "true", "false", ":", "sleep",
    "basename", "dirname", "realpath", "readlink", "grep", "egrep", "fgrep", "rg", "stat", "file",
    "which", "type", "exit", "return", "shift", "unset", "read", "wait", "kill", "jq", "sort",
    "uniq", "tr", "cut", "diff", "du", "mktemp", "seq", "date", "pwd",
];

/// `git` options before the subcommand that take the next word.
pub const GIT_VALUE_OPTS: [&str; 6] = [
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
];

/// `git -c <key>=…` keys that cannot make git run something else.
pub const GIT_SAFE_CONFIG: [&str; 14] = [
    "user.",
    "color.",
    "advice.",
    "core.quotepath",
    "core.autocrlf",
    "core.filemode",
    "core.longpaths",
    "core.safecrlf",
    "commit.gpgsign",
    "tag.gpgsign",
    "init.defaultbranch",
    "safe.directory",
    "log.showsignature",
    "column.ui",
];

/// The git commands the gate knows; any other word there may be an alias
/// (which can run anything, `git push` included).
pub const GIT_COMMANDS: [&str; 102] = [
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fetch",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "grep",
    "hash-object",
    "help",
    "init",
    "instaweb",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "mv",
    "name-rev",
    "notes",
    "pack-objects",
    "prune",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "remote",
    "repack",
    "replace",
    "request-pull",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-pack",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "subtree",
    "switch",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "verify-commit",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
    "stage",
    "rerere",
    "interpret-trailers",
    "pack-refs",
    "verify-tag",
    "patch-id",
];
