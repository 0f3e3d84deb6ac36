# SPDX-License-Identifier: GPL-2.0
# budget: 120
# siw_lossy_crc: srnic against Linux's siw with MPA CRC over a link that
# loses frames both ways (tc netem, 2 % on each VM's eth0): perftest's
# ib_write_bw -b (both sides write at once, 64 KiB messages), srnic as the
# client of siw's server and siw as the client of srnic's. The data flowing
# both ways means the ACKs that carry SACK blocks ride on data segments,
# whose payload then shrinks below the MSS the senders framed their FPDUs
# for: FPDUs start in the middle of segments and span two, on both stacks'
# transmit sides, and the receivers must frame them (and check their CRC)
# all the same (RFC 5044 section 8: a receiver may not rely on alignment).
# Both programs must exit 0 with a result line, CRC must have been
# negotiated, and TCP must have retransmitted in both VMs (the loss
# happened).
. /srnic/lib.sh
ITERS=$(count 10 100)
T=$(scaled 240)
LOSS=2
netem_off() {
	/bin/tc qdisc del dev eth0 root 2>/dev/null
	peer "/bin/tc qdisc del dev eth0 root 2>/dev/null; true"
}
trap netem_off EXIT
# tcp_retrans [peer]: TCP's RetransSegs in this VM (or the peer).
tcp_retrans() {
	local cmd="awk '/^Tcp:/ { if (!n) { for (i = 1; i <= NF; i++) if (\$i == \"RetransSegs\") c = i; n = 1 } else print \$c }' /proc/net/snmp"
	if [ "${1:-}" = peer ]; then peer "$cmd"; else sh -c "$cmd"; fi
}
# sack_recoveries [peer]: TcpExt's TCPSackRecovery (SACK-driven recoveries).
sack_recoveries() {
	local cmd="awk '/^TcpExt:/ { if (!n) { for (i = 1; i <= NF; i++) if (\$i == \"TCPSackRecovery\") c = i; n = 1 } else print \$c }' /proc/net/netstat"
	if [ "${1:-}" = peer ]; then peer "$cmd"; else sh -c "$cmd"; fi
}
load_srnic_both
siw_peer_up
ra0=$(tcp_retrans) rb0=$(tcp_retrans peer)
sa0=$(sack_recoveries) sb0=$(sack_recoveries peer)
[ -n "$ra0" ] && [ -n "$rb0" ] || fail "no RetransSegs in /proc/net/snmp"
q="netem loss ${LOSS}%"
/bin/tc qdisc replace dev eth0 root $q || fail "tc netem on a"
peer "/bin/tc qdisc replace dev eth0 root $q" || fail "tc netem on b"
port=7720
for dir in srnic-siw siw-srnic; do
	args="-R -b -p $port -s 65536 -n $ITERS"
	case $dir in
	srnic-siw) perftest_pair peer "$port" "$T" siw "ib_write_bw $args" srnic-crc "ib_write_bw $args $PEER" ;;
	siw-srnic) perftest_pair here "$port" "$T" srnic-crc "ib_write_bw $args" siw "ib_write_bw $args $ADDR" ;;
	esac
	perftest_expect "ib_write_bw -b $dir" ib_write_bw
	echo "ok: ib_write_bw -b $dir with ${LOSS}% loss: $PERF_FIG MB/s"
	expect_crc "ib_write_bw -b $dir" here on
	port=$((port + 1))
done
netem_off
ra=$(($(tcp_retrans) - ra0)) rb=$(($(tcp_retrans peer) - rb0))
echo "TCP retransmitted segments: a $ra, b $rb; SACK recoveries: a $(($(sack_recoveries) - sa0)), b $(($(sack_recoveries peer) - sb0))"
[ "$ra" -gt 0 ] || fail "VM a retransmitted nothing: no loss to test"
[ "$rb" -gt 0 ] || fail "VM b retransmitted nothing: no loss to test"
siw_peer_down
expect_idle
pass
