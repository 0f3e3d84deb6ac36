# SPDX-License-Identifier: GPL-2.0
# budget: 30
# rmpp_spoofed: a frame whose source MAC is not the node table's MAC for the
# NID it claims is dropped and counted (drop_spoofed). VM b sends 20 valid
# LAST RTS frames claiming NID 3, which the node table places at VM a's MAC,
# to a receiver for NID 1 in VM a: none is delivered, all 20 are counted as
# spoofed (not as unknown NIDs); then a real message from b's NID 2 arrives.
. /srnic/lib.sh
FAIL_DIAG=rmpp_counters
unload_srnic_both
load_srnic_both
check "node tables" rmpp_setup
srnic rmpp recv -n 1 -C 1 -w 4 -t 120 >/tmp/spoof_rx.log 2>&1 &
r=$!
local_wait_ready /tmp/spoof_rx.log || fail "receiver not ready"
mac_a=$(cat /sys/class/net/eth0/address)
unknown0=$(rmpp_stat drop_unknown_nid)
# (From b; inject_counted sends again what the link between the VMs lost.)
check "20 spoofed frames counted" inject_counted 20 "rmpp_stat drop_spoofed" peer rmpp_inject eth0 "$mac_a" spoof
expect_eq "spoofed frames dropped and counted" "$(rmpp_stat drop_spoofed)" 20
expect_eq "not counted as unknown NIDs" "$(rmpp_stat drop_unknown_nid)" "$unknown0"
expect_eq "nothing delivered" "$(rmpp_stat msgs_received)" 0
peer "srnic rmpp send -n 2 --to 1 -C 1 -S 3000" || fail "a real message from b"
# The receiver fails on its own after 120 s without an RMPP packet (-t).
wait $r || { cat /tmp/spoof_rx.log; fail "receiver"; }
cat /tmp/spoof_rx.log
expect_eq "the real message delivered" "$(rmpp_stat msgs_received)" 1
expect_idle
pass
