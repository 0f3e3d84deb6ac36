# SPDX-License-Identifier: GPL-2.0
# budget: 35
# rmpp_abort: a sender is killed in the middle of a 64 MiB message: its
# endpoint sends NULL, the receive completes as aborted, the receiver's state
# for the message is reclaimed, its pinned pages are released, and the
# receiver goes on receiving from another sender.
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
check "node tables" rmpp_setup
# The receiver frees idle state after 3 s (its own retry span must be shorter);
# the sender never gives up by itself.
R="--max-retries 50 --rto-us 20000 --reclaim-ms 3000"
T="--max-retries 100000"
peer_bg ab "srnic rmpp recv -n 2 -C 1 --expect-abort --max-size 64M -w 1 --linger 60 $R"
rmpp_wait_ready ab || fail "receiver not ready"
srnic rmpp send -n 1 --to 2 -C 1 -S 64M -w 1 $T >/tmp/ab_send.log 2>&1 &
s=$!
# Wait until the message is flowing (bytes placed on b), then kill the sender.
i=0
while [ "$(peer_rmpp_stat rx_bytes)" -lt 1000000 ] && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
[ "$(peer_rmpp_stat rx_bytes)" -ge 1000000 ] || fail "the message never started"
kill -9 $s
wait $s 2>/dev/null
echo "sender killed after $(peer_rmpp_stat rx_bytes) bytes were placed on b"
expect_eq "sends aborted on a" "$(rmpp_stat send_aborted)" 1
expect_eq "pinned pages on a" "$(srnic stats | sed -n 's/^pinned_pages: //p')" 0
# Another sender (another NID: a new process restarts message numbering).
check "a message from NID 3 after the abort" srnic rmpp send -n 3 --to 2 -C 1 -S 4K $T
# The aborted message's state on b is freed by the reclaim timer (3 s).
i=0
while [ "$(peer_rmpp_stat active_recvs)" != 0 ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
expect_eq "receive state left on b" "$(peer_rmpp_stat active_recvs)" 0
expect_eq "receives aborted on b" "$(peer_rmpp_stat recv_aborted)" 1
peer "kill \$(pidof srnic) 2>/dev/null; true"
peer_wait ab 60
echo "b: $(rmpp_stats_line peer)"
pass
