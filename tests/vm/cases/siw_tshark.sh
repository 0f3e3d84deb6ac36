# SPDX-License-Identifier: GPL-2.0
# budget: 50
# siw_tshark: the srnic <-> siw traffic of the rping cases, captured in VM a
# (tests/vm/progs/pcap_capture) and decoded on the host with tshark
# (tests/vm/host/siw_tshark.sh): rping both ways (srnic client against siw's
# `rping -s`, siw's `rping -c -V` against srnic's server), sizes 64, 4096 and
# 65535, CRC off and on, 10 pings each, plus srnic asking siw for markers (siw
# rejects). The VM side checks the runs; the host check decodes the capture.
. /srnic/lib.sh
long_only
N=10
load_srnic
siw_peer_up
pcap_capture eth0 /tmp/siw.pcap 7190 7209 2>/tmp/capture.log &
cap=$!
i=0
while ! grep -q capturing /tmp/capture.log && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
grep -q capturing /tmp/capture.log || fail "capture did not start"
# stop_capture: ends the capture and hands it and the list of runs to the host.
stop_capture() {
	kill "$cap"
	wait "$cap"
	caprc=$?
	cat /tmp/capture.log /tmp/siw.runs
	export_file siw.pcap /tmp/siw.pcap
	export_file siw.runs /tmp/siw.runs
}
# die REASON: fails the case, keeping the capture and both kernels' view for the
# post-mortem (the host saves the files even for a failed case).
die() {
	stop_capture
	dmesg | grep -E 'srnic|QP' | tail -n 20
	peer "dmesg | grep siw | tail -n 20"
	fail "$*"
}
: >/tmp/siw.runs
port=7190
for crc in "" --crc; do
	for size in 64 4096 65535; do
		# srnic's client against siw's server.
		peer_bg rping_srv "timeout 600 rping -s -a $PEER -p $port -S $size"
		wait_listen "$port" peer || die "siw rping -s did not listen"
		bounded 300 srnic rping -c -a "$PEER" -p "$port" -C "$N" -S "$size" -V -t 60 $crc || die "srnic rping -c (port $port)"
		peer_wait rping_srv 60 || die "siw rping -s (port $port)"
		echo "$port client ${crc:-nocrc} $size $N ok" >>/tmp/siw.runs
		port=$((port + 1))
		# siw's client against srnic's server.
		bounded 300 srnic rping -s -p "$port" -S "$size" -V -t 60 $crc &
		pid=$!
		wait_listen "$port" || die "srnic rping -s did not listen"
		out=$(peer "timeout 600 rping -c -a $ADDR -p $port -C $N -S $size -V") || die "siw rping -c (port $port)"
		echo "$out" | grep -v -e '^client DISCONNECT EVENT\.\.\.$' | grep . && die "siw rping -c errors (port $port)"
		wait $pid || die "srnic rping -s (port $port)"
		echo "$port server ${crc:-nocrc} $size $N ok" >>/tmp/siw.runs
		port=$((port + 1))
	done
done
# srnic asks siw for markers: siw rejects (R bit), srnic reports REJECTED.
peer_bg rping_srv "timeout 600 rping -s -a $PEER -p $port -S 64"
wait_listen "$port" peer || die "siw rping -s did not listen"
out=$(srnic rping -c -a "$PEER" -p "$port" -C 1 -t 30 --markers 2>&1)
echo "$out"
echo "$out" | grep -q "connection rejected by the peer" || die "no REJECTED with markers"
# The siw server is still there and serves a plain connection.
srnic rping -c -a "$PEER" -p "$port" -C "$N" -S 64 -V -t 60 || die "siw serves after the reject"
peer_wait rping_srv 60 || die "siw rping -s after the reject"
echo "$port client markers 64 $N rejected-then-ok" >>/tmp/siw.runs
stop_capture
[ "$caprc" = 0 ] || fail "the capture lost frames"
siw_peer_down
expect_idle
pass
