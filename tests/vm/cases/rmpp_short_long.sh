# SPDX-License-Identifier: GPL-2.0
# budget: 45
# rmpp_short_long: Sandia RMPP over eth0 between the VMs: one-packet and
# multi-packet messages (0 bytes to 4 MiB; 64 MiB in check-long), a hundred
# messages each way (a thousand in check-long), both directions at once; every
# message verified byte for byte, in order, once.
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
check "node tables" rmpp_setup
srnic info | grep "capabilities:.*rmpp" >/dev/null || fail "SRNIC_CAP_RMPP not reported"

# One packet carries 1456 payload bytes (MTU 1500 minus the 44-byte header).
SIZES=0,1,100,1455,1456,1457,2912,2913,8192,23296,65536
N=$(count 100 1000)
T="--max-retries 5000"
# a -> b (NID 1 -> 2) and b -> a (NID 4 -> 3) at the same time.
peer_bg r2 "srnic rmpp recv -n 2 -C $N -S $SIZES --max-size 64K -w 32 $T"
srnic rmpp recv -n 3 -C $N -S $SIZES --max-size 64K -w 32 $T >/tmp/r3.log 2>&1 &
r3=$!
rmpp_wait_ready r2 || fail "receiver on b not ready"
local_wait_ready /tmp/r3.log || fail "receiver on a not ready"
peer_bg s4 "srnic rmpp send -n 4 --to 3 -C $N -S $SIZES -w 16 $T"
srnic rmpp send -n 1 --to 2 -C $N -S $SIZES -w 16 $T || fail "send 1 -> 2"
peer_wait s4 600 || fail "send 4 -> 3"
peer_wait r2 600 || fail "receive on 2"
wait $r3 || { cat /tmp/r3.log; fail "receive on 3"; }
cat /tmp/r3.log

# Large messages: 1 MiB and 4 MiB (and 64 MiB in check-long), a -> b.
BIG=$(count 1M,4M 1M,4M,64M)
NBIG=$(count 2 3)
peer_bg big "srnic rmpp recv -n 6 -C $NBIG -S $BIG --max-size 64M -w 1 $T"
rmpp_wait_ready big || fail "large receiver not ready"
srnic rmpp send -n 5 --to 6 -C $NBIG -S $BIG -w 1 $T || fail "$BIG a -> b"
peer_wait big 900 || fail "large receive on b"

# Ping-pong (messages sent from a registered region) and a bandwidth run.
peer_bg pp "srnic rmpp pingpong -n 8 -p 7 -s -C 20 -S 4K $T"
rmpp_wait_ready pp || fail "pingpong server not ready"
check "pingpong 20 x 4 KiB" srnic rmpp pingpong -n 7 -p 8 -C 20 -S 4K $T
peer_wait pp 120 || fail "pingpong server"
NBW=$(count 8 20)
peer_bg bw "srnic rmpp recv -n 10 -C $NBW -S 256K --max-size 256K -w 8 $T"
rmpp_wait_ready bw || fail "bw receiver not ready"
check "bw $NBW x 256 KiB" srnic rmpp bw -n 9 --to 10 -C $NBW -S 256K -w 4 $T
peer_wait bw 300 || fail "bw receiver"

echo "a: $(rmpp_stats_line)"
echo "b: $(rmpp_stats_line peer)"
# Every pinned page is released and every endpoint gone.
expect_eq "pinned pages on a" "$(srnic stats | sed -n 's/^pinned_pages: //p')" 0
expect_eq "endpoints left on a" "$(rmpp_stat endpoints)" 0
expect_eq "messages received on b" "$(peer_rmpp_stat msgs_received)" $((N + NBIG + 20 + NBW))
expect_eq "messages received on a" "$(rmpp_stat msgs_received)" $((N + 20))
expect_eq "messages acknowledged to a" "$(rmpp_stat msgs_sent)" $((N + NBIG + 20 + NBW))
pass
