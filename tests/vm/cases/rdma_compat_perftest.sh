# SPDX-License-Identifier: GPL-2.0
# budget: 75
# timeout: 1200
# rdma_compat_perftest: Debian's perftest over srnic through `srnic exec`
# (rdma_cm connection setup, -R), srnic on both sides: ib_write_bw, ib_read_bw,
# ib_send_bw with 64 KiB messages, ib_write_lat, ib_read_lat, ib_send_lat with
# 64 bytes; each pair must exit 0 and print its result table. A case of its own
# so that a perftest quirk does not hide the results of rdma_compat.
. /srnic/lib.sh
ITERS=$(count 200 5000)
load_srnic_both
port=7400
for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
	case $t in
	*_bw) size=65536 ;;
	*) size=64 ;;
	esac
	peer_bg pt_srv "srnic exec -- timeout 300 $t -R -p $port -s $size -n $ITERS"
	wait_listen "$port" peer || fail "$t server did not listen"
	cli=$(timeout 300 srnic exec -- "$t" -R -p "$port" -s "$size" -n "$ITERS" "$PEER" 2>&1)
	rc=$?
	echo "$cli"
	srv=$(peer_wait pt_srv 300)
	src=$?
	echo "-- server side (peer):"
	echo "$srv"
	expect_eq "$t client exit status" "$rc" 0
	expect_eq "$t server exit status" "$src" 0
	check "$t printed its result line" sh -c 'echo "$1" | grep -Eq "^ *$2 "' _ "$cli" "$size"
	port=$((port + 1))
done
expect_idle
pass
