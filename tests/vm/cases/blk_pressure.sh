# SPDX-License-Identifier: GPL-2.0
# budget: 100
# blk_pressure: buffered writes through srnic_blk from a memory cgroup held
# near its limit cannot deadlock (Documentation/srnic/blk.rst). A shell in a
# cgroup with memory.max of 4 MiB writes 6 MiB (check-long: 64) and syncs,
# with the dirty limits at 2 MiB (1 MiB background): the cgroup's pages can
# only be freed once writeback through srnic_blk cleaned them, and srnic's
# allocations on that path are GFP_NOIO (kernel-api.rst). It writes twice:
# through the page cache of /dev/srnicb0, and to a file of an ext4 file
# system on it (journal and metadata writeback too). Checked each time: the
# writer ends within a bound (and no task blocks 20 s: the debug kernel's
# hung-task detector would fail the run), the cgroup hit its limit
# (memory.events "max" grew, no OOM kill), and the data arrived: the
# server's file holds what was written to the device (md5); the file reads
# back equal after the file system was unmounted and mounted again.
. /srnic/lib.sh
load_srnic_both
insmod /srnic/srnic_blk.ko || fail "insmod srnic_blk"
PORT=7030
# The export: room for N MiB in a file of an ext4 file system on it (a small
# one in make check: mkfs and the journal write less).
SIZE=$(count 16 96)
peer_bg blk_srv "srnic blk serve --file /tmp/pressure.img --size ${SIZE}M -p $PORT"
wait_listen "$PORT" peer || fail "the server did not listen"
dev=$(srnic blk map "$PEER" -p "$PORT") || fail "srnic blk map"
N=$(count 6 64)
dd if=/dev/urandom of=/tmp/src bs=1M count="$N" 2>/dev/null
want=$(md5sum </tmp/src | cut -d' ' -f1)

G=$(memcg_new srnic_blk_pressure $((4 << 20)) 2>/tmp/memcg.why) || fail "$(cat /tmp/memcg.why)"
# Small dirty limits: the writer is throttled into writeback (through
# srnic_blk) as it goes, so the cgroup fills with pages that writeback must
# clean before reclaim can take them, instead of an OOM kill for want of
# clean pages. Restored below.
ratio=$(cat /proc/sys/vm/dirty_ratio) bg_ratio=$(cat /proc/sys/vm/dirty_background_ratio)
restore_dirty() {
	echo "$ratio" >/proc/sys/vm/dirty_ratio
	echo "$bg_ratio" >/proc/sys/vm/dirty_background_ratio
}
trap restore_dirty EXIT
echo $((2 << 20)) >/proc/sys/vm/dirty_bytes
echo $((1 << 20)) >/proc/sys/vm/dirty_background_bytes
# pressure_write WHAT TARGET: writes /tmp/src to TARGET (a device or a file)
# from a shell in the cgroup, and checks that the cgroup was held at its
# limit meanwhile and nothing was OOM-killed.
pressure_write() {
	local before after
	before=$(sed -n 's/^max //p' $G/memory.events)
	# The writer joins the cgroup first, so its page cache is charged there.
	bg_start writer "echo \$\$ >$G/cgroup.procs && dd if=/tmp/src of=$2 bs=64k && sync"
	wait_until 300 test -f /tmp/writer.rc || fail "$1: the writer did not finish (deadlock?)"
	cat /tmp/writer.log
	expect_eq "$1: the writer's exit status" "$(cat /tmp/writer.rc)" 0
	cat $G/memory.events
	after=$(sed -n 's/^max //p' $G/memory.events)
	[ "${after:-0}" -gt "${before:-0}" ] ||
		fail "$1: the cgroup never reached its limit (memory.events max ${before:-?} -> ${after:-?})"
	expect_eq "$1: OOM kills in the cgroup" "$(sed -n 's/^oom_kill //p' $G/memory.events)" 0
	echo "ok: $1: the cgroup was held at its limit ($((after - before)) times)"
}

pressure_write "the block device" "$dev"
got=$(peer "dd if=/tmp/pressure.img bs=1M count=$N 2>/dev/null | md5sum" | cut -d' ' -f1)
expect_eq "md5 of the server's file" "$got" "$want"

mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 $dev"
mkdir -p /mnt/blk
mount -t ext4 "$dev" /mnt/blk || fail "mount"
pressure_write "a file on ext4" /mnt/blk/f
restore_dirty
umount /mnt/blk || fail "umount"
mount -t ext4 "$dev" /mnt/blk || fail "mount again"
got=$(md5sum </mnt/blk/f | cut -d' ' -f1)
expect_eq "md5 of the file after umount and mount" "$got" "$want"
umount /mnt/blk || fail "umount (2)"
srnic blk unmap "$dev" || fail "unmap"
rmdir $G || echo "cgroup $G not removed"
rmmod srnic_blk || fail "rmmod srnic_blk"
peer ". /srnic/lib.sh; bg_kill_all"
expect_idle
pass
