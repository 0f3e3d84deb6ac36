#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise the guests' function profiles of `make bench PROFILE=self|total`.

    scripts/bench-profile.py FILES_DIR OUT_DIR [--top N]
    scripts/bench-profile.py --self-test      (make check-host)

FILES_DIR holds the profile-REP-TEST-SIZE-SYSTEM.txt files the benchmark's
profiled runs exported (tests/vm/guest/bench.sh, profile_run): a header line
"# TEST SIZE ITERS SYSTEM", then "SIDE FUNCTION CALLS MICROSECONDS" per
function, SIDE a (the perftest client) or b (its server). Writes
OUT_DIR/profile.md, also printed: for each run, each VM's traced kernel time
per iteration and its top functions by time, with calls per iteration (exact,
whatever the profiler's own cost) and microseconds per iteration (inflated by
the profiler: compare them only within one run). Rust symbols are demangled
with llvm-cxxfilt where it is installed.
"""

import argparse
import collections
import pathlib
import shutil
import subprocess
import sys


def demangle(names):
    """The demangled form of each name (itself where no demangler is found)."""
    tool = shutil.which("llvm-cxxfilt-19") or shutil.which("llvm-cxxfilt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, check=True)
    return dict(zip(names, out.stdout.splitlines()))


def load(path):
    """(header fields, {side: {function: (calls, microseconds)}}) of one file."""
    head, sides = None, collections.defaultdict(dict)
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            head = line[2:].split()
            continue
        f = line.split()
        if len(f) != 4:
            continue
        sides[f[0]][f[1]] = (int(f[2]), float(f[3]))
    if not head or len(head) != 4:
        raise SystemExit(f"{path}: no header line '# TEST SIZE ITERS SYSTEM'")
    return head, sides


def report(files, top):
    """The profile.md text of the profiles in directory `files` ("" if none)."""
    paths = sorted(pathlib.Path(files).glob("profile-*.txt"))
    if not paths:
        return ""
    runs = [(p.name, *load(p)) for p in paths]
    names = sorted({fn for _, _, sides in runs for s in sides.values() for fn in s})
    pretty = demangle(names)
    lines = ["# Guest kernel profiles (ftrace function profiler)", ""]
    lines.append("Per iteration of the perftest loop; microseconds are the profiler's "
                 "(inflated by its own cost: compare within one run), calls are exact. "
                 "Side a runs the client, b the server.")
    for name, (test, size, iters, system), sides in runs:
        n = max(int(iters), 1)
        lines += ["", f"## {test} {size} B, {system} ({name})"]
        for side in sorted(sides):
            funcs = sides[side]
            total = sum(us for _, us in funcs.values())
            calls = sum(c for c, _ in funcs.values())
            lines += ["", f"VM {side}: {total / n:.1f} us and {calls / n:.0f} calls per iteration "
                      f"in {len(funcs)} functions", "",
                      "| function | calls/iter | us/iter | share |", "|---|---:|---:|---:|"]
            for fn, (c, us) in sorted(funcs.items(), key=lambda kv: -kv[1][1])[:top]:
                share = 100 * us / total if total else 0
                lines.append(f"| `{pretty.get(fn, fn)}` | {c / n:.2f} | {us / n:.2f} | {share:.1f} % |")
    return "\n".join(lines) + "\n"


def self_test():
    """Checks report() on a made-up profile; exits non-zero on a mismatch."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        pathlib.Path(d, "profile-1-send_lat-4-srnic.txt").write_text(
            "# send_lat 4 100 srnic\n"
            "a tcp_sendmsg 200 500.000\n"
            "a _RNvMs_NtCs4fqI2P2rA04_5srnic2qpNtB4_2Qp7rx_read 100 1500.000\n"
            "b tcp_recvmsg 50 10.000\n"
            "garbage line\n")
        text = report(d, 1)
    want = ["## send_lat 4 B, srnic (profile-1-send_lat-4-srnic.txt)",
            "VM a: 20.0 us and 3 calls per iteration in 2 functions",
            "| 1.00 | 15.00 | 75.0 % |",
            "VM b: 0.1 us and 0 calls per iteration in 1 functions",
            "| `tcp_recvmsg` | 0.50 | 0.10 | 100.0 % |"]
    missing = [w for w in want if w not in text]
    if "tcp_sendmsg" in text:
        missing.append("(--top 1 kept a second function)")
    if shutil.which("llvm-cxxfilt-19") and "<srnic::qp::Qp>::rx_read" not in text:
        missing.append("(the Rust symbol was not demangled)")
    if missing:
        print(text)
        print("bench-profile self-test: missing " + "; ".join(missing), file=sys.stderr)
        return 1
    print("bench-profile self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files")
    ap.add_argument("out")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    text = report(a.files, a.top)
    if not text:
        print("bench-profile: no profile files", file=sys.stderr)
        return 0
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "profile.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
