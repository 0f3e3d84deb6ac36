# SPDX-License-Identifier: GPL-2.0
# budget: 45
# rdma_compat_kill: an unmodified rdma-core program SIGKILLed in the middle of a
# transfer through the stand-ins of tools/rdma-compat (`srnic exec`, srnic on
# both sides) leaves nothing behind, as kill_unpins checks for srnic's own
# tool:
#  1. rping -c -V (here, 65535-byte pings without end) against rping -s (peer):
#     the client is killed;
#  2. ib_write_bw -R (peer, the server: its buffer is the target of the
#     WRITEs) against its client here (64 KiB WRITEs without end): the server
#     is killed.
# Each time: both VMs had more pages pinned than before and srnic moved
# payload here (tx_bytes grew) when the kill came; the survivor notices and
# ends by itself (no timeout, no signal); within 10 s srnic holds nothing in
# either VM (expect_idle: every object gauge at zero, pinned pages included).
. /srnic/lib.sh
T=$(scaled 120)
load_srnic_both
base_here=$(srnic_stat pinned_pages)
base_peer=$(peer ". /srnic/lib.sh; srnic_stat pinned_pages")

pinned_here() { [ "$(srnic_stat pinned_pages)" -gt "$base_here" ]; }
pinned_peer() { [ "$(peer ". /srnic/lib.sh; srnic_stat pinned_pages")" -gt "$base_peer" ]; }
# tx_moving: srnic sent payload here within half a second.
tx_moving() {
	local a
	a=$(srnic_stat tx_bytes)
	sleep 0.5
	[ "$(srnic_stat tx_bytes)" -gt "$a" ]
}
mid_transfer() { # mid_transfer WHAT
	check "$1: pages pinned here (baseline $base_here)" wait_until 60 pinned_here
	check "$1: pages pinned on the peer (baseline $base_peer)" wait_until 60 pinned_peer
	check "$1: payload moving" wait_until 60 tx_moving
}
# ended_by_itself WHAT STATUS: the survivor's exit status is its own, success
# or failure (rping's -1 is 255), not timeout's 124 nor a signal's 128 + N.
ended_by_itself() {
	if [ "$2" = 124 ] || { [ "$2" -gt 128 ] && [ "$2" -lt 255 ]; }; then
		fail "$1 did not end by itself (exit status $2)"
	fi
	echo "ok: $1 ended by itself (exit status $2)"
}

# Round 1: kill rping's client.
port=7650
peer_bg rping_srv "timeout $T srnic exec -- rping -s -a $PEER -p $port -S 65535"
wait_listen "$port" peer || { peer_wait rping_srv 1; fail "rping -s did not listen"; }
srnic exec -- rping -c -a "$PEER" -p "$port" -S 65535 -V >/tmp/rping_cli.log 2>&1 &
pid=$!
mid_transfer "rping -V"
kill -9 "$pid"
wait "$pid"
rc=$?
cat /tmp/rping_cli.log
expect_eq "rping -c killed by SIGKILL (exit status)" "$rc" 137
echo "-- rping -s (peer):"
peer_wait rping_srv "$T"
ended_by_itself "rping -s, the survivor" $?
expect_idle

# Round 2: kill ib_write_bw's server.
port=$((port + 1))
base_here=$(srnic_stat pinned_pages)
base_peer=$(peer ". /srnic/lib.sh; srnic_stat pinned_pages")
peer_bg bw_srv "timeout $T srnic exec -- ib_write_bw -R -p $port -s 65536 -n 1000000"
wait_listen "$port" peer || { peer_wait bw_srv 1; fail "ib_write_bw's server did not listen"; }
timeout "$T" srnic exec -- ib_write_bw -R -p "$port" -s 65536 -n 1000000 "$PEER" >/tmp/bw_cli.log 2>&1 &
pid=$!
mid_transfer "ib_write_bw"
peer 'kill -9 $(pidof ib_write_bw)' || fail "kill on the peer"
echo "-- ib_write_bw's server (peer):"
peer_wait bw_srv 30
expect_eq "ib_write_bw's server killed by SIGKILL (exit status)" "$?" 137
wait "$pid"
rc=$?
tail -n 5 /tmp/bw_cli.log
ended_by_itself "ib_write_bw's client, the survivor" "$rc"
expect_idle
pass
