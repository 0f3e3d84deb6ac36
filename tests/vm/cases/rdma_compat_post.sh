# SPDX-License-Identifier: GPL-2.0
# budget: 10
# rdma_compat_post: ibv_post_recv's failures on srnic's module, through the
# stand-ins (`srnic exec`) and the C API's post (tests/vm/progs/rdmacm/
# post_limits, see there): a list with a bad request fails with EINVAL and
# posts none of it; a list longer than the receive queue fails with ENOMEM
# at the first request that did not fit, the ones before it posted. srnic
# holds nothing afterwards.
. /srnic/lib.sh
load_srnic_both
out=$(bounded "$(scaled 60)" srnic exec -- post_limits "$ADDR" 2>&1)
rc=$?
echo "$out"
expect_eq "post_limits exit status" "$rc" 0
check "three checks passed" sh -c '[ "$(echo "$1" | grep -c "^ok: ")" = 3 ]' _ "$out"
expect_idle
pass
