# SPDX-License-Identifier: GPL-2.0
# budget: 75
# rmpp_nak: Sandia RMPP's receiver-driven recovery through tc netem on a's
# egress (the data direction: 2 % loss, 1 % duplication, some reordering).
# With selective NAKs (the default) and with go-back NAKs on both sides, every
# message arrives exactly once, in order, byte-exact, the receiver sends NAKs
# and the sender acts on them. A sender with --nak off gets none: the receiver
# offers NAKs only to senders whose RTS offers them, and the sender's timeout
# recovers alone (the paper's protocol). Under a 2 s ceiling the sender's
# timeouts wait for the measured round trip (its estimate in srnic res), not
# the ceiling.
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
check "node tables" rmpp_setup
SIZES=1,1457,8192,65536
N=$(count 40 400)
T="--max-retries 100000 -t 300"
netem_off() { /bin/tc qdisc del dev eth0 root 2>/dev/null; }
trap netem_off EXIT
/bin/tc qdisc replace dev eth0 root netem loss 2% duplicate 1% delay 1ms reorder 10% 50% ||
	fail "tc netem on a"

# run SEND_NID RECV_NID SENDER_NAK RECEIVER_NAK: N verified messages a -> b;
# sets naks (NAKs b sent), acted (NAKs a acted on), resent (packets a resent).
run() {
	local s0 r0 p0
	s0=$(peer_rmpp_stat naks_sent)
	r0=$(rmpp_stat naks_received)
	p0=$(rmpp_stat resent_packets)
	peer_bg nak "srnic rmpp recv -n $2 -C $N -S $SIZES --max-size 64K -w 16 --nak $4 $T"
	rmpp_wait_ready nak || fail "receiver ($4) not ready"
	srnic rmpp send -n "$1" --to "$2" -C "$N" -S $SIZES -w 4 --nak "$3" $T ||
		fail "send with --nak $3 to --nak $4"
	peer_wait nak 600 || fail "receive with --nak $4 from --nak $3"
	naks=$(($(peer_rmpp_stat naks_sent) - s0))
	acted=$(($(rmpp_stat naks_received) - r0))
	resent=$(($(rmpp_stat resent_packets) - p0))
	echo "sender --nak $3, receiver --nak $4: $N messages delivered in order," \
		"exactly once; NAKs sent $naks, acted on $acted, packets resent $resent"
}

# Distinct NIDs per run: a receiver's endpoint may linger after it exits.
nid=1
for mode in selective go-back; do
	run $nid $((nid + 1)) $mode $mode
	nid=$((nid + 2))
	[ "$naks" -gt 0 ] || fail "$mode: no NAK sent at 2 % loss"
	[ "$acted" -gt 0 ] && [ "$acted" -le "$naks" ] ||
		fail "$mode: NAKs acted on: $acted, sent: $naks"
	echo "ok: $mode NAKs recover lost data"
done
run $nid $((nid + 1)) off selective
expect_eq "NAKs to a sender that offers none" "$naks" 0
expect_eq "NAKs acted on by it" "$acted" 0
[ "$resent" -gt 0 ] || fail "no retransmission by timeout at 2 % loss"
echo "ok: negotiated: the timeout alone recovers"

# The sender's timeout follows the measured round trip (rmpp.rst,
# "Retransmission timeout"): timeouts alone (--nak off on both sides) under a
# 2 s ceiling (--rto-us), one message at a time, so that every timeout's wait
# adds to the run. A timeout fixed at the ceiling would make the run last at
# least 2 s per timeout; the estimate (srnic res shows it while the sender
# runs) makes each wait a few round trips.
nid=$((nid + 2))
M=$(count 30 200)
srtt_seen() {
	srtt=$(srnic res rmpp | sed -n "s/.* nid $nid .*srtt_us \([0-9]*\).*/\1/p")
	[ "${srtt:-0}" -gt 0 ]
}
rt0=$(rmpp_stat retransmits)
peer_bg rto "srnic rmpp recv -n $((nid + 1)) -C $M -S 65536 --max-size 64K --nak off $T"
rmpp_wait_ready rto || fail "receiver (ceiling) not ready"
t0=$(uptime_cs)
bg_start rto_send "srnic rmpp send -n $nid --to $((nid + 1)) -C $M -S 65536 -w 1 --nak off --rto-us 2000000 $T"
wait_until 120 srtt_seen || fail "srnic res shows no round trip for the sender"
wait_until 600 test -f /tmp/rto_send.rc || fail "the sender did not end"
t1=$(uptime_cs)
[ "$(cat /tmp/rto_send.rc)" = 0 ] || { cat /tmp/rto_send.log; fail "send under the 2 s ceiling"; }
peer_wait rto 600 || fail "receive under the 2 s ceiling"
timeouts=$(($(rmpp_stat retransmits) - rt0))
ms=$(((t1 - t0) * 10))
echo "2 s ceiling, timeouts only: $M messages in $ms ms with $timeouts timeouts; srtt ${srtt} us during the run"
[ "$timeouts" -gt 0 ] || fail "no timeout at 2 % loss with --nak off"
[ "$srtt" -lt 2000000 ] || fail "srtt $srtt us is not below the ceiling"
[ "$ms" -lt $((timeouts * 1000)) ] ||
	fail "$timeouts timeouts took $ms ms: the timeout did not follow the round trip"
echo "ok: timeouts wait for the measured round trip, not the ceiling"
netem_off
expect_eq "send failures" "$(rmpp_stat send_failed)" 0
expect_eq "messages received on b" "$(peer_rmpp_stat msgs_received)" $((3 * N + M))
pass
