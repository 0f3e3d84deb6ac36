# SPDX-License-Identifier: GPL-2.0
# c_example: the C API's example (tools/libsrnic-c/examples/c_example.c, built
# statically by scripts/tools.sh): server on b, client here; both must print
# "c_example: OK" and exit 0.
. /srnic/lib.sh
load_srnic_both
peer_bg c_srv "c_example -s -p 19700"
wait_listen 19700 peer || fail "the C example server did not listen"
out=$(c_example -c "$PEER" -p 19700 2>&1)
rc=$?
echo "$out"
srv=$(peer_wait c_srv 120)
prc=$?
echo "-- server side (peer):"
echo "$srv"
expect_eq "client exit status" "$rc" 0
expect_eq "server exit status" "$prc" 0
check "client printed 'c_example: OK'" sh -c 'echo "$1" | grep -qx "c_example: OK"' _ "$out"
check "server printed 'c_example: OK'" sh -c 'echo "$1" | grep -qx "c_example: OK"' _ "$srv"
expect_idle
pass
