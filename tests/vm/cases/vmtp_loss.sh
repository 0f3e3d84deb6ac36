# SPDX-License-Identifier: GPL-2.0
# budget: 90
# vmtp_loss: VMTP transactions through tc netem on both VMs' eth0 (loss 0.1,
# 1 and 5 %, with 1 % duplication and reordering): every Request reaches the
# server's user exactly once and in order, every Response is verified.
# Then selective retransmission: with 5 % of a's packets dropped (16 KiB
# Requests: sixteen packets of two 512-byte blocks each) and nothing else, a
# resends the blocks of the dropped packets (its retransmitted_blocks against
# netem's drop counter) and nothing b did not ask for (against b's
# blocks_requested).
. /srnic/lib.sh
FAIL_DIAG=vmtp_counters
unload_srnic_both
load_srnic_both
netem_off() {
	/bin/tc qdisc del dev eth0 root 2>/dev/null
	peer "/bin/tc qdisc del dev eth0 root 2>/dev/null; true"
}
trap netem_off EXIT
N=$(count 12 60)
SIZES=0,1400,5000,16384
LOSSES="0.1 1 5"
T="--max-retries 50 -t 300"
total=$((3 * N))
peer_bg vlsrv "srnic vmtp serve -a $PEER -D 100 -C $total -t 600"
rmpp_wait_ready vlsrv || fail "server not ready"
for loss in $LOSSES; do
	q="netem loss $loss% duplicate 1% delay 1ms reorder 10% 50%"
	/bin/tc qdisc replace dev eth0 root $q || fail "tc netem on a"
	peer "/bin/tc qdisc replace dev eth0 root $q" || fail "tc netem on b"
	srnic vmtp ping -a "$ADDR" -s "$PEER:100" -C "$N" -S $SIZES $T || fail "ping at $loss % loss"
	echo "ok: $loss % loss: $N transactions, each Request once, each Response verified;" \
		"blocks resent a $(vmtp_stat retransmitted_blocks) b $(peer_vmtp_stat retransmitted_blocks)," \
		"duplicates a $(vmtp_stat duplicates) b $(peer_vmtp_stat duplicates)"
done
netem_off

# Selective retransmission: 5 % of a's packets dropped, nothing else (no
# duplicate of b's Notifies makes a send twice what b asked for once), and
# timeouts long enough (2 s) that few retransmissions are asked for twice
# under emulation. Of the dropped packets, the full-size ones carry two blocks
# of a Request each (16 KiB: 16 packets of 1024 bytes); the others are a's few
# packets without data (its last acknowledgement, an ARP probe). a must send
# every block of the dropped packets again (at least twice the drops less the
# packets without data), and only blocks b asked for: b's RETRY Notifies name
# the blocks missing when they go, and a sends those and no others (whole
# groups again would be 32 blocks per loss). How many b asks for depends on
# timing: a slow emulated sender can take longer than b's group timeout (TS1,
# 10 ms) between the packets of one group, and b then asks for blocks still on
# their way too; that is no test of a.
peer_bg vlsel "srnic vmtp serve -a $PEER -D 101 -C $((2 * N)) -t 600 --response-timeout-ms 2000"
rmpp_wait_ready vlsel || fail "second server not ready"
/bin/tc qdisc replace dev eth0 root netem loss 5% || fail "tc netem on a"
rb0=$(vmtp_stat retransmitted_blocks) tx0=$(vmtp_stat tx_packets) asked0=$(peer_vmtp_stat blocks_requested)
srnic vmtp ping -a "$ADDR" -s "$PEER:101" -C $((2 * N)) -S 16384 $T --response-timeout-ms 2000 ||
	fail "ping with 5 % loss on a"
# (Before anything else uses the link.)
stat=$(/bin/tc -s qdisc show dev eth0)
/bin/tc qdisc del dev eth0 root
echo "$stat"
drops=$(echo "$stat" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1)
sent=$(echo "$stat" | sed -n 's/^ *Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | head -1)
rb=$(($(vmtp_stat retransmitted_blocks) - rb0)) tx=$(($(vmtp_stat tx_packets) - tx0))
asked=$(($(peer_vmtp_stat blocks_requested) - asked0))
# Packets a handed to netem, and those of them without data.
data=$((2 * N * 16 + rb / 2))
other=$((sent + drops - data))
echo "a: $tx VMTP packets, $data with data; netem dropped $drops of $((sent + drops)) ($other without data); blocks resent: $rb, b asked for $asked"
[ "$drops" -gt 0 ] || fail "netem dropped nothing"
[ "$rb" -le "$asked" ] || fail "$rb blocks resent, $asked asked for: not selective"
[ "$rb" -ge $((2 * (drops - other))) ] || fail "$rb blocks resent for $drops dropped packets ($other without data): some not resent"
echo "ok: selective retransmission: $rb blocks resent for $drops dropped packets, $asked asked for"
peer_wait vlsel 120 || fail "second server"
peer_wait vlsrv 120 || fail "server"
expect_eq "failed transactions" "$(vmtp_stat failed)" 0
expect_eq "requests b received whole" "$(peer_vmtp_stat requests)" $((total + 2 * N))
pass
