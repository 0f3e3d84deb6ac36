# SPDX-License-Identifier: GPL-2.0
# memlock_limit: memory registration is charged to RLIMIT_MEMLOCK. srnic-vmtest
# memlock opens /dev/srnic as root, sets a 1 MiB limit, checks that root
# (CAP_IPC_LOCK) registers 2 MiB anyway, then becomes nobody (65534, no
# capabilities): 256 KiB registers (VmPin grows by it); 1 MiB + 4 KiB fails
# with ENOMEM; 768 KiB registers but another 512 KiB next to it fails with
# ENOMEM; afterwards VmPin and pinned_pages are back at their baseline and
# exactly 1 MiB registers.
. /srnic/lib.sh
load_srnic_both
srnic-vmtest memlock --limit-kib 1024 --uid 65534 || fail "srnic-vmtest memlock"
expect_idle
pass
