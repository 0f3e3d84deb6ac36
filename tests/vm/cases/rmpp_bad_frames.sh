# SPDX-License-Identifier: GPL-2.0
# budget: 40
# rmpp_bad_frames: frames with a bad version, garbage, truncated headers and
# payloads, unknown or foreign NIDs and inconsistent fields are dropped and
# counted by reason; no kernel report; the endpoint keeps working. Every
# dropped frame is traced (srnic_rmpp_drop, one per frame, with the counter's
# name, the receiver's pid and NID): those the endpoint drops (unknown NIDs,
# malformed) and those the port's packet handler drops first (short, bad
# version or type, another NID). A frame the link between the VMs lost is
# sent again.
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
peer '. /srnic/lib.sh; trace_start'
check "node tables" rmpp_setup
# Dropped frames are no progress for the receiver, and injecting and checking
# them takes about a minute under emulation: its stall limit (-t, 60 s by
# default) must outlast that, or the valid message at the end finds no
# receiver (it did once).
peer_bg bad "srnic rmpp recv -n 2 -C 1 -w 4 -t 300"
rmpp_wait_ready bad || fail "receiver not ready"
mac_b=$(peer "cat /sys/class/net/eth0/address")
before=$(rmpp_stats_line peer)
DROPS="drop_short drop_bad_version drop_bad_type drop_other_nid drop_unknown_nid drop_malformed"
# The frames b dropped, by any of those reasons (one peer call).
drops_on_peer() {
	peer "srnic stats" | awk -v d="$DROPS" 'BEGIN { n = split(d, a); for (i = 1; i <= n; i++) want["rmpp_" a[i] ":"] = 1 }
		$1 in want { sum += $2 } END { print sum + 0 }'
}
total=0
for k in short badver badtype garbage unknown_nid far_nid other_nid truncated malformed; do
	# inject_counted sends again what the link between the VMs lost.
	check "inject $k" inject_counted 20 drops_on_peer rmpp_inject eth0 "$mac_b" $k
	total=$((total + 20))
done
echo "b before: $before"
echo "b after:  $(rmpp_stats_line peer)"
ge() { [ "$2" -ge "$3" ] && echo "ok: $1 ($2 >= $3)" || fail "$1: $2 < $3"; }
ge "bad version (badver, garbage)" "$(peer_rmpp_stat drop_bad_version)" 40
ge "bad type" "$(peer_rmpp_stat drop_bad_type)" 20
ge "unknown NIDs" "$(peer_rmpp_stat drop_unknown_nid)" 40
ge "other NID" "$(peer_rmpp_stat drop_other_nid)" 20
ge "short or truncated" "$(peer_rmpp_stat drop_short)" 20
ge "malformed" "$(peer_rmpp_stat drop_malformed)" 20
expect_eq "every injected frame dropped and counted" "$(drops_on_peer)" "$total"
expect_eq "nothing delivered" "$(peer_rmpp_stat msgs_received)" 0
rpid=$(peer ". /srnic/lib.sh; pid_of 'srnic rmpp recv'") || fail "no one RMPP receiver on b"
echo "-- b's first srnic_rmpp_drop events (the receiver is pid $rpid):"
peer ". /srnic/lib.sh; trace_lines rmpp_drop | head -n 4"
for c in $DROPS; do
	expect_eq "$c traced on b" "$(peer_trace_count rmpp_drop "pid=$rpid ep=[0-9]+ ifindex=[0-9]+ nid=2 peer=[0-9]+ reason=$c\$")" \
		"$(peer_rmpp_stat $c)"
done
peer '. /srnic/lib.sh; trace_stop'
check "a valid message still arrives" srnic rmpp send -n 1 --to 2 -C 1 -S 3000
peer_wait bad 120 || fail "receiver"
peer "dmesg" | grep -E "BUG|WARNING|Oops" && fail "kernel report on b"
pass
