# SPDX-License-Identifier: GPL-2.0
# budget: 60
# rdma_compat_siw: unmodified rping on both ends, one on srnic (VM a, through
# `srnic exec` and the stand-ins of tools/rdma-compat), the other on Linux's siw
# (VM b, rdma-core's own libraries): rping -c -V on srnic against siw's
# rping -s, then siw's rping -c -V against rping -s on srnic; 64, 4096 and 65535
# bytes, 20 pings each (1000 in check-long). Each side must exit 0 and print
# nothing but its disconnect (rping_status: or its known exit race after it).
# Then both directions again at 4096 bytes with
# `srnic exec --crc`: CRC is negotiated (the stand-in's trace says so).
. /srnic/lib.sh
N=$(count 20 1000)
# Each program run may take this long (1000 pings in check-long take longer).
T=$(scaled "$(count 120 1500)")
load_srnic
siw_peer_up
port=7420
only_disconnect() { # only_disconnect WHO OUTPUT
	! echo "$2" | grep -v -e "^$1 DISCONNECT EVENT\.\.\.$" -e '^wait for RDMA_READ_ADV state 10$' \
		-e '^rdma_get_cm_event: Bad file descriptor$' | grep -q .
}
for size in 64 4096 65535; do
	peer_bg rping_srv "timeout $T rping -s -a $PEER -p $port -S $size"
	wait_listen "$port" peer || fail "siw rping -s did not listen (size $size)"
	cli=$(timeout $T srnic exec -- rping -c -a "$PEER" -p "$port" -C "$N" -S "$size" -V 2>&1)
	rc=$?
	echo "$cli"
	[ "$rc" = 0 ] || dmesg | grep -i srnic | tail -20
	srv=$(peer_wait rping_srv 600)
	src=$?
	echo "-- siw's server (peer):"
	echo "$srv"
	rping_status "rping -c on srnic: exit status (size $size)" "$rc" "$cli"
	rping_status "rping -s on siw: exit status (size $size)" "$src" "$srv"
	check "rping -c on srnic printed only its disconnect (size $size)" only_disconnect client "$cli"
	check "rping -s on siw printed only its disconnect (size $size)" only_disconnect server "$srv"
	port=$((port + 1))

	srnic exec -- timeout $T rping -s -a "$ADDR" -p "$port" -S "$size" >/tmp/rping_srv.log 2>&1 &
	pid=$!
	wait_listen "$port" || fail "rping -s on srnic did not listen (size $size)"
	cli=$(PEER_TIMEOUT=$((T + 60)) peer "timeout $T rping -c -a $ADDR -p $port -C $N -S $size -V")
	rc=$?
	echo "$cli"
	if [ "$rc" != 0 ]; then
		# Where the program on srnic waits, and what srnic said.
		for t in /proc/$(pidof rping)/task/*; do
			echo "$t: $(cat "$t/comm") wchan $(cat "$t/wchan")"
		done
		dmesg | grep -i srnic | tail -20
	fi
	wait $pid
	src=$?
	echo "-- rping -s on srnic:"
	cat /tmp/rping_srv.log
	rping_status "rping -c on siw: exit status (size $size)" "$rc" "$cli"
	rping_status "rping -s on srnic: exit status (size $size)" "$src" "$(cat /tmp/rping_srv.log)"
	check "rping -c on siw printed only its disconnect (size $size)" only_disconnect client "$cli"
	check "rping -s on srnic printed only its disconnect (size $size)" \
		only_disconnect server "$(cat /tmp/rping_srv.log)"
	port=$((port + 1))
done

# CRC through `srnic exec --crc`, both directions, 4096 bytes: srnic asks for
# it (as initiator, then in its Reply), siw honours it; the stand-in's trace
# shows CRC both ways (CRC_TX|CRC_RX, 0x300) on srnic's side.
crc_used() { # crc_used TRACE
	local m
	m=$(sed -n 's/^established mpa=\(0x[0-9a-f]*\)$/\1/p' "$1" | head -n1)
	echo "negotiated on srnic: ${m:-none}"
	[ -n "$m" ] && [ $((m & 0x300)) = $((0x300)) ]
}
peer_bg rping_srv "timeout $T rping -s -a $PEER -p $port -S 4096"
wait_listen "$port" peer || fail "siw rping -s did not listen (CRC)"
rm -f /tmp/trace_cli
cli=$(SRNIC_COMPAT_TRACE=/tmp/trace_cli timeout $T srnic exec --crc -- rping -c -a "$PEER" -p "$port" -C "$N" -S 4096 -V 2>&1)
rc=$?
echo "$cli"
srv=$(peer_wait rping_srv 600)
src=$?
rping_status "rping -c --crc on srnic: exit status" "$rc" "$cli"
rping_status "rping -s on siw (CRC): exit status" "$src" "$srv"
crc_used /tmp/trace_cli || fail "srnic's rping -c did not use CRC"
port=$((port + 1))
rm -f /tmp/trace_srv
SRNIC_COMPAT_TRACE=/tmp/trace_srv srnic exec --crc -- timeout $T rping -s -a "$ADDR" -p "$port" -S 4096 >/tmp/rping_srv.log 2>&1 &
pid=$!
wait_listen "$port" || fail "rping -s --crc on srnic did not listen"
cli=$(PEER_TIMEOUT=$((T + 60)) peer "timeout $T rping -c -a $ADDR -p $port -C $N -S 4096 -V")
rc=$?
echo "$cli"
wait $pid
src=$?
rping_status "rping -c on siw against a CRC server: exit status" "$rc" "$cli"
rping_status "rping -s --crc on srnic: exit status" "$src" "$(cat /tmp/rping_srv.log)"
crc_used /tmp/trace_srv || fail "srnic's rping -s did not use CRC"
siw_peer_down
expect_idle
pass
