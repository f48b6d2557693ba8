//! The walk over brush-parser's syntax tree: every simple command, every
//! redirection, every substitution, wherever it is nested.

use brush_parser::{
    Parser, ParserOptions,
    ast::{
        self, Command, CommandPrefixOrSuffixItem, CompoundCommand, IoFileRedirectKind,
        IoFileRedirectTarget, IoRedirect,
    },
    word as bword,
};

use super::{
    Analysis, FileWrite, Input, MAX_DEPTH, MAX_SUBSTITUTIONS, ScriptReader, word::ShellWord,
};

/// Where relative paths of the next command point: the working directory
/// joined with the `cd`s before it, or unknown (`cd "$x"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Dir {
    Known(String),
    Unknown,
}

pub(super) struct Ctx<'a> {
    pub reader: &'a dyn ScriptReader,
    pub cwd: Option<&'a str>,
    pub out: Analysis,
    /// Nesting of parsed texts (`bash -c`, `eval`, substitutions).
    pub depth: usize,
    /// Inside a script the gate read (scripts it runs are not read).
    pub in_script: bool,
    pub dir: Dir,
    /// Where the commands being walked come from (`inside bash -c`).
    pub via: Option<String>,
    pub options: ParserOptions,
    /// The files run as scripts so far (a command that also writes one
    /// asks: it may change the script after the check).
    pub scripts_run: Vec<String>,
}

/// A redirection or a command's stdin as far as it matters here.
#[derive(Debug, Clone, Default)]
pub(super) struct Stdin {
    /// From the previous command of a pipeline.
    pub piped: bool,
    /// A here-document's or here-string's literal text.
    pub literal: Option<String>,
    /// Redirected from a file.
    pub file: bool,
    /// That file is the terminal or the input it already had
    /// (`/dev/tty`, `/dev/stdin`).
    pub same_input: bool,
}

impl Stdin {
    /// Where the command's input comes from.
    pub fn input(&self) -> Input {
        if (self.file || self.literal.is_some()) && !self.same_input {
            Input::Redirected
        } else if self.piped {
            Input::Pipe
        } else {
            Input::Terminal
        }
    }
}

/// Files that, as a command's input, are the terminal or the input it
/// already had.
const SAME_INPUT: [&str; 4] = ["/dev/tty", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

impl<'a> Ctx<'a> {
    pub fn new(cwd: Option<&'a str>, reader: &'a dyn ScriptReader) -> Self {
        Self {
            reader,
            cwd,
            out: Analysis::default(),
            depth: 0,
            in_script: false,
            dir: Dir::Known(String::new()),
            via: None,
            options: ParserOptions::default(),
            scripts_run: Vec::new(),
        }
    }

    /// Parse `text` as shell and walk it; `via` names where it came from.
    pub fn parse_text(&mut self, text: &str, via: Option<String>) {
        if self.depth > MAX_DEPTH {
            self.out.hide(format!(
                "commands nested more than {MAX_DEPTH} levels deep (`bash -c`, `eval`, substitutions)"
            ));
            return;
        }
        // The parser recurses (and slows down) with each nested
        // substitution: past a bound, the command is not parsed at all.
        let substitutions = text.matches("$(").count()
            + text.matches("<(").count()
            + text.matches(">(").count()
            + text.matches('`').count() / 2;
        if substitutions > MAX_SUBSTITUTIONS {
            self.out.hide(format!(
                "more than {MAX_SUBSTITUTIONS} command or process substitutions to check"
            ));
            return;
        }
        let mut parser = Parser::new(std::io::Cursor::new(text), &self.options);
        let program = match parser.parse_program() {
            Ok(p) => p,
            Err(e) => {
                let what = match &via {
                    Some(v) => format!("the command {v}"),
                    None => "the command".to_string(),
                };
                self.out
                    .hide(format!("{what} could not be parsed as shell ({e})"));
                return;
            }
        };
        let new_via = via.or_else(|| self.via.clone());
        let saved_via = std::mem::replace(&mut self.via, new_via);
        self.depth += 1;
        for list in &program.complete_commands {
            self.list(list);
        }
        self.depth -= 1;
        self.via = saved_via;
    }

    fn list(&mut self, list: &ast::CompoundList) {
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            // `a & b`: `a` runs in the background, its `cd` is its own.
            let background = matches!(sep, ast::SeparatorOperator::Async);
            let saved = background.then(|| self.dir.clone());
            self.pipeline(&and_or.first);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
            if let Some(d) = saved {
                self.dir = d;
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline) {
        let single = p.seq.len() == 1;
        let saved = (!single).then(|| self.dir.clone());
        for (i, cmd) in p.seq.iter().enumerate() {
            let stdin = Stdin {
                piped: i > 0,
                ..Stdin::default()
            };
            self.command(cmd, stdin);
            if let Some(d) = &saved {
                // Each part of a pipeline runs in a subshell.
                self.dir = d.clone();
            }
        }
    }

    fn command(&mut self, cmd: &Command, stdin: Stdin) {
        match cmd {
            Command::Simple(simple) => self.simple(simple, stdin),
            Command::Compound(compound, redirects) => {
                if let Some(r) = redirects {
                    for redirect in &r.0 {
                        self.redirect(redirect, &mut Stdin::default());
                    }
                }
                self.compound(compound);
            }
            Command::Function(f) => {
                // The body is checked where it is defined: calling it runs it.
                let saved = self.dir.clone();
                self.compound(&f.body.0);
                if let Some(r) = &f.body.1 {
                    for redirect in &r.0 {
                        self.redirect(redirect, &mut Stdin::default());
                    }
                }
                // A `cd` in it moves the caller when it is called: from
                // here on the directory is not known.
                self.dir = if self.dir == saved {
                    saved
                } else {
                    Dir::Unknown
                };
            }
            Command::ExtendedTest(test, redirects) => {
                self.test_expr(&test.expr);
                if let Some(r) = redirects {
                    for redirect in &r.0 {
                        self.redirect(redirect, &mut Stdin::default());
                    }
                }
            }
        }
    }

    fn test_expr(&mut self, e: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.test_expr(a);
                self.test_expr(b);
            }
            E::Not(a) | E::Parenthesized(a) => self.test_expr(a),
            E::UnaryTest(_, w) => {
                self.word(w);
            }
            E::BinaryTest(_, a, b) => {
                self.word(a);
                self.word(b);
            }
        }
    }

    fn compound(&mut self, c: &CompoundCommand) {
        match c {
            CompoundCommand::BraceGroup(g) => self.list(&g.list),
            CompoundCommand::Subshell(s) => {
                let saved = self.dir.clone();
                self.list(&s.list);
                self.dir = saved;
            }
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(w);
                }
                self.list(&f.body.list);
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p);
                    }
                    if let Some(body) = &item.cmd {
                        self.list(body);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition);
                self.list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        self.list(cond);
                    }
                    self.list(&e.body);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0);
                self.list(&w.1.list);
            }
            CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value),
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value);
                }
                self.list(&f.body.list);
            }
            CompoundCommand::Coprocess(c) => self.command(&c.body, Stdin::default()),
        }
    }

    fn arithmetic(&mut self, text: &str) {
        let w = super::word::read(text, &self.options);
        for s in &w.substitutions {
            self.parse_text(s, Some("inside `$((…))`".into()));
        }
        if w.unreadable.is_some() {
            self.out.hide(format!("the arithmetic `(( {text} ))`"));
        }
    }

    /// Read a word and check the commands its substitutions run.
    pub fn word(&mut self, w: &ast::Word) -> ShellWord {
        let sw = super::word::read(&w.value, &self.options);
        self.word_effects(&sw);
        sw
    }

    pub fn word_effects(&mut self, sw: &ShellWord) {
        for s in &sw.substitutions {
            let saved = self.dir.clone();
            self.parse_text(s, Some(format!("inside `$({})`", short(s))));
            self.dir = saved;
        }
        if let Some(why) = &sw.unreadable {
            self.out.hide(why.clone());
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand, mut stdin: Stdin) {
        let mut words: Vec<ShellWord> = Vec::new();
        let items = s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(Some)
            .chain(std::iter::once(None))
            .chain(s.suffix.iter().flat_map(|p| p.0.iter()).map(Some));
        for item in items {
            match item {
                None => {
                    if let Some(name) = &s.word_or_name {
                        let w = self.word(name);
                        words.push(w);
                    }
                }
                Some(CommandPrefixOrSuffixItem::Word(w)) => {
                    let w = self.word(w);
                    words.push(w);
                }
                // `export A=1`, `alias p='git push'`: an argument.
                Some(CommandPrefixOrSuffixItem::AssignmentWord(_, w)) if !words.is_empty() => {
                    let w = self.word(w);
                    words.push(w);
                }
                Some(CommandPrefixOrSuffixItem::AssignmentWord(a, _)) => self.assignment(a),
                Some(CommandPrefixOrSuffixItem::IoRedirect(r)) => self.redirect(r, &mut stdin),
                Some(CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub)) => {
                    let saved = self.dir.clone();
                    self.list(&sub.list);
                    self.dir = saved;
                    words.push(ShellWord {
                        text: "<(…)".into(),
                        dynamic: true,
                        ..ShellWord::default()
                    });
                }
            }
        }
        if !words.is_empty() {
            super::command::simple(self, &words, &stdin);
        }
    }

    fn assignment(&mut self, a: &ast::Assignment) {
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                self.word(w);
            }
            ast::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.word(k);
                    }
                    self.word(v);
                }
            }
        }
    }

    fn redirect(&mut self, r: &IoRedirect, stdin: &mut Stdin) {
        match r {
            IoRedirect::File(fd, kind, target) => {
                let write = matches!(
                    kind,
                    IoFileRedirectKind::Write
                        | IoFileRedirectKind::Append
                        | IoFileRedirectKind::Clobber
                        | IoFileRedirectKind::ReadAndWrite
                        | IoFileRedirectKind::DuplicateOutput
                );
                match target {
                    IoFileRedirectTarget::Filename(w) => {
                        let sw = self.word(w);
                        // `<file`, `0<file`, `<>file` (not `>file`, whose
                        // descriptor is 1 when none is written).
                        let reads_input = fd.unwrap_or(0) == 0
                            && (!write || matches!(kind, IoFileRedirectKind::ReadAndWrite));
                        if reads_input {
                            stdin.file = true;
                            stdin.same_input =
                                sw.literal() && SAME_INPUT.contains(&sw.text.as_str());
                        }
                        if write {
                            self.write_word(&sw, &format!("redirection {}", redirect_op(kind)));
                        }
                    }
                    IoFileRedirectTarget::Duplicate(w) => {
                        let sw = self.word(w);
                        // `>&file` (not a descriptor number): a file write.
                        let fd_like =
                            sw.text == "-" || sw.text.trim_end_matches('-').parse::<u32>().is_ok();
                        if write && !fd_like {
                            self.write_word(&sw, "redirection >&");
                        }
                    }
                    IoFileRedirectTarget::Fd(_) => {}
                    IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        let saved = self.dir.clone();
                        self.list(&sub.list);
                        self.dir = saved;
                    }
                }
            }
            IoRedirect::HereDocument(fd, doc) => {
                if doc.requires_expansion {
                    // An unquoted delimiter: `$(…)` in the body runs.
                    match bword::parse_heredoc(&doc.doc.value, &self.options) {
                        Ok(pieces) => {
                            let mut sw = ShellWord::default();
                            for p in pieces {
                                if let bword::WordPiece::CommandSubstitution(s)
                                | bword::WordPiece::BackquotedCommandSubstitution(s) = p.piece
                                {
                                    sw.substitutions.push(s);
                                    sw.dynamic = true;
                                }
                            }
                            self.word_effects(&sw);
                        }
                        Err(e) => self.out.hide(format!("a here-document ({e})")),
                    }
                }
                if fd.unwrap_or(0) == 0 {
                    stdin.literal = Some(doc.doc.value.clone());
                    stdin.same_input = false;
                }
            }
            IoRedirect::HereString(fd, w) => {
                let sw = self.word(w);
                if fd.unwrap_or(0) == 0 {
                    stdin.literal = sw.literal().then(|| sw.text.clone());
                    stdin.file = !sw.literal();
                    stdin.same_input = false;
                }
            }
            IoRedirect::OutputAndError(w, append) => {
                let sw = self.word(w);
                self.write_word(
                    &sw,
                    if *append {
                        "redirection &>>"
                    } else {
                        "redirection &>"
                    },
                );
            }
        }
    }

    /// A file written through a word: its path, or a hidden write.
    pub fn write_word(&mut self, w: &ShellWord, how: &str) {
        if !w.literal() {
            self.out.hide_write(format!(
                "writes a file whose name is computed when it runs (`{}`, {how})",
                w.text
            ));
            return;
        }
        self.write_path(&w.text, how);
    }

    pub fn write_path(&mut self, path: &str, how: &str) {
        if matches!(
            path,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) || path.starts_with("/dev/fd/")
        {
            return;
        }
        match self.joined(path) {
            Some(p) => self.out.writes.push(FileWrite {
                path: p,
                how: how.to_string(),
                script: self.out.reading().map(str::to_string),
            }),
            None => self.out.hide_write(format!(
                "writes `{path}` in a directory the gate cannot know (after a `cd` to a computed path)"
            )),
        }
    }

    /// `path` joined to the directory the `cd`s so far moved to (`None`:
    /// not known), `.` and `..` resolved as text.
    pub fn joined(&self, path: &str) -> Option<String> {
        if path.starts_with('/') || path.starts_with('~') {
            return Some(normalize(path));
        }
        match &self.dir {
            Dir::Known(d) if d.is_empty() => Some(normalize(path)),
            Dir::Known(d) => Some(normalize(&format!("{d}/{path}"))),
            Dir::Unknown => None,
        }
    }
}

fn redirect_op(kind: &IoFileRedirectKind) -> &'static str {
    match kind {
        IoFileRedirectKind::Append => ">>",
        IoFileRedirectKind::Clobber => ">|",
        IoFileRedirectKind::ReadAndWrite => "<>",
        _ => ">",
    }
}

/// `a/./b/../c` → `a/c`; a leading `..` is kept.
pub(super) fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_string()
    } else {
        joined
    }
}

/// A command's text in one short line for a reason.
pub(super) fn short(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 60 {
        let mut cut: String = one.chars().take(60).collect();
        cut.push('…');
        cut
    } else {
        one
    }
}
