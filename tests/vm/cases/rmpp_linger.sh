# SPDX-License-Identifier: GPL-2.0
# budget: 40
# rmpp_linger: a receiver that exits right after its last message does not
# strand that message's sender (Documentation/srnic/rmpp.rst, "Closing an
# endpoint").
#
# VM b's egress drops everything (netem loss 100 %) while it receives one
# message, so its MSGEND is lost, and the receiving program exits at once.
# Its endpoint lingers: it still holds the module and its NID. Once b's egress
# works again the lingering endpoint answers, the sender completes with the
# message delivered, its GCH ends the linger, and nothing is left.
#
# Then the bound: with b's egress dropping for longer than the linger
# (16 retransmission timeouts), the linger expires (counted), the sender fails
# after its retries, and both sides are idle again.
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
check "node tables" rmpp_setup
netem_off() { peer "/bin/tc qdisc del dev eth0 root 2>/dev/null; true"; }
trap netem_off EXIT
b_stat() { peer "sed -n 's/^rmpp_$2: //p' /tmp/$1.stats"; }

# 1. The linger answers. b's RTO is 500 ms, so it may linger for 5 s (the
# cap); its own commands run right after the receiver exits, in milliseconds.
peer "/bin/tc qdisc replace dev eth0 root netem loss 100%" || fail "netem on b"
peer_bg lg "srnic rmpp recv -n 2 -C 1 -w 1 --rto-us 500000 &&
	srnic stats >/tmp/lg.stats && cat /sys/module/srnic/refcnt >/tmp/lg.refcnt;
	/bin/tc qdisc del dev eth0 root"
rmpp_wait_ready lg || fail "receiver not ready"
srnic rmpp send -n 1 --to 2 -C 1 -S 1000 -t 60 ||
	fail "the sender of a message its receiver took and then exited"
peer_wait lg 60 || fail "receiver"
expect_eq "b's endpoint lingered after its program exited" "$(b_stat lg endpoints_lingering)" 1
expect_eq "b's lingering endpoint held the message for its GCH" "$(b_stat lg active_recvs)" 1
expect_eq "the lingering endpoint held srnic.ko" "$(peer "cat /tmp/lg.refcnt")" 1
lingered() { [ "$(peer_rmpp_stat endpoints_lingering)" = 0 ]; }
wait_until 10 lingered || fail "b still lingers"
expect_eq "sends delivered on a" "$(rmpp_stat msgs_sent)" 1
expect_eq "lingers expired on b" "$(peer_rmpp_stat linger_expired)" 0
expect_idle

# 2. The bound. b's RTO is 20 ms: it lingers for 320 ms, and its egress
# drops for a second. a retries every 100 ms, 10 times, then fails.
peer "/bin/tc qdisc replace dev eth0 root netem loss 100%" || fail "netem on b"
peer_bg lg2 "srnic rmpp recv -n 4 -C 1 -w 1 --rto-us 20000; sleep 1;
	srnic stats >/tmp/lg2.stats; /bin/tc qdisc del dev eth0 root"
rmpp_wait_ready lg2 || fail "receiver not ready"
if srnic rmpp send -n 3 --to 4 -C 1 -S 1000 -t 60 --max-retries 10 >/tmp/lg2_send.log 2>&1; then
	cat /tmp/lg2_send.log
	fail "a send whose receiver was gone for good completed"
fi
cat /tmp/lg2_send.log
grep -q "RetryExc" /tmp/lg2_send.log || fail "the sender did not fail on its retries"
peer_wait lg2 60 || fail "receiver"
expect_eq "b's linger ended before its egress came back" "$(b_stat lg2 endpoints_lingering)" 0
expect_eq "lingers expired on b" "$(b_stat lg2 linger_expired)" 1
expect_eq "sends failed on a" "$(rmpp_stat send_failed)" 1
echo "a: $(rmpp_stats_line)"
echo "b: $(rmpp_stats_line peer)"
expect_idle
pass
