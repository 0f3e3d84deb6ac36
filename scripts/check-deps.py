#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks that the kernel side's module dependencies point one way.

Every file of rust/ (but the protocol cores in rust/proto, a crate of their
own) is a module; a module depends on another when it names it through
`crate::` (in a `use` or a path). The check fails when modules depend on each
other in a circle (a strongly connected component of more than one module),
and prints each circle. A circle may only stay while it is listed in KNOWN
below, with the reason and what removes it.

    scripts/check-deps.py [--graph]     --graph prints every module's dependencies
"""
import re
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
RUST = TOP / "rust"

# Circles that are known and scheduled to go: frozenset of modules -> why.
KNOWN = {
    frozenset({"verbs::qp", "iwarp::cm"}): (
        "the QP runs its connection's start-up job (qp.rs's cm work item) and "
        "reports MPA flags with cm's helpers; the connection state machine of the "
        "redesign (issue 12) moves the start-up into iwarp/ and removes it"
    ),
}


def module_of(path: Path) -> str:
    rel = path.relative_to(RUST).with_suffix("")
    parts = list(rel.parts)
    if parts == ["srnic_main"]:
        return "crate"
    return "::".join(parts)


def modules() -> dict:
    mods = {}
    for p in sorted(RUST.rglob("*.rs")):
        if "proto" in p.relative_to(RUST).parts[:1]:
            continue
        mods[module_of(p)] = p
    return mods


def strip_comments(src: str) -> str:
    src = re.sub(r"//[^\n]*", "", src)
    return re.sub(r"/\*.*?\*/", "", src, flags=re.S)


def use_paths(src: str):
    """Every `crate::a::b...` path named in src, `use crate::{...}` trees expanded."""
    out = []

    def expand(prefix: str, tree: str):
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
                expand(prefix + (m.group(1) + "::" if m.group(1) else ""), m.group(2))
            else:
                out.append(prefix + it.split(" as ")[0].strip())

    for m in re.finditer(r"use\s+crate::\{(.*?)\};", src, re.S):
        expand("", m.group(1))
    for m in re.finditer(r"crate::([\w:]+)", src):
        out.append(m.group(1))
    return out


def deps(mods: dict) -> dict:
    graph = {}
    for name, path in mods.items():
        src = strip_comments(path.read_text())
        targets = set()
        for p in use_paths(src):
            parts = [x for x in p.split("::") if x and x != "self"]
            # the longest prefix that is a module
            for n in range(len(parts), 0, -1):
                cand = "::".join(parts[:n])
                if cand in mods:
                    if cand != name:
                        targets.add(cand)
                    break
        graph[name] = targets
    # a module's parent (the file that declares it) is not a dependency of it
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


def main() -> int:
    mods = modules()
    graph = deps(mods)
    # Parents declare their children (`mod x;`), children may use their
    # parent's items: neither edge counts.
    for name in graph:
        graph[name] = {
            t for t in graph[name]
            if not t.startswith(name + "::") and not name.startswith(t + "::") and t != "crate"
        }
    if "--graph" in sys.argv[1:]:
        for name in sorted(graph):
            print(f"{name}: {' '.join(sorted(graph[name]))}")
    bad = 0
    for comp in circles(graph):
        names = " <-> ".join(sorted(comp))
        if comp in KNOWN:
            print(f"deps: known circle (to be removed): {names}: {KNOWN[comp]}")
        else:
            print(f"deps: circle: {names}")
            for a in sorted(comp):
                inside = sorted(graph[a] & comp)
                print(f"    {a} uses {', '.join(inside)}")
            bad += 1
    stale = [k for k in KNOWN if k not in circles(graph)]
    for k in stale:
        print(f"deps: listed circle no longer exists, remove it from KNOWN: {' <-> '.join(sorted(k))}")
        bad += 1
    print(f"deps: {len(mods)} modules, {sum(len(v) for v in graph.values())} dependencies, "
          f"{bad} problem{'s' if bad != 1 else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
