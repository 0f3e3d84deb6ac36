# SPDX-License-Identifier: GPL-2.0
# budget: 100
# kill_unpins: a process SIGKILLed in the middle of RDMA transfers leaves nothing
# behind. srnic-vmtest stress registers 4 MiB (1,024 pages) on each side and
# keeps RDMA WRITEs and READs in flight. Round 1 kills the client (here), round
# 2 the server (peer). Each time: both sides had pages pinned while it ran; the
# survivor's QP reports DISCONNECTED and the survivor exits 0; within 10 s
# srnic holds nothing in either VM (expect_idle: every object gauge at zero;
# kmemleak is checked by the harness at the end).
. /srnic/lib.sh
load_srnic_both
base_here=$(srnic_stat pinned_pages)
base_peer=$(peer ". /srnic/lib.sh; srnic_stat pinned_pages")

# pinned_while_running: waits (30 s) until both VMs have more pages pinned than
# at the baseline, as they must while the transfers run.
pinned_here() { [ "$(srnic_stat pinned_pages)" -gt "$base_here" ]; }
pinned_peer() { [ "$(peer ". /srnic/lib.sh; srnic_stat pinned_pages")" -gt "$base_peer" ]; }
pinned_while_running() {
	check "pages pinned here while transfers run (baseline $base_here)" wait_until 30 pinned_here
	check "pages pinned on the peer while transfers run (baseline $base_peer)" wait_until 30 pinned_peer
}

# Round 1: kill the client.
rm -f /tmp/stress.pid
peer_bg stress_srv "srnic-vmtest stress -s -p 19800 -t 60 --size 4194304"
srnic-vmtest stress -c "$PEER" -p 19800 -t 60 --size 4194304 --pidfile /tmp/stress.pid >/tmp/stress.log 2>&1 &
pid=$!
check "client transfers running" wait_until 120 test -f /tmp/stress.pid
pinned_while_running
kill -9 "$pid"
wait "$pid"
rc=$?
cat /tmp/stress.log
expect_eq "client killed by SIGKILL (exit status)" "$rc" 137
echo "-- server side (peer):"
peer_wait stress_srv 120 || fail "round 1: the server did not see the disconnect"
expect_idle

# Round 2: kill the server.
peer "rm -f /tmp/stress.pid"
peer_bg stress_srv2 "srnic-vmtest stress -s -p 19810 -t 60 --size 4194304 --pidfile /tmp/stress.pid"
srnic-vmtest stress -c "$PEER" -p 19810 -t 60 --size 4194304 >/tmp/stress2.log 2>&1 &
pid=$!
check "client transfers running" wait_until 120 grep -q "transfers running" /tmp/stress2.log
pinned_while_running
peer 'kill -9 $(cat /tmp/stress.pid)' || fail "round 2: kill on the peer"
wait "$pid"
rc=$?
cat /tmp/stress2.log
expect_eq "client (survivor) exit status" "$rc" 0
echo "-- server side (peer):"
peer_wait stress_srv2 60
expect_eq "server killed by SIGKILL (exit status)" "$?" 137
expect_idle
pass
