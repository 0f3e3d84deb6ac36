# SPDX-License-Identifier: GPL-2.0
# budget: 60
# conn_flood: MPA start-up never blocks on a peer, and a flood of connections
# cannot lock a real client out of a listener.
# 1. VM a holds N TCP connections that send nothing and N that send half an MPA
#    Request header (N = 300; check-long: 1,000) to a srnic listener (backlog
#    8) on VM b, whose request timeout is raised to 10 minutes: only eviction
#    can make room. With the flood in place, a real client on VM a moves 1 MiB
#    (check-long: 16 MiB) verified (WRITE, CRC) through the same listener.
#    Checked: the transfer; meanwhile VM b holds at
#    most 2 x 8 connection requests and 2 x 8 + 2 sockets; while the listener
#    still stands, the flood's connections were closed by the server (evicted)
#    but for at most 8.
# 2. With a 1 s request timeout, 8 connections that send nothing or half a
#    Request are all closed by the server (bounded wait).
. /srnic/lib.sh
load_srnic_both
N=$(count 300 1000)
SIZE=$(count 1048576 16777216)
BACKLOG=8
P=$((XFER_PORT + 60))
TIMEOUT_PARAM=/sys/module/srnic/parameters/mpa_request_timeout_ms

peer "echo 600000 > $TIMEOUT_PARAM" || fail "cannot set the request timeout"
# srnic xfer's server listens with a backlog of 8. It waits for a second
# client that never comes, so its listener still stands when the flood reports.
# Its -t (seconds without progress before it gives up) must outlast the flood,
# which takes minutes on a slow host: with -t 60 the listener went away 60 s
# into a slow flood and the rest of its connections were refused.
peer_bg flood_srv "srnic xfer -s -p $P -t $(scaled 300) --count 2"
wait_listen "$P" peer || fail "the server did not listen"
rm -f /tmp/flood.ready /tmp/flood.stop
bg_start flood "srnic-vmtest flood --to $PEER -p $P --idle $N --half $N --ready /tmp/flood.ready --stop /tmp/flood.stop"
wait_until 600 test -s /tmp/flood.ready || { cat /tmp/flood.log; fail "the flood did not get in place"; }
opened=$(cat /tmp/flood.ready)
echo "the flood holds $opened connections"
[ "$opened" -ge $((N * 2 * 9 / 10)) ] || { cat /tmp/flood.log; fail "the flood got only $opened of $((2 * N)) TCP connections"; }
check_bounded() {
	local st reqs socks
	st=$(peer "srnic stats")
	reqs=$(echo "$st" | sed -n 's/^conn_requests: //p')
	socks=$(echo "$st" | sed -n 's/^sockets: //p')
	echo "$1: VM b holds conn_requests=$reqs sockets=$socks"
	[ "$reqs" -le $((2 * BACKLOG)) ] || fail "$1: $reqs connection requests held (most $((2 * BACKLOG)))"
	[ "$socks" -le $((2 * BACKLOG + 2)) ] || fail "$1: $socks sockets held (most $((2 * BACKLOG + 2)))"
}
check_bounded "flood in place"
srnic xfer -c "$PEER" -p "$P" -t 60 --op write --size "$SIZE" --sge 4 --crc ||
	{ peer_wait flood_srv 1; fail "the real client did not get through the flood"; }
check_bounded "after the transfer"
touch /tmp/flood.stop
wait_until 120 test -f /tmp/flood.rc || fail "the flood did not stop"
cat /tmp/flood.log
closed=$(sed -n 's/^flood: closed_by_server=\([0-9]*\).*/\1/p' /tmp/flood.log)
[ -n "$closed" ] || fail "no report from the flood"
[ "$closed" -ge $((opened - BACKLOG)) ] ||
	fail "the server closed $closed of $opened connections (want all but at most $BACKLOG)"
echo "ok: the server evicted $closed of the flood's $opened connections"
peer ". /srnic/lib.sh; bg_kill_all"

# 2. The request timeout.
peer "echo 1000 > $TIMEOUT_PARAM" || fail "cannot set the request timeout"
P2=$((P + 2))
peer_bg flood_srv2 "srnic xfer -s -p $P2 -t 60 --count 1"
wait_listen "$P2" peer || fail "the second server did not listen"
rm -f /tmp/flood.ready /tmp/flood2.stop
srnic-vmtest flood --to "$PEER" -p "$P2" --idle 4 --half 4 --ready /tmp/flood.ready \
	--stop /tmp/flood2.stop --hold "$(scaled 60)" --until-closed >/tmp/flood2.log 2>&1
cat /tmp/flood2.log
expect_eq "connections closed by the request timeout" \
	"$(sed -n 's/^flood: closed_by_server=\([0-9]*\).*/\1/p' /tmp/flood2.log)" 8
peer "echo 10000 > $TIMEOUT_PARAM"
# The second server has no client: stop it, then check nothing is left.
peer ". /srnic/lib.sh; bg_kill_all"
expect_idle
pass
