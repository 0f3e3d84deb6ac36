# SPDX-License-Identifier: GPL-2.0
# budget: 120
# bench_smoke: make bench's workloads (tests/vm/guest/bench.sh) once, at their
# tiny size (64 KiB messages, 2 MiB per bandwidth run, 50 round trips per
# latency run), so that the benchmark keeps working: iperf3 and tcp_pingpong,
# then ib_write_bw and ib_send_lat on siw <-> siw and srnic <-> srnic with
# CRC off and on (make bench TINY=1 runs all six programs so). Every row must give
# a figure on every system; no figure is judged: a benchmark is not a test.
# The host check (tests/vm/host/bench_smoke.sh) makes the report from the
# exported samples.
#
# For now it runs in make check-long, and when named (make vm-test
# CASES=bench_smoke, about 2.5 min), not in make check's full run: on the
# slower hosts of 2026-11-26 make check's VM cases already take about an hour
# under TCG, near CI's limit.
. /srnic/lib.sh
long_only
BENCH_TINY=1
BENCH_REPS=1
BENCH_BW_TESTS=write_bw
BENCH_LAT_TESTS=send_lat
. /srnic/bench.sh
bench_main
cat "$BENCH_CSV"
# One line per row and system: the TCP stream and ping-pong, and each
# perftest program on three systems.
set -- $BENCH_BW_TESTS $BENCH_LAT_TESTS
expect_eq "samples" "$(($(wc -l <"$BENCH_CSV") - 1))" $((2 + 3 * $#))
awk -F, 'NR > 1 && !($5 > 0) { print "no positive figure: " $0; bad = 1 } END { exit bad }' "$BENCH_CSV" ||
	fail "a row without a figure"
export_file bench.csv "$BENCH_CSV"
pass
