# SPDX-License-Identifier: GPL-2.0
# budget: 25
# file_mem_limit: the kernel memory one open file can make srnic allocate is
# capped (module parameter file_mem_mib, 64 MiB by default). srnic-vmtest
# file-mem creates the largest CQs (4 MiB each), then the largest QPs, until
# ENOMEM: the file's charge (QUERY_DEVICE kernel_mem) is within the cap and
# less than one more object away from it; a second file still creates a CQ
# meanwhile; destroying everything gives the charge back. No memory cgroup.
. /srnic/lib.sh
load_srnic
expect_eq "default file_mem_mib" "$(cat /sys/module/srnic/parameters/file_mem_mib)" 64
srnic info | grep "max_kernel_mem: $((64 << 20))$" || fail "srnic info does not report the 64 MiB cap"
srnic-vmtest file-mem || fail "srnic-vmtest file-mem"
expect_idle
pass
