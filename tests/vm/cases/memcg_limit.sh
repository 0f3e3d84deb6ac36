# SPDX-License-Identifier: GPL-2.0
# budget: 30
# memcg_limit: srnic's allocations are charged to the caller's memory cgroup
# and refused with ENOMEM beyond it, without an OOM kill. srnic is loaded
# with a per-file cap (256 MiB) above the cgroup's 64 MiB, so the cgroup is
# what refuses; srnic-vmtest memcg runs a child in the cgroup that creates the
# largest CQs until ENOMEM and stops; with the child's objects alive, the
# cgroup's memory.current is within memory.max, its limit was hit and nobody
# was OOM-killed; the child then frees everything and exits 0.
# Needs CONFIG_CGROUPS and CONFIG_MEMCG in the VM kernel; skips without them.
. /srnic/lib.sh
G=$(memcg_new srnic_memcg $((64 << 20)) 2>/tmp/memcg.why)
case $? in
0) ;;
1) skip "$(cat /tmp/memcg.why)" ;;
*) fail "$(cat /tmp/memcg.why)" ;;
esac
unload_srnic_both
insmod "$SRNIC_KO" file_mem_mib=256 || fail "insmod file_mem_mib=256"
expect_eq "file_mem_mib" "$(cat /sys/module/srnic/parameters/file_mem_mib)" 256
srnic-vmtest memcg --cgroup $G -t "$(scaled 60)"
rc=$?
cat $G/memory.events
rmdir $G || echo "cgroup $G not removed"
[ "$rc" = 0 ] || fail "srnic-vmtest memcg"
expect_idle
pass
