# SPDX-License-Identifier: GPL-2.0
# budget: 55
# markers_interop: MPA markers (RFC 5044 section 4.3).
# 1. srnic <-> srnic with markers: `srnic rping` both ends (client in VM a,
#    server in VM b), 20 verified pings (200 in check-long) of 64, 4096 and
#    65535 bytes, markers asked by both sides (with and without CRC) and by the
#    client only; the negotiated directions must be what was asked for.
# 2. siw never inserts markers: srnic asking siw's `rping -s` for them gets an
#    MPA Reply with the reject bit, which srnic reports as REJECTED ("connection
#    rejected by the peer"), cleanly; the same siw server then serves srnic's
#    plain connection.
# 3. srnic's server asking siw's `rping -c` for markers (M in its Reply): siw
#    refuses the connection; srnic's server sees it close before the first
#    message and ends without an error or a hang.
. /srnic/lib.sh
long_only
N=$(count 20 200)
load_srnic_both
port=7300
run() { # run WHAT WANT-CLIENT-MPA WANT-SERVER-MPA "CLIENT-OPTS" "SERVER-OPTS"
	local what=$1 want_c=$2 want_s=$3 copts=$4 sopts=$5 out srv got
	for size in 64 4096 65535; do
		port=$((port + 1))
		peer_bg rping_srv "srnic rping -s -p $port -S $size -V -t 120 $sopts"
		wait_listen "$port" peer || fail "srnic rping -s did not listen ($what)"
		out=$(srnic rping -c -a "$PEER" -p "$port" -C "$N" -S "$size" -V -t 120 $copts 2>&1) \
			|| { echo "$out"; fail "srnic rping -c ($what, $size bytes)"; }
		srv=$(peer_wait rping_srv 120) || { echo "$srv"; fail "srnic rping -s ($what, $size bytes)"; }
		echo "$out"; echo "$srv"
		echo "$out" | grep -q "^rping: client pings=$N size=$size " || fail "pings missing"
		got=$(echo "$out" | sed -n 's/^srnic: rping connected .* mpa=\(.*\)$/\1/p')
		expect_eq "client's negotiated MPA ($what, $size bytes)" "$got" "$want_c"
		got=$(echo "$srv" | sed -n 's/^srnic: rping established: .* mpa=\(.*\)$/\1/p')
		expect_eq "server's negotiated MPA ($what, $size bytes)" "$got" "$want_s"
	done
}
run "markers both ways" markers,markers-tx,markers-rx markers,markers-tx,markers-rx --markers --markers
run "markers and CRC" crc,markers,crc-tx,crc-rx,markers-tx,markers-rx crc,markers,crc-tx,crc-rx,markers-tx,markers-rx \
	"--markers --crc" "--markers --crc"
run "markers to the client only" markers,markers-rx markers,markers-tx --markers ""
unload_srnic_both

load_srnic
siw_peer_up
port=$((port + 1))
peer_bg rping_srv "timeout 600 rping -s -a $PEER -p $port -S 64"
wait_listen "$port" peer || fail "siw rping -s did not listen"
out=$(srnic rping -c -a "$PEER" -p "$port" -C 1 -t 30 --markers 2>&1)
rc=$?
echo "$out"
expect_eq "srnic rping exit status" "$rc" 1
echo "$out" | grep -q "connection rejected by the peer" || fail "siw's reject was not reported as REJECTED"
out=$(srnic rping -c -a "$PEER" -p "$port" -C 100 -S 64 -V -t 60 2>&1) || { echo "$out"; fail "plain connection after the reject"; }
echo "$out"
srv=$(peer_wait rping_srv 60) || { echo "$srv"; fail "siw rping -s"; }
echo "$srv"

port=$((port + 1))
srnic rping -s -p "$port" -S 64 -t 60 --markers >/tmp/rping_srv.log 2>&1 &
pid=$!
wait_listen "$port" || fail "srnic rping -s did not listen"
out=$(peer "timeout 120 rping -c -a $ADDR -p $port -C 10 -S 64 -V")
rc=$?
echo "$out (exit status $rc)"
wait $pid
src=$?
cat /tmp/rping_srv.log
echo "$out" | grep -q "cma event RDMA_CM_EVENT_\(REJECTED\|CONNECT_ERROR\)" || fail "siw's rping -c did not refuse"
[ $src = 0 ] || fail "srnic's server did not end cleanly"
grep -q "^rping: server pings=0 " /tmp/rping_srv.log || fail "srnic's server served pings"
siw_peer_down
expect_idle
pass
