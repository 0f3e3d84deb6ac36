# SPDX-License-Identifier: GPL-2.0
# budget: 90
# ipv6: iWARP over IPv6 (each VM's eth0 has an RFC 3849 address beside its
# IPv4 one, see init: a is 2001:db8::1, b is 2001:db8::2).
#  1. srnic to srnic: verified `srnic xfer` WRITE and READ with CRC to b's
#     IPv6 address, by a host name that has only that address (/etc/hosts);
#     the server listens on [::], its default. The tracepoints show both
#     IPv6 addresses on both sides. An IPv4 client of the same [::] listener
#     shows as IPv4 on b, not as ::ffff:192.0.2.1.
#  2. srnic and siw: rdma-core's ucmatose on siw (b) as the server bound to
#     b's IPv6 address, `srnic ucmatose` as the client, CRC off and on (the
#     direction siw_send_recv explains).
#  3. An IPv6 listener bound to one address (srnic xfer -s -b) and a client
#     that names it in brackets.
#  4. Unmodified rdma-core programs on srnic over IPv6: ucmatose through the
#     stand-ins (`srnic exec`) on both sides, server bound to b's IPv6
#     address.
. /srnic/lib.sh
C=$(count 5 50)
/bin/ip -6 addr show dev eth0 | grep -q "inet6 $ADDR6/64" || fail "no $ADDR6 on eth0 here"
peer "/bin/ip -6 addr show dev eth0" | grep -q "inet6 $PEER6/64" || fail "no $PEER6 on eth0 on the peer"
load_srnic_both
trace_start
peer '. /srnic/lib.sh; trace_start'
# Name resolution from /etc/hosts alone (the VMs have no DNS).
grep -q '^hosts:' /etc/nsswitch.conf 2>/dev/null || echo 'hosts: files' >>/etc/nsswitch.conf
echo "$PEER6 peer6" >>/etc/hosts

# 1.
P=7481
peer_bg xfer_srv "srnic xfer -s -p $P -t 60 --count 3"
wait_listen $P peer || fail "the xfer server did not listen"
peer "grep -qiE '$(listen_pattern $P)' /proc/net/tcp6" || fail "the server's default listener is not IPv6 ([::])"
srnic xfer -c peer6 -p $P -t 60 --op write --size 65536 --sge 2 --crc || fail "WRITE over IPv6"
srnic xfer -c peer6 -p $P -t 60 --op read --size 65536 --crc || fail "READ over IPv6"
srnic xfer -c "$PEER" -p $P -t 60 --op write --size 4096 || fail "WRITE over IPv4 to the [::] listener"
out=$(peer_wait xfer_srv 60) || { echo "$out"; fail "the xfer server failed"; }
echo "$out"
expect_eq "IPv6 clients the server saw" "$(echo "$out" | grep -c "^srnic: xfer from \[$ADDR6\]:[0-9]*: ")" 2
expect_eq "IPv4 clients the server saw" "$(echo "$out" | grep -c "^srnic: xfer from $ADDR:[0-9]*: ")" 1
v6="local=\[$ADDR6\]:[0-9]+ remote=\[$PEER6\]:$P status=0"
expect_eq "srnic_established over IPv6 here" "$(trace_count established "$v6")" 2
expect_eq "srnic_established over IPv4 here" "$(trace_count established "local=$ADDR:[0-9]+ remote=$PEER:$P status=0")" 1
v6="local=\[$PEER6\]:$P remote=\[$ADDR6\]:[0-9]+ status=0"
expect_eq "srnic_request over IPv6 on b" "$(peer_trace_count request "$v6")" 2
expect_eq "srnic_established over IPv6 on b" "$(peer_trace_count established "$v6")" 2
expect_eq "srnic_established over IPv4 on b (not IPv4-mapped)" \
	"$(peer_trace_count established "local=$PEER:$P remote=$ADDR:[0-9]+ status=0")" 1
trace_stop
peer '. /srnic/lib.sh; trace_stop'

# 2.
siw_peer_up
port=7484
for crc in "" --crc; do
	ucmatose_siw "$PEER6" "$port" "$C" 4096 "$crc" "siw over IPv6, ${crc:-no-crc}"
	port=$((port + 1))
done
siw_peer_down

# 3.
P=7487
peer_bg xfer_srv "srnic xfer -s -b $PEER6 -p $P -t 60 --count 1"
wait_listen $P peer || fail "the xfer server bound to $PEER6 did not listen"
srnic xfer -c "[$PEER6]" -p $P -t 60 --op send --size 4096 || fail "SEND to [$PEER6]"
peer_wait xfer_srv 60 || fail "the bound xfer server failed"

# 4.
P=7488
compat_pair peer $P "$(scaled 120)" srnic "ucmatose -b $PEER6 -p $P -C $C" srnic "ucmatose -s $PEER6 -p $P -C $C"
echo "$CLI_OUT"
echo "-- server side (peer):"
echo "$SRV_OUT"
expect_eq "ucmatose client on the stand-ins over IPv6: exit status" "$CLI_RC" 0
expect_eq "ucmatose server on the stand-ins over IPv6: exit status" "$SRV_RC" 0
echo "$SRV_OUT" | grep -q "^return status 0$" || fail "ucmatose server on the stand-ins: no clean end"
expect_idle
pass
