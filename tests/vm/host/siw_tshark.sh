#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host check of the VM case siw_tshark: decode its capture of srnic <-> siw
# traffic with tshark and check it.
#
#   tests/vm/host/siw_tshark.sh LOGDIR
#
# LOGDIR/files/siw.pcap is the capture (VM a = srnic = 192.0.2.1, VM b = siw =
# 192.0.2.2), LOGDIR/files/siw.runs lists the runs: "PORT SRNIC-ROLE CRC SIZE
# COUNT OUTCOME". For every TCP connection tshark must find:
# - no malformed packet, no expert error, and no warning but the two the
#   Wireshark 4.0 MPA dissector gives every RFC 6581 frame (the Enhanced bit in
#   its "Res" field, revision 2) and TCP's informational ones;
# - one MPA Request and one Reply, revision 2, Enhanced, 4 bytes of private data
#   (the IRD/ORD block), C set in the Request exactly when the initiator asked
#   for CRC and in the Reply when either side did, no markers, no reject -- but
#   in the markers run: M in srnic's Request, R in siw's Reply, no FPDU;
# - with CRC every FPDU's CRC checked good by Wireshark's own CRC32c (and none
#   bad), without CRC the field zero;
# - rping's message flow: from the rping client 2N SENDs of 16 bytes (ULPDU 34)
#   and N READ RESPONSEs of SIZE bytes; from the server N READ REQUESTs for SIZE
#   bytes (ULPDU 46), N WRITEs of SIZE bytes and 2N SENDs of 16 bytes; nothing
#   else (no TERMINATE).
set -euo pipefail
. "$(dirname "$0")/iwarp_tshark.sh"
logs=$1
pcap=$logs/files/siw.pcap runs=$logs/files/siw.runs
[ -s "$pcap" ] && [ -s "$runs" ] || { echo "missing $pcap or $runs"; exit 1; }
fields=(tcp.stream ip.src tcp.srcport tcp.dstport _ws.malformed _ws.expert.severity
	_ws.expert.message iwarp_mpa.key.req iwarp_mpa.key.rep iwarp_mpa.marker_flag
	iwarp_mpa.crc_flag iwarp_mpa.rej_flag iwarp_mpa.res iwarp_mpa.rev iwarp_mpa.pdlength
	iwarp_mpa.ulpdulength iwarp_mpa.crc iwarp_mpa.crc_check iwarp_rdma.opcode
	iwarp_ddp.last_flag iwarp_rdma.rdmardsz)
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
tshark "${IWARP_TSHARK[@]}" -r "$pcap" \
	-T fields -E separator=/t -E occurrence=a -E aggregator='|' "${args[@]}" \
	>"$logs/siw_tshark.fields" 2>"$logs/siw_tshark.stderr"
echo "tshark: $(wc -l <"$logs/siw_tshark.fields") frames decoded ($logs/siw_tshark.fields)"
# Wireshark's verdict on every CRC it checked.
tshark "${IWARP_TSHARK[@]}" -r "$pcap" -V 2>/dev/null |
	awk '/CRC check: .*\(Good CRC32\)/ { g++ } /Bad CRC32/ { b++ } END { print g + 0, b + 0 }' \
	>"$logs/siw_tshark.crc"
python3 - "$logs/siw_tshark.fields" "$runs" "$logs/siw_tshark.crc" "${fields[@]}" <<'PY'
import sys
from collections import defaultdict

path, runs_path, crc_counts, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
SRNIC, SIW = "192.0.2.1", "192.0.2.2"
OK_WARNINGS = ("Res field is NOT set to zero", "Rev field is NOT set to one")
TCP_INFO = ("D-SACK", "retransmission", "Duplicate ACK", "Out-Of-Order", "Window update",
            "Keep-Alive", "Window full", "Zero window", "Connection finish", "Connection establish",
            "connection closing", "Connection reset")
problems = []
conns = defaultdict(lambda: {"frames": 0, "req": [], "rep": [], "fpdus": [], "ports": None})


def num(s):
    return int(s, 16) if s.startswith("0x") else int(s)


def flag(s):
    return s in ("1", "True", "true")


for line in open(path):
    row = dict(zip(names, line.rstrip("\n").split("\t")))
    sid = row["tcp.stream"]
    c = conns[sid]
    c["frames"] += 1
    src = row["ip.src"]
    c["ports"] = c["ports"] or (int(row["tcp.srcport"]), int(row["tcp.dstport"]))
    if row["_ws.malformed"]:
        problems.append(f"stream {sid}: malformed frame")
    for sev, msg in zip(row["_ws.expert.severity"].split("|"), row["_ws.expert.message"].split("|")):
        if not sev:
            continue
        # epan/proto.h: 0x00600000 warning, 0x00800000 error.
        s = num(sev)
        if s >= 0x00800000 or (s >= 0x00600000 and not msg.startswith(OK_WARNINGS)
                               and not any(k in msg for k in TCP_INFO)):
            problems.append(f"stream {sid}: expert {sev}: {msg}")
    mpa = {k: row[f"iwarp_mpa.{k}"] for k in ("marker_flag", "crc_flag", "rej_flag", "res", "rev", "pdlength")}
    if row["iwarp_mpa.key.req"]:
        c["req"].append((src, mpa))
    if row["iwarp_mpa.key.rep"]:
        c["rep"].append((src, mpa))
    if row["iwarp_mpa.ulpdulength"]:
        cols = ["iwarp_mpa.ulpdulength", "iwarp_mpa.crc", "iwarp_mpa.crc_check", "iwarp_rdma.opcode",
                "iwarp_ddp.last_flag"]
        vals = [row[k].split("|") for k in cols]
        rdsz = [v for v in row["iwarp_rdma.rdmardsz"].split("|") if v]
        for i, ulpdu in enumerate(vals[0]):
            def get(j):
                return vals[j][i] if i < len(vals[j]) else ""
            op = num(get(3)) if get(3) else None
            c["fpdus"].append({"src": src, "ulpdu": int(ulpdu), "crc": get(1), "check": get(2),
                               "op": op, "last": flag(get(4)),
                               "rdsz": int(rdsz.pop(0)) if op == 1 and rdsz else None})

runs = {}
for line in open(runs_path):
    port, role, crc, size, count, outcome = line.split()
    runs[int(port)] = (role, crc, int(size), int(count), outcome)

by_port = defaultdict(list)
for sid in sorted(conns, key=int):
    c = conns[sid]
    if c["req"] or c["fpdus"]:
        by_port[min(c["ports"])].append((sid, c))


def check_mpa(sid, c, initiator, want_req_crc, want_rep_crc, markers_run):
    if len(c["req"]) != 1 or len(c["rep"]) != 1:
        problems.append(f"stream {sid}: {len(c['req'])} MPA Requests, {len(c['rep'])} Replies")
        return
    (rsrc, req), (_, rep) = c["req"][0], c["rep"][0]
    if rsrc != initiator:
        problems.append(f"stream {sid}: MPA Request from {rsrc}, want {initiator}")
    for what, m in (("Request", req), ("Reply", rep)):
        if m["rev"] != "2" or not num(m["res"] or "0") & 0x10 or m["pdlength"] != "4":
            problems.append(f"stream {sid}: MPA {what} rev {m['rev']} res {m['res']} pd {m['pdlength']}, "
                            "want revision 2, Enhanced, 4 bytes (IRD/ORD)")
    if flag(req["crc_flag"]) != want_req_crc or flag(rep["crc_flag"]) != want_rep_crc:
        problems.append(f"stream {sid}: C bits {req['crc_flag']}/{rep['crc_flag']}, "
                        f"want {want_req_crc}/{want_rep_crc}")
    if (flag(req["marker_flag"]) != markers_run or flag(rep["rej_flag"]) != markers_run
            or flag(rep["marker_flag"])):
        problems.append(f"stream {sid}: Request M={req['marker_flag']}, Reply M={rep['marker_flag']} "
                        f"R={rep['rej_flag']} (markers run: {markers_run})")


crc_fpdus = 0


def check_flow(sid, c, client, server, crc, size, n):
    global crc_fpdus
    # With CRC negotiated the dissector checks every CRC itself (field crc_check,
    # "Good CRC32" or "Bad CRC32", counted below); without, it shows the field as
    # sent (crc), which must be 0.
    for f in c["fpdus"]:
        if crc and (not f["check"] or f["crc"]):
            problems.append(f"stream {sid}: FPDU from {f['src']} without a CRC check by Wireshark")
        if not crc and (f["check"] or num(f["crc"] or "1") != 0):
            problems.append(f"stream {sid}: CRC field {f['crc'] or f['check']} without CRC negotiated")
    if crc:
        crc_fpdus += len(c["fpdus"])
    got = defaultdict(int)
    for f in c["fpdus"]:
        got[(f["src"], f["op"])] += 1
    allowed = {(client, 3), (client, 2), (server, 1), (server, 0), (server, 3)}
    for k, v in got.items():
        if k not in allowed:
            problems.append(f"stream {sid}: {v} FPDUs with opcode {k[1]} from {k[0]}")

    def pick(src, op):
        return [f for f in c["fpdus"] if f["src"] == src and f["op"] == op]
    for who in (client, server):
        sends = pick(who, 3)
        if len(sends) != 2 * n or any(f["ulpdu"] != 34 or not f["last"] for f in sends):
            problems.append(f"stream {sid}: {who} sent {len(sends)} SENDs (ULPDUs "
                            f"{sorted(set(f['ulpdu'] for f in sends))}), want {2 * n} of 34")
    rr = pick(server, 1)
    if len(rr) != n or any(f["ulpdu"] != 46 or f["rdsz"] != size for f in rr):
        problems.append(f"stream {sid}: {len(rr)} READ REQUESTs "
                        f"{sorted(set((f['ulpdu'], f['rdsz']) for f in rr))}, want {n} for {size} bytes")
    for who, op, name in ((client, 2, "READ RESPONSE"), (server, 0, "WRITE")):
        fs = pick(who, op)
        payload = sum(f["ulpdu"] - 14 for f in fs)
        lasts = sum(1 for f in fs if f["last"])
        if payload != n * size or lasts != n:
            problems.append(f"stream {sid}: {name}s from {who}: {payload} bytes in {lasts} messages, "
                            f"want {n * size} in {n}")
    return len(c["fpdus"])


for port, (role, crc, size, n, outcome) in sorted(runs.items()):
    streams = by_port.get(port, [])
    client, server = (SRNIC, SIW) if role == "client" else (SIW, SRNIC)
    use_crc = crc == "--crc"
    if outcome == "ok":
        if len(streams) != 1:
            problems.append(f"port {port}: {len(streams)} connections, want 1")
            continue
        sid, c = streams[0]
        # Only srnic with --crc puts C in a Request (siw never does); the Reply
        # carries it whenever either side asked.
        check_mpa(sid, c, client, use_crc and client == SRNIC, use_crc, False)
        k = check_flow(sid, c, client, server, use_crc, size, n)
        print(f"port {port}: srnic {role}, {crc}, {size} bytes x {n}: {c['frames']} frames, "
              f"{k} FPDUs checked")
    else:
        if len(streams) != 2:
            problems.append(f"port {port}: {len(streams)} connections, want 2 (rejected, then plain)")
            continue
        (sid0, c0), (sid1, c1) = streams
        check_mpa(sid0, c0, SRNIC, False, False, True)
        if c0["fpdus"]:
            problems.append(f"stream {sid0}: {len(c0['fpdus'])} FPDUs after a rejected start-up")
        check_mpa(sid1, c1, SRNIC, False, False, False)
        k = check_flow(sid1, c1, SRNIC, SIW, False, size, n)
        print(f"port {port}: srnic's markers request rejected by siw (M in the Request, R in the "
              f"Reply, no FPDU); then a plain connection: {k} FPDUs checked")
if not runs:
    problems.append("no runs")
good, bad = (int(x) for x in open(crc_counts).read().split())
print(f"CRC32c: {good} FPDUs with a good CRC (of {crc_fpdus} sent with CRC), {bad} bad")
if bad or good != crc_fpdus:
    problems.append(f"{bad} bad CRCs, {good} good of {crc_fpdus}")
for p in problems[:40]:
    print("PROBLEM:", p)
print(f"siw_tshark: {len(runs)} runs, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
