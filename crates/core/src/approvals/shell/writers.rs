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
        "sed" | "perl" => in_place(ctx, name, args),
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
