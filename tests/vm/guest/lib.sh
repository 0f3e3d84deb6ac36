# SPDX-License-Identifier: GPL-2.0
# Shell library of the srnic test VMs: KTAP output, the control channel to the
# peer VM (a serial line, /dev/ttyS1, independent of the network link under
# test), and kmemleak reporting. Sourced by /init and by every case.

CTL=/dev/ttyS1
SRNIC_KO=/srnic/srnic.ko
PEER_TIMEOUT=${PEER_TIMEOUT:-600}

# The control line stays open on fd 3 for the whole script: a serial port that
# no process holds open drops what arrives, so opening it per message (write,
# close, reopen to read the answer) lost answers that came back quickly.
ctl_setup() {
	[ -n "$CTL_OPEN" ] && return 0
	exec 3<>"$CTL"
	stty -F "$CTL" raw -echo 115200 2>/dev/null
	CTL_OPEN=1
}

# peer CMD...: runs CMD with sh on the peer VM, prints its output, returns its
# exit status. Commands and output travel base64-encoded, one line each way.
peer() {
	ctl_setup
	printf 'CMD %s\n' "$(printf '%s' "$*" | base64 -w0)" >&3
	local line rc=255
	while IFS= read -r -t "$PEER_TIMEOUT" line; do
		case "$line" in
		"RC "*) rc=${line#RC }; break ;;
		"OUT "*) printf '%s' "${line#OUT }" | base64 -d ;;
		esac
	done <&3
	return "$rc"
}

# peer_serve: the loop the peer VM runs until told to finish.
peer_serve() {
	ctl_setup
	echo READY >&3
	local line cmd out rc
	while IFS= read -r line; do
		case "$line" in
		"CMD "*)
			cmd=$(printf '%s' "${line#CMD }" | base64 -d)
			out=$(sh -c "$cmd" 2>&1 </dev/null)
			rc=$?
			[ -n "$out" ] && printf 'OUT %s\n' "$(printf '%s\n' "$out" | base64 -w0)" >&3
			printf 'RC %s\n' "$rc" >&3
			;;
		FINISH) break ;;
		esac
	done <&3
}

peer_wait_ready() {
	ctl_setup
	local line
	while IFS= read -r -t 120 line; do
		[ "$line" = READY ] && return 0
	done <&3
	echo "srnic-vm: the peer VM never became ready"
	return 1
}

peer_finish() { ctl_setup; echo FINISH >&3; }

# run_cases [a,b,...]: runs the named cases (default: all) as KTAP.
run_cases() {
	local list n=0 i=0 name rc t start
	if [ -n "$1" ]; then list=$(echo "$1" | tr ',' ' '); else
		list=$(for f in /srnic/cases/*.sh; do basename "$f" .sh; done)
	fi
	for name in $list; do n=$((n + 1)); done
	echo "KTAP version 1"
	echo "1..$n"
	for name in $list; do
		i=$((i + 1))
		if [ ! -f "/srnic/cases/$name.sh" ]; then
			echo "not ok $i $name # no such case"
			continue
		fi
		echo "# ---- $name"
		# A case may declare a longer limit in a "# timeout: SECONDS" line.
		t=$(sed -n 's/^# timeout: *\([0-9][0-9]*\)$/\1/p' "/srnic/cases/$name.sh" | head -n1)
		start=$(cut -d. -f1 /proc/uptime)
		(cd /tmp && timeout "${t:-${CASE_TIMEOUT:-900}}" sh "/srnic/cases/$name.sh" </dev/null) 2>&1 | sed 's/^/# /'
		rc=$(cat /tmp/.case_rc 2>/dev/null || echo 1)
		rm -f /tmp/.case_rc
		echo "# time: $name $(($(cut -d. -f1 /proc/uptime) - start)) s"
		case "$rc" in
		0) echo "ok $i $name" ;;
		4) echo "ok $i $name # SKIP" ;;
		*) echo "not ok $i $name" ;;
		esac
	done
}

# Helpers for case scripts. A case calls `pass`, `skip REASON` or `fail REASON`
# (or just exits: `set -e` failures count as failures).
pass() { echo 0 >/tmp/.case_rc; exit 0; }
skip() { echo "SKIP: $*"; echo 4 >/tmp/.case_rc; exit 0; }
fail() { echo "FAIL: $*"; echo 1 >/tmp/.case_rc; exit 1; }
check() { # check DESCRIPTION CMD...: runs CMD, fails the case if it fails
	local what=$1; shift
	if "$@"; then echo "ok: $what"; else fail "$what"; fi
}
expect_eq() { # expect_eq DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then echo "ok: $1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

expect_mpa() { # expect_mpa WHAT "IRD ORD MPA" CRC: IRD = ORD = 1, CRC exactly when CRC is non-empty
	local want="1 1 none"
	[ -z "$3" ] || want="1 1 crc,crc-tx,crc-rx"
	expect_eq "negotiated ird ord mpa ($1)" "$2" "$want"
}

kmemleak_report() {
	local k=/sys/kernel/debug/kmemleak
	[ -e $k ] || return 0
	# Two scans: kmemleak reports an object only once it is old enough and has
	# been seen unreferenced in more than one scan.
	echo scan >$k; sleep 6; echo scan >$k
	local n
	n=$(grep -c "unreferenced object" $k)
	echo "srnic-vm: kmemleak: $n unreferenced objects"
	cat $k
}

# load_srnic_both: (re)load srnic in this VM and the peer.
load_srnic_both() {
	grep -q '^srnic ' /proc/modules || insmod "$SRNIC_KO" || fail "insmod"
	peer "grep -q '^srnic ' /proc/modules || insmod $SRNIC_KO" || fail "insmod on the peer"
}

unload_srnic_both() {
	rmmod srnic 2>/dev/null
	peer "rmmod srnic 2>/dev/null; true"
}

# peer_bg NAME CMD...: starts CMD in the background on the peer; its output and
# exit status go to /tmp/NAME.log and /tmp/NAME.rc there.
peer_bg() {
	local name=$1
	shift
	peer "rm -f /tmp/$name.rc; (sh -c '$*' >/tmp/$name.log 2>&1; echo \$? >/tmp/$name.rc) >/dev/null 2>&1 &"
}

# peer_wait NAME [SECONDS]: waits for a peer_bg command, prints its output,
# returns its exit status (124 on timeout).
peer_wait() {
	peer "i=0; while [ ! -f /tmp/$1.rc ] && [ \$i -lt ${2:-120} ]; do sleep 1; i=\$((i+1)); done; cat /tmp/$1.log; [ -f /tmp/$1.rc ] && exit \$(cat /tmp/$1.rc); exit 124"
}

XFER_PORT=18515

# iwarp_matrix OP: verified `srnic xfer --op OP` transfers of 0 B to 16 MiB with
# CRC off, CRC on, and CRC with markers, scatter/gather up to 16 elements. One
# server on the peer serves all of them in turn.
iwarp_matrix() {
	local op=$1 size sge n=0 sizes="0 1 4095 4096 65536 1048576"
	load_srnic_both
	XFER_PORT=$((XFER_PORT + 1))
	peer_bg xfer_srv "srnic xfer -s -p $XFER_PORT -t 60 --count 19"
	wait_listen "$XFER_PORT" peer || fail "the $op server did not listen"
	matrix_one() {
		srnic xfer -c "$PEER" -p "$XFER_PORT" -t 60 --op "$op" "$@" ||
			{ peer_wait xfer_srv 1; fail "$op $*"; }
		n=$((n + 1))
	}
	for size in $sizes; do
		sge=1; [ "$size" -ge 4096 ] && sge=4
		matrix_one --size "$size" --sge "$sge"
		sge=1; [ "$size" -ge 16 ] && sge=16
		matrix_one --size "$size" --sge "$sge" --crc
		sge=1; [ "$size" -ge 2 ] && sge=2
		matrix_one --size "$size" --sge "$sge" --crc --markers
	done
	matrix_one --size 16777216 --sge 16 --crc --markers
	peer_wait xfer_srv || fail "the $op server failed"
	expect_eq "verified $op transfers" "$n" 19
	unload_srnic_both
	pass
}

# ---- Helpers of the srnic-vmtest cases.

# srnic_stat NAME: one counter of `srnic stats` in this VM.
srnic_stat() { srnic stats | sed -n "s/^$1: //p"; }

# srnic_usage: the counters that must return to their baseline when every
# program is gone: "pinned_pages: N qps: N ".
srnic_usage() { srnic stats | grep -E '^(pinned_pages|qps):' | tr '\n' ' '; }

# expect_idle [PINNED_HERE [PINNED_PEER]]: waits up to 10 s (cleanup finishes
# when the last in-flight work item drops its references) until neither VM has
# a QP left and pinned_pages is back at the baseline (default 0).
expect_idle() {
	local want_here="pinned_pages: ${1:-0} qps: 0 "
	local want_peer="pinned_pages: ${2:-0} qps: 0 "
	local i=0 here there
	while :; do
		here=$(srnic_usage)
		there=$(peer ". /srnic/lib.sh; srnic_usage")
		[ "$here" = "$want_here" ] && [ "$there" = "$want_peer" ] && break
		i=$((i + 1))
		[ $i -ge 10 ] && fail "srnic not idle after 10 s: here '$here', peer '$there'"
		sleep 1
	done
	echo "ok: srnic idle on both VMs (here: $here; peer: $there)"
}

# vmtest MODE [ARGS...]: `srnic-vmtest MODE -s` on the peer and
# `srnic-vmtest MODE -c $PEER` here, both with ARGS; fails the case unless both
# sides exit 0. The server's output follows the client's.
VMTEST_PORT=19000
vmtest() {
	local mode=$1 rc prc
	shift
	VMTEST_PORT=$((VMTEST_PORT + 2))
	peer_bg vmtest_srv "srnic-vmtest $mode -s -p $VMTEST_PORT $*"
	srnic-vmtest "$mode" -c "$PEER" -p "$VMTEST_PORT" "$@"
	rc=$?
	echo "-- srnic-vmtest $mode, server side (peer):"
	peer_wait vmtest_srv 600
	prc=$?
	[ "$rc" = 0 ] || fail "srnic-vmtest $mode: client side failed (exit $rc)"
	[ "$prc" = 0 ] || fail "srnic-vmtest $mode: server side failed (exit $prc)"
}

# ---- Sandia RMPP helpers ----
# rmpp_setup: the node table on both VMs: odd NIDs 1..15 are VM a, even NIDs
# 2..16 are VM b (both on eth0).
rmpp_setup() {
	local mac_a mac_b
	mac_a=$(cat /sys/class/net/eth0/address)
	mac_b=$(peer "cat /sys/class/net/eth0/address") || return 1
	local cmd="for n in 1 3 5 7 9 11 13 15; do srnic rmpp node add \$n $mac_a eth0 || exit 1; done;"
	cmd="$cmd for n in 2 4 6 8 10 12 14 16; do srnic rmpp node add \$n $mac_b eth0 || exit 1; done"
	sh -c "$cmd" || return 1
	peer "$cmd"
}

# rmpp_stat NAME: the value of counter rmpp_NAME here.
rmpp_stat() { srnic stats | sed -n "s/^rmpp_$1: //p"; }
# peer_rmpp_stat NAME: the same on the peer.
peer_rmpp_stat() { peer "srnic stats" | sed -n "s/^rmpp_$1: //p"; }

# rmpp_stats_line [peer]: the RMPP counters that are not zero, on one line.
rmpp_stats_line() {
	if [ "$1" = peer ]; then peer "srnic stats"; else srnic stats; fi |
		sed -n 's/^rmpp_//p' | awk -F': ' '$2 != 0 { printf "%s=%s ", $1, $2 }'
	echo
}

# rmpp_wait_ready NAME [SECONDS]: waits until the peer's background command NAME
# printed its "ready" line (or ended).
rmpp_wait_ready() {
	peer "i=0; while ! grep -q ready /tmp/$1.log 2>/dev/null && [ ! -f /tmp/$1.rc ] && [ \$i -lt ${2:-120} ]; do sleep 1; i=\$((i+1)); done; grep -q ready /tmp/$1.log || { cat /tmp/$1.log; exit 1; }"
}

# local_wait_ready FILE [SECONDS]: the same for a local background command's log.
local_wait_ready() {
	local i=0
	while ! grep -q ready "$1" 2>/dev/null && [ $i -lt "${2:-120}" ]; do sleep 1; i=$((i + 1)); done
	grep -q ready "$1" || { cat "$1"; return 1; }
}

# rmpp_fail REASON: prints both VMs' RMPP counters, then fails the case.
rmpp_fail() {
	echo "a: $(rmpp_stats_line)"
	echo "b: $(rmpp_stats_line peer)"
	fail "$*"
}

# load_srnic: load srnic in this VM only.
load_srnic() {
	grep -q '^srnic ' /proc/modules || insmod "$SRNIC_KO" || fail "insmod"
}

# siw_peer_up / siw_peer_down: Linux's soft-iWARP device siw0 on the peer's eth0
# (the reference peer of the interop cases).
siw_peer_up() {
	peer "rdma link add siw0 type siw netdev eth0 && rdma link show siw0/1" || fail "siw on the peer"
}
siw_peer_down() { peer "rdma link delete siw0"; }

# wait_listen PORT [peer]: waits until a TCP socket listens on PORT in this VM
# (or the peer's): srnic's and siw's listeners are kernel sockets, so this works
# for both. 30 s at most.
wait_listen() {
	local hex
	hex=$(printf ':%04X 00000000:0000 0A' "$1")
	if [ "$2" = peer ]; then
		peer "i=0; while ! grep -q '$hex' /proc/net/tcp; do i=\$((i+1)); [ \$i -gt 300 ] && exit 1; sleep 0.1; done"
	else
		local i=0
		while ! grep -q "$hex" /proc/net/tcp; do
			i=$((i + 1)); [ $i -gt 300 ] && return 1; sleep 0.1
		done
	fi
}

# export_file NAME PATH: hands PATH to the host through the third serial port
# (run.sh saves it as <logs>/files/NAME for the case's host check, see
# tests/vm/host/). gzip, base64, and the md5 of the gzip stream to check it.
FILES_TTY=/dev/ttyS2
export_file() {
	stty -F "$FILES_TTY" raw -echo 115200 2>/dev/null
	gzip -c "$2" >/tmp/.export.gz
	{
		echo "SRNIC-FILE-BEGIN $1"
		base64 /tmp/.export.gz
		echo "SRNIC-FILE-END $1 $(md5sum </tmp/.export.gz | cut -d' ' -f1)"
	} >"$FILES_TTY"
	echo "exported $1: $(wc -c <"$2") bytes ($(wc -c </tmp/.export.gz) gzipped)"
	rm -f /tmp/.export.gz
}

# bounded SECONDS CMD...: runs CMD and returns its status; if it is still
# running after SECONDS, prints where each of its threads is (state and kernel
# stack) and returns 124, leaving it behind.
bounded() {
	local t=$1 pid i=0 task
	shift
	"$@" &
	pid=$!
	while [ -e "/proc/$pid" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
		if [ $i -ge $((t * 10)) ]; then
			echo "bounded: '$*' still running after $t s:"
			for task in /proc/$pid/task/*; do
				echo "  thread $(basename "$task") $(cat "$task/comm") state $(cut -d' ' -f3 "$task/stat")"
				sed 's/^/    /' "$task/stack"
			done
			return 124
		fi
		sleep 0.1
		i=$((i + 1))
	done
	wait "$pid"
}
