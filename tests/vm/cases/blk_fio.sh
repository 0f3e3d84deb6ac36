# SPDX-License-Identifier: GPL-2.0
# budget: 90
# blk_fio: fio's verifying random writes through srnic_blk
# (Documentation/srnic/blk.rst). VM b serves 64 MiB of memory; VM a maps it
# and runs fio (scripts/fio.sh): 4 jobs, each on its own 16 MiB of the
# device, io_uring at queue depth 32, O_DIRECT random writes of 4-32 KiB
# (check-long: 4-128 KiB) with a crc32c header in every block (threads: the
# test kernels have no System V shared memory for fio's processes), the
# blocks read back and checked every 8 writes (verify_backlog) for 10 s
# (check-long: 60 s). Checked: fio exits 0 (verify_fatal: the first bad
# block ends it with an error), no job reports an error, and it both wrote
# and read back (its "issued rwts" totals), then unmap and rmmod work.
. /srnic/lib.sh
load_srnic_both
insmod /srnic/srnic_blk.ko || fail "insmod srnic_blk"
PORT=7050
RUNTIME=$(count 10 60)
# Blocks of 4 KiB up to BSMAX: with 4 x 32 requests in flight, 128 KiB blocks
# would queue 16 MiB, which the debug kernel under TCG moves at some
# 400 KiB/s, near srnic_blk's 30 s request timeout.
BSMAX=$(count 32k 128k)
peer_bg blk_srv "srnic blk serve --size 64M -p $PORT"
wait_listen "$PORT" peer || { peer_wait blk_srv 1; fail "the server did not listen"; }
dev=$(srnic blk map "$PEER" -p "$PORT") || fail "srnic blk map"
# fio's own limit is its runtime and the verify phase; timeout is the bound
# on a hang (each request also fails after srnic_blk's io_timeout_s).
timeout "$(scaled $((RUNTIME + 120)))" fio --name=verify --filename="$dev" --thread \
	--ioengine=io_uring --direct=1 --rw=randwrite --bsrange=4k-"$BSMAX" \
	--iodepth=32 --numjobs=4 --size=16M --offset_increment=16M \
	--verify=crc32c --verify_backlog=8 --verify_fatal=1 \
	--runtime="$RUNTIME" --time_based --group_reporting >/tmp/fio.out 2>&1
rc=$?
cat /tmp/fio.out
expect_eq "fio's exit status" "$rc" 0
grep -q "err= 0:" /tmp/fio.out || fail "fio reported an error"
totals=$(sed -n 's/.*issued rwts: total=\([0-9]*\),\([0-9]*\),.*/\1 \2/p' /tmp/fio.out)
set -- $totals
[ "${1:-0}" -gt 0 ] || fail "fio read nothing back (issued rwts: $totals)"
[ "${2:-0}" -gt 0 ] || fail "fio wrote nothing (issued rwts: $totals)"
echo "ok: fio wrote $2 blocks and read back and verified $1"
srnic blk unmap "$dev" || fail "unmap"
rmmod srnic_blk || fail "rmmod srnic_blk"
peer ". /srnic/lib.sh; bg_kill_all"
expect_idle
pass
