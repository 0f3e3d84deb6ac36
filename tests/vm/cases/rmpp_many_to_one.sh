# SPDX-License-Identifier: GPL-2.0
# rmpp_many_to_one: three senders (three endpoints in VM b) into one receiver
# in VM a with a small grant pool: grants shrink under load (the Figure 8
# rule), no receive queue or CQ overflows, every message arrives verified and in
# order per sender.
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
check "node tables" rmpp_setup
N=${RMPP_M2O_N:-60}
SIZES=65536,23296,1
T="--max-retries 100000"
# Pool: MAX_RCV_BUF 24 with NODES 4 leaves 20 packets to grant, shared by up
# to 12 incoming messages (4 per sender).
srnic rmpp recv -n 1 -C $((3 * N)) -S $SIZES --max-size 64K -w 16 \
	--max-rcv-buf 24 --nodes 4 --max-data-pkts 16 $T >/tmp/m2o.log 2>&1 &
r=$!
local_wait_ready /tmp/m2o.log || fail "receiver not ready"
for s in 2 4 6; do
	peer_bg m2o$s "srnic rmpp send -n $s --to 1 -C $N -S $SIZES -w 4 $T"
done
for s in 2 4 6; do
	peer_wait m2o$s 900 || fail "sender $s"
done
wait $r || { cat /tmp/m2o.log; fail "receiver"; }
cat /tmp/m2o.log
echo "a: $(rmpp_stats_line)"
lim=$(rmpp_stat grants_limited)
echo "grants: $(rmpp_stat grants), limited by the pool: $lim, packets granted: $(rmpp_stat granted_packets)"
[ "$lim" -gt 0 ] || fail "no grant was limited under load"
expect_eq "receive queue overflows" "$(rmpp_stat drop_queue_full)" 0
expect_eq "messages received" "$(rmpp_stat msgs_received)" $((3 * N))
dmesg | grep "srnic" | grep -i "overflow" && fail "overflow reported"
pass
