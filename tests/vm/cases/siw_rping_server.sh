# SPDX-License-Identifier: GPL-2.0
# siw_rping_server: srnic's rping client (VM a) against rdma-core's `rping -s`
# on Linux's siw (VM b): sizes 64, 4096 and 65535, 20 verified pings each
# (1000 in check-long),
# with CRC off and with CRC on (srnic asks for it, siw echoes it). The
# negotiated MPA options must be revision 2 (enhanced, IRD = ORD = 1) with CRC
# exactly when srnic asked for it.
. /srnic/lib.sh
long_only
N=$(count 20 1000)
load_srnic
siw_peer_up
port=7174
for crc in "" --crc; do
	for size in 64 4096 65535; do
		what="size $size ${crc:-no-crc}"
		peer_bg rping_srv "timeout 1500 rping -s -a $PEER -p $port -S $size"
		wait_listen "$port" peer || fail "siw rping -s did not listen ($what)"
		out=$(srnic rping -c -a "$PEER" -p "$port" -C "$N" -S "$size" -V -t 120 $crc 2>&1)
		rc=$?
		echo "$out"
		srv=$(peer_wait rping_srv 120) || { echo "$srv"; fail "siw rping -s failed ($what)"; }
		echo "$srv"
		# rping -s ends when the client disconnects, between two pings; it says
		# only that. Anything else (a bogus receive, a failed completion, a
		# disconnect in the middle of a ping) is a failure.
		echo "$srv" | grep -v -e '^server DISCONNECT EVENT\.\.\.$' -e '^wait for RDMA_READ_ADV state 10$' \
			| grep . && fail "siw rping -s reported errors ($what)"
		[ $rc = 0 ] || fail "srnic rping -c failed ($what)"
		echo "$out" | grep -q "^rping: client pings=$N size=$size " || fail "pings missing ($what)"
		mpa=$(echo "$out" | sed -n 's/^srnic: rping connected .* ird=\([0-9]*\) ord=\([0-9]*\) mpa=\(.*\)$/\1 \2 \3/p')
		expect_mpa "$what" "$mpa" "$crc"
		port=$((port + 1))
	done
done
siw_peer_down
expect_idle
pass
