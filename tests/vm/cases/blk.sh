# SPDX-License-Identifier: GPL-2.0
# budget: 90
# blk: srnic_blk.ko, the block device over remote memory (clients/blk/), and
# its server `srnic blk serve` (Documentation/srnic/blk.rst).
# 1. VM b serves a 32 MiB file on tmpfs; VM a maps it as /dev/srnicb0 (a
#    queue pair per CPU): the size is the export's.
# 2. N MiB (2; check-long 64) of random data written with dd (O_DIRECT, then
#    fsync: a FLUSH and the server's answer) are in the server's file (md5),
#    and read back equal after the page cache is dropped, with O_DIRECT and
#    buffered. A buffered write of another range reaches the file after sync.
# 3. A write beyond the end fails (the block layer refuses it), unmap works,
#    and the export keeps its content: mapped again, the data reads back
#    equal.
# 4. Unmap, rmmod srnic_blk; srnic idle on both VMs.
. /srnic/lib.sh
load_srnic_both
insmod /srnic/srnic_blk.ko || fail "insmod srnic_blk"
N=$(count 2 64)
PORT=7010
peer_bg blk_srv "srnic blk serve --file /tmp/disk.img --size 32M -p $PORT"
wait_listen "$PORT" peer || { peer_wait blk_srv 1; fail "the server did not listen"; }

dev=$(srnic blk map "$PEER" -p "$PORT") || fail "srnic blk map"
expect_eq "the mapped device" "$dev" /dev/srnicb0
expect_eq "its size in bytes" "$(blockdev --getsize64 "$dev")" $((32 << 20))
srnic blk list

dd if=/dev/urandom of=/tmp/src bs=1M count="$N" 2>/dev/null
want=$(md5sum </tmp/src | cut -d' ' -f1)
dd if=/tmp/src of="$dev" bs=1M count="$N" oflag=direct conv=fsync 2>&1 || fail "dd to $dev"
got=$(peer "dd if=/tmp/disk.img bs=1M count=$N 2>/dev/null | md5sum" | cut -d' ' -f1)
expect_eq "md5 of the server's file after an O_DIRECT write" "$got" "$want"
echo 3 >/proc/sys/vm/drop_caches
got=$(dd if="$dev" bs=1M count="$N" iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
expect_eq "md5 read back (O_DIRECT)" "$got" "$want"
got=$(dd if="$dev" bs=64k count=$((N * 16)) 2>/dev/null | md5sum | cut -d' ' -f1)
expect_eq "md5 read back (buffered, 64 KiB reads)" "$got" "$want"

# A buffered, unaligned-size write of another range, then sync.
dd if=/dev/urandom of=/tmp/src2 bs=4096 count=300 2>/dev/null
dd if=/tmp/src2 of="$dev" bs=4096 seek=$((16 << 8)) 2>/dev/null || fail "buffered dd"
sync
want2=$(md5sum </tmp/src2 | cut -d' ' -f1)
got=$(peer "dd if=/tmp/disk.img bs=4096 skip=$((16 << 8)) count=300 2>/dev/null | md5sum" | cut -d' ' -f1)
expect_eq "md5 of a buffered write after sync, on the server" "$got" "$want2"

# Beyond the end: the block layer refuses it before the driver.
if dd if=/dev/zero of="$dev" bs=1M seek=32 count=1 oflag=direct 2>/dev/null; then
	fail "a write beyond the device's end succeeded"
fi
echo "ok: a write beyond the end fails"

srnic blk unmap srnicb0 || fail "srnic blk unmap"
[ ! -e "$dev" ] || fail "$dev still exists after unmap"
# The server's file keeps the data; a new mapping reads it.
dev=$(srnic blk map "$PEER" -p "$PORT") || fail "srnic blk map (again)"
got=$(dd if="$dev" bs=1M count=1 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
expect_eq "the first MiB read back through a new mapping" "$got" "$(head -c 1048576 /tmp/src | md5sum | cut -d' ' -f1)"
srnic blk unmap "$dev" || fail "srnic blk unmap (again)"
rmmod srnic_blk || fail "rmmod srnic_blk"
peer ". /srnic/lib.sh; bg_kill_all"
expect_idle
pass
