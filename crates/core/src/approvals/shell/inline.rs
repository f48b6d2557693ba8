//! Interpreters given their program inline (`python3 -c '…'`, `node -e`,
//! `perl -e`, `ruby -e`, `awk '…'`, or a here-document): a HEURISTIC. The
//! gate cannot read a program; it asks when the inline code names an
//! operation that deletes, runs other programs, publishes, or hides what it
//! does (docs/approvals.md says what it cannot see). A program in a file
//! (`python3 script.py`) is not read at all.

use super::{
    walk::{Ctx, Stdin, short},
    word::ShellWord,
};

/// Words in inline code that make it ask (compared without ASCII case).
const RISKY: [&str; 40] = [
    "rmtree",
    "unlink",
    "remove(",
    "rmdir",
    "rmsync",
    "rimraf",
    "rm -",
    "fs.rm",
    "file.delete",
    "fileutils.rm",
    "shutil.move",
    "subprocess",
    "os.system",
    "system(",
    "popen",
    "os.exec",
    "exec(",
    "execsync",
    "execfile",
    "spawn",
    "child_process",
    "import pty",
    "git push",
    "send-pack",
    "__import__",
    "importlib",
    "getattr(",
    "eval(",
    "compile(",
    "base64",
    "b64decode",
    "fromcharcode",
    "codecs",
    "chr(",
    "\\x",
    "`",
    "qx",
    "%x",
    ".env",
    ".git/",
];

/// The inline code of `name args`, when it is an interpreter given some.
fn inline_code<'a>(name: &str, args: &'a [ShellWord]) -> Option<Inline<'a>> {
    let flag_for = |n: &str| -> &'static [&'static str] {
        if n.starts_with("python") || n.starts_with("pypy") {
            &["-c"]
        } else {
            match n {
                "node" | "nodejs" | "bun" => &["-e", "--eval", "-p", "--print"],
                "perl" | "ruby" | "lua" | "luajit" | "Rscript" | "R" | "osascript" => &["-e", "-E"],
                "php" => &["-r"],
                _ => &[],
            }
        }
    };
    let awk = matches!(name, "awk" | "gawk" | "mawk" | "nawk");
    let flags = flag_for(name);
    if flags.is_empty() && !awk && name != "deno" {
        return None;
    }
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if name == "deno" {
            return (t == "eval").then(|| Inline::Code(args.get(k + 1)));
        }
        if flags.contains(&t)
            || (name == "perl" && t.starts_with('-') && (t.ends_with('e') || t.ends_with('E')))
        {
            return Some(Inline::Code(args.get(k + 1)));
        }
        if awk {
            if matches!(t, "-f" | "--file") {
                return None;
            }
            if matches!(t, "-F" | "-v" | "--assign" | "--field-separator") {
                k += 2;
                continue;
            }
            if !t.starts_with('-') {
                return Some(Inline::Code(Some(w)));
            }
        } else if !t.starts_with('-') || t == "-" {
            // A program file (or its input: `-`, `/dev/stdin`).
            let input = matches!(t, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
            return input.then_some(Inline::Input);
        } else if name.starts_with("python") && t == "-m" {
            return None;
        }
        k += 1;
    }
    // No program named: it reads it from its input.
    (!awk).then_some(Inline::Input)
}

enum Inline<'a> {
    Code(Option<&'a ShellWord>),
    Input,
}

pub(super) fn check(ctx: &mut Ctx, name: &str, args: &[ShellWord], stdin: &Stdin) {
    let Some(inline) = inline_code(name, args) else {
        return;
    };
    let code = match inline {
        Inline::Code(Some(w)) if w.literal() => w.text.clone(),
        Inline::Code(Some(w)) => {
            ctx.out.hide(format!(
                "`{name}` runs inline code computed when it runs (`{}`)",
                short(&w.text)
            ));
            return;
        }
        Inline::Code(None) => return,
        Inline::Input => match &stdin.literal {
            Some(text) if !stdin.piped => text.clone(),
            // A terminal (`python3` alone) or a file: nothing to read here.
            _ if !stdin.piped && !stdin.file => return,
            _ => {
                ctx.out.hide(format!(
                    "`{name}` reads its program from its input, which the gate cannot see"
                ));
                return;
            }
        },
    };
    let lower = code.to_ascii_lowercase();
    let awk_pipe = matches!(name, "awk" | "gawk" | "mawk" | "nawk")
        && (lower.contains("| \"") || lower.contains("|\"") || lower.contains("|&"));
    let js = matches!(name, "node" | "nodejs" | "bun" | "deno");
    let found = RISKY
        .iter()
        .find(|t| names(&lower, t) && !(js && **t == "`"));
    if let Some(token) = found {
        ctx.out.hide(format!(
            "`{name}` runs inline code that names `{token}` (a heuristic: the gate cannot read programs)"
        ));
    } else if awk_pipe {
        ctx.out.hide(format!(
            "`{name}` pipes to a command from its program (a heuristic: the gate cannot read programs)"
        ));
    }
}

/// Whether `code` names `token`; `.env` only as a file name (after a quote,
/// `/` or a space: not `os.environ`, not `process.env`).
fn names(code: &str, token: &str) -> bool {
    if token != ".env" {
        return code.contains(token);
    }
    code.match_indices(token)
        .any(|(at, _)| at == 0 || code[..at].ends_with(['\'', '"', '/', ' ', '`']))
}
