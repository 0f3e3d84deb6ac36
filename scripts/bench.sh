#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench: boot the two VMs (plain kernel by default), run the workloads of
# tests/vm/guest/bench.sh in them, and write the report into
# build/bench/<timestamp>/: samples.csv (every run), table.md (medians and
# paired ratios, also printed), bandwidth.png (gnuplot) and the guest-clock
# check (Documentation/srnic/performance.rst).
#
#   scripts/bench.sh [--reps N] [--variant plain|debug] [--tiny] [--rows all|rdma|blk]
#                    [--tests T,T...] [--sizes N,N...] [--module SRNIC_KO]
#                    [--profile self|total|sample]
#
# --tests runs only these perftest programs (write_bw, read_bw, send_bw,
# write_lat, send_lat, read_lat, and write_rate, send_rate: the 64-byte
# message rate of ib_write_bw and ib_send_bw; the TCP ping-pong stays, the TCP
# stream with any bandwidth row) and only these of the qp_fair rows (qps: 1,
# 16 and 256 QPs at once, and iperf3 with as many TCP streams up to 128;
# idle_mem: the kernel memory of idle QPs), rmpp_bw
# and rmpp_rate (RMPP's bandwidth and message rate against raw AF_PACKET),
# rmpp_loss (RMPP under loss with and without NAKs), vmtp_lat (VMTP
# transactions) and the block rows (blk_randread, blk_randwrite, blk_read,
# blk_write) only when named;
# --sizes only these bandwidth message sizes in bytes: a quicker run to judge
# one change.
# --rows rdma runs only the RDMA, RMPP and TCP rows, --rows blk only the block
# rows (srnic_blk against NBD and NVMe over TCP and RDMA).
# --tiny runs every row at the VM case bench_smoke's tiny size (a check of the
# rig and the report, not a measurement).
# --module runs SRNIC_KO in the VMs instead of the tree's srnic.ko (run.sh's
# --module): a build of another branch for the variant's kernel, to compare
# two versions on the same rig.
# --profile follows each perftest run with a second one under ftrace's
# function profiler in both VMs (the plain kernel has it) and writes
# profile.md (scripts/bench-profile.py): per iteration, each VM's kernel
# functions by their own time (self) or with their callees' (total), and
# their calls. The profiled runs' figures are not recorded. --profile sample
# follows each perftest run, and each block row's fio run, with one that the
# host samples instead
# (scripts/vm-sample.py, through QEMU's gdb stubs, every 10 ms of host time):
# it sees Rust code, which ftrace does not, and writes sample.md: per run
# and VM, the functions under the vCPUs' instruction pointers, and those
# found on their stacks.
set -euo pipefail
. "$(dirname "$0")/common.sh"

reps=5 variant=plain tiny=() rows=all only=() module=() profile=()
while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps=$2; shift 2 ;;
	--variant) variant=$2; shift 2 ;;
	--tiny) tiny=(--bench-tiny); shift ;;
	--rows) rows=$2; shift 2 ;;
	--tests) only+=(--bench-tests "$2"); shift 2 ;;
	--sizes) only+=(--bench-sizes "$2"); shift 2 ;;
	--module) module=(--module "$2"); shift 2 ;;
	--profile) profile=(--bench-profile "$2"); shift 2 ;;
	-h | --help) sed -n '3,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
case "$reps" in '' | *[!0-9]* | 0) die "--reps needs a positive number: '$reps'" ;; esac
case "$rows" in all | rdma | blk) ;; *) die "--rows takes all, rdma or blk: '$rows'" ;; esac
case "${profile[1]:-self}" in self | total | sample) ;; *) die "--profile takes self, total or sample: '${profile[1]}'" ;; esac

logs=$("$SRNIC_TOP/tests/vm/run.sh" --bench --bench-reps "$reps" --bench-rows "$rows" "${tiny[@]}" "${only[@]}" "${module[@]}" "${profile[@]}" --variant "$variant" | tail -n 1)
out=$SRNIC_TOP/build/bench/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
cp "$logs/files/bench.csv" "$out/samples.csv"
cp "$logs/clock" "$out/clock" 2>/dev/null || true
python3 "$SRNIC_TOP/scripts/bench-report.py" "$out/samples.csv" "$out" --clock "$out/clock" \
	--title "srnic benchmark, $variant kernel, $(date -u +%Y-%m-%d)"
case "${profile[1]:-}" in
'') ;;
sample)
	kdir=$("$SRNIC_TOP/scripts/kernel.sh" "$variant")
	for v in a b; do
		cat "$kdir/System.map" "$logs/files/kallsyms-$v.txt" >"$out/symbols-$v.txt"
		python3 "$SRNIC_TOP/scripts/vm-sample.py" --report "$logs/sample-$v.txt" \
			--kallsyms "$out/symbols-$v.txt" --title "VM $v" >>"$out/sample.md"
	done
	cat "$out/sample.md" ;;
*) python3 "$SRNIC_TOP/scripts/bench-profile.py" "$logs/files" "$out" ;;
esac
log "report in $out (VM logs in $logs)"
