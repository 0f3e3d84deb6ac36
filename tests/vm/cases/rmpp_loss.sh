# SPDX-License-Identifier: GPL-2.0
# budget: 45
# rmpp_loss: Sandia RMPP through tc netem on both VMs' eth0 (loss 0.1 %, 1 %
# and 5 %, with reordering and duplication): every message is delivered
# exactly once, in order per sender, byte-exact; retransmissions and drops are
# counted, and each retransmission traced (srnic_rmpp_retransmit, at most one
# per retransmission the counter counts). The receiving program exits right after its last message; if that
# message's MSGEND was lost, its lingering endpoint still answers the sender
# (rmpp_linger tests this on purpose).
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
trace_start
check "node tables" rmpp_setup
SIZES=1,1456,1457,8192,32768
N=$(count 50 150)
# Every wait may take long on a loaded machine under emulation: the protocol keeps
# retrying (bounded by --max-retries); the case timeout bounds the whole run.
T="--max-retries 100000 -t 300"
netem_off() {
	/bin/tc qdisc del dev eth0 root 2>/dev/null
	peer "/bin/tc qdisc del dev eth0 root 2>/dev/null; true"
}
trap netem_off EXIT
nid=10
LOSSES="0.1 1 5"
levels=0
for loss in $LOSSES; do
	levels=$((levels + 1))
	nid=$((nid + 2))
	q="netem loss ${loss}% duplicate 1% delay 1ms reorder 90% 50%"
	/bin/tc qdisc replace dev eth0 root $q || fail "tc netem on a"
	peer "/bin/tc qdisc replace dev eth0 root $q" || fail "tc netem on b"
	rt0=$(rmpp_stat retransmits)
	dup0=$(peer_rmpp_stat drop_duplicate)
	peer_bg loss "srnic rmpp recv -n $nid -C $N -S $SIZES --max-size 32K -w 16 $T"
	rmpp_wait_ready loss || fail "receiver not ready"
	srnic rmpp send -n $((nid - 1)) --to $nid -C $N -S $SIZES -w 8 $T ||
		fail "send at ${loss}% loss"
	peer_wait loss 900 || fail "receive at ${loss}% loss"
	echo "loss ${loss}%: $N messages delivered in order, exactly once;" \
		"retransmits $(($(rmpp_stat retransmits) - rt0))," \
		"duplicates dropped on b $(($(peer_rmpp_stat drop_duplicate) - dup0))"
	echo "  a: $(rmpp_stats_line)"
	echo "  b: $(rmpp_stats_line peer)"
done
netem_off
[ "$(rmpp_stat retransmits)" -gt 0 ] || fail "no retransmission under loss"
traced=$(trace_count rmpp_retransmit "ep=[0-9]+ ifindex=[0-9]+ nid=[0-9]+ peer=[0-9]+ peer_mac=52:54:00:12:34:02 wr_id=[0-9]+ attempt=[1-9]")
trace_stop
[ "$traced" -gt 0 ] && [ "$traced" -le "$(rmpp_stat retransmits)" ] ||
	fail "retransmissions traced: $traced, counted: $(rmpp_stat retransmits)"
echo "ok: retransmissions traced ($traced of $(rmpp_stat retransmits))"
expect_eq "send failures" "$(rmpp_stat send_failed)" 0
expect_eq "messages received on b" "$(peer_rmpp_stat msgs_received)" $((levels * N))
pass
