# SPDX-License-Identifier: GPL-2.0
# The workloads of `make bench`, run in VM a against VM b
# (Documentation/srnic/performance.rst). Sourced by the init in bench mode,
# and by the VM case bench_smoke at its tiny size.
#
# Settings (environment): BENCH_REPS repetitions (default 5), BENCH_TINY=1
# for one message size and short runs (make check), BENCH_BW_TESTS and
# BENCH_LAT_TESTS the perftest programs to run (default: all six), BENCH_CSV
# the samples' file (default /tmp/bench.csv).
#
# Every repetition runs every row once, each row on every system one after the
# other (A B C A B C ...), so that slow drifts of the emulated machine affect
# all systems alike and ratios can be paired per repetition. Systems:
#   tcp        plain TCP on the same link: iperf3 (bandwidth), tcp_pingpong (latency)
#   siw        Linux's soft-iWARP, both VMs, rdma-core's perftest
#   srnic      srnic, both VMs, the same perftest binaries through `srnic exec`
#   srnic-crc  the same with MPA CRC32c (siw of Linux 6.12 has no run-time
#              switch for CRC: it uses CRC only when its peer asks for it)
# The samples' file has one line per measurement:
#   rep,test,size,system,value,unit,frames,frames_lost
# where frames counts the Ethernet frames the two VMs sent during the run and
# frames_lost those the other VM did not receive (the virtual link's losses).
command -v fail >/dev/null 2>&1 || . /srnic/lib.sh

BENCH_REPS=${BENCH_REPS:-5}
BENCH_CSV=${BENCH_CSV:-/tmp/bench.csv}
if [ "${BENCH_TINY:-0}" = 1 ]; then
	BW_SIZES="65536"
	BW_BYTES=$((2 * 1024 * 1024))
	LAT_ITERS=50
else
	BW_SIZES="4096 65536 1048576"
	BW_BYTES=$((64 * 1024 * 1024))
	LAT_ITERS=2000
fi
RDMA_SYSTEMS="siw srnic srnic-crc"
BENCH_BW_TESTS=${BENCH_BW_TESTS:-write_bw read_bw send_bw}
BENCH_LAT_TESTS=${BENCH_LAT_TESTS:-write_lat send_lat read_lat}
# One program run may take this long before it counts as failed.
T=$(scaled 600)
bench_port=7600

bench_say() { echo "BENCH| $*"; }

# Frames sent and received on eth0 by both VMs.
frames_now() {
	local here there
	here=$(cat /sys/class/net/eth0/statistics/tx_packets /sys/class/net/eth0/statistics/rx_packets | tr '\n' ' ')
	there=$(peer "cat /sys/class/net/eth0/statistics/tx_packets /sys/class/net/eth0/statistics/rx_packets" | tr '\n' ' ')
	echo "$here $there"
}

# record REP TEST SIZE SYSTEM VALUE UNIT FRAMES_BEFORE: one sample.
record() {
	local rep=$1 test=$2 size=$3 sys=$4 value=$5 unit=$6 before=$7 after
	after=$(frames_now)
	# shellcheck disable=SC2086
	set -- $before $after
	# $1..$4: a tx, a rx, b tx, b rx before; $5..$8 after.
	local sent=$((($5 - $1) + ($7 - $3))) got=$((($6 - $2) + ($8 - $4)))
	local lost=$((sent - got))
	[ $lost -ge 0 ] || lost=0
	[ -n "$value" ] || fail "bench: $test $size on $sys gave no figure"
	echo "$rep,$test,$size,$sys,$value,$unit,$sent,$lost" >>"$BENCH_CSV"
	bench_say "rep $rep: $test $size $sys: $value $unit (frames $sent, lost $lost)"
}

# iters_for SIZE: perftest iterations that move BW_BYTES in SIZE-byte messages.
iters_for() {
	local n=$((BW_BYTES / $1))
	[ $n -ge 5 ] || n=5
	echo $n
}

# bench_pair STACK "SRV_CMD" "CLI_CMD": a server program on VM b and its
# client here, both on STACK (compat_pair, listening on bench_port); ends the
# benchmark unless both exit 0. The client's output is in CLI_OUT.
bench_pair() {
	compat_pair peer "$bench_port" "$T" "$1" "$2" "$1" "$3"
	if [ "$CLI_RC" != 0 ] || [ "$SRV_RC" != 0 ]; then
		echo "$CLI_OUT"
		echo "-- server side (peer):"
		echo "$SRV_OUT"
		fail "bench: '$3' on $1 exited $CLI_RC (server $SRV_RC)"
	fi
}

# perftest_run REP TEST SIZE ITERS SYSTEM: one perftest program (-R), its
# server on VM b, its client here.
perftest_run() {
	local rep=$1 test=$2 size=$3 iters=$4 sys=$5 prog before args fig unit
	prog=ib_$test
	bench_port=$((bench_port + 1))
	args="-R -p $bench_port -s $size -n $iters"
	before=$(frames_now)
	bench_pair "$sys" "$prog $args" "$prog $args $PEER"
	fig=$(perftest_figure "$prog" "$CLI_OUT")
	case $test in *_bw) unit=MiB/s ;; *) unit=usec ;; esac
	record "$rep" "$test" "$size" "$sys" "$fig" "$unit" "$before"
}

# tcp_stream REP SIZE: iperf3 moving BW_BYTES in SIZE-byte writes, a -> b.
tcp_stream() {
	local rep=$1 size=$2 before fig
	bench_port=$((bench_port + 1))
	before=$(frames_now)
	# The server bound to b's IPv4 address: wait_listen reads /proc/net/tcp.
	bench_pair plain "iperf3 -s -1 -B $PEER -p $bench_port" \
		"iperf3 -c $PEER -p $bench_port -n $BW_BYTES -l $size -f M"
	# "[  5]   0.00-1.23  sec  64.0 MBytes  52.0 MBytes/sec    receiver"
	fig=$(echo "$CLI_OUT" | awk '/receiver/ { for (i = 2; i <= NF; i++) if ($i == "MBytes/sec") { print $(i - 1); exit } }')
	record "$rep" stream "$size" tcp "$fig" MiB/s "$before"
}

# tcp_latency REP: tcp_pingpong's typical one-way latency of 4-byte messages.
tcp_latency() {
	local rep=$1 before fig
	bench_port=$((bench_port + 1))
	before=$(frames_now)
	bench_pair plain "tcp_pingpong -s -p $bench_port -n $LAT_ITERS -z 4" \
		"tcp_pingpong -c $PEER -p $bench_port -n $LAT_ITERS -z 4"
	fig=$(echo "$CLI_OUT" | sed -n 's/.* typical_usec \([0-9.]*\) .*/\1/p')
	record "$rep" pingpong 4 tcp "$fig" usec "$before"
}

# bench_clock: the guest's clock against the host's. The host stamps the two
# BENCH-CLOCK lines when they reach the serial log (scripts/bench.sh compares
# its 10 s with the guest's).
bench_clock() {
	echo "BENCH-CLOCK start $(cut -d' ' -f1 /proc/uptime)"
	sleep 10
	echo "BENCH-CLOCK end $(cut -d' ' -f1 /proc/uptime)"
}

bench_main() {
	local rep size test sys
	echo "rep,test,size,system,value,unit,frames,frames_lost" >"$BENCH_CSV"
	load_srnic_both
	siw_up
	siw_peer_up
	bench_say "guest: $(nproc) vCPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), $(uname -r)"
	for rep in $(seq 1 "$BENCH_REPS"); do
		for size in $BW_SIZES; do
			tcp_stream "$rep" "$size"
			for test in $BENCH_BW_TESTS; do
				for sys in $RDMA_SYSTEMS; do
					perftest_run "$rep" "$test" "$size" "$(iters_for "$size")" "$sys"
				done
			done
		done
		tcp_latency "$rep"
		for test in $BENCH_LAT_TESTS; do
			for sys in $RDMA_SYSTEMS; do
				perftest_run "$rep" "$test" 4 "$LAT_ITERS" "$sys"
			done
		done
	done
	siw_down
	siw_peer_down
	expect_idle
	unload_srnic_both
}
