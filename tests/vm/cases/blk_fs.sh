# SPDX-License-Identifier: GPL-2.0
# budget: 90
# blk_fs: ext4 on srnic_blk (Documentation/srnic/blk.rst). VM b serves a
# 64 MiB file on tmpfs; VM a maps it, makes an ext4 file system (e2fsprogs'
# mkfs.ext4; busybox has only ext2), mounts it, writes a tree of 17 files
# (1.7 MiB; check-long: 16.7 MiB), unmounts, unmaps, maps again and mounts:
# every file's md5 is unchanged. Then the server is stopped and started again
# on the same file: mapped a third time, the files are still there.
. /srnic/lib.sh
load_srnic_both
insmod /srnic/srnic_blk.ko || fail "insmod srnic_blk"
PORT=7040
serve() { peer_bg "blk_srv$1" "srnic blk serve --file /tmp/fs.img --size 64M -p $PORT"; wait_listen "$PORT" peer; }
serve 1 || fail "the server did not listen"
dev=$(srnic blk map "$PEER" -p "$PORT") || fail "srnic blk map"
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4 $dev"
mkdir -p /mnt/blk
mount -t ext4 "$dev" /mnt/blk || fail "mount"
mkdir -p /mnt/blk/a/b /mnt/blk/c
for i in 1 2 3 4 5 6 7 8; do
	dd if=/dev/urandom of="/mnt/blk/a/f$i" bs=4k count=$((i * 4)) 2>/dev/null
	dd if=/dev/urandom of="/mnt/blk/a/b/g$i" bs=1k count=$((i * 3)) 2>/dev/null
done
dd if=/dev/urandom of=/mnt/blk/c/big bs=1M count="$(count 1 16)" 2>/dev/null
sums() { (cd /mnt/blk && find . -type f | sort | xargs md5sum); }
# remount_same WHEN: maps the export again and mounts it; every file's md5
# must be what it was; then unmounts and unmaps.
remount_same() {
	dev=$(srnic blk map "$PEER" -p "$PORT") || fail "map $1"
	mount -t ext4 "$dev" /mnt/blk || fail "mount $1"
	sums >/tmp/sums.now
	cmp /tmp/sums.before /tmp/sums.now || fail "files changed $1"
	echo "ok: $(wc -l </tmp/sums.now) files unchanged $1"
	umount /mnt/blk || fail "umount $1"
	srnic blk unmap "$dev" || fail "unmap $1"
}
sums >/tmp/sums.before
umount /mnt/blk || fail "umount"
srnic blk unmap "$dev" || fail "unmap"
remount_same "after unmap and map"
peer ". /srnic/lib.sh; bg_kill_all"
serve 2 || fail "the restarted server did not listen"
remount_same "after the server restarted"
rmmod srnic_blk || fail "rmmod srnic_blk"
peer ". /srnic/lib.sh; bg_kill_all"
expect_idle
pass
