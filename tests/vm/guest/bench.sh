# SPDX-License-Identifier: GPL-2.0
# The workloads of `make bench`, run in VM a against VM b
# (Documentation/srnic/performance.rst). Sourced by the init in bench mode,
# and by the VM case bench_smoke at its tiny size.
#
# Settings (environment): BENCH_REPS repetitions (default 5), BENCH_TINY=1
# for one message size and short runs (make check), BENCH_ROWS all (default),
# rdma (the RDMA, RMPP and TCP rows) or blk (the block rows), BENCH_PROFILE=self
# or total to follow each perftest run with a profiled one (profile_run), or
# sample to follow it with one the host samples (sample_run),
# BENCH_BW_TESTS and
# BENCH_LAT_TESTS the perftest programs to run (default: all six), or
# BENCH_TESTS a comma-separated list of them (make bench TESTS=...; the TCP
# ping-pong stays, and TCP's stream with any bandwidth row), BENCH_SIZES the bandwidth rows' message sizes (comma-separated),
# BENCH_RATE_TESTS the 64-byte message-rate rows (default: write_rate
# send_rate, ib_write_bw and ib_send_bw at 64 bytes; BENCH_TESTS names them
# too), BENCH_RDMA_SYSTEMS the RDMA systems (default: siw srnic srnic-crc,
# and rxe for the perftest rows where the kernel has it),
# BENCH_QPS the QP counts of the many-QPs rows (default 1 16 256, tiny 1 16;
# set but empty: none), BENCH_IDLE_QPS the QPs of the idle-memory row (default
# 256, tiny 16; set but empty: none; BENCH_TESTS names these rows qps and
# idle_mem), BENCH_RMPP=0 to leave out the RMPP row (BENCH_TESTS names it
# rmpp_bw), BENCH_RMPP_RATE=0 to leave out the RMPP message-rate row
# (BENCH_TESTS names it rmpp_rate), BENCH_RMPP_LOSS=0 to leave out the RMPP-under-loss rows
# (BENCH_TESTS names them rmpp_loss), BENCH_VMTP=0 to leave out the VMTP
# transaction rows (BENCH_TESTS names them vmtp_lat; the block rows
# blk_randread, blk_randwrite, blk_read and blk_write), BENCH_CSV the samples'
# file (default /tmp/bench.csv).
#
# Every repetition runs every row once, each row on every system one after the
# other, so that slow drifts of the emulated machine affect all systems alike
# and ratios can be paired per repetition; in the perftest and block rows each
# repetition starts one system further along (A B C, B C A, C A B, ...:
# rotated), so that none is always first in its row. Systems:
#   tcp        plain TCP on the same link: iperf3 (bandwidth; 64-byte writes
#              for the message-rate rows), tcp_pingpong (latency)
#   siw        Linux's soft-iWARP, both VMs, rdma-core's perftest
#   srnic      srnic, both VMs, the same perftest binaries through `srnic exec`
#   srnic-crc  the same with MPA CRC32c (siw of Linux 6.12 has no run-time
#              switch for CRC: it uses CRC only when its peer asks for it)
#   rxe        Linux's RoCE v2 software device, both VMs, rdma-core's perftest:
#              the perftest rows only, and only on a kernel with rxe (the
#              plain one, tests/vm/config/plain.config). rdma_cm would pick
#              siw0 or rxe0 for an address on eth0 as it found them, so rxe0
#              replaces siw0 in both VMs for each rxe run (rxe_swap)
# The many-QPs rows (qps, qps_fair) run tests/vm/progs/rdmacm/qp_fair on the
# RDMA systems: N RC QPs at once, each keeping QPS_WINDOW RDMA WRITEs of
# QPS_SIZE bytes outstanding for QPS_SECONDS; qps is their aggregate MiB/s,
# qps_fair the slowest QP's share of it as a fraction of the fair share
# (aggregate / N). TCP is their reference: iperf3 with N parallel streams
# (N up to QPS_TCP_MAX, 128, iperf3's limit), the same figures. The
# idle-memory rows (idle_mem_a, idle_mem_b) hold IDLE_WARM + N connected QPs
# idle (qp_fair --idle) on siw and srnic and record the kernel memory each
# of the last N costs in KiB, on VM a (the client) and VM b (the server):
# the growth of /proc/meminfo's Slab + KernelStack + PageTables +
# VmallocUsed from when the first IDLE_WARM were established to when all
# are, divided by N.
# The RMPP row (rmpp_bw) moves RMPP_MSGS messages of RMPP_SIZE bytes (BW_BYTES
# in all) from VM a to VM b on two systems:
#   rmpp       srnic's Sandia RMPP: `srnic rmpp bw` here, `srnic rmpp recv`
#              (verifying every message) on VM b; its figure is the sender's
#              MiB/s, every message acknowledged
#   af_packet  tests/vm/progs/pkt_bw: the same payload bytes in frames of the
#              link's MTU through AF_PACKET sockets with mmap'ed rings, no
#              protocol and no reliability; its figure is what VM b received
#              per second from its first frame to its last (frames the link
#              lost are not sent again: the raw link's ceiling)
# The RMPP message-rate row (rmpp_rate) moves RATE_MSGS messages of 64 bytes
# the same way, 64 in flight and 128 receives posted (RMPP: each a LAST RTS
# answered by MSGEND, then a GCH; af_packet: one 64-byte frame each), in
# millions per second (Mpps).
# The RMPP-under-loss rows (rmpp_loss, rmpp_resent, rmpp_p99) move
# RMPP_LOSS_MSGS messages of 64 KiB from VM a to VM b (`srnic rmpp bw`, eight
# in flight, `srnic rmpp recv` verifying on VM b) while tc netem drops
# RMPP_LOSS_PPMS (parts per million) of VM a's frames, the data direction,
# with each receiver-driven recovery on both endpoints (systems nak-off: the
# paper's sender timeout only, nak-go-back, nak-selective): MiB/s; the bytes
# sent again per byte lost (srnic's rmpp_resent_bytes over netem's drops
# times VM a's mean RMPP payload per frame); the 99th percentile of the
# messages' completion times (post to completion) in ms. The size column
# holds the loss in ppm; rmpp_resent and rmpp_p99 are second figures of the
# rmpp_loss run (frames 0).
# The VMTP transaction rows (vmtp_lat) time VMTP_ITERS echo transactions
# of VMTP_SIZES bytes each way between VM a and VM b, one at a time, on three
# systems: the median round trip in microseconds.
#   vmtp       `srnic vmtp ping` here against `srnic vmtp serve` on VM b
#              (every Response verified)
#   rmpp       `srnic rmpp pingpong`: a message there and one back, verified
#   tcp        tcp_pingpong over one TCP connection (TCP_NODELAY): twice its
#              typical one-way figure
# The block rows compare srnic_blk with the
# remote block devices Linux has, each exporting 64 MiB of VM b's memory to fio
# on VM a (io_uring, O_DIRECT, one job, time-based):
#   srnic_blk  srnic_blk.ko over srnic, `srnic blk serve` of anonymous memory
#   nbd        the kernel's NBD client, nbd-server on VM b's RAM disk
#   nvme-tcp   NVMe over TCP, the kernel's NVMe target on the same RAM disk
#   nvme-rdma  NVMe over RDMA on siw, the same target
# The samples' file has one line per measurement:
#   rep,test,size,system,value,unit,frames,frames_lost,cpu_a_s,cpu_b_s,ctxt_a,ctxt_b,bytes
# where frames counts the Ethernet frames the two VMs sent during the run and
# frames_lost those the other VM did not receive (the virtual link's losses).
# The last five are set for the bandwidth, message-rate and many-QPs runs
# (empty for the others): the CPU time VM a and VM b spent (seconds, all CPUs: user,
# nice, system, irq and softirq of /proc/stat) and the context switches each
# made, from just before the client started (the server listening) to just
# after it ended, and the bytes the run moved (perftest's iterations times
# the message size, iperf3's -n, qp_fair's WRITEs). A row that is a second
# figure of the run before it (qps_fair, idle_mem_b) has frames 0 and no CPU
# fields.
command -v fail >/dev/null 2>&1 || . /srnic/lib.sh

BENCH_REPS=${BENCH_REPS:-5}
BENCH_CSV=${BENCH_CSV:-/tmp/bench.csv}
if [ "${BENCH_TINY:-0}" = 1 ]; then
	BW_SIZES="65536"
	BW_BYTES=$((1024 * 1024))
	LAT_ITERS=50
	RATE_MSGS=500
	QPS_COUNTS=${BENCH_QPS-1 16}
	QPS_SECONDS=5
	QPS_SIZE=4096
	QPS_WINDOW=2
	IDLE_QPS=${BENCH_IDLE_QPS-16}
	IDLE_WARM=4
else
	BW_SIZES="4096 65536 1048576"
	BW_BYTES=$((64 * 1024 * 1024))
	LAT_ITERS=2000
	RATE_MSGS=50000
	QPS_COUNTS=${BENCH_QPS-1 16 256}
	QPS_SECONDS=20
	# Each QP keeps QPS_WINDOW WRITEs of QPS_SIZE outstanding (256 QPs: 16
	# MiB in flight, some 3 s of the plain kernel's bandwidth under TCG, so
	# that in QPS_SECONDS every QP's window turns over several times).
	QPS_SIZE=16384
	QPS_WINDOW=4
	IDLE_QPS=${BENCH_IDLE_QPS-256}
	IDLE_WARM=64
fi
# iperf3 runs at most 128 streams at once.
QPS_TCP_MAX=128
RMPP_SIZE=1048576
RMPP_MSGS=$((BW_BYTES / RMPP_SIZE))
RMPP_SYSTEMS="rmpp af_packet"
BENCH_RMPP=${BENCH_RMPP:-1}
# The RMPP message-rate row: RATE_MSGS messages of 64 bytes, 64 in flight,
# twice as many receives posted (as perftest's receive depth exceeds its send
# depth).
RMPP_RATE_SIZE=64
RMPP_RATE_WINDOW=64
BENCH_RMPP_RATE=${BENCH_RMPP_RATE:-1}
RMPP_LOSS_SIZE=65536
RMPP_LOSS_NAKS="off go-back selective"
if [ "${BENCH_TINY:-0}" = 1 ]; then
	RMPP_LOSS_PPMS="50000"
	RMPP_LOSS_MSGS=16
else
	RMPP_LOSS_PPMS="1000 10000 20000 50000"
	RMPP_LOSS_MSGS=200
fi
BENCH_RMPP_LOSS=${BENCH_RMPP_LOSS:-1}
VMTP_SYSTEMS="vmtp rmpp tcp"
if [ "${BENCH_TINY:-0}" = 1 ]; then
	VMTP_SIZES="64"
	VMTP_ITERS=20
else
	VMTP_SIZES="64 16384"
	VMTP_ITERS=500
fi
BENCH_VMTP=${BENCH_VMTP:-1}
# The message-rate rows' message size.
RATE_SIZE=64
RDMA_SYSTEMS=${BENCH_RDMA_SYSTEMS:-siw srnic srnic-crc}
# The perftest rows' systems: RDMA_SYSTEMS, and rxe where bench_main finds it.
PERF_SYSTEMS=$RDMA_SYSTEMS
# The idle-memory row compares srnic with siw (CRC changes no QP's memory).
IDLE_SYSTEMS=$(for s in $RDMA_SYSTEMS; do case $s in siw | srnic) echo "$s" ;; esac; done | tr '\n' ' ')
BLK_SYSTEMS="srnic_blk nbd nvme-tcp nvme-rdma"
# fio's rows: TEST:BLOCK_SIZE:QUEUE_DEPTH (IOPS for 4 KiB, MiB/s for 1 MiB).
BLK_ROWS="randread:4096:32 randwrite:4096:32 read:1048576:4 write:1048576:4"
BENCH_ROWS=${BENCH_ROWS:-all}
if [ "${BENCH_TINY:-0}" = 1 ]; then BLK_RUNTIME=2; else BLK_RUNTIME=10; fi
BENCH_BW_TESTS=${BENCH_BW_TESTS:-write_bw read_bw send_bw}
# (Set but empty: no latency rows besides TCP's.)
BENCH_LAT_TESTS=${BENCH_LAT_TESTS-write_lat send_lat read_lat}
BENCH_RATE_TESTS=${BENCH_RATE_TESTS-write_rate send_rate}
if [ -n "${BENCH_TESTS:-}" ]; then
	BENCH_BW_TESTS= BENCH_LAT_TESTS= BENCH_RATE_TESTS= BENCH_RMPP=0 BENCH_RMPP_RATE=0 BENCH_RMPP_LOSS=0 BENCH_VMTP=0
	qps_named=0 idle_named=0 blk_named=
	for t in $(echo "$BENCH_TESTS" | tr , ' '); do
		case "$t" in
		rmpp_bw) BENCH_RMPP=1 ;;
		rmpp_rate) BENCH_RMPP_RATE=1 ;;
		rmpp_loss) BENCH_RMPP_LOSS=1 ;;
		vmtp_lat) BENCH_VMTP=1 ;;
		*_bw) BENCH_BW_TESTS="$BENCH_BW_TESTS $t" ;;
		*_lat) BENCH_LAT_TESTS="$BENCH_LAT_TESTS $t" ;;
		write_rate | send_rate) BENCH_RATE_TESTS="$BENCH_RATE_TESTS $t" ;;
		qps) qps_named=1 ;;
		idle_mem) idle_named=1 ;;
		blk_randread | blk_randwrite | blk_read | blk_write)
			blk_named="$blk_named $(echo "$BLK_ROWS" | tr ' ' '\n' | grep "^${t#blk_}:")" ;;
		*) fail "bench: unknown test '$t' (write_bw, read_bw, send_bw, write_lat, send_lat, read_lat, write_rate, send_rate, qps, idle_mem, rmpp_bw, rmpp_rate, rmpp_loss, vmtp_lat, blk_randread, blk_randwrite, blk_read, blk_write)" ;;
		esac
	done
	BLK_ROWS=$blk_named
	[ $qps_named = 1 ] || QPS_COUNTS=
	[ $idle_named = 1 ] || IDLE_QPS=
fi
[ -z "${BENCH_SIZES:-}" ] || BW_SIZES=$(echo "$BENCH_SIZES" | tr , ' ')
# One program run may take this long before it counts as failed (a bandwidth
# run moves 64 MiB in some 15 s on the plain kernel under TCG).
T=$(scaled 180)
bench_port=7600

bench_say() { echo "BENCH| $*"; }

# Frames sent and received on eth0 by both VMs.
frames_now() {
	local here there
	here=$(cat /sys/class/net/eth0/statistics/tx_packets /sys/class/net/eth0/statistics/rx_packets | tr '\n' ' ')
	there=$(peer "cat /sys/class/net/eth0/statistics/tx_packets /sys/class/net/eth0/statistics/rx_packets" | tr '\n' ' ')
	echo "$here $there"
}

# stat_now [peer]: the CPU time this VM (or VM b) has spent since it booted,
# in USER_HZ ticks (the cpu line of /proc/stat, all CPUs: user, nice,
# system, irq and softirq; idle, iowait and steal are not work it did), and
# the context switches it has made (ctxt).
stat_now() {
	if [ "${1:-}" = peer ]; then
		peer "grep -E '^(cpu|ctxt) ' /proc/stat"
	else
		grep -E '^(cpu|ctxt) ' /proc/stat
	fi | awk '$1 == "cpu" { t = $2 + $3 + $4 + $7 + $8 } $1 == "ctxt" { c = $2 }
		END { if (t != "" && c != "") printf "%d %d\n", t, c }'
}

# bench_cpu_mark before|after: compat_pair's COMPAT_MARK for the bandwidth
# runs: both VMs' stat_now just before the client starts (VM b's first) and
# just after it has ended (VM a's first), in CPU_A0, CPU_B0, CPU_A1, CPU_B1.
bench_cpu_mark() {
	case $1 in
	before) CPU_B0=$(stat_now peer) CPU_A0=$(stat_now) ;;
	after) CPU_A1=$(stat_now) CPU_B1=$(stat_now peer) ;;
	esac
}

# bench_pair_cpu STACK "SRV_CMD" "CLI_CMD": bench_pair with bench_cpu_mark
# around the client.
bench_pair_cpu() {
	CPU_A0= CPU_B0= CPU_A1= CPU_B1=
	COMPAT_MARK=bench_cpu_mark
	bench_pair "$@"
	COMPAT_MARK=
}

# cpu_fields BYTES: the samples' last five fields for a run bench_pair_cpu
# made that moved BYTES: "cpu_a_s,cpu_b_s,ctxt_a,ctxt_b,bytes" (USER_HZ is
# 100 on x86); the four measures empty when a reading is missing.
cpu_fields() {
	local n=$1
	# shellcheck disable=SC2086
	set -- $CPU_A0 $CPU_A1 $CPU_B0 $CPU_B1
	if [ $# != 8 ]; then
		echo ",,,,$n"
		return
	fi
	awk -v a0="$1" -v a1="$3" -v b0="$5" -v b1="$7" -v xa0="$2" -v xa1="$4" -v xb0="$6" -v xb1="$8" -v n="$n" \
		'BEGIN { printf "%.2f,%.2f,%d,%d,%d\n", (a1 - a0) / 100, (b1 - b0) / 100, xa1 - xa0, xb1 - xb0, n }'
}

# record REP TEST SIZE SYSTEM VALUE UNIT FRAMES_BEFORE [CPU_FIELDS]: one
# sample (CPU_FIELDS: cpu_fields', for a bandwidth run).
record() {
	local rep=$1 test=$2 size=$3 sys=$4 value=$5 unit=$6 before=$7 cpu=${8:-,,,,} after
	after=$(frames_now)
	# shellcheck disable=SC2086
	set -- $before $after
	# $1..$4: a tx, a rx, b tx, b rx before; $5..$8 after.
	local sent=$((($5 - $1) + ($7 - $3))) got=$((($6 - $2) + ($8 - $4)))
	local lost=$((sent - got))
	[ $lost -ge 0 ] || lost=0
	if [ -z "$value" ]; then
		# A run that failed or gave no figure is recorded as such (the
		# report lists it) and the benchmark goes on.
		echo "$rep,$test,$size,$sys,nan,failed,$sent,$lost,$cpu" >>"$BENCH_CSV"
		bench_say "rep $rep: $test $size $sys: FAILED (frames $sent, lost $lost)"
		return
	fi
	echo "$rep,$test,$size,$sys,$value,$unit,$sent,$lost,$cpu" >>"$BENCH_CSV"
	if [ "$cpu" = ",,,," ]; then
		bench_say "rep $rep: $test $size $sys: $value $unit (frames $sent, lost $lost)"
	else
		bench_say "rep $rep: $test $size $sys: $value $unit (frames $sent, lost $lost; cpu_a_s,cpu_b_s,ctxt_a,ctxt_b,bytes $cpu)"
	fi
}

# iters_for SIZE: perftest iterations that move BW_BYTES in SIZE-byte messages.
iters_for() {
	local n=$((BW_BYTES / $1))
	[ $n -ge 5 ] || n=5
	echo $n
}

# bench_pair STACK "SRV_CMD" "CLI_CMD": a server program on VM b and its
# client here, both on STACK (compat_pair, listening on bench_port, each
# killed after $T). The client's output is in CLI_OUT, empty unless both
# exited 0 (the outputs are printed then, and the run counts as failed);
# BENCH_AGAIN says why a perftest run is to be run again (perftest_again).
bench_pair() {
	compat_pair peer "$bench_port" "$T" "$1" "$2" "$1" "$3"
	BENCH_AGAIN=$(perftest_again)
	if [ "$CLI_RC" != 0 ] || [ "$SRV_RC" != 0 ]; then
		echo "$CLI_OUT"
		echo "-- server side (peer):"
		echo "$SRV_OUT"
		echo "bench: '$3' on $1 exited $CLI_RC (server $SRV_RC)"
		echo "bench: user-space crashes here: $(crash_lines)"
		echo "bench: and on VM b: $(peer ". /srnic/lib.sh; crash_lines")"
		CLI_OUT=
	fi
}

# rxe_probe: whether both VMs can make rxe0 on eth0 (it leaves none behind).
rxe_probe() {
	rdma link add rxe0 type rxe netdev eth0 2>/dev/null || return 1
	rdma link delete rxe0 || return 1
	peer "rdma link add rxe0 type rxe netdev eth0 && rdma link delete rxe0" >/dev/null
}

# rxe_swap on|off: rxe0 instead of siw0 on eth0 in both VMs, or back.
rxe_swap() {
	if [ "$1" = on ]; then
		siw_down && siw_peer_down || fail "bench: siw0 would not go"
		rdma link add rxe0 type rxe netdev eth0 && peer "rdma link add rxe0 type rxe netdev eth0" ||
			fail "bench: rxe0"
	else
		rdma link delete rxe0 && peer "rdma link delete rxe0" || fail "bench: rxe0 would not go"
		siw_up
		siw_peer_up
	fi
}

# perftest_run REP TEST SIZE ITERS SYSTEM: one perftest program (-R), its
# server on VM b, its client here. TEST write_rate and send_rate are
# ib_write_bw and ib_send_bw, their figure perftest's MsgRate[Mpps].
perftest_run() {
	local rep=$1 test=$2 size=$3 iters=$4 sys=$5 prog before args fig unit cpu= try=1
	case $test in *_rate) prog=ib_${test%_rate}_bw ;; *) prog=ib_$test ;; esac
	bench_port=$((bench_port + 1))
	args="-R -p $bench_port -s $size -n $iters"
	[ "$sys" != rxe ] || rxe_swap on
	while :; do
		before=$(frames_now)
		case $test in
		*_lat)
			bench_pair "$sys" "$prog $args" "$prog $args $PEER"
			fig=$(perftest_figure "$prog" "$CLI_OUT")
			unit=usec
			;;
		*)
			bench_pair_cpu "$sys" "$prog $args" "$prog $args $PEER"
			cpu=$(cpu_fields $((iters * size)))
			case $test in
			*_rate) fig=$(perftest_figure "$prog" "$CLI_OUT" msgrate) unit=Mpps ;;
			*) fig=$(perftest_figure "$prog" "$CLI_OUT") unit=MiB/s ;;
			esac
			;;
		esac
		# Its figure would be a poor clock's, or it has none (perftest_again):
		# again. (Not perftest_pair: each run needs its own frame count.)
		[ -n "$BENCH_AGAIN" ] && [ "$try" -lt "$PERFTEST_TRIES" ] || break
		try=$((try + 1))
		echo "bench: $prog on $sys: $BENCH_AGAIN; run $try of $PERFTEST_TRIES"
	done
	# A figure from an uncalibrated clock is no figure.
	[ -z "$BENCH_AGAIN" ] || fig=
	record "$rep" "$test" "$size" "$sys" "$fig" "$unit" "$before" "$cpu"
	case ${BENCH_PROFILE:-} in
	'') ;;
	sample) sample_run "$rep" "$test" "$size" "$iters" "$sys" "$prog" ;;
	*) profile_run "$rep" "$test" "$size" "$iters" "$sys" "$prog" ;;
	esac
	[ "$sys" != rxe ] || rxe_swap off
}

# The function profiler of ftrace (the plain kernel has it; performance.rst,
# "Profiling"): per function, calls and time, on every CPU.
TRACING=/sys/kernel/debug/tracing
# profile_cmd on|off: the commands that start (counters reset) or stop it.
# BENCH_PROFILE=self counts a function's own time, total its callees' too;
# time asleep never counts.
profile_cmd() {
	local graph=0
	[ "$BENCH_PROFILE" != total ] || graph=1
	case $1 in
	on) echo "cd $TRACING && echo 0 >function_profile_enabled && echo 0 >options/sleep-time && echo $graph >options/graph-time && echo 1 >function_profile_enabled" ;;
	off) echo "echo 0 >$TRACING/function_profile_enabled" ;;
	esac
}

# profile_dump SIDE: the command that prints this VM's profile as lines
# "SIDE FUNCTION CALLS MICROSECONDS", the CPUs summed.
profile_dump() {
	printf '%s\n' "cat $TRACING/trace_stat/function* | awk -v side=$1 '\$2 ~ /^[0-9]+\$/ && \$3 ~ /^[0-9.]+\$/ { hits[\$1] += \$2; us[\$1] += \$3 } END { for (f in hits) printf \"%s %s %d %.3f\\n\", side, f, hits[f], us[f] }'"
}

# sample_syms: exports the modules' symbols of both VMs, once.
sample_syms() {
	[ -z "${SAMPLE_SYMS:-}" ] || return 0
	grep '\[' /proc/kallsyms >/tmp/kallsyms.txt && export_file kallsyms-a.txt /tmp/kallsyms.txt
	peer "grep '\[' /proc/kallsyms" >/tmp/kallsyms.txt && export_file kallsyms-b.txt /tmp/kallsyms.txt
	rm -f /tmp/kallsyms.txt
	SAMPLE_SYMS=1
}

# sample_run REP TEST SIZE ITERS SYSTEM PROG: the perftest run again, between
# the lines "SAMPLE-START REP-TEST-SIZE-SYSTEM" and "SAMPLE-STOP" on the
# console, while the host samples both VMs through QEMU's gdb stub
# (scripts/vm-sample.py, started by tests/vm/run.sh for --bench-profile
# sample): unlike ftrace's profiler it sees Rust code, and costs every
# function alike. Exports the modules' symbols of both VMs once
# (kallsyms-a.txt, kallsyms-b.txt; the kernel's are its System.map).
sample_run() {
	local args
	sample_syms
	bench_port=$((bench_port + 1))
	args="-R -p $bench_port -s $3 -n $4"
	echo "SAMPLE-START $1-$2-$3-$5"
	bench_pair "$5" "$6 $args" "$6 $args $PEER"
	echo "SAMPLE-STOP"
	[ -n "$CLI_OUT" ] || bench_say "rep $1: $2 $3 $5: the sampled run failed"
}

# profile_run REP TEST SIZE ITERS SYSTEM PROG: the perftest run again, with
# the function profiler on in both VMs (its own figure is not recorded: the
# profiler slows every call); exports profile-REP-TEST-SIZE-SYSTEM.txt, a
# header line "# TEST SIZE ITERS SYSTEM" and profile_dump's lines of both VMs
# (a is the client, b the server), for scripts/bench-profile.py.
profile_run() {
	local out=/tmp/profile.txt args
	[ -e "$TRACING/function_profile_enabled" ] ||
		fail "bench: this kernel has no function profiler (the plain kernel has)"
	bench_port=$((bench_port + 1))
	args="-R -p $bench_port -s $3 -n $4"
	sh -c "$(profile_cmd on)" && peer "$(profile_cmd on)" || fail "bench: starting the profiler"
	bench_pair "$5" "$6 $args" "$6 $args $PEER"
	sh -c "$(profile_cmd off)" && peer "$(profile_cmd off)" || fail "bench: stopping the profiler"
	if [ -z "$CLI_OUT" ]; then
		bench_say "rep $1: $2 $3 $5: the profiled run failed"
		return
	fi
	{
		echo "# $2 $3 $4 $5"
		sh -c "$(profile_dump a)"
		peer "$(profile_dump b)"
	} >"$out"
	export_file "profile-$1-$2-$3-$5.txt" "$out"
	rm -f "$out"
}

# record_more REP TEST SIZE SYSTEM VALUE UNIT: a second figure of the run
# just recorded (its frames and CPU time are the first's: none here).
record_more() {
	if [ -z "$5" ]; then
		echo "$1,$2,$3,$4,nan,failed,0,0,,,,," >>"$BENCH_CSV"
		bench_say "rep $1: $2 $3 $4: FAILED"
		return
	fi
	echo "$1,$2,$3,$4,$5,$6,0,0,,,,," >>"$BENCH_CSV"
	bench_say "rep $1: $2 $3 $4: $5 $6"
}

# qps_run REP N SYSTEM: qp_fair with N QPs (server on VM b, client here):
# the rows qps (aggregate MiB/s, with the CPU fields; bytes: every WRITE of
# the run) and qps_fair (the slowest QP's MiB/s over the fair share).
qps_run() {
	local rep=$1 n=$2 sys=$3 before line fig fair moved
	# Setting up and tearing down 256 connections takes its time under TCG
	# (bench_pair's deadline, for these runs).
	local T
	T=$(scaled $((300 + QPS_SECONDS)))
	bench_port=$((bench_port + 1))
	before=$(frames_now)
	bench_pair_cpu "$sys" "qp_fair server -a $PEER -p $bench_port -n $n -s $QPS_SIZE" \
		"qp_fair client -a $PEER -p $bench_port -n $n -s $QPS_SIZE -w $QPS_WINDOW -t $QPS_SECONDS"
	# qp_fair: qps N size S window W seconds T bytes B moved M aggregate_mibs A ... min_fair R
	line=$(echo "$CLI_OUT" | grep '^qp_fair: ')
	fig=$(echo "$line" | sed -n 's/.* aggregate_mibs \([0-9.]*\) .*/\1/p')
	fair=$(echo "$line" | sed -n 's/.* min_fair \([0-9.]*\)$/\1/p')
	moved=$(echo "$line" | sed -n 's/.* moved \([0-9]*\) .*/\1/p')
	echo "$CLI_OUT" | grep '^client: '
	record "$rep" qps "$n" "$sys" "$fig" MiB/s "$before" "$(cpu_fields "$moved")"
	record_more "$rep" qps_fair "$n" "$sys" "$fair" fraction
}

# iperf3_pair ARGS...: an iperf3 server on VM b (one test, bound to b's IPv4
# address: wait_listen reads /proc/net/tcp) on the next bench_port, and a
# client here with ARGS, through bench_pair_cpu (CLI_OUT, CPU time).
iperf3_pair() {
	bench_port=$((bench_port + 1))
	bench_pair_cpu plain "iperf3 -s -1 -B $PEER -p $bench_port" "iperf3 -c $PEER -p $bench_port $*"
}

# qps_tcp_run REP N: the TCP reference of the many-QPs rows: iperf3 with N
# parallel streams (-P N, at most QPS_TCP_MAX, iperf3's limit) for
# QPS_SECONDS, writes of QPS_SIZE bytes; qps is the streams' received MiB/s
# added up, qps_fair the slowest stream's over the fair share (the sum / N),
# as for qp_fair.
qps_tcp_run() {
	local rep=$1 n=$2 before line fig fair moved
	before=$(frames_now)
	iperf3_pair -P "$n" -t "$QPS_SECONDS" -l "$QPS_SIZE" -f K
	# Each stream's "[  5]   0.00-20.00  sec  12.3 MBytes  630 KBytes/sec  receiver"
	# (and with more than one a "[SUM] ..." line, left out). In KiB/s:
	# iperf3 prints about three significant digits, and a stream's MiB/s
	# would have one or two.
	line=$(echo "$CLI_OUT" | awk -v n="$n" -v secs="$QPS_SECONDS" '
		/receiver/ && $1 != "[SUM]" {
			for (i = 2; i <= NF; i++) if ($i == "KBytes/sec") { r = $(i - 1); sum += r; if (k == 0 || r < min) min = r; k++ }
		}
		END { if (k == n && sum > 0) printf "%.4f %.4f %.0f\n", sum / 1024, min * n / sum, sum * secs * 1024 }')
	[ -n "$line" ] || echo "$CLI_OUT"
	# shellcheck disable=SC2086
	set -- $line
	fig=${1:-} fair=${2:-} moved=${3:-0}
	record "$rep" qps "$n" tcp "$fig" MiB/s "$before" "$(cpu_fields "$moved")"
	record_more "$rep" qps_fair "$n" tcp "$fair" fraction
}

# KMEM_READ: a shell command that prints the kernel memory this VM uses now,
# in KiB: /proc/meminfo's Slab (SReclaimable + SUnreclaim; kmalloc's large
# allocations are in SUnreclaim too), KernelStack, PageTables and
# VmallocUsed, after dropping the dentry and inode caches (what the harness's
# own reads of /proc leave there). KMEM_SETTLED prints it once it holds
# still: read every second until two readings in a row differ by at most
# 16 KiB (at most 20 readings), so that what the kernel frees late (RCU,
# work items, connections ending) is gone.
KMEM_READ="echo 2 >/proc/sys/vm/drop_caches; awk '/^(Slab|KernelStack|PageTables|VmallocUsed):/ { s += \$2 } END { print s }' /proc/meminfo"
KMEM_SETTLED="p=\$($KMEM_READ); i=0; while [ \$i -lt 20 ]; do sleep 1; k=\$($KMEM_READ); d=\$((k - p)); [ \$d -lt 0 ] && d=\$((-d)); p=\$k; [ \$d -le 16 ] && break; i=\$((i + 1)); done; echo \$p"

# kmem_now [peer]: KMEM_SETTLED in this VM (or VM b).
kmem_now() {
	if [ "${1:-}" = peer ]; then peer "$KMEM_SETTLED"; else eval "$KMEM_SETTLED"; fi
}

# idle_log_wait FILE PATTERN SECONDS PID: waits (scaled) until FILE has a
# line matching PATTERN; returns 1 if it did not come, or if process PID (what
# writes FILE) ended without it.
idle_log_wait() {
	local n=$(($(scaled "$3") * 5))
	while ! grep -q "$2" "$1" 2>/dev/null; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		kill -0 "$4" 2>/dev/null || grep -q "$2" "$1" || return 1
		sleep 0.2
	done
}

# idle_peer_wait PATTERN SECONDS: the same for the idle server's log on VM b.
idle_peer_wait() {
	peer "i=0; while ! grep -q '$1' /tmp/bench_idle_srv.log; do [ -f /tmp/bench_idle_srv.rc ] && exit 1; i=\$((i+1)); [ \$i -gt $(($(scaled "$2") * 5)) ] && exit 1; sleep 0.2; done"
}

# idle_run REP N SYSTEM: IDLE_WARM + N connected QPs held idle (qp_fair
# --idle, server on VM b, client here); the rows idle_mem_a and idle_mem_b:
# kmem_now's growth per QP in KiB on each VM over the last N QPs, from when
# the first IDLE_WARM are established on both sides (the warm-up QPs take the
# room the kernel's caches kept free from earlier runs, which would hide what
# the measured ones cost) to when all are.
idle_run() {
	local rep=$1 n=$2 sys=$3 pre before a0 a1 b0 b1 pid ok=0 fa= fb= t total
	total=$((n + IDLE_WARM))
	t=$(scaled 600)
	pre=$(stack_prefix "$sys")
	bench_port=$((bench_port + 1))
	before=$(frames_now)
	rm -f /tmp/idle_go /tmp/idle_end /tmp/idle_cli.log
	peer_bg bench_idle_srv "timeout $t $pre qp_fair server -a $PEER -p $bench_port -n $total --idle --warm $IDLE_WARM"
	if wait_listen "$bench_port" peer; then
		timeout "$t" $pre qp_fair client -a "$PEER" -p "$bench_port" -n "$total" -w "$QPS_WINDOW" \
			--idle --warm "$IDLE_WARM" --go /tmp/idle_go --end /tmp/idle_end >/tmp/idle_cli.log 2>&1 &
		pid=$!
		if idle_log_wait /tmp/idle_cli.log 'ready$' 300 "$pid" &&
			idle_peer_wait "^server: $IDLE_WARM connected" 300; then
			b0=$(kmem_now peer)
			a0=$(kmem_now)
			touch /tmp/idle_go
			if idle_log_wait /tmp/idle_cli.log ', idle$' 600 "$pid" &&
				idle_peer_wait "^server: $total connected" 300; then
				a1=$(kmem_now)
				b1=$(kmem_now peer)
				ok=1
			fi
		fi
		touch /tmp/idle_go /tmp/idle_end
		wait "$pid" || ok=0
	fi
	peer_wait bench_idle_srv 600 >/tmp/idle_srv.log || ok=0
	if [ $ok = 1 ] && [ -n "$a0" ] && [ -n "$a1" ] && [ -n "$b0" ] && [ -n "$b1" ]; then
		fa=$(awk -v x="$a0" -v y="$a1" -v n="$n" 'BEGIN { printf "%.1f", (y - x) / n }')
		fb=$(awk -v x="$b0" -v y="$b1" -v n="$n" 'BEGIN { printf "%.1f", (y - x) / n }')
		bench_say "idle QPs on $sys, $IDLE_WARM then $total: VM a $a0 -> $a1 KiB, VM b $b0 -> $b1 KiB"
	else
		cat /tmp/idle_cli.log
		echo "-- server side (peer):"
		cat /tmp/idle_srv.log
		echo "bench: $n idle QPs on $sys failed"
	fi
	record "$rep" idle_mem_a "$n" "$sys" "$fa" KiB/QP "$before"
	record_more "$rep" idle_mem_b "$n" "$sys" "$fb" KiB/QP
}

# tcp_stream REP SIZE [BYTES]: iperf3 moving BW_BYTES (or BYTES) in
# SIZE-byte writes, a -> b: the TCP row "stream" in MiB/s, or with BYTES the
# message-rate row "stream_rate": millions of SIZE-byte writes per second
# (iperf3's receiver figure in KiB/s, divided by SIZE).
tcp_stream() {
	local rep=$1 size=$2 bytes=${3:-$BW_BYTES} before fig test=stream unit=MiB/s fmt=M
	[ -z "${3:-}" ] || test=stream_rate unit=Mpps fmt=K
	before=$(frames_now)
	iperf3_pair -n "$bytes" -l "$size" -f "$fmt"
	# "[  5]   0.00-1.23  sec  64.0 MBytes  52.0 MBytes/sec    receiver"
	fig=$(echo "$CLI_OUT" | awk -v u="${fmt}Bytes/sec" '/receiver/ { for (i = 2; i <= NF; i++) if ($i == u) { print $(i - 1); exit } }')
	[ "$test" = stream ] || [ -z "$fig" ] ||
		fig=$(awk -v k="$fig" -v s="$size" 'BEGIN { printf "%.6f", k * 1024 / s / 1e6 }')
	record "$rep" "$test" "$size" tcp "$fig" "$unit" "$before" "$(cpu_fields "$bytes")"
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

# ---- The block rows.

BLK_PORT_SRNIC=7700
BLK_PORT_NBD=10809
BLK_PORT_NVME_TCP=4420
BLK_PORT_NVME_RDMA=4421
BLK_NQN=nqn.2026-11.org.srnic:bench
NVMET=/sys/kernel/config/nvmet

# blk_target_up: VM b's exports: srnic blk serve (its own memory), and its
# RAM disk through nbd-server and the kernel's NVMe target on a TCP port and
# an RDMA port (siw0 must be up there).
blk_target_up() {
	peer_bg bench_blk_srnic "srnic blk serve --size 64M -p $BLK_PORT_SRNIC"
	wait_listen "$BLK_PORT_SRNIC" peer || fail "bench: srnic blk serve did not listen"
	peer_bg bench_blk_nbd "nbd-server -d -C /dev/null $PEER@$BLK_PORT_NBD /dev/ram0"
	wait_listen "$BLK_PORT_NBD" peer || fail "bench: nbd-server did not listen"
	peer "set -e
		grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
		s=$NVMET/subsystems/$BLK_NQN
		mkdir \$s
		echo 1 >\$s/attr_allow_any_host
		mkdir \$s/namespaces/1
		echo /dev/ram0 >\$s/namespaces/1/device_path
		echo 1 >\$s/namespaces/1/enable
		for p in 1:tcp:$BLK_PORT_NVME_TCP 2:rdma:$BLK_PORT_NVME_RDMA; do
			n=\${p%%:*} t=\${p#*:}; t=\${t%%:*}
			mkdir $NVMET/ports/\$n
			echo ipv4 >$NVMET/ports/\$n/addr_adrfam
			echo \$t >$NVMET/ports/\$n/addr_trtype
			echo $PEER >$NVMET/ports/\$n/addr_traddr
			echo \${p##*:} >$NVMET/ports/\$n/addr_trsvcid
			ln -s \$s $NVMET/ports/\$n/subsystems/$BLK_NQN
		done" || fail "bench: the NVMe target on the peer"
}

# blk_target_down: undoes blk_target_up on VM b.
blk_target_down() {
	peer "s=$NVMET/subsystems/$BLK_NQN
		for n in 1 2; do rm -f $NVMET/ports/\$n/subsystems/$BLK_NQN; rmdir $NVMET/ports/\$n; done
		echo 0 >\$s/namespaces/1/enable; rmdir \$s/namespaces/1 \$s
		. /srnic/lib.sh; bg_kill_all" || fail "bench: tearing the targets down"
}

# nvme_namespaces: the NVMe namespaces' block devices now.
nvme_namespaces() { ls /sys/block | grep -E '^nvme[0-9]+n[0-9]+$'; }

# nvme_connect TRANSPORT PORT: connects to the peer's NVMe subsystem; prints
# the namespace's block device (the one that was not there before).
nvme_connect() {
	local old new
	old=$(nvme_namespaces)
	echo "transport=$1,traddr=$PEER,trsvcid=$2,nqn=$BLK_NQN" >/dev/nvme-fabrics ||
		fail "bench: nvme connect over $1"
	new_namespace() { new=$(nvme_namespaces | grep -vxF "$old" | head -n 1); [ -n "$new" ]; }
	wait_until 30 new_namespace || fail "bench: no NVMe namespace over $1"
	echo "/dev/$new"
}

# blk_devices_up: every system's device on this VM, in BLK_DEV_<system>.
blk_devices_up() {
	BLK_DEV_srnic_blk=$(srnic blk map "$PEER" -p "$BLK_PORT_SRNIC") || fail "bench: srnic blk map"
	nbd-client "$PEER" "$BLK_PORT_NBD" /dev/nbd0 -b 4096 >/dev/null || fail "bench: nbd-client"
	BLK_DEV_nbd=/dev/nbd0
	BLK_DEV_nvme_tcp=$(nvme_connect tcp "$BLK_PORT_NVME_TCP") || fail "bench: NVMe over TCP"
	BLK_DEV_nvme_rdma=$(nvme_connect rdma "$BLK_PORT_NVME_RDMA") || fail "bench: NVMe over RDMA"
	bench_say "block devices: srnic_blk $BLK_DEV_srnic_blk, nbd $BLK_DEV_nbd, nvme-tcp $BLK_DEV_nvme_tcp, nvme-rdma $BLK_DEV_nvme_rdma"
}

# blk_devices_down: undoes blk_devices_up.
blk_devices_down() {
	local c
	srnic blk unmap "$BLK_DEV_srnic_blk" || fail "bench: srnic blk unmap"
	nbd-client -d /dev/nbd0 >/dev/null || fail "bench: nbd-client -d"
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/delete_controller" ] && echo 1 >"$c/delete_controller"
	done
	return 0
}

# blk_run REP TEST BS QD SYSTEM: one fio run on SYSTEM's device; records IOPS
# for 4 KiB blocks, MiB/s for larger ones, and both VMs' CPU time and the
# bytes fio moved (the report's CPU per request).
blk_run() {
	local rep=$1 test=$2 bs=$3 qd=$4 sys=$5 dev before out fig unit f bytes args
	eval "dev=\$BLK_DEV_$(echo "$sys" | tr - _)"
	before=$(frames_now)
	bench_cpu_mark before
	args="--name=bench --filename=$dev --thread --ioengine=io_uring --direct=1 --rw=$test --bs=$bs"
	args="$args --iodepth=$qd --size=64M --runtime=$BLK_RUNTIME --time_based --output-format=terse"
	# shellcheck disable=SC2086 # $args: fio's options, none with spaces
	out=$(timeout "$T" fio $args 2>&1) || { echo "$out"; fail "bench: fio $test on $sys"; }
	bench_cpu_mark after
	# fio's terse format (version 3): field 6/7/8 are the KiB read, the read
	# bandwidth (KiB/s) and IOPS, 47/48/49 the write ones.
	bytes=$(echo "$out" | awk -F';' '$1 == 3 { printf "%d", ($6 + $47) * 1024; exit }')
	case $test in *read) f=7 ;; *) f=48 ;; esac
	if [ "$bs" = 4096 ]; then f=$((f + 1)); unit=IOPS; else unit=MiB/s; fi
	fig=$(echo "$out" | awk -F';' -v f="$f" -v u="$unit" '$1 == 3 { v = $f; if (u == "MiB/s") v = v / 1024; printf "%.1f", v; exit }')
	record "$rep" "blk_$test" "$bs" "$sys" "$fig" "$unit" "$before" "$(cpu_fields "${bytes:-0}")"
	# --profile sample: the same fio run again, sampled (see sample_run).
	[ "${BENCH_PROFILE:-}" = sample ] || return 0
	sample_syms
	echo "SAMPLE-START $rep-blk_$test-$bs-$sys"
	# shellcheck disable=SC2086 # as above
	out=$(timeout "$T" fio $args 2>&1) || bench_say "rep $rep: blk_$test $bs $sys: the sampled run failed"
	echo "SAMPLE-STOP"
}

# bench_clock: the guest's clock against the host's. The host stamps the two
# BENCH-CLOCK lines when they reach the serial log (scripts/bench.sh compares
# its 10 s with the guest's).
bench_clock() {
	echo "BENCH-CLOCK start $(cut -d' ' -f1 /proc/uptime)"
	sleep 10
	echo "BENCH-CLOCK end $(cut -d' ' -f1 /proc/uptime)"
}

# rmpp_run REP TEST SYSTEM: an RMPP row on SYSTEM (rmpp or af_packet), from
# here to VM b, with the CPU fields. rmpp_bw: RMPP_MSGS messages of RMPP_SIZE
# (BW_BYTES), MiB/s, the raw program in frames of the MTU. rmpp_rate:
# RATE_MSGS messages of RMPP_RATE_SIZE, RMPP_RATE_WINDOW in flight (each a
# LAST RTS answered by MSGEND, then a GCH), millions per second, the raw
# program in frames of that payload. RMPP's figure is the sender's, the raw
# program's what VM b received per second.
rmpp_run() {
	local rep=$1 test=$2 sys=$3 msgs size unit tx_opts= rx_opts= frame= before out fig bytes
	case $test in
	rmpp_bw) msgs=$RMPP_MSGS size=$RMPP_SIZE unit=MiB/s ;;
	rmpp_rate)
		msgs=$RATE_MSGS size=$RMPP_RATE_SIZE unit=Mpps frame=$RMPP_RATE_SIZE
		tx_opts="-w $RMPP_RATE_WINDOW" rx_opts="-w $((2 * RMPP_RATE_WINDOW))"
		;;
	esac
	bytes=$((msgs * size))
	before=$(frames_now)
	CPU_A0= CPU_B0= CPU_A1= CPU_B1=
	case $sys in
	rmpp)
		peer_bg "${test}_srv" "srnic rmpp recv -n 2 -C $msgs --max-size $size $rx_opts -t 60"
		rmpp_wait_ready "${test}_srv" 60 || fail "bench: the RMPP receiver did not start"
		bench_cpu_mark before
		# shellcheck disable=SC2086
		out=$(timeout "$T" srnic rmpp bw -n 1 --to 2 -C "$msgs" -S "$size" $tx_opts -t 60 2>&1)
		bench_cpu_mark after
		peer_wait "${test}_srv" 60 >/dev/null || { echo "$out"; out=; echo "bench: the RMPP receiver failed"; }
		# rmpp bw: N x S bytes in T s: R MB/s
		fig=$(echo "$out" | sed -n 's/^rmpp bw: \([0-9]*\) x \([0-9]*\) bytes in \([0-9.]*\) s: .*/\1 \2 \3/p' |
			awk -v u="$unit" '$3 > 0 { if (u == "Mpps") printf "%.6f\n", $1 / $3 / 1e6; else printf "%.2f\n", $1 * $2 / $3 / 1048576 }')
		;;
	af_packet)
		peer_bg "pkt_${test}_srv" "pkt_bw recv eth0 $bytes 2000"
		rmpp_wait_ready "pkt_${test}_srv" 60 || fail "bench: pkt_bw recv did not start"
		bench_cpu_mark before
		# shellcheck disable=SC2086
		out=$(timeout "$T" pkt_bw send eth0 "$(peer "cat /sys/class/net/eth0/address")" "$bytes" $frame 2>&1)
		bench_cpu_mark after
		echo "$out"
		# pkt_bw: recv bytes B frames F lost_bytes L time_s T mib_s R
		out=$(peer_wait "pkt_${test}_srv" 60) || { echo "$out"; out=; echo "bench: pkt_bw recv failed"; }
		echo "$out"
		fig=$(echo "$out" | awk -v u="$unit" '$1 == "pkt_bw:" && $2 == "recv" && $3 == "bytes" {
			if (u == "Mpps") { if ($10 > 0) printf "%.6f\n", $6 / $10 / 1e6 } else print $12 }')
		;;
	esac
	record "$rep" "$test" "$size" "$sys" "$fig" "$unit" "$before" "$(cpu_fields "$bytes")"
}

# rmpp_peer_idle: VM b has no RMPP endpoint (none lingering either).
rmpp_peer_idle() { [ "$(peer_rmpp_stat endpoints)" = 0 ]; }

# rmpp_loss_run REP PPM NAK: the RMPP-under-loss rows of one loss rate and
# one recovery setting (see the header).
rmpp_loss_run() {
	local rep=$1 ppm=$2 nak=$3 sys=nak-$3 before out fig drops pkts0 bytes0 resent0 ratio p99
	# A receiver that has exited may linger until its last reply is answered:
	# its NID is free again once the peer has no endpoint.
	wait_until 30 rmpp_peer_idle || echo "bench: an RMPP endpoint still lingers on VM b"
	/bin/tc qdisc del dev eth0 root 2>/dev/null
	/bin/tc qdisc add dev eth0 root netem loss "$(awk -v p="$ppm" 'BEGIN { printf "%g", p / 10000 }')%" ||
		fail "bench: tc netem"
	before=$(frames_now)
	pkts0=$(rmpp_stat tx_packets) bytes0=$(rmpp_stat tx_bytes) resent0=$(rmpp_stat resent_bytes)
	peer_bg rmpp_loss_srv "srnic rmpp recv -n 2 -C $RMPP_LOSS_MSGS --max-size $RMPP_LOSS_SIZE --nak $nak --max-retries 100000 -t 120"
	rmpp_wait_ready rmpp_loss_srv 60 || fail "bench: the RMPP receiver did not start"
	out=$(timeout "$T" srnic rmpp bw -n 1 --to 2 -C "$RMPP_LOSS_MSGS" -S "$RMPP_LOSS_SIZE" -w 8 \
		--nak "$nak" --max-retries 100000 -t 120 2>&1)
	peer_wait rmpp_loss_srv 120 >/dev/null || { echo "$out"; out=; echo "bench: the RMPP receiver failed"; }
	drops=$(/bin/tc -s qdisc show dev eth0 | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1)
	/bin/tc qdisc del dev eth0 root 2>/dev/null
	# rmpp bw: N x S bytes in T s: R MB/s; completion median M us, p99 P us, max X us
	fig=$(echo "$out" | sed -n 's/^rmpp bw: \([0-9]*\) x \([0-9]*\) bytes in \([0-9.]*\) s: .*/\1 \2 \3/p' |
		awk '$3 > 0 { printf "%.2f\n", $1 * $2 / $3 / 1048576 }')
	p99=$(echo "$out" | sed -n 's/^rmpp bw: .*, p99 \([0-9.]*\) us, .*/\1/p' | awk '{ printf "%.1f\n", $1 / 1000 }')
	# Lost payload: netem's drops times the mean payload of VM a's frames.
	ratio=$(awk -v d="${drops:-0}" -v p="$(($(rmpp_stat tx_packets) - pkts0))" \
		-v b="$(($(rmpp_stat tx_bytes) - bytes0))" -v r="$(($(rmpp_stat resent_bytes) - resent0))" \
		'BEGIN { if (d > 0 && p > 0 && b > 0) printf "%.2f\n", r / (d * b / p) }')
	[ -n "$fig" ] || echo "$out"
	record "$rep" rmpp_loss "$ppm" "$sys" "$fig" MiB/s "$before"
	record_more "$rep" rmpp_resent "$ppm" "$sys" "${fig:+$ratio}" x
	record_more "$rep" rmpp_p99 "$ppm" "$sys" "${fig:+$p99}" ms
}

# vmtp_lat_run REP SIZE SYSTEM: one VMTP transaction row (see the header).
vmtp_lat_run() {
	local rep=$1 size=$2 sys=$3 before out fig
	before=$(frames_now)
	case $sys in
	vmtp)
		peer_bg vmtp_srv "srnic vmtp serve -a $PEER -D 77 -C $VMTP_ITERS -t 120"
		rmpp_wait_ready vmtp_srv 60 || fail "bench: the VMTP server did not start"
		out=$(timeout "$T" srnic --json vmtp ping -a "$ADDR" -s "$PEER:77" -C "$VMTP_ITERS" -S "$size" -t 120 2>&1)
		peer_wait vmtp_srv 120 >/dev/null || { echo "$out"; out=; echo "bench: the VMTP server failed"; }
		fig=$(echo "$out" | sed -n 's/.*"median":\([0-9.]*\).*/\1/p')
		;;
	rmpp)
		peer_bg vmtp_rmpp "srnic rmpp pingpong -n 2 -p 1 -s -C $VMTP_ITERS -S $size -t 120"
		rmpp_wait_ready vmtp_rmpp 60 || fail "bench: the RMPP echo server did not start"
		out=$(timeout "$T" srnic rmpp pingpong -n 1 -p 2 -C "$VMTP_ITERS" -S "$size" -t 120 2>&1)
		peer_wait vmtp_rmpp 120 >/dev/null || { echo "$out"; out=; echo "bench: the RMPP echo server failed"; }
		fig=$(echo "$out" | sed -n 's/.*, median \([0-9.]*\) us,.*/\1/p')
		;;
	tcp)
		bench_port=$((bench_port + 1))
		bench_pair plain "tcp_pingpong -s -p $bench_port -n $VMTP_ITERS -z $size" \
			"tcp_pingpong -c $PEER -p $bench_port -n $VMTP_ITERS -z $size"
		out=$CLI_OUT
		fig=$(echo "$out" | sed -n 's/.* typical_usec \([0-9.]*\) .*/\1/p' | awk '{ printf "%.1f\n", 2 * $1 }')
		;;
	esac
	[ -n "$fig" ] || echo "$out"
	record "$rep" vmtp_lat "$size" "$sys" "$fig" usec "$before"
}

# rotated REP SYSTEM...: the systems in the order repetition REP runs them,
# each repetition starting one further along, so that no system is always
# the first (or the last) of its row: in one A/B run of two srnic_blk
# variants the server's CPU per request followed the order, not the variant
# (Documentation/srnic/performance.rst, "A post leaves its transmit to the
# receive work"). The ratios pair systems within a repetition, whatever
# their order.
rotated() {
	local rep=$1 n i
	shift
	n=$#
	[ "$n" -gt 0 ] || return 0
	i=$(((rep - 1) % n))
	while [ "$i" -gt 0 ]; do
		set -- "$@" "$1"
		shift
		i=$((i - 1))
	done
	echo "$@"
}

# bench_rdma_rows REP: the RDMA, RMPP and TCP rows of one repetition.
bench_rdma_rows() {
	local rep=$1 size test sys n perf
	# shellcheck disable=SC2086 # a list of names without spaces
	perf=$(rotated "$rep" $PERF_SYSTEMS)
	for size in $BW_SIZES; do
		# (No bandwidth rows named, as in TESTS=rmpp_bw: no TCP stream.)
		[ -z "$BENCH_BW_TESTS" ] || tcp_stream "$rep" "$size"
		for test in $BENCH_BW_TESTS; do
			for sys in $perf; do
				perftest_run "$rep" "$test" "$size" "$(iters_for "$size")" "$sys"
			done
		done
	done
	if [ -n "$BENCH_RATE_TESTS" ]; then
		tcp_stream "$rep" "$RATE_SIZE" $((RATE_MSGS * RATE_SIZE))
		for test in $BENCH_RATE_TESTS; do
			for sys in $perf; do
				perftest_run "$rep" "$test" "$RATE_SIZE" "$RATE_MSGS" "$sys"
			done
		done
	fi
	tcp_latency "$rep"
	for test in $BENCH_LAT_TESTS; do
		for sys in $perf; do
			perftest_run "$rep" "$test" 4 "$LAT_ITERS" "$sys"
		done
	done
	for n in $QPS_COUNTS; do
		for sys in $RDMA_SYSTEMS; do
			qps_run "$rep" "$n" "$sys"
		done
		[ "$n" -gt "$QPS_TCP_MAX" ] || qps_tcp_run "$rep" "$n"
	done
	if [ -n "$IDLE_QPS" ]; then
		for sys in $IDLE_SYSTEMS; do
			idle_run "$rep" "$IDLE_QPS" "$sys"
		done
	fi
	for test in rmpp_bw rmpp_rate; do
		case $test in
		rmpp_bw) [ "$BENCH_RMPP" = 1 ] || continue ;;
		rmpp_rate) [ "$BENCH_RMPP_RATE" = 1 ] || continue ;;
		esac
		for sys in $RMPP_SYSTEMS; do
			rmpp_run "$rep" "$test" "$sys"
		done
	done
	if [ "$BENCH_RMPP_LOSS" = 1 ]; then
		for n in $RMPP_LOSS_PPMS; do
			for sys in $RMPP_LOSS_NAKS; do
				rmpp_loss_run "$rep" "$n" "$sys"
			done
		done
	fi
	if [ "$BENCH_VMTP" = 1 ]; then
		for size in $VMTP_SIZES; do
			for sys in $VMTP_SYSTEMS; do
				vmtp_lat_run "$rep" "$size" "$sys"
			done
		done
	fi
}

# bench_blk_rows REP: the block rows of one repetition.
bench_blk_rows() {
	local rep=$1 row sys systems
	# shellcheck disable=SC2086 # a list of names without spaces
	systems=$(rotated "$rep" $BLK_SYSTEMS)
	for row in $BLK_ROWS; do
		# shellcheck disable=SC2046
		set -- $(echo "$row" | tr : ' ')
		for sys in $systems; do
			blk_run "$rep" "$1" "$2" "$3" "$sys"
		done
	done
}

bench_main() {
	local rep rdma=0 blk=0
	case "$BENCH_ROWS" in
	all) rdma=1 blk=1 ;;
	rdma) rdma=1 ;;
	blk) blk=1 ;;
	*) fail "bench: unknown rows '$BENCH_ROWS' (all, rdma or blk)" ;;
	esac
	echo "rep,test,size,system,value,unit,frames,frames_lost,cpu_a_s,cpu_b_s,ctxt_a,ctxt_b,bytes" >"$BENCH_CSV"
	load_srnic_both
	siw_up
	siw_peer_up
	if [ $rdma = 1 ] && [ -z "${BENCH_RDMA_SYSTEMS:-}" ] && rxe_probe; then
		PERF_SYSTEMS="$RDMA_SYSTEMS rxe"
	fi
	if [ $rdma = 1 ] && { [ "$BENCH_RMPP" = 1 ] || [ "$BENCH_RMPP_RATE" = 1 ] || [ "$BENCH_RMPP_LOSS" = 1 ] || [ "$BENCH_VMTP" = 1 ]; }; then
		rmpp_setup || fail "bench: the RMPP node tables"
	fi
	bench_say "guest: $(nproc) vCPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), $(uname -r)"
	if [ $blk = 1 ]; then
		insmod /srnic/srnic_blk.ko || fail "bench: insmod srnic_blk"
		blk_target_up
		blk_devices_up
	fi
	for rep in $(seq 1 "$BENCH_REPS"); do
		[ $rdma = 0 ] || bench_rdma_rows "$rep"
		[ $blk = 0 ] || bench_blk_rows "$rep"
	done
	if [ $blk = 1 ]; then
		blk_devices_down
		blk_target_down
		rmmod srnic_blk || fail "bench: rmmod srnic_blk"
	fi
	siw_down
	siw_peer_down
	expect_idle
	unload_srnic_both
}
