# SPDX-License-Identifier: GPL-2.0
# budget: 60
# zcopy: zero-copy transmit (module parameter zcopy_min, off by default).
# - On VM b (srnic, its tcp_wmem raised so that TCP takes a whole 256 KiB
#   WRITE) srnic-vmtest zcopy writes to a raw MPA peer on VM a that reads
#   nothing yet. With zcopy_min 32768 every byte goes zero-copy and the
#   WRITE does not complete until the peer reads it; a second QP destroyed
#   while TCP holds its WRITE's pages is freed once the peer resets. With
#   zcopy_min 0 nothing goes zero-copy and the WRITE completes while the
#   peer reads nothing (what a copying send does, so the first check can
#   fail).
# - Then VM a sends zero-copy to srnic on VM b: verified WRITEs and SENDs of
#   1 MiB over 4 SGEs (srnic xfer), with and without MPA CRC, all of their
#   bytes counted in a's tx_zcopy_bytes.
. /srnic/lib.sh
load_srnic_both
PARAM=/sys/module/srnic/parameters/zcopy_min
WMEM=/proc/sys/net/ipv4/tcp_wmem
min=$(peer "cat $PARAM") || fail "no $PARAM on the peer"
expect_eq "the default zcopy_min" "$min" 0
wmem=$(peer "cat $WMEM") || fail "no $WMEM on the peer"
# A zero-copy buffer counts whole pages against the send buffer.
peer "echo '4096 4194304 4194304' > $WMEM && echo 32768 > $PARAM" || fail "cannot set the peer's tcp_wmem and zcopy_min"
vmtest zcopy --zerocopy
peer "echo 0 > $PARAM" || fail "cannot set zcopy_min"
vmtest zcopy
peer "echo '$wmem' > $WMEM" || fail "cannot restore the peer's tcp_wmem"
# Verified transfers from a, zero-copy.
echo 32768 > $PARAM || fail "cannot set zcopy_min"
XP=$((XFER_PORT + 50))
zc0=$(srnic_stat tx_zcopy_bytes)
peer_bg xfer_srv "srnic xfer -s -p $XP -t 60 --count 4"
wait_listen "$XP" peer || fail "the transfer server did not listen"
for op in write send; do
	for crc in "" --crc; do
		srnic xfer -c "$PEER" -p "$XP" -t 60 --op $op --size 1048576 --sge 4 $crc ||
			{ peer_wait xfer_srv 1; fail "a zero-copy $op $crc to b failed"; }
	done
done
peer_wait xfer_srv 60 || fail "the transfer server failed"
echo 0 > $PARAM || fail "cannot reset zcopy_min"
zc=$(($(srnic_stat tx_zcopy_bytes) - zc0))
# 2 operations x 2 CRC settings, 1 MiB each.
[ "$zc" -ge $((4 * 1048576)) ] || fail "a sent $zc bytes zero-copy, not all 4 MiB of its transfers"
echo "ok: a sent $zc bytes zero-copy, its transfers verified on b"
expect_idle
pass
