#!/usr/bin/env python3
"""File-level import cycles of a Rust crate's modules, and how the code is spread.

    scripts/module-cycles.py crates/core/src [server/src app/src/api …]

For each source root: every `.rs` file is a module (`a/b.rs` and `a/b/mod.rs`
are `crate::a::b`). A file depends on another when it names it by a path
(`crate::a::b`, `super::x`, `self::y` in `use` lines or in code) — the
longest path prefix that is a module file counts. Prints the strongly
connected components of that graph that hold more than one file (each is a
set of files that reach each other through such paths: an import cycle),
their count and size, the number of files with an `impl Harness` block
(`impl crate::Harness` too), and the services: the types holding only
`h: &Harness` (`Harness::<service>()` hands one out) and the files with an
`impl` block of one of them.

A root below a crate's `src` (like `app/src/api`) is read as that crate's
module at that path: only the edges between its own files count.
"""

import os
import re
import sys
from collections import defaultdict

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
SERVICE = re.compile(r"^pub struct (\w+)<'h> \{\s*pub\(crate\) h: &'h (?:crate::)?Harness,\s*\}", re.M)
SERVICE_IMPL = re.compile(r"^impl (\w+)<'_> \{", re.M)
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\}", re.S)


def crate_src(root):
    """The crate's `src` directory above `root` and the module path of `root`."""
    parts = os.path.normpath(root).split(os.sep)
    if "src" not in parts:
        sys.exit(f"module-cycles: {root} is not inside a crate's src/")
    i = len(parts) - 1 - parts[::-1].index("src")
    src = os.sep.join(parts[: i + 1])
    return src, parts[i + 1 :]


def module_of(src, path):
    rel = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def targets(module, text, is_dir_module):
    """Module paths (tuples) named in `text` of the file of `module`."""
    here = module if is_dir_module else module[:-1]

    def resolve(head, rest):
        if head == "crate":
            return tuple(rest)
        base = list(here)
        if head == "super":
            base = base[:-1]
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
        return tuple(base + rest)

    out = []
    for m in PATH.finditer(text):
        out.append(resolve(m.group(1), [p for p in m.group(2).split("::") if p]))
    for m in USE_GROUP.finditer(text):
        prefix = [p for p in m.group(2).split("::") if p]
        for item in re.split(r",", m.group(3)):
            item = item.strip().split(" as ")[0].strip()
            names = [p for p in item.split("::") if p and p != "{"]
            if names and re.match(r"^[A-Za-z_]", names[0]):
                out.append(resolve(m.group(1), prefix + names))
    return out


def scc(graph):
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    sys.setrecursionlimit(100000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return comps


def report(root):
    src, below = crate_src(root)
    files = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                files[module_of(src, path)] = path
    below = tuple(below)
    graph = defaultdict(set)
    impl_harness = 0
    texts = {}
    for module, path in files.items():
        with open(path, encoding="utf-8") as f:
            texts[module] = f.read()
    services = set()
    for text in texts.values():
        services.update(SERVICE.findall(text))
    impl_service = 0
    for module, path in files.items():
        text = texts[module]
        if re.search(r"^impl(?:<[^>]*>)?\s+(?:crate::)?Harness\b", text, re.M):
            impl_harness += 1
        if any(name in services for name in SERVICE_IMPL.findall(text)):
            impl_service += 1
        is_dir = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
        graph[module]
        for target in targets(module, strip_comments(text), is_dir):
            # The longest prefix that is a file of this root.
            for n in range(len(target), 0, -1):
                if target[:n] in files and target[:n] != module:
                    if target[: len(below)] == below:
                        graph[module].add(target[:n])
                    break
    cycles = [sorted(c) for c in scc(graph) if len(c) > 1]
    cycles.sort(key=len, reverse=True)
    edges = sum(len(v) for v in graph.values())
    print(f"{root}: {len(files)} files, {edges} file-to-file paths, "
          f"{len(cycles)} import cycle(s) holding {sum(map(len, cycles))} files, "
          f"{impl_harness} file(s) with `impl Harness`, "
          f"{len(services)} service(s) with {impl_service} file(s) of their `impl`")
    for c in cycles:
        shown = ", ".join("::".join(m) or "(root)" for m in c[:12])
        more = f", … {len(c) - 12} more" if len(c) > 12 else ""
        print(f"  cycle of {len(c)}: {shown}{more}")


def main():
    roots = sys.argv[1:] or ["crates/core/src"]
    for root in roots:
        report(root)


if __name__ == "__main__":
    main()
