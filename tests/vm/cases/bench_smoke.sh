# SPDX-License-Identifier: GPL-2.0
# budget: 120
# bench_smoke: make bench's workloads (tests/vm/guest/bench.sh) once, at their
# tiny size (64 KiB messages, 1 MiB per bandwidth run, 50 round trips per
# latency run, 500 messages per message-rate run), so that the benchmark
# keeps working. make check runs the TCP stream and ping-pong (iperf3,
# tcp_pingpong), ib_write_bw and qp_fair with 4 QPs for 5 s on siw <-> siw
# and srnic <-> srnic (and iperf3 with 4 streams, their TCP reference);
# check-long (and make vm-test CASES=bench_smoke) adds ib_send_lat, the
# 64-byte message rate of ib_write_bw (and iperf3's 64-byte writes), srnic
# with CRC, qp_fair with 1 and 16 QPs instead of 4, the kernel memory of 16
# idle QPs (siw, srnic), and the block rows (fio on srnic_blk, NBD, NVMe over
# TCP and over RDMA). Both run the RMPP rows (one message of 1 MiB, and 500
# messages of 64 bytes: srnic's RMPP and a raw AF_PACKET program) and the
# RMPP-under-loss rows at 5 % loss (16 messages of 64 KiB with each
# receiver-driven recovery), and the VMTP row (20 echo transactions of 64
# bytes on VMTP, RMPP and TCP).
# Every row must give a
# figure on every system, and every bandwidth, message-rate and many-QPs run
# its CPU time and context switches on both VMs; no figure is judged: a
# benchmark is not a test. The host check
# (tests/vm/host/bench_smoke.sh) makes the report from the exported samples.
. /srnic/lib.sh
BENCH_TINY=1
BENCH_REPS=1
BENCH_BW_TESTS=write_bw
if [ "${LONG_RUN:-0}" = 1 ] || [ -n "$CASES" ]; then
	BENCH_LAT_TESTS=send_lat
	BENCH_RATE_TESTS=write_rate
	BENCH_RDMA_SYSTEMS="siw srnic srnic-crc"
	BENCH_QPS="1 16"
	BENCH_IDLE_QPS=16
	BENCH_ROWS=all
else
	BENCH_LAT_TESTS=
	BENCH_RATE_TESTS=
	BENCH_RDMA_SYSTEMS="siw srnic"
	BENCH_QPS=4
	BENCH_IDLE_QPS=
	BENCH_ROWS=rdma
fi
. /srnic/bench.sh
bench_main
cat "$BENCH_CSV"
# One line per row and system: the TCP stream and ping-pong, each perftest
# program on each RDMA system, the TCP message rate when there are
# message-rate rows, two (qps, qps_fair) per QP count on each RDMA system
# and on TCP,
# two (idle_mem_a, idle_mem_b) per idle system, and each block row on each
# block system.
set -- $BENCH_RDMA_SYSTEMS
nsys=$#
set -- $BENCH_BW_TESTS $BENCH_LAT_TESTS $BENCH_RATE_TESTS
want=$((2 + nsys * $#))
[ -z "$BENCH_RATE_TESTS" ] || want=$((want + 1))
set -- $BENCH_QPS
want=$((want + 2 * nsys * $#))
# (And TCP's reference, iperf3 with as many streams, up to its limit.)
for n in $BENCH_QPS; do
	[ "$n" -gt "$QPS_TCP_MAX" ] || want=$((want + 2))
done
if [ -n "$BENCH_IDLE_QPS" ]; then
	set -- $IDLE_SYSTEMS
	want=$((want + 2 * $#))
fi
[ "$BENCH_RMPP" = 1 ] && want=$((want + 2))
[ "$BENCH_RMPP_RATE" = 1 ] && want=$((want + 2))
if [ "$BENCH_RMPP_LOSS" = 1 ]; then
	set -- $RMPP_LOSS_PPMS
	nloss=$#
	set -- $RMPP_LOSS_NAKS
	want=$((want + 3 * nloss * $#))
fi
if [ "$BENCH_VMTP" = 1 ]; then
	set -- $VMTP_SIZES
	nsizes=$#
	set -- $VMTP_SYSTEMS
	want=$((want + nsizes * $#))
fi
if [ "$BENCH_ROWS" = all ]; then
	set -- $BLK_ROWS
	nrows=$#
	set -- $BLK_SYSTEMS
	want=$((want + nrows * $#))
fi
expect_eq "samples" "$(($(wc -l <"$BENCH_CSV") - 1))" "$want"
# (The slowest QP's share may be 0, and an idle QP's memory, a difference of
# two readings of the whole kernel, may come out at or below 0 for a few QPs:
# a figure, not a positive one.)
awk -F, 'NR > 1 && ($6 == "failed" || ($2 ~ /^(qps_fair|idle_mem_[ab])$/ ? $5 !~ /^-?[0-9]+(\.[0-9]+)?$/ : !($5 > 0))) {
	print "no figure: " $0; bad = 1 } END { exit bad }' "$BENCH_CSV" ||
	fail "a row without a figure"
# The bandwidth, message-rate and many-QPs runs (TCP's too): CPU time and
# context switches on both VMs, and the bytes moved.
awk -F, 'NR > 1 && $2 ~ /(_bw|_rate|^stream|^qps)$/ && !($9 > 0 && $10 > 0 && $11 > 0 && $12 > 0 && $13 > 0) {
	print "no CPU time, context switches or bytes: " $0; bad = 1 } END { exit bad }' "$BENCH_CSV" ||
	fail "a bandwidth run without its CPU time"
export_file bench.csv "$BENCH_CSV"
pass
