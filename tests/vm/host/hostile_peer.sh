#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host check of the VM case hostile_peer: decode its capture with tshark and
# check every TERMINATE srnic sent against the runs file.
#
#   tests/vm/host/hostile_peer.sh LOGDIR
#
# LOGDIR/files/hostile.pcap is the capture (VM a = the hostile peer =
# 192.0.2.1, VM b = srnic = 192.0.2.2); LOGDIR/files/hostile.runs has one line
# per case: "PORT NAME term LAYER TYPE CODE HDR" (hex; HDR is Any, Ddp or
# DdpRdmap, what srnic must copy of the offending segment) or "PORT NAME
# close". For every case, in the TCP connection from PORT, Wireshark's own
# iWARP dissectors (iwarp_mpa, iwarp_ddp_rdmap) must find:
# - term: exactly one TERMINATE from srnic, with that layer, error type and
#   error code; with HDR Ddp the M and D bits and not R, with DdpRdmap all
#   three; a copied DDP header (and RDMAP header) that occurs in the bytes the
#   peer sent on that connection; the DDP Segment Length field present with
#   the copied header;
# - close: no TERMINATE from srnic;
# - no frame from srnic that Wireshark finds malformed.
# (The CRCs srnic sends are checked by the peer itself, srnic-vmtest hostile.)
# Frames of the hostile peer are malformed on purpose and not checked.
set -euo pipefail
. "$(dirname "$0")/iwarp_tshark.sh"
logs=$1
pcap=$logs/files/hostile.pcap runs=$logs/files/hostile.runs
[ -s "$pcap" ] && [ -s "$runs" ] || { echo "missing $pcap or $runs"; exit 1; }
fields=(tcp.stream ip.src tcp.srcport tcp.dstport _ws.malformed tcp.payload
	iwarp_mpa.key.req iwarp_mpa.key.rep iwarp_rdma.opcode
	iwarp_rdma.term_layer iwarp_rdma.term_etype_rdma iwarp_rdma.term_etype_ddp
	iwarp_rdma.term_etype_llp iwarp_rdma.term_etype iwarp_rdma.term_errcode_rdma
	iwarp_rdma.term_errcode_ddp_tagged iwarp_rdma.term_errcode_ddp_untagged
	iwarp_rdma.term_errcode_llp iwarp_rdma.term_errcode iwarp_rdma.term_hdrct_m
	iwarp_rdma.hdrct_d iwarp_rdma.hdrct_r iwarp_rdma.term_ddp_seg_len
	iwarp_rdma.term_ddp_h iwarp_rdma.term_rdma_h)
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
tshark "${IWARP_TSHARK[@]}" -r "$pcap" \
	-T fields -E separator=/t -E occurrence=a -E aggregator='|' "${args[@]}" \
	>"$logs/hostile_tshark.fields" 2>"$logs/hostile_tshark.stderr"
echo "tshark: $(wc -l <"$logs/hostile_tshark.fields") frames decoded ($logs/hostile_tshark.fields)"
python3 - "$logs/hostile_tshark.fields" "$runs" "${fields[@]}" <<'PY'
import sys
from collections import defaultdict

path, runs_path, names = sys.argv[1], sys.argv[2], sys.argv[3:]
SRNIC, PEER = "192.0.2.2", "192.0.2.1"
problems = []
streams = defaultdict(lambda: {"ports": set(), "peer_bytes": b"", "terms": [], "srnic_frames": 0,
                               "mpa": False})


def num(s):
    return int(s, 16) if s.lower().startswith("0x") else int(s)


def flag(s):
    return s not in ("", "0", "0x00", "False", "false")


def first(row, *keys):
    for k in keys:
        v = row[k].split("|")[0]
        if v:
            return v
    return ""


for line in open(path):
    row = dict(zip(names, line.rstrip("\n").split("\t")))
    sid = row["tcp.stream"]
    s = streams[sid]
    s["ports"].update((int(row["tcp.srcport"]), int(row["tcp.dstport"])))
    src = row["ip.src"]
    if row["iwarp_mpa.key.req"] or row["iwarp_mpa.key.rep"]:
        s["mpa"] = True
    if src == PEER:
        s["peer_bytes"] += bytes.fromhex(row["tcp.payload"].replace(":", "").replace("|", ""))
        continue
    s["srnic_frames"] += 1
    if row["_ws.malformed"]:
        problems.append(f"stream {sid}: a frame from srnic is malformed")
    ops = row["iwarp_rdma.opcode"].split("|")
    layers = row["iwarp_rdma.term_layer"].split("|")
    for k, o in enumerate(ops):
        if not o or num(o) != 7:
            continue
        # One TERMINATE per frame at most here (srnic sends it alone).
        t = {
            "layer": num(layers[min(k, len(layers) - 1)]) if layers[0] else None,
            "etype": first(row, "iwarp_rdma.term_etype_rdma", "iwarp_rdma.term_etype_ddp",
                           "iwarp_rdma.term_etype_llp", "iwarp_rdma.term_etype"),
            "code": first(row, "iwarp_rdma.term_errcode_rdma", "iwarp_rdma.term_errcode_ddp_tagged",
                          "iwarp_rdma.term_errcode_ddp_untagged", "iwarp_rdma.term_errcode_llp",
                          "iwarp_rdma.term_errcode"),
            "m": flag(first(row, "iwarp_rdma.term_hdrct_m")),
            "d": flag(first(row, "iwarp_rdma.hdrct_d")),
            "r": flag(first(row, "iwarp_rdma.hdrct_r")),
            "seglen": first(row, "iwarp_rdma.term_ddp_seg_len"),
            "ddp_h": first(row, "iwarp_rdma.term_ddp_h").replace(":", ""),
            "rdma_h": first(row, "iwarp_rdma.term_rdma_h").replace(":", ""),
        }
        s["terms"].append(t)

by_port = {}
for sid, s in streams.items():
    for p in s["ports"]:
        by_port.setdefault(p, sid)

checked = 0
for line in open(runs_path):
    w = line.split()
    port, name, kind = int(w[0]), w[1], w[2]
    sid = by_port.get(port)
    if sid is None:
        problems.append(f"{name}: no connection from port {port} in the capture")
        continue
    s = streams[sid]
    if kind == "close":
        if s["terms"]:
            problems.append(f"{name}: {len(s['terms'])} TERMINATEs from srnic, want none")
        print(f"{name:26} port {port}: no TERMINATE from srnic ({s['srnic_frames']} frames from srnic)")
        checked += 1
        continue
    layer, etype, code, hdr = num("0x" + w[3]), num("0x" + w[4]), num("0x" + w[5]), w[6]
    if not s["mpa"]:
        problems.append(f"{name}: Wireshark found no MPA start-up on stream {sid}")
    if len(s["terms"]) != 1:
        problems.append(f"{name}: {len(s['terms'])} TERMINATEs from srnic decoded, want 1")
        continue
    t = s["terms"][0]
    got = (t["layer"], num(t["etype"]) if t["etype"] else None, num(t["code"]) if t["code"] else None)
    if got != (layer, etype, code):
        problems.append(f"{name}: tshark decodes layer/type/code {got}, want {(layer, etype, code)}")
    want_bits = {"Ddp": (True, True, False), "DdpRdmap": (True, True, True)}.get(hdr)
    bits = (t["m"], t["d"], t["r"])
    if want_bits and bits != want_bits:
        problems.append(f"{name}: Hdrct M/D/R {bits}, want {want_bits}")
    if t["d"]:
        if not t["seglen"]:
            problems.append(f"{name}: D set but no DDP Segment Length decoded")
        if not t["ddp_h"] or bytes.fromhex(t["ddp_h"]) not in s["peer_bytes"]:
            problems.append(f"{name}: copied DDP header {t['ddp_h']} is nowhere in what the peer sent")
    if t["r"] and (not t["rdma_h"] or bytes.fromhex(t["rdma_h"]) not in s["peer_bytes"]):
        problems.append(f"{name}: copied RDMAP header {t['rdma_h']} is nowhere in what the peer sent")
    print(f"{name:26} port {port}: TERMINATE {got[0]:#x}/{got[1]:#x}/{got[2]:#04x} "
          f"M{int(t['m'])} D{int(t['d'])} R{int(t['r'])}"
          + (f", DDP header {t['ddp_h']}" if t["ddp_h"] else "")
          + (f", RDMAP header {t['rdma_h']}" if t["rdma_h"] else ""))
    checked += 1
if checked == 0:
    problems.append("no cases")
for p in problems[:40]:
    print("PROBLEM:", p)
print(f"hostile_peer: {checked} cases checked by tshark, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
