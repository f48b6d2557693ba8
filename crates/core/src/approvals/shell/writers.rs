//! The files the well-known writers write (for the file rules).

use super::{walk::Ctx, word::ShellWord};

/// Files the well-known writers write: destinations of `cp`/`mv`/
/// `install`/`ln`/`rsync`, `tee`'s files, `dd of=`, `sed -i`'s and
/// `perl -i`'s files, `truncate`/`touch`, and what `rm`/`unlink`/`shred`
/// delete.
pub(super) fn writes(ctx: &mut Ctx, name: &str, args: &[ShellWord]) {
    let operands = |value_opts: &[&str]| -> (Vec<&ShellWord>, Option<&ShellWord>) {
        let mut out = Vec::new();
        let mut target = None;
        let mut k = 0;
        let mut done = false;
        while let Some(w) = args.get(k) {
            let t = w.text.as_str();
            if !done && t == "--" {
                done = true;
            } else if !done && (t == "-t" || t == "--target-directory") {
                target = args.get(k + 1);
                k += 1;
            } else if !done && t.starts_with("--target-directory=") {
                target = Some(w);
            } else if !done && value_opts.contains(&t) {
                k += 1;
            } else if done || !t.starts_with('-') || t == "-" {
                out.push(w);
            }
            k += 1;
        }
        (out, target)
    };
    let how = name.to_string();
    match name {
        "cp" | "mv" | "install" | "ln" | "rsync" => {
            let (ops, target) = operands(&["-S", "--suffix", "-m", "-o", "-g", "-e"]);
            let (sources, dest): (&[&ShellWord], Option<&ShellWord>) = match target {
                Some(t) => (&ops[..], Some(t)),
                None => match ops.split_last() {
                    Some((last, rest)) => (rest, Some(*last)),
                    None => (&[], None),
                },
            };
            if let Some(dest) = dest {
                let dest_text = dest
                    .text
                    .strip_prefix("--target-directory=")
                    .unwrap_or(&dest.text);
                let d = ShellWord {
                    text: dest_text.to_string(),
                    ..dest.clone()
                };
                ctx.write_word(&d, &how);
                for s in sources {
                    let base = s
                        .text
                        .trim_end_matches('/')
                        .rsplit('/')
                        .next()
                        .unwrap_or("");
                    if d.literal() && !base.is_empty() {
                        ctx.write_path(&format!("{}/{base}", d.text.trim_end_matches('/')), &how);
                    }
                }
            }
            // What moves away, and what a link points at, count too.
            if name == "mv" || name == "ln" {
                for s in sources {
                    ctx.write_word(s, &how);
                }
            }
        }
        "tee" | "truncate" | "touch" | "rm" | "unlink" | "shred" | "rmdir" | "sudoedit" => {
            let (ops, _) = operands(&["-s", "--size", "-r", "--reference", "-d", "-t", "-n"]);
            for w in ops {
                ctx.write_word(w, &how);
            }
        }
        "dd" => {
            for w in args {
                if let Some(path) = w.text.strip_prefix("of=") {
                    let d = ShellWord {
                        text: path.to_string(),
                        ..w.clone()
                    };
                    ctx.write_word(&d, "dd of=");
                }
            }
        }
        "sed" => {
            in_place(ctx, name, args);
            sed_script(ctx, args);
        }
        "perl" => in_place(ctx, name, args),
        "curl" | "wget" => {
            let mut k = 0;
            while let Some(w) = args.get(k) {
                if matches!(
                    w.text.as_str(),
                    "-o" | "--output" | "-O" | "--output-document"
                ) && !(name == "curl" && w.text == "-O")
                    && let Some(f) = args.get(k + 1)
                {
                    ctx.write_word(f, &how);
                }
                k += 1;
            }
        }
        _ => {}
    }
}

/// `sed -i` / `perl -pi -e …`: the files after the script are written.
fn in_place(ctx: &mut Ctx, name: &str, args: &[ShellWord]) {
    let in_place = args.iter().any(|w| {
        let t = w.text.as_str();
        t.starts_with("--in-place")
            || (t.starts_with('-') && !t.starts_with("--") && {
                let flags = &t[1..];
                flags.contains('i')
            })
    });
    if !in_place {
        return;
    }
    let mut script_given = false;
    let mut operands = Vec::new();
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if matches!(t, "-e" | "--expression" | "-f" | "--file")
            || (name == "perl" && t.starts_with('-') && (t.ends_with('e') || t.ends_with('E')))
        {
            script_given = true;
            k += 2;
            continue;
        }
        if t.starts_with("--expression=") || t.starts_with("--file=") {
            script_given = true;
        } else if !t.starts_with('-') {
            operands.push(w);
        }
        k += 1;
    }
    let files = if script_given {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or_default()
    };
    for w in files {
        ctx.write_word(w, &format!("{name} -i"));
    }
}

/// GNU sed's own `e` (run a command) and `w` (write a file), also as `s`
/// flags: a heuristic over the script's commands.
pub(super) fn sed_script(ctx: &mut Ctx, args: &[ShellWord]) {
    let mut scripts: Vec<&ShellWord> = Vec::new();
    let mut operands = Vec::new();
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if matches!(t, "-e" | "--expression") {
            if let Some(s) = args.get(k + 1) {
                scripts.push(s);
            }
            k += 2;
            continue;
        }
        if let Some(s) = t.strip_prefix("--expression=") {
            let _ = s;
            scripts.push(w);
        } else if matches!(t, "-f" | "--file" | "-l" | "--line-length") {
            k += 2;
            continue;
        } else if !t.starts_with('-') {
            operands.push(w);
        }
        k += 1;
    }
    if scripts.is_empty()
        && let Some(first) = operands.first()
    {
        scripts.push(first);
    }
    for script in scripts {
        let text = script
            .text
            .strip_prefix("--expression=")
            .unwrap_or(&script.text);
        if !script.literal() {
            ctx.out.hide(format!(
                "`sed` with a script computed when it runs (`{text}`)"
            ));
            continue;
        }
        for (cmd, arg) in sed_commands(text) {
            match cmd {
                'e' => ctx.out.hide(format!(
                    "`sed` runs a command from its script (`{}`; a heuristic)",
                    text.trim()
                )),
                'w' | 'W' if !arg.is_empty() => ctx.write_path(arg, "sed w"),
                _ => {}
            }
        }
    }
}

/// The commands of a sed script that run or write, with their argument:
/// `e cmd`, `w file`, and an `s` command's `e` / `w file` flags.
fn sed_commands(script: &str) -> Vec<(char, &str)> {
    let mut out = Vec::new();
    for line in script.split(['\n', ';']) {
        let mut body = line.trim_start();
        // Addresses: numbers, `$`, ranges, and `/regex/`.
        loop {
            body = body.trim_start_matches(|c: char| c.is_ascii_digit() || "$,~!+ ".contains(c));
            let Some(rest) = body.strip_prefix('/') else {
                break;
            };
            let mut escaped = false;
            let end = rest.char_indices().find(|&(_, c)| {
                let close = c == '/' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            });
            match end {
                Some((i, _)) => body = &rest[i + 1..],
                None => break,
            }
        }
        let mut chars = body.char_indices();
        match chars.next() {
            Some((_, c @ ('e' | 'w' | 'W'))) => out.push((c, body[1..].trim())),
            Some((_, 's')) => {
                let Some((_, delim)) = chars.next() else {
                    continue;
                };
                let mut seen = 0;
                let mut escaped = false;
                let mut flags_at = None;
                for (i, c) in chars {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == delim {
                        seen += 1;
                        if seen == 2 {
                            flags_at = Some(i + c.len_utf8());
                            break;
                        }
                    }
                }
                if let Some(at) = flags_at {
                    let flags = &body[at..];
                    if let Some(w) = flags.find('w') {
                        out.push(('w', flags[w + 1..].trim()));
                    } else if flags.contains('e') {
                        out.push(('e', ""));
                    }
                }
            }
            _ => {}
        }
    }
    out
}
