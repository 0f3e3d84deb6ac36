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
for args in "write 16M" "read 16M" "send 16M" "write 16M --crc" "read 4M --crc --markers --sge 4"; do
	set -- $args
	op=$1 size=$2
	shift 2
	# Not in a subshell: xfer advances the port for the next server.
	xfer "$op" "$size" --iters 2 "$@" >/tmp/demo.out 2>&1
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
say ""
say "== srnic stats on b =="
peer "srnic stats" | while IFS= read -r l; do say "  $l"; done
rmmod srnic
peer "rmmod srnic"
