# SPDX-License-Identifier: GPL-2.0
# budget: 20
# vmtp_c: a VMTP transaction through the C API (srnic_vmtp_* of
# srnic_verbs.h; tools/libsrnic-c/examples/vmtp_example.c, built statically):
# the server on b answers one Request with its bytes reversed, the client here
# checks them; the client's closing acknowledges the Response, so the server
# sees it acknowledged. Both print "vmtp_example: OK".
. /srnic/lib.sh
FAIL_DIAG=vmtp_counters
load_srnic_both
peer_bg vc "vmtp_example -s $PEER -D 321"
rmpp_wait_ready vc || fail "the C server did not start"
out=$(vmtp_example -c "$PEER" -a "$ADDR" -D 321 2>&1)
rc=$?
echo "$out"
srv=$(peer_wait vc 60)
prc=$?
echo "-- server side (peer):"
echo "$srv"
expect_eq "client exit status" "$rc" 0
expect_eq "server exit status" "$prc" 0
check "client printed 'vmtp_example: OK'" sh -c 'echo "$1" | grep -qx "vmtp_example: OK"' _ "$out"
check "server printed 'vmtp_example: OK'" sh -c 'echo "$1" | grep -qx "vmtp_example: OK"' _ "$srv"
expect_idle
pass
