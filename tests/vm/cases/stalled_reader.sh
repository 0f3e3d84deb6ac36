# SPDX-License-Identifier: GPL-2.0
# budget: 60
# stalled_reader: a peer that stops reading cannot stall srnic's transmit.
# VM a runs a hostile peer (srnic-vmtest stall -c): over a plain TCP socket it
# negotiates MPA, requests a 16 MiB RDMA READ of a region on VM b and then
# never reads, so VM b's transmit fills TCP's buffers and the window closes.
# While that QP is stuck:
# - a second QP of the same server process on VM b serves verified READs
#   (srnic-vmtest), and the stuck QP is still connected then;
# - two other processes move data through VM b: a 1 MiB READ from it and a
#   1 MiB WRITE to it (srnic xfer, verified), before the stuck QP fails (at
#   4 MiB each they took longer than the 30 s on a slower host).
# Then the stuck QP fails with QP_ERROR after the default stall timeout
# (tx_stall_timeout_ms, 30 s) and no sooner, part way through the response,
# its receive flushed; nothing is left behind (gauges, kmemleak).
. /srnic/lib.sh
load_srnic_both
PARAM=/sys/module/srnic/parameters/tx_stall_timeout_ms
stall_ms=$(peer "cat $PARAM") || fail "no $PARAM on the peer"
expect_eq "the default stall timeout (ms)" "$stall_ms" 30000
P=$((VMTEST_PORT + 40))
XP=$((XFER_PORT + 40))
peer "rm -f /tmp/stall.ready /tmp/stall.errored"
peer_bg stall_srv "srnic-vmtest stall -s -p $P -t 120 --stall-ms $stall_ms --ready /tmp/stall.ready --errored /tmp/stall.errored"
wait_listen "$((P + 1))" peer || fail "the stall server did not listen"
bg_start stall_cli "srnic-vmtest stall -c $PEER -p $P -t 120"
wait_until 120 peer "test -f /tmp/stall.ready || test -f /tmp/stall.errored" ||
	{ cat /tmp/stall_cli.log; peer_wait stall_srv 1; fail "the stall did not get in place"; }
peer "test -f /tmp/stall.errored" &&
	{ cat /tmp/stall_cli.log; peer_wait stall_srv 1; fail "the stuck QP failed before the other transfers ran"; }
# Two other processes on each side, through VM b, while the QP is stuck.
peer_bg xfer_srv "srnic xfer -s -p $XP -t 60 --count 2"
wait_listen "$XP" peer || fail "the transfer server did not listen"
srnic xfer -c "$PEER" -p "$XP" -t 60 --op read --size 1048576 --sge 4 --crc ||
	{ peer_wait xfer_srv 1; fail "a READ from VM b did not complete while a QP was stuck"; }
srnic xfer -c "$PEER" -p "$XP" -t 60 --op write --size 1048576 --sge 4 ||
	{ peer_wait xfer_srv 1; fail "a WRITE to VM b did not complete while a QP was stuck"; }
peer_wait xfer_srv 60 || fail "the transfer server failed"
peer "test -f /tmp/stall.errored" &&
	fail "the stuck QP failed before the other transfers were done (they took longer than $stall_ms ms?)"
echo "ok: other processes moved 2 MiB through VM b while its QP was stuck"
peer_wait stall_srv 200 || { cat /tmp/stall_cli.log; fail "the stall server failed"; }
wait_until 60 test -f /tmp/stall_cli.rc || fail "the stalled peer did not finish"
cat /tmp/stall_cli.log
expect_eq "the stalled peer's exit status" "$(cat /tmp/stall_cli.rc)" 0
expect_idle
pass
