# SPDX-License-Identifier: GPL-2.0
# budget: 90
# hostile_peer: a hostile iWARP peer (srnic-vmtest hostile -c, VM a) speaks
# MPA/DDP/RDMAP itself over a TCP socket and breaks the protocol case by case
# against a srnic server (VM b): MPA garbage, bad ULPDU lengths, wrong DDP and
# RDMAP versions, an unknown opcode, tagged WRITEs and READ Requests outside
# the region, wrapping, with a wrong STag key, of 4 GiB, beyond IRD, an
# unexpected Read Response, Sends with a bad queue, MSN or MO, too long or
# without a buffer, a CRC error, a TERMINATE with garbage, half an FPDU, an
# FPDU pipelined behind the MPA Request. Each TERMINATE srnic sends is checked
# field by field against the RFC table of tests/vm/vmtest/src/hostile.rs (or
# the close, where the RFCs want no TERMINATE); the server's QP reports the
# same TERMINATE; a bystander QP moves verified data after every case. The
# traffic is captured here and decoded on the host by tshark
# (tests/vm/host/hostile_peer.sh), which checks every TERMINATE srnic sent
# against the runs file. TERMINATE counters: one sent per TERMINATE row, one
# received (the garbage TERMINATE). Nothing is left behind.
. /srnic/lib.sh
load_srnic_both
peer '. /srnic/lib.sh; trace_start'
P=$((VMTEST_PORT + 60))
RP=$((P + 1))
pcap_capture eth0 /tmp/hostile.pcap "$RP" "$RP" 2>/tmp/capture.log &
cap=$!
i=0
while ! grep -q capturing /tmp/capture.log && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
grep -q capturing /tmp/capture.log || fail "capture did not start"
peer_bg hostile_srv "srnic-vmtest hostile -s -p $P -t 30"
wait_listen "$RP" peer || { peer_wait hostile_srv 1; fail "the hostile case's server did not listen"; }
srnic-vmtest hostile -c "$PEER" -p "$P" -t 30 --runs /tmp/hostile.runs
rc=$?
echo "-- srnic-vmtest hostile, server side (peer):"
peer_wait hostile_srv 60
prc=$?
kill "$cap"
wait "$cap"
caprc=$?
cat /tmp/capture.log /tmp/hostile.runs
export_file hostile.pcap /tmp/hostile.pcap
export_file hostile.runs /tmp/hostile.runs
[ "$rc" = 0 ] || fail "srnic-vmtest hostile: client side failed (exit $rc)"
[ "$prc" = 0 ] || fail "srnic-vmtest hostile: server side failed (exit $prc)"
[ "$caprc" = 0 ] || fail "the capture lost frames"
expect_eq "TERMINATEs srnic sent (peer)" "$(peer '. /srnic/lib.sh; srnic_stat terminates_sent')" \
	"$(grep -c ' term ' /tmp/hostile.runs)"
expect_eq "TERMINATEs srnic received (peer)" "$(peer '. /srnic/lib.sh; srnic_stat terminates_received')" 1
# Each one traced, and each CRC error.
expect_eq "TERMINATEs sent, traced (peer)" "$(peer_trace_count terminate_sent)" \
	"$(peer '. /srnic/lib.sh; srnic_stat terminates_sent')"
expect_eq "TERMINATEs received, traced (peer)" "$(peer_trace_count terminate_received)" 1
crc=$(peer '. /srnic/lib.sh; srnic_stat crc_errors')
[ "$crc" -gt 0 ] || fail "no CRC error counted"
expect_eq "CRC errors, traced (peer)" "$(peer_trace_count crc_error "received=0x[0-9a-f]{8} computed=0x[0-9a-f]{8}$")" "$crc"
peer '. /srnic/lib.sh; trace_stop'
expect_idle
pass
