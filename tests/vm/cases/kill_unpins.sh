# SPDX-License-Identifier: GPL-2.0
# kill_unpins: a process SIGKILLed in the middle of RDMA transfers leaves nothing
# behind. srnic-vmtest stress registers 16 MiB on each side and keeps RDMA
# WRITEs and READs in flight. Round 1 kills the client (here), round 2 the
# server (peer). Each time: both sides had pages pinned while it ran; the
# survivor's QP reports DISCONNECTED and the survivor exits 0; within 10 s
# pinned_pages is back at its baseline and no QP is left on
# either VM (kmemleak is checked by the harness at the end).
. /srnic/lib.sh
load_srnic_both
base_here=$(srnic_stat pinned_pages)
base_peer=$(peer ". /srnic/lib.sh; srnic_stat pinned_pages")

# pinned_while_running: both VMs have more pages pinned than at the baseline.
pinned_while_running() {
	local here peer_now
	here=$(srnic_stat pinned_pages)
	peer_now=$(peer ". /srnic/lib.sh; srnic_stat pinned_pages")
	check "pages pinned here while transfers run ($here > $base_here)" [ "$here" -gt "$base_here" ]
	check "pages pinned on the peer while transfers run ($peer_now > $base_peer)" [ "$peer_now" -gt "$base_peer" ]
}

# Round 1: kill the client.
rm -f /tmp/stress.pid
peer_bg stress_srv "srnic-vmtest stress -s -p 19800 -t 60 --size 16777216"
srnic-vmtest stress -c "$PEER" -p 19800 -t 60 --size 16777216 --pidfile /tmp/stress.pid >/tmp/stress.log 2>&1 &
pid=$!
i=0
while [ ! -f /tmp/stress.pid ] && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
check "client transfers running" [ -f /tmp/stress.pid ]
sleep 2
pinned_while_running
kill -9 "$pid"
wait "$pid"
rc=$?
cat /tmp/stress.log
expect_eq "client killed by SIGKILL (exit status)" "$rc" 137
echo "-- server side (peer):"
peer_wait stress_srv 120 || fail "round 1: the server did not see the disconnect"
expect_idle "$base_here" "$base_peer"

# Round 2: kill the server.
peer "rm -f /tmp/stress.pid"
peer_bg stress_srv2 "srnic-vmtest stress -s -p 19810 -t 60 --size 16777216 --pidfile /tmp/stress.pid"
srnic-vmtest stress -c "$PEER" -p 19810 -t 60 --size 16777216 >/tmp/stress2.log 2>&1 &
pid=$!
i=0
while ! grep -q "transfers running" /tmp/stress2.log && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
check "client transfers running" grep -q "transfers running" /tmp/stress2.log
sleep 2
pinned_while_running
peer 'kill -9 $(cat /tmp/stress.pid)' || fail "round 2: kill on the peer"
wait "$pid"
rc=$?
cat /tmp/stress2.log
expect_eq "client (survivor) exit status" "$rc" 0
echo "-- server side (peer):"
peer_wait stress_srv2 60
expect_eq "server killed by SIGKILL (exit status)" "$?" 137
expect_idle "$base_here" "$base_peer"
unload_srnic_both
pass
