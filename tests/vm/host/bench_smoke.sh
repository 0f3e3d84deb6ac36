#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host check of the VM case bench_smoke: make bench's report
# (scripts/bench-report.py) from the samples the case exported must come out
# complete: a table with every row (the many-QPs rows qps and qps_fair in
# the many-QPs table's qps rows, idle_mem_a and idle_mem_b in the idle-memory
# table's idle_mem row), the CPU tables with every bandwidth, message-rate
# and many-QPs row, and the plot when gnuplot is installed.
#
#   tests/vm/host/bench_smoke.sh LOGDIR
set -euo pipefail
logs=$1
top=$(cd "$(dirname "$0")/../../.." && pwd)
csv=$logs/files/bench.csv
[ -s "$csv" ] || { echo "missing $csv"; exit 1; }
out=$logs/bench-report
python3 "$top/scripts/bench-report.py" "$csv" "$out" --title "bench_smoke (debug kernel, tiny)"
# Every program the case ran has its row.
for row in $(awk -F, 'NR > 1 && $4 != "tcp" { sub(/^qps_fair$/, "qps", $2); sub(/^idle_mem_[ab]$/, "idle_mem", $2); print $2 }' "$csv" | sort -u); do
	grep -q "^| $row |" "$out/table.md" || { echo "no row $row in the table"; exit 1; }
done
# Each bandwidth, message-rate and many-QPs row also in the two CPU tables
# (CPU time per GiB, context switches per MiB).
# (The RMPP rows have their CPU figures in their own table.)
for row in $(awk -F, 'NR > 1 && $4 != "tcp" && $2 ~ /(_bw|_rate|^qps)$/ && $2 !~ /^rmpp_/ { print $2 }' "$csv" | sort -u); do
	[ "$(grep -c "^| $row |" "$out/table.md")" -ge 3 ] || { echo "row $row is not in the CPU tables"; exit 1; }
done
if command -v gnuplot >/dev/null; then
	[ -s "$out/bandwidth.png" ] || { echo "no plot"; exit 1; }
fi
