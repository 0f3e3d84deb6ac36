#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks that module dependencies point one way, in the kernel side (rust/)
and in the protocol cores' crate (rust/proto/src).

Every file is a module (rust/proto is left out of the kernel side's tree: it
is checked as a crate of its own); a module depends on another when it names
it through a `crate::`, `self::` or `super::` path (in a `use` or anywhere
else; unit tests under #[cfg(test)] do not count). The check fails when modules depend on each
other in a circle (a strongly connected component of more than one module),
and prints each circle. A circle may only stay while it is listed in KNOWN
below, with the reason and what removes it.

    scripts/check-deps.py [--graph]     --graph prints every module's dependencies
    scripts/check-deps.py --self-test   checks the checker on small made-up trees
"""
import re
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
RUST = TOP / "rust"
PROTO = RUST / "proto" / "src"

# Circles that are known and scheduled to go: frozenset of modules -> why.
KNOWN: dict = {}


def module_of(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["srnic_main"], ["lib"], []):
        return "crate"
    return "::".join(parts)


def modules(root: Path, skip_proto: bool = True) -> dict:
    mods = {}
    for p in sorted(root.rglob("*.rs")):
        if skip_proto and "proto" in p.relative_to(root).parts[:1]:
            continue
        mods[module_of(p, root)] = p
    return mods


def strip_comments(src: str) -> str:
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    # Unit tests sit at the end of a file under #[cfg(test)]; what they import
    # is not a dependency of the module.
    return src.split("#[cfg(test)]", 1)[0]


ANCHOR = r"(crate|self|(?:super::)*super)"


def use_paths(src: str):
    """Every path named in src that starts at `crate::`, `self::` or `super::`,
    as (anchor, path) pairs, `use ...::{...}` trees expanded."""
    out = []

    def expand(anchor: str, prefix: str, tree: str):
        tree = tree.strip()
        # split the top level of a brace list
        depth, cur, items = 0, "", []
        for ch in tree:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += ch
        items.append(cur)
        for it in items:
            it = it.strip()
            if not it:
                continue
            m = re.match(r"^([\w:]*?)(?:::)?\{(.*)\}$", it, re.S)
            if m:
                expand(anchor, prefix + (m.group(1) + "::" if m.group(1) else ""), m.group(2))
            else:
                out.append((anchor, prefix + it.split(" as ")[0].strip()))

    for m in re.finditer(r"use\s+" + ANCHOR + r"::\{(.*?)\};", src, re.S):
        expand(m.group(1), "", m.group(2))
    for m in re.finditer(r"(?<![\w:])" + ANCHOR + r"::((?!super\b)[\w:]+)", src):
        out.append((m.group(1), m.group(2)))
    return out


def resolve(module: str, anchor: str, path: str) -> list:
    """The absolute path (a list of names) that `anchor::path` names in `module`."""
    here = [] if module == "crate" else module.split("::")
    if anchor == "crate":
        base = []
    elif anchor == "self":
        base = here
    else:
        ups = anchor.count("super")
        base = here[:max(len(here) - ups, 0)]
    return base + [x for x in path.split("::") if x and x != "self"]


def deps(mods: dict) -> dict:
    graph = {}
    for name, path in mods.items():
        src = strip_comments(path.read_text())
        targets = set()
        for anchor, p in use_paths(src):
            parts = resolve(name, anchor, p)
            # the longest prefix that is a module
            for n in range(len(parts), 0, -1):
                cand = "::".join(parts[:n])
                if cand in mods:
                    targets.add(cand)
                    break
        # Parents declare their children (`mod x;`) and children may use their
        # parent's items: neither edge counts, nor the crate root or itself.
        graph[name] = {
            t for t in targets
            if t not in (name, "crate")
            and not t.startswith(name + "::") and not name.startswith(t + "::")
        }
    return graph


def circles(graph: dict):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
            if len(comp) > 1:
                out.append(frozenset(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(rust: Path, known: dict, show_graph: bool = False, out=print, proto: bool = False) -> int:
    """Prints the circles of the tree under `rust` (the kernel side, or with
    `proto` the protocol cores' crate); returns the problems found."""
    mods = modules(rust, skip_proto=not proto)
    graph = deps(mods)
    if show_graph:
        for name in sorted(graph):
            out(f"{name}: {' '.join(sorted(graph[name]))}")
    found = circles(graph)
    bad = 0
    for comp in found:
        names = " <-> ".join(sorted(comp))
        if comp in known:
            out(f"deps: known circle (to be removed): {names}: {known[comp]}")
        else:
            out(f"deps: circle: {names}")
            for a in sorted(comp):
                inside = sorted(graph[a] & comp)
                out(f"    {a} uses {', '.join(inside)}")
            bad += 1
    for k in known:
        if k not in found:
            out(f"deps: listed circle no longer exists, remove it from KNOWN: {' <-> '.join(sorted(k))}")
            bad += 1
    label = "rust/proto/src" if proto else "rust"
    out(f"deps: {label}: {len(mods)} modules, {sum(len(v) for v in graph.values())} dependencies, "
        f"{bad} problem{'s' if bad != 1 else ''}")
    return bad


def self_test() -> int:
    """The checker finds a circle, a longer circle and a stale listing, and
    accepts parent/child use and one-way use trees."""
    import shutil
    import tempfile

    made = []

    def tree(files: dict) -> Path:
        d = Path(tempfile.mkdtemp(prefix="check-deps-"))
        made.append(d)
        for name, text in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text)
        return d

    quiet = lambda *_: None
    cases = [
        # (what, files, known, problems expected)
        ("one-way use trees", {
            "srnic_main.rs": "mod a; mod b;",
            "a.rs": "use crate::{b::{self, X}, sys::y};",
            "b.rs": "pub struct X; // crate::a in a comment does not count",
        }, {}, 0),
        ("a parent and its child use each other", {
            "w.rs": "mod c; use crate::w::c::Y;",
            "w/c.rs": "use crate::w::Z; pub struct Y;",
        }, {}, 0),
        ("two modules import each other", {
            "a.rs": "use crate::b::X;",
            "b.rs": "fn f() { crate::a::g(); }",
        }, {}, 1),
        ("a circle of three", {
            "a.rs": "use crate::{b::X};",
            "b.rs": "use crate::c::Y;",
            "c.rs": "use crate::{a::{self}};",
        }, {}, 1),
        ("a listed circle is reported, not failed", {
            "a.rs": "use crate::b::X;",
            "b.rs": "use crate::a::X;",
        }, {frozenset({"a", "b"}): "why"}, 0),
        ("a listed circle that is gone fails", {
            "a.rs": "use crate::b::X;",
            "b.rs": "",
        }, {frozenset({"a", "b"}): "why"}, 1),
    ]
    failed = 0
    proto_cases = [
        ("super:: paths in a crate of its own", {
            "lib.rs": "pub mod a; pub mod b; pub mod m;",
            "a.rs": "use super::b::X;",
            "b.rs": "pub struct X;",
            "m.rs": "pub mod t;",
            "m/t.rs": "use super::super::{a::Y, b}; use super::Z;",
        }, {}, 0),
        ("super:: paths that make a circle", {
            "lib.rs": "pub mod a; pub mod m;",
            "a.rs": "fn f() { super::m::t::g(); }",
            "m.rs": "pub mod t;",
            "m/t.rs": "use super::super::a::Y;",
        }, {}, 1),
        ("a unit test's imports do not count", {
            "lib.rs": "pub mod a; pub mod b;",
            "a.rs": "use super::b::X;",
            "b.rs": "pub struct X;\n#[cfg(test)]\nmod tests { use super::super::a::Y; }",
        }, {}, 0),
    ]
    runs = [c + (False,) for c in cases] + [c + (True,) for c in proto_cases]
    for what, files, known, want, proto in runs:
        got = check(tree(files), known, out=quiet, proto=proto)
        ok = got == want
        failed += not ok
        print(f"deps self-test: {'ok' if ok else 'FAILED'}: {what} ({got} problems, want {want})")
    for d in made:
        shutil.rmtree(d)
    return 1 if failed else 0


def main() -> int:
    if "--self-test" in sys.argv[1:]:
        return self_test()
    graph = "--graph" in sys.argv[1:]
    bad = check(RUST, KNOWN, graph)
    bad += check(PROTO, {}, graph, proto=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
