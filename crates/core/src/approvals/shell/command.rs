//! One simple command: through its wrappers to what runs, what it writes,
//! and what it hides.

use super::{
    Input, Unit,
    script::{self, MAX_SCRIPT_BYTES, Script},
    walk::{Ctx, Dir, Stdin, short},
    word::ShellWord,
    wrappers::{
        DATA_COMMANDS, GIT_COMMANDS, GIT_SAFE_CONFIG, GIT_VALUE_OPTS, SHELLS, SYSTEM_DIRS,
        sub_wrapped_start, wrapped_start, wrapper, xargs_opens_tty, xargs_replace,
    },
};

fn texts(words: &[ShellWord]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn argv(words: &[ShellWord]) -> Vec<String> {
    words.iter().map(|w| w.text.clone()).collect()
}

/// A word as the shell would quote it, for re-parsing joined words.
fn quoted(w: &ShellWord) -> String {
    if !w.literal() {
        return w.text.clone();
    }
    if !w.text.is_empty()
        && w.text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return w.text.clone();
    }
    format!("'{}'", w.text.replace('\'', r"'\''"))
}

pub(super) fn simple(ctx: &mut Ctx, words: &[ShellWord], stdin: &Stdin) {
    let raw = texts(words);
    run(ctx, words, stdin, &raw);
}

/// `words` from the command's name on; `raw` the whole command's text.
fn run(ctx: &mut Ctx, words: &[ShellWord], stdin: &Stdin, raw: &str) {
    let mut i = 0;
    let mut from_stdin = false;
    let mut input = stdin.input();
    // `xargs -I R`: the words holding R are its input's.
    let mut replace: Option<String> = None;
    loop {
        let Some(first) = words.get(i) else {
            // A wrapper alone (`env`, `nohup`): nothing more runs.
            emit_words(ctx, raw, &words[..i.min(words.len())], input);
            return;
        };
        if first.dynamic || first.unreadable.is_some() {
            ctx.out.hide(format!(
                "the command's name is computed when it runs (`{}`)",
                first.text
            ));
            emit_words(ctx, raw, &words[i..], input);
            return;
        }
        if first.pattern {
            ctx.out.hide(format!(
                "the command's name is a pattern the shell expands (`{}`)",
                first.text
            ));
            emit_words(ctx, raw, &words[i..], input);
            return;
        }
        let name = first.text.as_str();
        if name.contains("{}") || replace.as_deref().is_some_and(|r| name.contains(r)) {
            ctx.out.hide(format!(
                "runs the files or words it is given (`{name}`), which the gate cannot see"
            ));
            emit_words(ctx, raw, &words[i..], input);
            return;
        }
        if name.contains('/') && !SYSTEM_DIRS.iter().any(|d| name.starts_with(d)) {
            // `./deploy.sh`, `scripts/x`, `/tmp/y`: a program file.
            emit_words(ctx, raw, &words[i..], input);
            run_file(ctx, name, false);
            return;
        }
        let base = name.rsplit('/').next().unwrap_or(name);
        if let Some(next) = sub_wrapped_start(base, &words[i..]) {
            i += next;
            continue;
        }
        let Some(wr) = wrapper(base) else {
            break;
        };
        let args = &words[i..];
        if special_wrapper(ctx, base, args, raw, input) == Some(true) {
            return;
        }
        if base == "xargs" {
            from_stdin = true;
            let own = &args[..wrapped_start(wr, args).min(args.len())];
            replace = xargs_replace(own).or(replace);
            if !xargs_opens_tty(own) {
                // `xargs` runs its command with its input from `/dev/null`.
                input = Input::Redirected;
            }
        }
        i += wrapped_start(wr, args);
    }
    let name_word = &words[i];
    let name = name_word.text.rsplit('/').next().unwrap_or(&name_word.text);
    let args = &words[i + 1..];
    let run_argv = std::iter::once(name.to_string())
        .chain(args.iter().map(|w| w.text.clone()))
        .collect();
    emit(ctx, raw, normal(name, args), run_argv, input);
    if from_stdin && args.is_empty() && !DATA_COMMANDS.contains(&name) {
        ctx.out.hide(format!(
            "`xargs {name}` takes its arguments from its input, which the gate cannot see"
        ));
    }
    by_name(ctx, name, args, stdin);
    let own_check = SHELLS.contains(&name)
        || matches!(
            name,
            "eval" | "source" | "." | "trap" | "git" | "rm" | "find"
        );
    if let Some(first) = args.first()
        && (first.dynamic
            || first.unreadable.is_some()
            || (first.pattern && !looks_like_path(&first.text)))
        && !DATA_COMMANDS.contains(&name)
        && !own_check
    {
        ctx.out.hide(format!(
            "the first argument of `{name}` is computed when it runs (`{}`)",
            first.text
        ));
    }
    super::inline::check(ctx, name, args, stdin);
    super::writers::writes(ctx, name, args);
}

fn looks_like_path(t: &str) -> bool {
    t.contains('/') || t.contains('.')
}

/// Wrappers that do more than run the next words: `Some(true)` when the
/// command is fully handled.
fn special_wrapper(
    ctx: &mut Ctx,
    name: &str,
    args: &[ShellWord],
    raw: &str,
    input: Input,
) -> Option<bool> {
    let value_of = |opts: &[&str]| -> Option<&ShellWord> {
        args.iter().enumerate().find_map(|(k, w)| {
            if opts.contains(&w.text.as_str()) {
                return args.get(k + 1);
            }
            None
        })
    };
    let shell_text = |ctx: &mut Ctx, w: Option<&ShellWord>, rest: &[ShellWord], label: &str| match w
    {
        Some(w) if w.literal() => {
            let mut text = w.text.clone();
            for r in rest {
                text.push(' ');
                text.push_str(&quoted(r));
            }
            ctx.parse_text(&text, Some(format!("inside `{label}`")));
        }
        Some(w) => ctx.out.hide(format!(
            "`{label}` runs a command computed when it runs (`{}`)",
            w.text
        )),
        None => ctx
            .out
            .hide(format!("`{label}` runs a command the gate cannot see")),
    };
    match name {
        "env" => {
            let at = args
                .iter()
                .position(|w| w.text == "-S" || w.text == "--split-string")?;
            emit_words(ctx, raw, args, input);
            let rest = args.get(at + 2..).unwrap_or_default();
            shell_text(ctx, args.get(at + 1), rest, "env -S");
            Some(true)
        }
        "flock" => {
            let w = value_of(&["-c", "--command"])?;
            emit_words(ctx, raw, args, input);
            shell_text(ctx, Some(w), &[], "flock -c");
            Some(true)
        }
        "sudo" | "doas" => {
            let start = wrapped_start(wrapper(name)?, args);
            let opts = &args[1..start.min(args.len())];
            let shell = opts.iter().any(|w| {
                w.text == "-s" || w.text == "-i" || w.text == "--shell" || w.text == "--login"
            });
            if opts.iter().any(|w| w.text == "-e" || w.text == "--edit") {
                for w in args.get(start..).unwrap_or_default() {
                    ctx.write_word(w, "sudo -e");
                }
            }
            if shell && start >= args.len() {
                emit_words(ctx, raw, args, input);
                ctx.out.hide(format!(
                    "`{name}` starts a shell that reads its commands from its input"
                ));
                return Some(true);
            }
            None
        }
        // `watch` runs its arguments with `sh -c`.
        "watch" => {
            let start = wrapped_start(wrapper(name)?, args);
            emit_words(ctx, raw, args, input);
            let rest = args.get(start..).unwrap_or_default();
            let text = rest.iter().map(quoted).collect::<Vec<_>>().join(" ");
            if rest.iter().all(ShellWord::literal) {
                ctx.parse_text(&text, Some("inside `watch`".into()));
            } else {
                ctx.out.hide(format!(
                    "`watch` runs a command computed when it runs (`{}`)",
                    short(&text)
                ));
            }
            Some(true)
        }
        "sg" => {
            let w = value_of(&["-c"])?;
            emit_words(ctx, raw, args, input);
            shell_text(ctx, Some(w), &[], "sg -c");
            Some(true)
        }
        "time" => {
            if let Some(w) = value_of(&["-o", "--output"]) {
                ctx.write_word(w, "time -o");
            }
            None
        }
        _ => None,
    }
}

/// What the rules see of a command as it runs.
fn normal(name: &str, args: &[ShellWord]) -> String {
    match name {
        "git" => {
            let sub = git_subcommand_at(args);
            std::iter::once("git")
                .chain(args[sub.min(args.len())..].iter().map(|w| w.text.as_str()))
                .collect::<Vec<_>>()
                .join(" ")
        }
        "rm" => rm_normalized(args),
        // `-exec /bin/rm` is `-exec rm`.
        "find" => {
            let mut out = vec!["find".to_string()];
            let mut after_exec = false;
            for w in args {
                let t = w.text.as_str();
                out.push(if after_exec {
                    t.rsplit('/').next().unwrap_or(t).to_string()
                } else {
                    t.to_string()
                });
                after_exec = matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir");
            }
            out.join(" ")
        }
        _ => std::iter::once(name)
            .chain(args.iter().map(|w| w.text.as_str()))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

fn git_subcommand_at(args: &[ShellWord]) -> usize {
    let mut j = 0;
    while let Some(w) = args.get(j) {
        let t = w.text.as_str();
        if GIT_VALUE_OPTS.contains(&t) {
            j += 2;
        } else if t.starts_with('-') {
            j += 1;
        } else {
            break;
        }
    }
    j
}

/// `rm` with its flags spelled `-rf`, `-r` or `-f` (`-Rf`, `-r -f`,
/// `--recursive --force`, `-rfv` → `-rf`).
pub(super) fn rm_normalized(args: &[ShellWord]) -> String {
    let (mut recursive, mut force) = (false, false);
    let mut operands = Vec::new();
    let mut options_done = false;
    for w in args {
        let a = w.text.as_str();
        if options_done || !a.starts_with('-') || a == "-" {
            operands.push(a);
        } else if a == "--" {
            options_done = true;
        } else if let Some(long) = a.strip_prefix("--") {
            recursive |= long == "recursive";
            force |= long == "force";
        } else {
            recursive |= a.contains('r') || a.contains('R');
            force |= a.contains('f');
        }
    }
    let flags = match (recursive, force) {
        (true, true) => Some("-rf"),
        (true, false) => Some("-r"),
        (false, true) => Some("-f"),
        (false, false) => None,
    };
    std::iter::once("rm")
        .chain(flags)
        .chain(operands)
        .collect::<Vec<_>>()
        .join(" ")
}

fn emit_words(ctx: &mut Ctx, raw: &str, words: &[ShellWord], stdin: Input) {
    emit(ctx, raw, texts(words), argv(words), stdin);
}

fn emit(ctx: &mut Ctx, raw: &str, normal: String, argv: Vec<String>, stdin: Input) {
    let unit = Unit {
        raw: raw.to_string(),
        normal,
        argv,
        stdin,
        via: ctx.via.clone(),
        script: ctx.out.reading().map(str::to_string),
    };
    if !ctx.out.units.contains(&unit) {
        ctx.out.units.push(unit);
    }
}

/// Commands that run text or files of their own.
fn by_name(ctx: &mut Ctx, name: &str, args: &[ShellWord], stdin: &Stdin) {
    match name {
        n if SHELLS.contains(&n) => shell(ctx, n, args, stdin),
        "eval" => {
            if args.iter().all(ShellWord::literal) {
                ctx.parse_text(&super::command::texts(args), Some("inside `eval`".into()));
            } else {
                ctx.out.hide(format!(
                    "`eval` runs text computed when it runs (`{}`)",
                    short(&texts(args))
                ));
            }
        }
        "source" | "." => match args.first() {
            Some(w) if w.literal() => run_file(ctx, &w.text, true),
            Some(w) => ctx.out.hide(format!(
                "`{name}` of a file computed when it runs (`{}`)",
                w.text
            )),
            None => {}
        },
        "trap" => {
            if let Some(w) = args.first().filter(|w| !w.text.starts_with('-')) {
                if w.literal() {
                    ctx.parse_text(&w.text, Some("inside `trap`".into()));
                } else {
                    ctx.out.hide(format!(
                        "`trap` of a command computed when it runs (`{}`)",
                        w.text
                    ));
                }
            }
        }
        "alias" => {
            for w in args {
                if let Some((_, value)) = w.text.split_once('=') {
                    ctx.parse_text(value, Some("inside `alias`".into()));
                }
            }
        }
        "git" => git(ctx, args),
        "find" => find(ctx, args),
        "rm" => {
            let mut done = false;
            for w in args {
                if w.text == "--" && w.literal() {
                    done = true;
                }
                if !done && !w.literal() {
                    ctx.out.hide(format!(
                        "`rm` with an argument computed when it runs (`{}`): it may be an option",
                        w.text
                    ));
                    break;
                }
            }
        }
        "cd" | "pushd" => {
            ctx.dir = match args.iter().find(|w| !w.text.starts_with('-')) {
                Some(w) if w.literal() => match ctx.joined(&w.text) {
                    Some(p) => Dir::Known(p),
                    None => Dir::Unknown,
                },
                _ => Dir::Unknown,
            };
        }
        "popd" => ctx.dir = Dir::Unknown,
        "su" | "runuser" | "script" | "nix-shell" => {
            let flags: &[&str] = match name {
                "nix-shell" => &["--run", "--command"],
                _ => &["-c", "--command"],
            };
            match args.iter().position(|w| flags.contains(&w.text.as_str())) {
                Some(k) => match args.get(k + 1) {
                    Some(w) if w.literal() => {
                        ctx.parse_text(&w.text, Some(format!("inside `{name} {}`", args[k].text)));
                    }
                    Some(w) => ctx.out.hide(format!(
                        "`{name}` runs a command computed when it runs (`{}`)",
                        w.text
                    )),
                    None => {}
                },
                None if matches!(name, "su" | "runuser") => ctx.out.hide(format!(
                    "`{name}` starts a shell that reads its commands from its input"
                )),
                None => {}
            }
        }
        _ => {}
    }
}

/// `bash -c '<text>'`, `bash x.sh`, `bash` reading its input.
fn shell(ctx: &mut Ctx, name: &str, args: &[ShellWord], stdin: &Stdin) {
    let mut j = 0;
    let mut inline = false;
    let mut from_input = false;
    while let Some(w) = args.get(j) {
        let t = w.text.as_str();
        if !w.literal() {
            if inline || !t.starts_with('-') {
                break;
            }
            ctx.out.hide(format!(
                "`{name}` with an option computed when it runs (`{t}`)"
            ));
            return;
        }
        if t == "--" || t == "-" {
            j += 1;
            break;
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            j += 2;
            continue;
        }
        if t.starts_with("--") {
            j += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            inline |= t[1..].contains('c');
            from_input |= t[1..].contains('s');
            j += 1;
            continue;
        }
        break;
    }
    if inline {
        match args.get(j) {
            Some(w) if w.literal() => {
                ctx.parse_text(&w.text, Some(format!("inside `{name} -c`")));
            }
            Some(w) => ctx.out.hide(format!(
                "`{name} -c` runs a command computed when it runs (`{}`)",
                w.text
            )),
            None => {}
        }
        return;
    }
    if !from_input && let Some(w) = args.get(j) {
        if w.literal() {
            run_file(ctx, &w.text, true);
        } else {
            ctx.out.hide(format!(
                "`{name}` runs a script whose name is computed when it runs (`{}`)",
                w.text
            ));
        }
        return;
    }
    match &stdin.literal {
        Some(text) if !stdin.piped => {
            ctx.parse_text(
                text,
                Some(format!("in the here-document given to `{name}`")),
            );
        }
        _ => ctx.out.hide(format!(
            "`{name}` reads its commands from its input, which the gate cannot see"
        )),
    }
}

/// A file run as a program (`./deploy.sh`) or by a shell (`bash x.sh`,
/// `source x.sh`): read and its commands checked, one level deep.
pub(super) fn run_file(ctx: &mut Ctx, path: &str, as_shell: bool) {
    if ctx.in_script {
        ctx.out.hide(format!(
            "runs `{path}` from inside a script (the gate reads one level of scripts)"
        ));
        return;
    }
    let Some(joined) = ctx.joined(path) else {
        ctx.out.hide(format!(
            "runs `{path}` in a directory the gate cannot know (after a `cd` to a computed path)"
        ));
        return;
    };
    if ctx.out.writes.iter().any(|w| w.path == joined) {
        ctx.out
            .hide(format!("the command writes `{path}` and runs it"));
    }
    ctx.scripts_run.push(joined.clone());
    let bytes = match ctx.reader.read(ctx.cwd, &joined, MAX_SCRIPT_BYTES) {
        Ok(b) => b,
        Err(why) => {
            ctx.out
                .hide(format!("runs `{path}`, which the gate cannot read: {why}"));
            return;
        }
    };
    match script::classify(path, &bytes, as_shell) {
        Script::Shell(text) => {
            if let Some(by) = ctx.out.units.last().cloned() {
                ctx.out.scripts.push(super::ScriptRun {
                    path: joined.clone(),
                    by,
                });
            }
            let saved = ctx.dir.clone();
            ctx.in_script = true;
            ctx.out.set_reading(Some(joined));
            ctx.parse_text(&text, Some(format!("in the script `{path}`")));
            ctx.out.set_reading(None);
            ctx.in_script = false;
            ctx.dir = saved;
        }
        // A program: beyond a command gate (docs/approvals.md).
        Script::Program => {}
        Script::Unreadable(why) => ctx
            .out
            .hide(format!("runs `{path}`, which the gate cannot read: {why}")),
    }
}

/// `git`: computed options, `-c` that can run something else, and
/// subcommands the gate does not know (aliases).
fn git(ctx: &mut Ctx, args: &[ShellWord]) {
    let mut j = 0;
    while let Some(w) = args.get(j) {
        let t = w.text.as_str();
        if !w.literal() {
            ctx.out.hide(format!(
                "`git` with an option computed when it runs (`{t}`)"
            ));
            return;
        }
        let config = if t == "-c" {
            args.get(j + 1).map(|v| v.text.clone())
        } else {
            t.strip_prefix("--config-env=").map(str::to_string)
        };
        if let Some(kv) = config {
            let key = kv
                .split('=')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            if !GIT_SAFE_CONFIG.iter().any(|safe| key.starts_with(safe)) {
                ctx.out.hide(format!(
                    "`git -c {key}=…` can change what git runs (an alias or a program)"
                ));
            }
        }
        if GIT_VALUE_OPTS.contains(&t) {
            j += 2;
        } else if t.starts_with('-') {
            j += 1;
        } else {
            break;
        }
    }
    let Some(sub) = args.get(j) else {
        return;
    };
    if !sub.literal() {
        ctx.out.hide(format!(
            "the git command is computed when it runs (`git {}`)",
            sub.text
        ));
    } else if !GIT_COMMANDS.contains(&sub.text.as_str()) {
        ctx.out.hide(format!(
            "`git {}` is not a git command the gate knows: it may be an alias, which can run anything",
            sub.text
        ));
    } else if sub.text == "config" {
        git_config(ctx, &args[j + 1..]);
    }
}

/// `git config <key> <value>` (or `git config set …`) for a key that makes
/// git run a program later (`core.hooksPath`, `core.pager`, …). Aliases
/// may be defined: using one asks.
fn git_config(ctx: &mut Ctx, args: &[ShellWord]) {
    let words: Vec<&ShellWord> = args
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .skip_while(|w| w.text == "set")
        .collect();
    if let [key, _value, ..] = words.as_slice() {
        let key = key.text.to_ascii_lowercase();
        if !key.starts_with("alias.") && !GIT_SAFE_CONFIG.iter().any(|s| key.starts_with(s)) {
            ctx.out.hide(format!(
                "`git config {key} …` can make git run a program later"
            ));
        }
    }
}

/// `find … -exec <cmd> {} \;` runs `<cmd>`; `-fprint FILE` writes.
fn find(ctx: &mut Ctx, args: &[ShellWord]) {
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if !w.literal() && !args[..k].last().is_some_and(|p| p.text.starts_with('-')) {
            ctx.out.hide(format!(
                "`find` with an argument computed when it runs (`{t}`): it may be an action"
            ));
        }
        match t {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = args[k + 1..]
                    .iter()
                    .position(|w| w.text == ";" || w.text == "+")
                    .map_or(args.len(), |p| k + 1 + p);
                let inner = &args[k + 1..end];
                if !inner.is_empty() {
                    let saved = ctx.via.replace(format!("inside `find {t}`"));
                    run(ctx, inner, &Stdin::default(), &texts(inner));
                    ctx.via = saved;
                }
                k = end + 1;
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                if let Some(f) = args.get(k + 1) {
                    ctx.write_word(f, &format!("find {t}"));
                }
                k += 2;
            }
            _ => k += 1,
        }
    }
}
