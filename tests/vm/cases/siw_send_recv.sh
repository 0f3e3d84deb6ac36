# SPDX-License-Identifier: GPL-2.0
# siw_send_recv: a SEND/RECV exchange with rdma-core's ucmatose on Linux's siw
# (VM b) as the server and `srnic ucmatose` (VM a) as the client: the server
# sends 20 messages (100 in check-long), the client sends them back, the server
# disconnects; 100 and 4096 bytes, CRC off and on. Every message must arrive with its exact length
# and both sides must end cleanly ("return status 0" from ucmatose).
#
# Only this direction: ucmatose's server sends first, which RFC 5044 forbids an
# MPA responder that has not yet received an FPDU (only RFC 6581's peer-to-peer
# mode allows it, and siw's initiator does not use it). siw's initiator reads
# its Reply's private data with 4 bytes to spare and fails the connection if an
# FPDU is already behind it, so srnic as the responder of siw's ucmatose client
# would race with it (see Documentation/srnic/interop.rst).
. /srnic/lib.sh
C=$(count 20 100)
load_srnic
siw_peer_up
port=7471
for crc in "" --crc; do
	for size in 100 4096; do
		what="size $size ${crc:-no-crc}"
		peer_bg ucma_srv "timeout 300 ucmatose -b $PEER -p $port -C $C -S $size"
		wait_listen "$port" peer || fail "ucmatose server did not listen ($what)"
		out=$(bounded 300 srnic ucmatose -s "$PEER" -p "$port" -C "$C" -S "$size" -t 60 $crc 2>&1)
		rc=$?
		echo "$out"
		srv=$(peer_wait ucma_srv 60)
		prc=$?
		echo "$srv"
		[ $rc = 0 ] || fail "srnic ucmatose client ($what)"
		[ $prc = 0 ] && echo "$srv" | grep -q "^return status 0$" || fail "ucmatose server ($what)"
		echo "$out" | grep -q "^ucmatose: client sent=$C received=$C size=$size " || fail "message count ($what)"
		mpa=$(echo "$out" | sed -n 's/^srnic: ucmatose connected .* ird=\([0-9]*\) ord=\([0-9]*\) mpa=\(.*\)$/\1 \2 \3/p')
		expect_mpa "$what" "$mpa" "$crc"
		port=$((port + 1))
	done
done
siw_peer_down
expect_idle
pass
