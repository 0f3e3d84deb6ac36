# SPDX-License-Identifier: GPL-2.0
# budget: 45
# link_down: an interface going down or away stops srnic's use of it at once.
# VM a gets a namespace "ld" joined to the initial one by a veth pair (vl0,
# 10.9.1.1 here; vl1, 10.9.1.2 in ld); srnic-vmtest link-down connects a QP
# across it (server in ld) and exchanges a verified SEND each way, leaving a
# receive pending on both sides.
# 1. `ip link set vl0 down`: the client's QP (its connection goes through vl0)
#    reports QP_ERROR with -ENETDOWN and no TERMINATE, its pending receive is
#    flushed, it is in ERROR, a later SEND is flushed at once. (vl1 stays up:
#    the server cannot know and is stopped by the case.)
# 2. `ip link del vl0` (which takes vl1 with it): both QPs fail that way.
# 3. An RMPP endpoint with a posted receive on a third veth, vr0: `ip link del
#    vr0` returns at once (the endpoint held a reference on the netdev, so the
#    unregistration used to wait for it forever); the endpoint reports
#    RMPP_ERROR with -ENETDOWN, its receive is flushed, later posts fail with
#    ENETDOWN.
# Nothing is left behind (gauges, kmemleak).
. /srnic/lib.sh
load_srnic
# iproute2's ip (busybox's shell prefers its own applet for a bare "ip").
IP=/bin/ip
P=$((VMTEST_PORT + 80))
# veth_up: the veth pair vl0/vl1 (vl1 in ld), both up.
veth_up() {
	$IP link add vl0 type veth peer name vl1 netns ld || fail "$IP link add vl0"
	$IP addr add 10.9.1.1/24 dev vl0 && $IP link set vl0 up || fail "vl0"
	$IP netns exec ld sh -c "$IP addr add 10.9.1.2/24 dev vl1 && $IP link set vl1 up" || fail "vl1"
}
# connect_pair ROUND SERVER-FLAGS CLIENT-FLAGS: the two sides, until both
# wrote READY.
connect_pair() {
	rm -f /tmp/ld.*
	bg_start "ld_srv$1" "$IP netns exec ld srnic-vmtest link-down -s -p $P -t 60 --ready /tmp/ld.srv $2"
	wait_until 30 $IP netns exec ld grep -q "$(printf ':%04X 00000000:0000 0A' $((P + 1)))" /proc/net/tcp ||
		{ cat "/tmp/ld_srv$1.log"; fail "round $1: the server did not listen"; }
	bg_start "ld_cli$1" "srnic-vmtest link-down -c 10.9.1.2 -p $P -t 60 --ready /tmp/ld.cli $3"
	wait_until 60 test -f /tmp/ld.srv -a -f /tmp/ld.cli ||
		{ cat "/tmp/ld_srv$1.log" "/tmp/ld_cli$1.log"; fail "round $1: the QP did not come up"; }
	P=$((P + 2))
}
# expect_rc NAME WHAT: waits for bg_start job NAME, prints its output, fails
# the case unless it exited 0.
expect_rc() {
	wait_until 60 test -f "/tmp/$1.rc" || { cat "/tmp/$1.log"; fail "$2 did not finish"; }
	cat "/tmp/$1.log"
	expect_eq "$2's exit status" "$(cat "/tmp/$1.rc")" 0
}
# What a failed run may have left behind.
$IP netns del ld 2>/dev/null
$IP link del vl0 2>/dev/null
$IP link del vr0 2>/dev/null
$IP netns add ld || fail "$IP netns add"
$IP netns exec ld $IP link set lo up || fail "lo in ld"
veth_up

# 1.
connect_pair 1 "--stop /tmp/ld.stop" --expect-down
bounded 10 $IP link set vl0 down || fail "ip link set vl0 down did not return at once"
expect_rc ld_cli1 "the client (vl0 down)"
touch /tmp/ld.stop
expect_rc ld_srv1 "the server (round 1)"
echo "ok: set down: the QP through vl0 failed with ENETDOWN, its work flushed"
$IP link set vl0 up || fail "vl0 up"

# 2.
connect_pair 2 --expect-down --expect-down
bounded 10 $IP link del vl0 || fail "ip link del vl0 did not return at once"
expect_rc ld_cli2 "the client (vl0 deleted)"
expect_rc ld_srv2 "the server (vl1 deleted)"
echo "ok: del: both QPs failed with ENETDOWN, their work flushed"

# 3.
$IP link add vr0 type veth peer name vr1 || fail "$IP link add vr0"
$IP link set vr0 up || fail "vr0 up"
rm -f /tmp/ld.rmpp
bg_start ld_rmpp "srnic-vmtest rmpp-link-down --ifname vr0 --ready /tmp/ld.rmpp -t 60"
wait_until 30 test -f /tmp/ld.rmpp || { cat /tmp/ld_rmpp.log; fail "no RMPP endpoint on vr0"; }
expect_eq "RMPP endpoints" "$(srnic_stat rmpp_endpoints)" 1
bounded 10 $IP link del vr0 || fail "ip link del vr0 did not return at once (an endpoint holds it)"
expect_rc ld_rmpp "the RMPP endpoint"
echo "ok: del: the RMPP endpoint released vr0 at once and stopped with ENETDOWN"
$IP netns del ld
expect_idle
pass
