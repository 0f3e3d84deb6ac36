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
		ucmatose_siw "$PEER" "$port" "$C" "$size" "$crc" "size $size ${crc:-no-crc}"
		port=$((port + 1))
	done
done
siw_peer_down
expect_idle
pass
