#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sampling profiler for the test VMs, from the host, through QEMU's gdb stub.

    scripts/vm-sample.py --port PORT --log LOG --out RAW [--interval S]
    scripts/vm-sample.py --report RAW --kallsyms SYMS [--title T] [--top N]
    scripts/vm-sample.py --self-test      (make check-host)

Sampling: every INTERVAL seconds of host time (default 0.01) it stops the
VM, reads each vCPU's instruction pointer and the words at the top of its
kernel stack, and lets it run again. Rust code, which ftrace's function
profiler does not see, is sampled like any other function, and no function
pays for being called often. Samples are taken only between a console line
containing "SAMPLE-START LABEL" and one containing "SAMPLE-STOP" (the guest's
bench.sh prints them around the runs it has sampled, sample_run); each such
stretch is a window. It ends when LOG shows "SRNIC-VM-DONE", the stub goes
away, or on SIGTERM. RAW gets "# window N LABEL" per window and a line
"N CPU RIP WORD..." per vCPU and sample (the words: those that could be
kernel addresses).

Report: SYMS is the kernel's System.map followed by the guest's module lines
of /proc/kallsyms. Per window, the functions under the instruction pointers
(self: where the vCPU was) and the kernel functions whose addresses appear
among the stack words (on stack: a guess, like the kernel's own "guess"
unwinder, so callers and stale return addresses alike), as markdown.
Stopping a VM stops its virtual clock, but not the other VM's: figures of a
sampled run are not comparable with an unsampled one's.
"""

import argparse
import bisect
import collections
import importlib.util
import pathlib
import shutil
import signal
import socket
import sys
import time

STACK_WORDS = 48
REG_RSP, REG_RIP = 7, 16  # gdb's x86-64 register numbers


class Stub:
    """A connection to QEMU's gdb stub (remote serial protocol, no acks)."""

    def __init__(self, port, wait_s=60):
        deadline = time.time() + wait_s
        while True:
            try:
                self.s = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        self.buf = b""
        self.ack = True
        self.cmd("QStartNoAckMode")
        self.ack = False

    def _packet(self):
        while True:
            i = self.buf.find(b"$")
            j = self.buf.find(b"#", i + 1) if i >= 0 else -1
            if i >= 0 and j >= 0 and len(self.buf) >= j + 3:
                data = self.buf[i + 1:j]
                self.buf = self.buf[j + 3:]
                if self.ack:
                    self.s.sendall(b"+")
                return data.decode()
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("the gdb stub closed")
            self.buf += chunk

    def send(self, data):
        self.s.sendall(b"$%s#%02x" % (data.encode(), sum(data.encode()) % 256))

    def cmd(self, data):
        self.send(data)
        return self._packet()

    def stop(self):
        self.s.sendall(b"\x03")
        return self._packet()

    def threads(self):
        out, r = [], self.cmd("qfThreadInfo")
        while r.startswith("m"):
            out += r[1:].split(",")
            r = self.cmd("qsThreadInfo")
        return out

    def reg64(self, num):
        return int.from_bytes(bytes.fromhex(self.cmd("p%x" % num)[:16]), "little")

    def words(self, addr, n):
        r = self.cmd("m%x,%x" % (addr, 8 * n))
        if r.startswith("E") or len(r) < 16:
            return []
        raw = bytes.fromhex(r)
        return [int.from_bytes(raw[k:k + 8], "little") for k in range(0, len(raw) - 7, 8)]


def sample(args):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    stub = Stub(args.port)
    stub.cmd("?")  # QEMU stops the VM when a debugger attaches
    tids = stub.threads()
    stub.send("c")
    pos, win, running, n = 0, 0, False, 0
    with open(args.out, "w") as out:
        try:
            while True:
                time.sleep(args.interval)
                try:
                    with open(args.log, "rb") as f:
                        f.seek(pos)
                        new = f.read()
                except FileNotFoundError:
                    new = b""
                pos += len(new)
                for line in new.decode(errors="replace").splitlines():
                    if "SAMPLE-START" in line:
                        running, win = True, win + 1
                        out.write("# window %d %s\n" % (win, line.split("SAMPLE-START", 1)[1].strip()))
                    elif "SAMPLE-STOP" in line:
                        running = False
                    elif "SRNIC-VM-DONE" in line:
                        return
                if not running:
                    continue
                stub.stop()
                for cpu, t in enumerate(tids):
                    stub.cmd("Hg" + t)
                    rip, rsp = stub.reg64(REG_RIP), stub.reg64(REG_RSP)
                    words = stub.words(rsp, STACK_WORDS) if rip >> 63 else []
                    out.write("%d %d %x %s\n" % (win, cpu, rip, " ".join("%x" % w for w in words if w >> 63)))
                n += 1
                stub.send("c")
        except (EOFError, OSError):
            pass
        finally:
            print("vm-sample: %d samples of %d vCPUs in %d windows" % (n, len(tids), win), file=sys.stderr)


def load_demangle():
    """bench-profile.py's demangle(): one way to demangle for both reports."""
    path = pathlib.Path(__file__).with_name("bench-profile.py")
    spec = importlib.util.spec_from_file_location("bench_profile", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.demangle


def symbols(lines):
    """Sorted (address, name) of the text symbols in System.map/kallsyms lines."""
    syms = []
    for line in lines:
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            try:
                syms.append((int(f[0], 16), f[2]))
            except ValueError:
                pass
    syms.sort()
    return syms


def report(raw_lines, sym_lines, title, top):
    syms = symbols(sym_lines)
    addrs = [a for a, _ in syms]

    def name(a):
        if a >> 63 == 0:
            return "(user space)"
        i = bisect.bisect_right(addrs, a) - 1
        return syms[i][1] if i >= 0 else "(unknown)"

    labels, self_n, seen_n, total = {}, {}, {}, collections.Counter()
    for line in raw_lines:
        if line.startswith("# window "):
            f = line.split(None, 3)
            labels[f[2]] = f[3] if len(f) > 3 else ""
            continue
        f = line.split()
        if len(f) < 3:
            continue
        w = f[0]
        total[w] += 1
        me = name(int(f[2], 16))
        self_n.setdefault(w, collections.Counter())[me] += 1
        for fn in {me} | {name(int(x, 16)) for x in f[3:]}:
            seen_n.setdefault(w, collections.Counter())[fn] += 1
    names = sorted({fn for c in list(self_n.values()) + list(seen_n.values()) for fn in c})
    pretty = load_demangle()(names)
    out = []
    for w in sorted(total, key=int):
        n = total[w]
        out.append("## %s: %s (%d samples)\n" % (title, labels.get(w, "window " + w), n))
        out.append("| self | on stack | function |")
        out.append("|---|---|---|")
        for fn, c in self_n[w].most_common(top):
            out.append("| %.1f %% | %.1f %% | `%s` |" % (100.0 * c / n, 100.0 * seen_n[w][fn] / n, pretty[fn]))
        out.append("")
        out.append("On the stack most often (callers, by the guess above):\n")
        out.append("| on stack | function |")
        out.append("|---|---|")
        for fn, c in seen_n[w].most_common(top):
            out.append("| %.1f %% | `%s` |" % (100.0 * c / n, pretty[fn]))
        out.append("")
    return "\n".join(out)


def self_test():
    """Checks report() on made-up samples; exits non-zero on a mismatch."""
    sym_lines = ["ffffffff81000000 T default_idle", "ffffffff81000100 T memcpy",
                 "ffffffff81000200 t tcp_read_sock",
                 "ffffffffa0001000 t _RNvMs_NtCs4fqI2P2rA04_5srnic2qpNtB4_2Qp7rx_read\t[srnic]"]
    raw = ["# window 1 1-write_bw-65536-srnic",
           "1 0 ffffffff81000110 ffffffffa0001010 ffffffff81000210",
           "1 0 ffffffff81000110 ffffffffa0001010",
           "1 0 ffffffff81000004",
           "1 0 7f0000001000",
           "# window 2 1-write_bw-65536-tcp",
           "2 0 ffffffff81000004"]
    text = report(raw, sym_lines, "VM b", 2)
    want = ["## VM b: 1-write_bw-65536-srnic (4 samples)",
            "| 50.0 % | 50.0 % | `memcpy` |",
            "## VM b: 1-write_bw-65536-tcp (1 samples)",
            "| 100.0 % | 100.0 % | `default_idle` |"]
    missing = [w for w in want if w not in text]
    if "(user space)" in text.split("On the stack")[0]:
        missing.append("(--top 2 kept a third function)")
    if shutil.which("llvm-cxxfilt-19") and "<srnic::qp::Qp>::rx_read" not in text:
        missing.append("(the Rust symbol was not demangled)")
    if missing:
        print(text)
        print("vm-sample self-test: missing " + "; ".join(missing), file=sys.stderr)
        return 1
    print("vm-sample self-test: ok")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, help="the VM's gdb stub on 127.0.0.1")
    p.add_argument("--log", help="the console log the markers appear in")
    p.add_argument("--out", help="where the raw samples go")
    p.add_argument("--interval", type=float, default=0.01, help="seconds between samples")
    p.add_argument("--report", metavar="RAW", help="summarise RAW instead of sampling")
    p.add_argument("--kallsyms", metavar="SYMS", help="System.map and the modules' kallsyms lines")
    p.add_argument("--title", default="VM", help="the report's heading")
    p.add_argument("--top", type=int, default=25, help="functions per window")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args()
    if args.self_test:
        return self_test()
    if args.report:
        with open(args.report) as raw, open(args.kallsyms) as syms:
            print(report(raw.read().splitlines(), syms.read().splitlines(), args.title, args.top))
        return 0
    if not (args.port and args.log and args.out):
        p.error("sampling needs --port, --log and --out")
    sample(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
