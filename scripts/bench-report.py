#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of `make bench` (Documentation/srnic/performance.rst).

    scripts/bench-report.py SAMPLES.csv OUTDIR [--clock CLOCK] [--title TEXT]

SAMPLES.csv is what tests/vm/guest/bench.sh recorded: one line per run,
``rep,test,size,system,value,unit,frames,frames_lost,cpu_a_s,cpu_b_s,ctxt_a,ctxt_b,bytes``
(older samples end at frames_lost: the report has no CPU tables for them).
Writes into OUTDIR:

- ``table.md``: per row (test and message size) the median of every system,
  and the ratios srnic/siw, srnic-crc/siw and srnic/tcp, each the median of
  the ratios paired within one repetition (the systems of one repetition ran
  one after the other); the issue's goals where a row has one; for the
  bandwidth and message-rate rows, the sending and the receiving VM's CPU
  time per GiB moved and context switches per MiB, with the ratios
  srnic/siw and srnic-crc/siw of the receiver's CPU time; the virtual
  link's frame losses per system; the guest clock against the host's;
- the many-QPs rows, when the samples have them: qp_fair's aggregate RDMA
  WRITE bandwidth of N QPs at once per system, its ratio to the same
  system's 1-QP run and to siw, and the slowest QP's share of it as a
  fraction of the fair share, with the issue's goals at 256 QPs; the kernel
  memory per idle QP on each VM, srnic against siw;
- the RMPP rows (rmpp_bw, rmpp_rate), when the samples have them: srnic's
  RMPP against a raw AF_PACKET program moving the same bytes, MiB/s of 1 MiB
  messages and millions of 64-byte messages per second, their paired ratio
  (with the issue's goal on bandwidth), and each system's CPU time per GiB
  or per message on both VMs;
- the RMPP-under-loss rows (rmpp_loss, rmpp_resent, rmpp_p99), when the
  samples have them: per loss rate, RMPP's MiB/s, bytes sent again per byte
  lost and 99th-percentile completion time with each receiver-driven
  recovery (nak-off, nak-go-back, nak-selective), and the paired ratios of
  the NAK settings to nak-off;
- the VMTP transaction rows (vmtp_lat), when the samples have them: the
  median round trip of an echo transaction of each size on VMTP, RMPP
  (pingpong) and TCP (ping-pong), and the paired ratios vmtp/rmpp and
  vmtp/tcp;
- the block rows, when the samples have them: fio's IOPS or MiB/s on
  srnic_blk, NBD, NVMe over TCP and NVMe over RDMA (siw), and the ratios
  srnic_blk/each, paired the same way;
- ``bandwidth.png`` (with gnuplot, when it is installed): bandwidth against
  message size for every system and operation.

Prints the table. Exits 1 when the samples are incomplete (a row without a
figure for a system that ran it).
"""

import argparse
import csv
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

# Column order of the systems, and which plain-TCP test a row is compared with.
SYSTEMS = ["srnic", "srnic-crc", "siw", "rxe", "tcp"]
TCP_REF = {
    "write_bw": "stream",
    "read_bw": "stream",
    "send_bw": "stream",
    "write_rate": "stream_rate",
    "send_rate": "stream_rate",
    "write_lat": "pingpong",
    "send_lat": "pingpong",
}
ROW_ORDER = [
    "write_bw",
    "read_bw",
    "send_bw",
    "write_rate",
    "send_rate",
    "write_lat",
    "send_lat",
    "read_lat",
]
# The rows whose runs move data one way, for the CPU tables (and TCP's), and
# those of them where VM b (the server) sends and VM a receives; in the
# others VM a (the client) sends.
MOVE_ROWS = ["write_bw", "read_bw", "send_bw", "write_rate", "send_rate", "stream", "stream_rate", "qps"]
B_SENDS = {"read_bw"}
# The RMPP row: srnic's RMPP against a raw AF_PACKET program, and the
# performance issue's goal, RMPP at least 0.8 of the raw link's bandwidth.
RMPP_SYSTEMS = ["rmpp", "af_packet"]
# The RMPP-under-loss rows: the recovery settings, the rows in order with
# what each measures.
LOSS_SYSTEMS = ["nak-off", "nak-go-back", "nak-selective"]
LOSS_ROWS = {
    "rmpp_loss": "MiB/s (higher is better)",
    "rmpp_resent": "bytes resent per byte lost (lower is better)",
    "rmpp_p99": "99th percentile of the completion times, ms (lower is better)",
}
RMPP_GOALS = [("rmpp/af_packet", 0.8, "min")]
# The VMTP transaction rows: the systems in column order.
VMTP_SYSTEMS = ["vmtp", "rmpp", "tcp"]
# The block rows (fio on each remote block device): systems and row order.
BLK_SYSTEMS = ["srnic_blk", "nbd", "nvme-tcp", "nvme-rdma"]
BLK_ROW_ORDER = ["blk_randread", "blk_randwrite", "blk_read", "blk_write"]
# The kernel-client issue's goals for every block row: srnic_blk at least
# NBD and NVMe over siw, and at least 0.8 of NVMe over TCP.
BLK_GOALS = [("srnic_blk/nbd", 1.0, "min"), ("srnic_blk/nvme-rdma", 1.0, "min"), ("srnic_blk/nvme-tcp", 0.8, "min")]
# The main table's ratios: name -> (system, the system it is compared with).
RATIOS = {
    "srnic/siw": ("srnic", "siw"),
    "srnic-crc/siw": ("srnic-crc", "siw"),
    "srnic/rxe": ("srnic", "rxe"),
    "srnic/tcp": ("srnic", "tcp"),
}
# The goals of the performance issue that a row of this benchmark can check:
# (test, size) -> [(ratio name, bound, "min" or "max")].
GOALS = {
    ("write_bw", 65536): [("srnic/siw", 1.25, "min"), ("srnic/rxe", 1.0, "min"), ("srnic/tcp", 0.9, "min")],
    ("read_bw", 65536): [("srnic/siw", 1.25, "min"), ("srnic/rxe", 1.0, "min"), ("srnic/tcp", 0.9, "min")],
    ("send_bw", 65536): [("srnic/siw", 1.25, "min"), ("srnic/rxe", 1.0, "min"), ("srnic/tcp", 0.9, "min")],
    ("write_lat", 4): [("srnic/siw", 0.9, "max"), ("srnic/rxe", 1.0, "max")],
    ("send_lat", 4): [("srnic/siw", 0.9, "max"), ("srnic/rxe", 1.0, "max")],
}
# The many-QPs rows (qp_fair; their size is the number of QPs): the systems,
# and the performance issue's goals, at 256 QPs: the aggregate at least 0.9
# of one QP's, the slowest QP at least half its fair share.
QPS_SYSTEMS = ["srnic", "srnic-crc", "siw", "tcp"]
QPS_GOALS = {256: [("srnic vs 1 QP", 0.9, "min"), ("srnic fairness", 0.5, "min")]}
# The idle-memory rows (KiB per idle QP on VM a, the client, and VM b, the
# server): the systems, and the goal, srnic at most siw's on both.
IDLE_SYSTEMS = ["srnic", "siw"]
IDLE_GOALS = [("srnic/siw a", 1.0, "max"), ("srnic/siw b", 1.0, "max")]
# The performance issue's goal for CPU time: the receiver's CPU time per GiB
# at most siw's, on the 64 KiB rows (the ratio names of the CPU table).
CPU_GOALS = {
    ("write_bw", 65536): [("rx srnic/siw", 1.0, "max")],
    ("read_bw", 65536): [("rx srnic/siw", 1.0, "max")],
    ("send_bw", 65536): [("rx srnic/siw", 1.0, "max")],
}
# The CPU tables' measures: name -> (sending VM?, CPU time or context
# switches, bytes per unit moved).
CPU_MEASURES = {
    "tx_cpu": (True, "cpu", 1 << 30),
    "rx_cpu": (False, "cpu", 1 << 30),
    "tx_ctxt": (True, "ctxt", 1 << 20),
    "rx_ctxt": (False, "ctxt", 1 << 20),
}


def optional(r, key, conv):
    """A column that older samples lack, or that is empty (None then)."""
    v = r.get(key)
    if v is None or v == "":
        return None
    try:
        return conv(v)
    except ValueError:
        return None


def load(path):
    rows, failed = [], []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["unit"] == "failed":
                failed.append(f"rep {r['rep']}: {r['test']} {r['size']} on {r['system']}")
                continue
            rows.append(
                {
                    "rep": int(r["rep"]),
                    "test": r["test"],
                    "size": int(r["size"]),
                    "system": r["system"],
                    "value": float(r["value"]),
                    "unit": r["unit"],
                    "frames": int(r["frames"]),
                    "lost": int(r["frames_lost"]),
                    "cpu_a": optional(r, "cpu_a_s", float),
                    "cpu_b": optional(r, "cpu_b_s", float),
                    "ctxt_a": optional(r, "ctxt_a", int),
                    "ctxt_b": optional(r, "ctxt_b", int),
                    "bytes": optional(r, "bytes", int),
                }
            )
    return rows, failed


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def size_name(n, test=None):
    if test == "qps":
        return f"{n} QP" if n == 1 else f"{n} QPs"
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def paired_ratio(samples, a, b):
    """Median over repetitions of a/b, both measured in the same repetition."""
    ratios = [
        samples[a][rep] / samples[b][rep]
        for rep in samples.get(a, {})
        if rep in samples.get(b, {}) and samples[b][rep] > 0
    ]
    return statistics.median(ratios) if ratios else None


def goal_text(ratios, goals):
    """The goals of one row, each met or not by its ratio."""
    parts = []
    for name, bound, kind in goals:
        v = ratios.get(name)
        ok = v is not None and (v >= bound if kind == "min" else v <= bound)
        verdict = "no figure" if v is None else "met" if ok else "not met"
        parts.append(f"{name} {'≥' if kind == 'min' else '≤'} {bound}: {verdict}")
    return "; ".join(parts)


def md_head(head):
    """A markdown table's header and rule."""
    return ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]


def md_row(cells):
    return "| " + " | ".join(cells) + " |"


def row_medians(d, test, size, required, incomplete):
    """system -> median of one row's samples d (None for none), noting in
    incomplete each of the required systems that has no figure."""
    for s in required:
        if not d.get(s):
            incomplete.append(f"{test} {size}: no {s} figure")
    return {s: statistics.median(v.values()) if v else None for s, v in d.items()}


def with_tcp(data, test, size):
    """system -> rep -> value of a row, with TCP's figures of its TCP row."""
    d = dict(data[(test, size)])
    ref = TCP_REF.get(test)
    if ref is not None:
        ref_key = (ref, 4 if ref == "pingpong" else size)
        if ref_key in data and "tcp" in data[ref_key]:
            d["tcp"] = data[ref_key]["tcp"]
    return d


def cpu_measures(rows):
    """measure -> (test, size) -> system -> rep -> CPU-seconds per GiB or
    context switches per MiB of the sending or the receiving VM."""
    m = {name: defaultdict(lambda: defaultdict(dict)) for name in CPU_MEASURES}
    for r in rows:
        if r["test"] not in MOVE_ROWS or not r["bytes"]:
            continue
        if None in (r["cpu_a"], r["cpu_b"], r["ctxt_a"], r["ctxt_b"]):
            continue
        for name, (sender, what, per) in CPU_MEASURES.items():
            on_a = sender != (r["test"] in B_SENDS)
            v = r[f"{what}_a" if on_a else f"{what}_b"]
            m[name][(r["test"], r["size"])][r["system"]][r["rep"]] = v * per / r["bytes"]
    return m


def blk_cpu_table(rows, keys):
    """Microseconds of each VM's CPU per request of the block rows (VM a
    runs fio and the client, VM b the server): one request is one block."""
    per = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for r in rows:
        if r["test"] not in BLK_ROW_ORDER or not r["bytes"] or None in (r["cpu_a"], r["cpu_b"]):
            continue
        reqs = r["bytes"] / r["size"]
        for side, v in (("client", r["cpu_a"]), ("server", r["cpu_b"]), ("both", r["cpu_a"] + r["cpu_b"])):
            per[(r["test"], r["size"])][side][r["system"]][r["rep"]] = v * 1e6 / reqs
    keys = [k for k in keys if per.get(k)]
    if not keys:
        return []
    out = [
        "Guest CPU per request of the block rows, in microseconds (one request is "
        "one block): VM a's (fio and the client) and VM b's (the server), from "
        "/proc/stat just before and after fio (user, nice, system, irq and softirq "
        "time of all CPUs). Medians (lower is better); both srnic_blk/nvme-tcp is "
        "the median of the paired ratios of the two VMs' time added up "
        "(Documentation/srnic/performance.rst, \"Guest CPU per request\").",
        "",
    ]
    head = ["row", "block"] + [f"{s} {side}" for side in ("client", "server") for s in BLK_SYSTEMS]
    head.append("both srnic_blk/nvme-tcp")
    out += md_head(head)
    for test, size in keys:
        cells = [test, size_name(size)]
        for side in ("client", "server"):
            d = per[(test, size)][side]
            cells += [fmt(statistics.median(d[s].values())) if d.get(s) else "-" for s in BLK_SYSTEMS]
        cells.append(fmt(paired_ratio(per[(test, size)]["both"], "srnic_blk", "nvme-tcp")))
        out.append(md_row(cells))
    out.append("")
    return out


def cpu_tables(rows, keys):
    """The CPU tables of the bandwidth and message-rate rows among keys (none
    when the samples have no CPU columns)."""
    m = cpu_measures(rows)
    keys = [k for k in keys if k[0] in MOVE_ROWS and m["rx_cpu"].get(k)]
    if not keys:
        return []
    out = [
        "CPU time and context switches of the bandwidth, message-rate and many-QPs "
        "rows, per system on the sending VM (tx: VM a, VM b for read_bw) and on the receiving "
        "one (rx), from /proc/stat just before the client started (the server "
        "listening) to just after it ended: all CPUs' user, nice, system, irq and "
        "softirq time, so the programs' own set-up (connection, memory "
        "registration; for qps, setting up and tearing down every QP's connection) "
        "is in it too. Medians (lower is better); rx srnic/siw and "
        "rx srnic-crc/siw are the medians of the receiver's paired ratios.",
        "",
    ]
    cols = [f"{s} tx" for s in SYSTEMS] + [f"{s} rx" for s in SYSTEMS]
    for title, tx, rx, ratios_too in (
        ("CPU-seconds per GiB moved", "tx_cpu", "rx_cpu", True),
        ("Context switches per MiB moved", "tx_ctxt", "rx_ctxt", False),
    ):
        out.append(f"{title}:")
        out.append("")
        head = ["row", "size"] + cols
        if ratios_too:
            head += ["rx srnic/siw", "rx srnic-crc/siw", "goal"]
        out += md_head(head)
        for test, size in keys:
            cells = [test, size_name(size, test)]
            for name in (tx, rx):
                d = with_tcp(m[name], test, size)
                cells += [fmt(statistics.median(d[s].values())) if d.get(s) else "-" for s in SYSTEMS]
            if ratios_too:
                d = dict(m[rx][(test, size)])
                ratios = {
                    "rx srnic/siw": paired_ratio(d, "srnic", "siw"),
                    "rx srnic-crc/siw": paired_ratio(d, "srnic-crc", "siw"),
                }
                cells += [fmt(ratios["rx srnic/siw"]), fmt(ratios["rx srnic-crc/siw"])]
                cells.append(goal_text(ratios, CPU_GOALS.get((test, size), [])))
            out.append(md_row(cells))
        out.append("")
    return out


# The RMPP rows: each one's unit, and how its CPU time is shown.
RMPP_ROWS = {"rmpp_bw": ("MiB/s", "CPU-s/GiB"), "rmpp_rate": ("Mpps", "CPU-us/msg")}


def rmpp_table(rows, data, incomplete):
    """The RMPP table (none when the samples have no RMPP row): MiB/s of 1
    MiB messages (rmpp_bw) and millions of 64-byte messages per second
    (rmpp_rate) of each system, their paired ratio and goal, and the CPU time
    on VM a (the sender) and VM b: seconds per GiB moved, or microseconds per
    message."""
    keys = sorted(k for k in data if k[0] in RMPP_ROWS)
    if not keys:
        return []
    cpu = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["test"] in RMPP_ROWS and r["bytes"] and None not in (r["cpu_a"], r["cpu_b"]):
            if r["test"] == "rmpp_bw":
                per = (1 << 30) / r["bytes"]
            else:
                per = 1e6 * r["size"] / r["bytes"]
            for v in ("a", "b"):
                cpu[(r["test"], r["size"], r["system"])][v].append(r["cpu_" + v] * per)
    out = [
        "RMPP: from VM a to VM b, srnic's RMPP (`srnic rmpp bw`, every message "
        "acknowledged and verified) against a raw AF_PACKET program sending the "
        "same payload through mmap'ed rings (no protocol, no reliability; its "
        "figure is what VM b received per second): rmpp_bw the bandwidth rows' "
        "bytes in 1 MiB messages (the raw program's frames of the MTU), MiB/s; "
        "rmpp_rate 64-byte messages (the raw program's frames of 64 bytes), "
        "millions per second (higher is better). CPU time on each VM per GiB "
        "(rmpp_bw, seconds) or per message (rmpp_rate, microseconds; lower is "
        "better).",
        "",
    ]
    head = ["row", "message", "unit"] + RMPP_SYSTEMS + ["rmpp/af_packet", "cpu unit"]
    head += [f"{s} cpu {v}" for s in RMPP_SYSTEMS for v in ("a", "b")] + ["goal"]
    out += md_head(head)
    for test, size in keys:
        unit, cpu_unit = RMPP_ROWS[test]
        d = dict(data[(test, size)])
        med = row_medians(d, test, size, RMPP_SYSTEMS, incomplete)
        ratios = {"rmpp/af_packet": paired_ratio(d, "rmpp", "af_packet")}
        cells = [test, size_name(size), unit] + [fmt(med.get(s)) for s in RMPP_SYSTEMS]
        cells += [fmt(ratios["rmpp/af_packet"]), cpu_unit]
        for s in RMPP_SYSTEMS:
            for v in ("a", "b"):
                got = cpu[(test, size, s)][v]
                cells.append(fmt(statistics.median(got)) if got else "-")
        cells.append(goal_text(ratios, RMPP_GOALS if test == "rmpp_bw" else []))
        out.append(md_row(cells))
    out.append("")
    return out


def rmpp_loss_table(data, incomplete):
    """The RMPP-under-loss table (none without its rows): per row and loss
    rate each recovery setting's median and the paired ratios to nak-off."""
    keys = sorted(
        (k for k in data if k[0] in LOSS_ROWS),
        key=lambda k: (list(LOSS_ROWS).index(k[0]), k[1]),
    )
    if not keys:
        return []
    out = [
        "RMPP under loss: 64 KiB messages from VM a to VM b (`srnic rmpp bw`, eight in "
        "flight, verified) while tc netem drops the given share of VM a's frames, with "
        "each receiver-driven recovery on both endpoints (nak-off: the paper's sender "
        "timeout only). Rows: "
        + "; ".join(f"{t}: {what}" for t, what in LOSS_ROWS.items())
        + ".",
        "",
    ]
    others = [s for s in LOSS_SYSTEMS if s != "nak-off"]
    head = ["row", "loss", "unit"] + LOSS_SYSTEMS + [f"{o}/nak-off" for o in others]
    out += md_head(head)
    for test, ppm in keys:
        d = dict(data[(test, ppm)])
        med = row_medians(d, test, ppm, LOSS_SYSTEMS, incomplete)
        unit = LOSS_ROWS[test].split(" (")[0].split(", ")[-1]
        cells = [test, f"{ppm / 10000:g} %", unit] + [fmt(med.get(s)) for s in LOSS_SYSTEMS]
        cells += [fmt(paired_ratio(d, o, "nak-off")) for o in others]
        out.append(md_row(cells))
    out.append("")
    return out


def vmtp_table(data, incomplete):
    """The VMTP transaction table (none without vmtp_lat rows): per size
    each system's median round trip and the paired ratios to VMTP's."""
    keys = sorted(k for k in data if k[0] == "vmtp_lat")
    if not keys:
        return []
    out = [
        "VMTP transactions: echo transactions of the given size each way between VM a "
        "and VM b, one at a time (`srnic vmtp ping` against `srnic vmtp serve`, "
        "verified), against RMPP's ping-pong (`srnic rmpp pingpong`) and TCP's "
        "(tcp_pingpong, one connection, TCP_NODELAY): the median round trip in "
        "microseconds (lower is better).",
        "",
    ]
    others = [s for s in VMTP_SYSTEMS if s != "vmtp"]
    out += md_head(["row", "size", "unit"] + VMTP_SYSTEMS + [f"vmtp/{o}" for o in others])
    for test, size in keys:
        d = dict(data[(test, size)])
        med = row_medians(d, test, size, VMTP_SYSTEMS, incomplete)
        cells = [test, size_name(size), "usec"] + [fmt(med.get(s)) for s in VMTP_SYSTEMS]
        cells += [fmt(paired_ratio(d, "vmtp", o)) for o in others]
        out.append(md_row(cells))
    out.append("")
    return out


def qps_tables(data, incomplete):
    """The many-QPs table and the idle-memory table (none when the samples
    have no such rows); appends what is missing to incomplete."""
    out = []
    counts = sorted(n for (t, n) in data if t == "qps")
    if counts:
        out.append(
            "Many QPs at once (qp_fair: every QP keeps a window of RDMA WRITEs "
            "outstanding for a fixed time; performance.rst): aggregate MiB/s of the N "
            "QPs (median; tcp: iperf3 with N streams, up to 128), srnic/siw and "
            "srnic/tcp paired within a repetition, each system's "
            "aggregate against its own 1-QP run of the same repetition (vs 1 QP), "
            "and fairness: the slowest QP's MiB/s as a fraction of the fair share, "
            "aggregate / N (median; 1 for one QP)."
        )
        out.append("")
        head = ["row", "QPs"] + QPS_SYSTEMS + ["srnic/siw", "srnic-crc/siw", "srnic/tcp"]
        head += [f"{s} vs 1 QP" for s in QPS_SYSTEMS] + [f"{s} fairness" for s in QPS_SYSTEMS]
        head.append("goal")
        out += md_head(head)
        one = data.get(("qps", 1), {})
        for n in counts:
            d = data[("qps", n)]
            fair = data.get(("qps_fair", n), {})
            for s in ("srnic", "siw"):
                if not d.get(s):
                    incomplete.append(f"qps {n}: no {s} figure")
                if not fair.get(s):
                    incomplete.append(f"qps_fair {n}: no {s} figure")
            ratios = {
                "srnic/siw": paired_ratio(d, "srnic", "siw"),
                "srnic-crc/siw": paired_ratio(d, "srnic-crc", "siw"),
                "srnic/tcp": paired_ratio(d, "srnic", "tcp"),
            }
            for s in QPS_SYSTEMS:
                pair = {"n": d.get(s, {}), "1": one.get(s, {})}
                ratios[f"{s} vs 1 QP"] = paired_ratio(pair, "n", "1")
                ratios[f"{s} fairness"] = (
                    statistics.median(fair[s].values()) if fair.get(s) else None
                )
            cells = ["qps", str(n)]
            cells += [fmt(statistics.median(d[s].values())) if d.get(s) else "-" for s in QPS_SYSTEMS]
            cells += [fmt(ratios["srnic/siw"]), fmt(ratios["srnic-crc/siw"]), fmt(ratios["srnic/tcp"])]
            cells += [fmt(ratios[f"{s} vs 1 QP"]) for s in QPS_SYSTEMS]
            cells += [fmt(ratios[f"{s} fairness"]) for s in QPS_SYSTEMS]
            cells.append(goal_text(ratios, QPS_GOALS.get(n, [])))
            out.append(md_row(cells))
        out.append("")
    idle = sorted(n for (t, n) in data if t in ("idle_mem_a", "idle_mem_b"))
    for n in sorted(set(idle)):
        if n == min(idle):
            out.append(
                "Kernel memory per idle QP, KiB (qp_fair --idle: connected QPs held "
                "idle; the growth of /proc/meminfo's Slab, KernelStack, PageTables and "
                "VmallocUsed from when the warm-up QPs were established to when the N "
                "more were, divided by N; performance.rst), on VM a (the client) and VM "
                "b (the server); medians, srnic/siw paired within a repetition (lower "
                "is better)."
            )
            out.append("")
            head = ["row", "QPs"] + [f"{s} {v}" for v in ("a", "b") for s in IDLE_SYSTEMS]
            head += ["srnic/siw a", "srnic/siw b", "goal"]
            out += md_head(head)
        cells = ["idle_mem", str(n)]
        ratios = {}
        for v in ("a", "b"):
            d = data.get((f"idle_mem_{v}", n), {})
            for s in IDLE_SYSTEMS:
                if not d.get(s):
                    incomplete.append(f"idle_mem_{v} {n}: no {s} figure")
                cells.append(fmt(statistics.median(d[s].values())) if d.get(s) else "-")
            ratios[f"srnic/siw {v}"] = paired_ratio(d, "srnic", "siw")
        cells += [fmt(ratios["srnic/siw a"]), fmt(ratios["srnic/siw b"])]
        cells.append(goal_text(ratios, IDLE_GOALS))
        out.append(md_row(cells))
        if n == max(idle):
            out.append("")
    return out


def report(rows, clock):
    # (test, size) -> system -> rep -> value
    data = defaultdict(lambda: defaultdict(dict))
    units = {}
    for r in rows:
        data[(r["test"], r["size"])][r["system"]][r["rep"]] = r["value"]
        units[r["test"]] = r["unit"]
    reps = sorted({r["rep"] for r in rows})
    out = []
    out.append(
        f"{len(reps)} repetitions; each cell is the median, each ratio the median of the "
        "ratios paired within a repetition. Bandwidth in MiB/s and message rate (64-byte "
        "messages; TCP's: 64-byte writes to a stream socket) in millions per second, "
        "Mpps (higher is better), latency in microseconds, typical one-way (lower is "
        "better; read_lat is perftest's round trip)."
    )
    out.append("")
    keys = sorted(
        (k for k in data if k[0] in ROW_ORDER),
        key=lambda k: (ROW_ORDER.index(k[0]), k[1]),
    )
    # rxe has columns and goals only in a run that had it (a kernel without
    # rxe, such as make check's debug one, runs no rxe rows at all); in such
    # a run each perftest row needs its rxe figure.
    has_rxe = any("rxe" in data[k] for k in keys)
    systems = [s for s in SYSTEMS if has_rxe or s != "rxe"]
    required = ("srnic", "siw", "rxe") if has_rxe else ("srnic", "siw")
    ratio_names = [n for n in RATIOS if has_rxe or "rxe" not in n]
    out += md_head(["row", "size", "unit"] + systems + ratio_names + ["goal"])
    incomplete = []
    for test, size in keys:
        d = with_tcp(data, test, size)
        med = row_medians(d, test, size, required, incomplete)
        ratios = {n: paired_ratio(d, *RATIOS[n]) if RATIOS[n][1] in d else None for n in ratio_names}
        goals = [g for g in GOALS.get((test, size), []) if g[0] in ratio_names]
        cells = [test, size_name(size), units.get(test, "")] + [fmt(med.get(s)) for s in systems]
        cells += [fmt(ratios[n]) for n in ratio_names]
        cells.append(goal_text(ratios, goals))
        out.append(md_row(cells))
    out.append("")
    out += qps_tables(data, incomplete)
    qps_keys = sorted(k for k in data if k[0] == "qps")
    out += cpu_tables(rows, keys + qps_keys)
    out += rmpp_table(rows, data, incomplete)
    out += rmpp_loss_table(data, incomplete)
    out += vmtp_table(data, incomplete)
    blk_keys = sorted(
        (k for k in data if k[0] in BLK_ROW_ORDER),
        key=lambda k: (BLK_ROW_ORDER.index(k[0]), k[1]),
    )
    if blk_keys:
        out.append(
            "Block devices: fio on VM a (io_uring, O_DIRECT, one job; queue depth 32 "
            "for 4 KiB blocks, in IOPS, 4 for 1 MiB blocks, in MiB/s; higher is better), "
            "each device exporting 64 MiB of VM b's memory."
        )
        out.append("")
        others = [s for s in BLK_SYSTEMS if s != "srnic_blk"]
        head = ["row", "block", "unit"] + BLK_SYSTEMS + [f"srnic_blk/{o}" for o in others]
        head.append("goal")
        out += md_head(head)
        for test, size in blk_keys:
            d = dict(data[(test, size)])
            med = row_medians(d, test, size, BLK_SYSTEMS, incomplete)
            cells = [test, size_name(size), units.get(test, "")]
            cells += [fmt(med.get(s)) for s in BLK_SYSTEMS]
            ratios = {f"srnic_blk/{o}": paired_ratio(d, "srnic_blk", o) for o in others}
            cells += [fmt(ratios[f"srnic_blk/{o}"]) for o in others]
            cells.append(goal_text(ratios, BLK_GOALS))
            out.append(md_row(cells))
        out.append("")
        out += blk_cpu_table(rows, blk_keys)
    # The virtual link: frames sent by both VMs during each system's runs,
    # and those the other VM did not receive.
    sent = defaultdict(int)
    lost = defaultdict(int)
    for r in rows:
        sent[r["system"]] += r["frames"]
        lost[r["system"]] += r["lost"]
    parts = []
    for s in SYSTEMS + RMPP_SYSTEMS + LOSS_SYSTEMS + ["vmtp"] + BLK_SYSTEMS:
        if sent[s]:
            parts.append(f"{s} {lost[s]} of {sent[s]} ({100.0 * lost[s] / sent[s]:.3f} %)")
    out.append("Frames lost by the virtual link during the runs: " + ", ".join(parts) + ".")
    if clock is not None:
        out.append(clock)
    return "\n".join(out) + "\n", incomplete, data


def clock_check(path):
    """The guest's 10 s against the host's clock (stamped by tests/vm/run.sh)."""
    try:
        lines = [l.split() for l in Path(path).read_text().splitlines() if l.strip()]
    except OSError:
        return None
    stamps = {l[1]: (float(l[0]), float(l[2])) for l in lines if len(l) >= 3}
    if "start" not in stamps or "end" not in stamps:
        return None
    host = stamps["end"][0] - stamps["start"][0]
    guest = stamps["end"][1] - stamps["start"][1]
    return (
        f"Guest clock: {guest:.2f} s of guest uptime while the host's clock saw "
        f"{host:.2f} s (ratio {guest / host:.3f}; the serial line adds a little to the host's)."
    )


def plot(data, outdir):
    gnuplot = shutil.which("gnuplot")
    if gnuplot is None:
        return "gnuplot not installed: no plot"
    series = []
    for test in ("write_bw", "read_bw", "send_bw"):
        for system in ("srnic", "srnic-crc", "siw", "rxe"):
            pts = sorted(
                (size, statistics.median(v[system].values()))
                for (t, size), v in data.items()
                if t == test and v.get(system)
            )
            if pts:
                series.append((f"{system} {test}", pts))
    pts = sorted(
        (size, statistics.median(v["tcp"].values()))
        for (t, size), v in data.items()
        if t == "stream" and v.get("tcp")
    )
    if pts:
        series.append(("tcp (iperf3)", pts))
    if not series:
        return "no bandwidth samples: no plot"
    dat = outdir / "bandwidth.dat"
    with open(dat, "w") as f:
        for name, pts in series:
            f.write(f'"{name}"\n')
            for size, v in pts:
                f.write(f"{size} {v}\n")
            f.write("\n\n")
    script = outdir / "bandwidth.gp"
    plots = ", ".join(
        f"'{dat.name}' index {i} using 1:2 with linespoints title columnheader(1)"
        for i in range(len(series))
    )
    script.write_text(
        "set terminal pngcairo noenhanced size 1000,640\n"
        "set output 'bandwidth.png'\n"
        "set title 'Bandwidth against message size (medians; the VMs of make bench)'\n"
        "set logscale x 2\nset xlabel 'message size (bytes)'\nset ylabel 'MiB/s'\n"
        "set yrange [0:*]\nset key outside right\nset grid\n"
        f"plot {plots}\n"
    )
    r = subprocess.run([gnuplot, script.name], cwd=outdir, capture_output=True, text=True)
    if r.returncode != 0:
        return f"gnuplot failed: {r.stderr.strip()}"
    return "bandwidth.png"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("samples")
    ap.add_argument("outdir")
    ap.add_argument("--clock", help="the host's stamps of the guest's clock check")
    ap.add_argument("--title", default="srnic benchmark")
    a = ap.parse_args()
    outdir = Path(a.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    rows, failed = load(a.samples)
    if not rows:
        print("bench-report: no samples", file=sys.stderr)
        return 1
    text, incomplete, data = report(rows, clock_check(a.clock) if a.clock else None)
    text = f"## {a.title}\n\n" + text
    if failed:
        text += "Runs that failed (left out of the medians; see the VM log): " + "; ".join(failed) + ".\n"
    (outdir / "table.md").write_text(text)
    print(text, end="")
    print(f"plot: {plot(data, outdir)}")
    for line in incomplete:
        print(f"bench-report: {line}", file=sys.stderr)
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
