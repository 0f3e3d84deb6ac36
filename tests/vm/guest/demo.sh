# SPDX-License-Identifier: GPL-2.0
# The demo run by `make demo` in VM a (lines prefixed "DEMO|" are what the host
# prints): load srnic in both VMs, show what each reports, then move verified
# data between them with RDMA WRITE, READ and SEND over iWARP.
. /srnic/lib.sh
say() { echo "DEMO| $*"; }
insmod "$SRNIC_KO" && say "a ($ADDR): srnic loaded"
peer "insmod $SRNIC_KO" && say "b ($PEER): srnic loaded"
say ""
say "== srnic info on a ($ADDR) =="
srnic info | while IFS= read -r l; do say "  $l"; done
say ""
say "== srnic info on b ($PEER) =="
peer "srnic info" | while IFS= read -r l; do say "  $l"; done
say ""
ping -c 1 -W 5 "$PEER" >/dev/null && say "link a <-> b: up"
say ""
say "== iWARP between a (client) and b (server): verified transfers =="
# One server on b serves the five transfers in turn (as the test matrices do).
XFER_PORT=$((XFER_PORT + 1))
peer_bg demo_xfer "srnic xfer -s -p $XFER_PORT -t 60 --count 5"
wait_listen "$XFER_PORT" peer || say "  the server on b did not listen"
for args in "write 16M" "read 16M" "send 16M" "write 16M --crc" "read 4M --crc --markers --sge 4"; do
	set -- $args
	op=$1 size=$2
	shift 2
	srnic xfer -c "$PEER" -p "$XFER_PORT" -t 60 --op "$op" --size "$size" --iters 2 "$@" >/tmp/demo.out 2>&1
	rc=$?
	out=$(cat /tmp/demo.out)
	line=$(echo "$out" | grep '^xfer: client')
	mpa=$(echo "$out" | sed -n 's/^srnic: connected to .*, mpa=//p' | head -n1)
	if [ $rc -eq 0 ] && [ -n "$line" ]; then
		say "  $op $size x2 (mpa: $mpa): $(echo "$line" | sed 's/.*bytes=\([0-9]*\) time=\([0-9.]*\) s rate=\([0-9.]*\) MB\/s \(.*\)/\1 bytes in \2 s = \3 MB\/s, \4/')"
	else
		say "  $op $size: FAILED"
		echo "$out" | while IFS= read -r l; do say "    $l"; done
	fi
done
peer_wait demo_xfer 120 >/dev/null || say "  the server on b failed"
say ""
say "== srnic stats on b =="
peer "srnic stats" | while IFS= read -r l; do say "  $l"; done

# Sandia RMPP over raw Ethernet, through a lossy link (tc netem on both sides).
say ""
say "== Sandia RMPP over eth0 with 2 % loss, 1 % duplication and reordering =="
rmpp_setup && say "node table: odd NIDs are a, even NIDs are b"
q="netem loss 2% duplicate 1% delay 1ms reorder 90% 50%"
/bin/tc qdisc replace dev eth0 root $q
peer "/bin/tc qdisc replace dev eth0 root $q"
T="--max-retries 100000"
peer_bg demo_rmpp "srnic rmpp recv -n 2 -C 200 -S 1,1500,8192,65536 --max-size 64K -w 16 $T"
rmpp_wait_ready demo_rmpp
srnic rmpp send -n 1 --to 2 -C 200 -S 1,1500,8192,65536 -w 8 $T | while IFS= read -r l; do say "  a: $l"; done
peer_wait demo_rmpp 600 | grep -v ready | while IFS= read -r l; do say "  b: $l"; done
say "  delivered (acknowledged to a): $(rmpp_stat msgs_sent), received and verified on b: $(peer_rmpp_stat msgs_received)"
say "  retransmitted (sender timeouts on a): $(rmpp_stat retransmits), packets sent by a: $(rmpp_stat tx_packets)"
say "  NAKs (selective, negotiated): sent by b $(peer_rmpp_stat naks_sent), acted on by a $(rmpp_stat naks_received); packets a sent again: $(rmpp_stat resent_packets)"
say "  duplicates dropped on b: $(peer_rmpp_stat drop_duplicate), grants issued by b: $(peer_rmpp_stat grants)"

# VMTP transactions (RFC 1045, IP protocol 81) over the same lossy link.
say ""
say "== VMTP transactions over the same link =="
peer_bg demo_vmtp "srnic vmtp serve -a $PEER -D 100 -C 116 -t 120"
rmpp_wait_ready demo_vmtp
srnic vmtp ping -a "$ADDR" -s "$PEER:100" -C 100 -S 0,64,1500,16K --max-retries 50 | while IFS= read -r l; do say "  a: $l"; done
srnic vmtp read -a "$ADDR" -s "$PEER:100" -S 256K --max-retries 50 | while IFS= read -r l; do say "  a: $l"; done
peer_wait demo_vmtp 300 | grep -v ready | while IFS= read -r l; do say "  b: $l"; done
say "  blocks a sent again (selective retransmission): $(vmtp_stat retransmitted_blocks), headers after a timeout: $(vmtp_stat timeouts)"
/bin/tc qdisc del dev eth0 root
peer "/bin/tc qdisc del dev eth0 root"
rmmod srnic
peer "rmmod srnic"
