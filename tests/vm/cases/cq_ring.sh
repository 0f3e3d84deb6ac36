# SPDX-License-Identifier: GPL-2.0
# budget: 30
# cq_ring: a CQ's completions reach the poller through the ring the library
# maps (no system call) as through POLL_CQ: in order, each once, across many
# turns of the ring; one beyond the capacity overflows the CQ. (bad_ioctl
# checks what mmap() of a ring refuses.)
. /srnic/lib.sh
load_srnic
srnic-vmtest cq-ring || fail "srnic-vmtest cq-ring"
expect_idle
pass
