# SPDX-License-Identifier: GPL-2.0
# budget: 60
# rdma_compat: unmodified Debian rdma-core programs on srnic, through the
# stand-ins of tools/rdma-compat and `srnic exec` (Documentation/srnic/
# rdma-core.rst), srnic on both sides:
#  - ibv_devices and ibv_devinfo -v list srnic0: iWARP transport, Ethernet link
#    layer, no atomics, max_qp_wr and max_cqe as `srnic info` reports them;
#  - rping (server on the peer, client here with -V: it verifies every echo)
#    with 64, 4096 and 65535 bytes, 20 pings each (1000 in check-long);
#  - rdma_server/rdma_client (synchronous rdma_cm endpoints, rdma_get_request,
#    rdma_get_send_comp/rdma_get_recv_comp over completion channels);
#  - ucmatose (asynchronous rdma_cm, its own CQs, 10 SENDs each way);
#  - rdma_server/rdma_client and ucmatose again with `srnic exec --crc` on
#    both sides: CRC both ways on both (the stand-ins' trace);
#  - rping -V with `srnic exec --crc --markers` on the server: the negotiated
#    MPA options (the stand-in's SRNIC_COMPAT_TRACE) show CRC both ways and
#    markers to the server.
. /srnic/lib.sh
N=$(count 20 1000)
# Each program run may take this long (1000 pings in check-long take longer).
T=$(scaled "$(count 120 1500)")
load_srnic_both

out=$(srnic exec -- ibv_devices 2>&1)
rc=$?
echo "$out"
expect_eq "ibv_devices exit status" "$rc" 0
check "ibv_devices lists srnic0" sh -c 'echo "$1" | grep -q "^ *srnic0 "' _ "$out"

info=$(srnic info) || fail "srnic info"
out=$(srnic exec -- ibv_devinfo -v 2>&1)
rc=$?
echo "$out"
expect_eq "ibv_devinfo exit status" "$rc" 0
field() { echo "$out" | sed -n "s/^[[:space:]]*$1:[[:space:]]*\([^[:space:]]*\).*/\1/p" | head -1; }
expect_eq "hca_id" "$(field hca_id)" srnic0
expect_eq "transport" "$(field transport)" iWARP
expect_eq "link_layer" "$(field link_layer)" Ethernet
expect_eq "atomic_cap" "$(field atomic_cap)" ATOMIC_NONE
expect_eq "max_qp_wr" "$(field max_qp_wr)" "$(echo "$info" | sed -n 's/^max_qp_wr: \([0-9]*\).*/\1/p')"
expect_eq "max_cqe" "$(field max_cqe)" "$(echo "$info" | sed -n 's/^max_cqe: \([0-9]*\).*/\1/p')"

port=7380
for size in 64 4096 65535; do
	# As in siw_rping_server: the server serves until the client disconnects.
	peer_bg rping_srv "srnic exec -- timeout $T rping -s -a $PEER -p $port -S $size"
	wait_listen "$port" peer || fail "rping -s did not listen (size $size)"
	cli=$(timeout $T srnic exec -- rping -c -a "$PEER" -p "$port" -C "$N" -S "$size" -V 2>&1)
	rc=$?
	echo "$cli"
	srv=$(peer_wait rping_srv 600)
	src=$?
	echo "-- server side (peer):"
	echo "$srv"
	rping_status "rping -c exit status (size $size)" "$rc" "$cli"
	rping_status "rping -s exit status (size $size)" "$src" "$srv"
	# rping exits 0 even when a ping fails midway: each side must print
	# nothing but its disconnect (the server may also be between two pings).
	check "rping -c printed only its disconnect (size $size)" \
		sh -c '! echo "$1" | grep -v -e "^client DISCONNECT EVENT\.\.\.$" \
			-e "^rdma_get_cm_event: Bad file descriptor$" | grep -q .' _ "$cli"
	check "rping -s printed only its disconnect (size $size)" \
		sh -c '! echo "$1" | grep -v -e "^server DISCONNECT EVENT\.\.\.$" \
			-e "^wait for RDMA_READ_ADV state 10$" \
			-e "^rdma_get_cm_event: Bad file descriptor$" | grep -q .' _ "$srv"
	port=$((port + 1))
done

peer_bg rdma_srv "srnic exec -- timeout 120 rdma_server -s $PEER -p $port"
wait_listen "$port" peer || fail "rdma_server did not listen"
cli=$(timeout 120 srnic exec -- rdma_client -s "$PEER" -p "$port" 2>&1)
rc=$?
echo "$cli"
srv=$(peer_wait rdma_srv 120)
src=$?
echo "-- server side (peer):"
echo "$srv"
expect_eq "rdma_client exit status" "$rc" 0
expect_eq "rdma_server exit status" "$src" 0
check "rdma_client ended with 0" sh -c 'echo "$1" | grep -q "rdma_client: end 0"' _ "$cli"
check "rdma_server ended with 0" sh -c 'echo "$1" | grep -q "rdma_server: end 0"' _ "$srv"
port=$((port + 1))

peer_bg ucma_srv "srnic exec -- timeout 120 ucmatose -b $PEER -p $port -C 10"
wait_listen "$port" peer || fail "ucmatose did not listen"
cli=$(timeout 120 srnic exec -- ucmatose -s "$PEER" -p "$port" -C 10 2>&1)
rc=$?
echo "$cli"
srv=$(peer_wait ucma_srv 120)
src=$?
echo "-- server side (peer):"
echo "$srv"
expect_eq "ucmatose client exit status" "$rc" 0
expect_eq "ucmatose server exit status" "$src" 0
port=$((port + 1))

# The same two with CRC, both sides asking (`srnic exec --crc`).
compat_pair peer "$port" "$T" srnic-crc "rdma_server -s $PEER -p $port" \
	srnic-crc "rdma_client -s $PEER -p $port"
echo "$CLI_OUT"
echo "-- server side (peer):"
echo "$SRV_OUT"
expect_eq "rdma_client --crc exit status" "$CLI_RC" 0
expect_eq "rdma_server --crc exit status" "$SRV_RC" 0
check "rdma_client --crc ended with 0" sh -c 'echo "$1" | grep -q "rdma_client: end 0"' _ "$CLI_OUT"
check "rdma_server --crc ended with 0" sh -c 'echo "$1" | grep -q "rdma_server: end 0"' _ "$SRV_OUT"
expect_crc "rdma_client --crc" here on
expect_crc "rdma_server --crc" peer on
port=$((port + 1))
compat_pair peer "$port" "$T" srnic-crc "ucmatose -b $PEER -p $port -C 10" \
	srnic-crc "ucmatose -s $PEER -p $port -C 10"
echo "$CLI_OUT"
echo "-- server side (peer):"
echo "$SRV_OUT"
expect_eq "ucmatose --crc client exit status" "$CLI_RC" 0
expect_eq "ucmatose --crc server exit status" "$SRV_RC" 0
expect_crc "ucmatose --crc client" here on
expect_crc "ucmatose --crc server" peer on
port=$((port + 1))

# MPA options through `srnic exec --crc --markers` (the server asks for
# both; the client asks for nothing). What each side negotiated comes from
# the stand-in's trace (SRNIC_COMPAT_TRACE): CRC both ways (CRC_TX|CRC_RX,
# 0x300) on both, markers from the client to the server (the client's
# MARKERS_TX 0x400, the server's MARKERS_RX 0x800).
peer "rm -f /tmp/trace_srv"
peer_bg mpa_srv "SRNIC_COMPAT_TRACE=/tmp/trace_srv srnic exec --crc --markers -- timeout $T rping -s -a $PEER -p $port -S 4096"
wait_listen "$port" peer || fail "rping -s --crc did not listen"
rm -f /tmp/trace_cli
cli=$(SRNIC_COMPAT_TRACE=/tmp/trace_cli timeout $T srnic exec -- rping -c -a "$PEER" -p "$port" -C "$N" -S 4096 -V 2>&1)
rc=$?
echo "$cli"
srv=$(peer_wait mpa_srv 120)
src=$?
rping_status "rping -c against a CRC and markers server: exit status" "$rc" "$cli"
rping_status "rping -s with --crc --markers: exit status" "$src" "$srv"
mpa_of() { sed -n 's/^established mpa=\(0x[0-9a-f]*\)$/\1/p' | head -n1; }
cli_mpa=$(mpa_of </tmp/trace_cli)
srv_mpa=$(peer "cat /tmp/trace_srv" | mpa_of)
echo "negotiated: client $cli_mpa, server $srv_mpa"
[ -n "$cli_mpa" ] && [ $((cli_mpa & 0x700)) = $((0x700)) ] || fail "the client did not use CRC and send markers ($cli_mpa)"
[ -n "$srv_mpa" ] && [ $((srv_mpa & 0xb00)) = $((0xb00)) ] || fail "the server did not use CRC and receive markers ($srv_mpa)"

expect_idle
pass
