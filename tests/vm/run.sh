#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot the two srnic test VMs and run test cases (or the demo) in them.
#
#   tests/vm/run.sh [--variant debug|plain] [--demo] [--long] [--cpus N]
#                   [--fuzz-seconds N] [--fuzz-seed S] [--module SRNIC_KO] [CASE...]
#   tests/vm/run.sh --bench [--bench-reps N] [--bench-tiny] [--bench-rows all|rdma|blk]
#                   [--bench-tests T,T...] [--bench-sizes N,N...]
#                   [--bench-profile self|total|sample] [--variant ...]
#
# --bench runs the workloads of `make bench` (tests/vm/guest/bench.sh) instead
# of the cases; their samples land in <logs>/files/bench.csv, and the host's
# clock stamps of the guest's clock check in <logs>/clock (scripts/bench.sh
# makes the report); --bench-tiny runs them at bench_smoke's tiny size,
# --bench-rows only the RDMA, RMPP and TCP rows or only the block rows,
# --bench-tests only these perftest programs (write_bw, send_lat, ...) and
# --bench-sizes only these bandwidth message sizes (bytes), --bench-profile
# a profiled run after each perftest run (scripts/bench.sh --profile); with
# sample, scripts/vm-sample.py samples both VMs through their gdb stubs while
# the guest marks those runs (<logs>/sample-a.txt, sample-b.txt; the stubs
# then cannot give a hung boot's backtrace).
# --long runs the cases with their full repetition counts (make check-long).
# --fuzz-seconds and --fuzz-seed set the abi_fuzz case's duration and seed
# (make fuzz-abi DURATION=N SEED=S; srnic.fuzz_seconds, srnic.fuzz_seed).
# --module puts SRNIC_KO into the VMs as their srnic.ko instead of the one
# scripts/module.sh builds (which still builds srnic_blk.ko and srnic_ktest.ko
# for them): e.g. the module DKMS built from the srnic-dkms package
# (scripts/pkg-test.sh). Its vermagic must name the variant's kernel; each VM
# prints the sha256 of the srnic.ko it has, and the run fails unless both
# printed SRNIC_KO's.
# --cpus gives each VM N virtual CPUs (default: SRNIC_VM_CPUS, else 2), so
# that races between CPUs are exercised (TCG runs them on separate threads).
# VM "a" runs the cases and prints KTAP; VM "b" is its peer, driven over a
# control line (a virtio-serial port, see vm() below). The VMs share an
# Ethernet link (virtio-net on both ends of a QEMU socket netdev in UDP mode
# over loopback; the TCP mode leaves Nagle on and delayed every second frame
# by 40 ms): a is 192.0.2.1 and 2001:db8::1, b is 192.0.2.2 and 2001:db8::2.
# Console logs are kept in build/vm-logs/<timestamp>/. The run fails on any
# failed case, a timeout, or any kernel oops, BUG, WARNING, KASAN, lockdep or
# kmemleak report in either VM (a task hung for 20 s included), and ends with
# the line
# "N passed, N failed". It prints each case as it starts and ends, the VM
# time, the slowest cases and a warning for every case that took longer than
# its budget ("# budget:" in the case). A VM that hangs while booting is
# reported (where its vCPUs are) and booted once more; SRNIC_DEADLINE (epoch
# seconds, .ci/run sets it) makes the run end, report included, by then
# (Documentation/srnic/testing.rst).
#
# A case can hand files to the host (export_file in guest/lib.sh, over a
# virtio-serial port of their own); they land in <logs>/files/. A case with a
# host check, tests/vm/host/<case>.sh, passes only if the VM reported it ok
# and the check, run here with the log directory as its argument, succeeds
# too.
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

variant=debug mode=test long=0 cases=() cpus=${SRNIC_VM_CPUS:-2} fuzz= fuzz_s=0 bench= module= bench_profile=
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) variant=$2; shift 2 ;;
	--demo) mode=demo; shift ;;
	--bench) mode=bench; shift ;;
	--bench-reps) bench="$bench srnic.bench_reps=$2"; shift 2 ;;
	--bench-tiny) bench="$bench srnic.bench_tiny=1"; shift ;;
	--bench-rows) bench="$bench srnic.bench_rows=$2"; shift 2 ;;
	--bench-tests) bench="$bench srnic.bench_tests=$2"; shift 2 ;;
	--bench-sizes) bench="$bench srnic.bench_sizes=$2"; shift 2 ;;
	--bench-profile) bench="$bench srnic.bench_profile=$2"; bench_profile=$2; shift 2 ;;
	--long) long=1; shift ;;
	--cpus) cpus=$2; shift 2 ;;
	--fuzz-seconds) fuzz="$fuzz srnic.fuzz_seconds=$2"; fuzz_s=$2; shift 2 ;;
	--fuzz-seed) fuzz="$fuzz srnic.fuzz_seed=$2"; shift 2 ;;
	--module) module=$2; shift 2 ;;
	-h|--help) sed -n '3,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) cases+=("$1"); shift ;;
	esac
done
timeout_s=${SRNIC_VM_TIMEOUT:-$(((long ? 36000 : 7200) + fuzz_s))}
# SRNIC_DEADLINE (epoch seconds, set by .ci/run): when this run must have
# ended, report included. The VMs get what is left less a margin for
# shutting down and reporting; the guest's runner stops the case running at
# its deadline and reports the cases it could not run, so a slow or hung run
# still ends with a full report instead of being killed from outside.
deadline_margin=120

build=$SRNIC_TOP/build/$variant
kdir=$("$SRNIC_TOP/scripts/kernel.sh" "$variant")
ko=$("$SRNIC_TOP/scripts/module.sh" "$kdir" "$build/module")
clients=$(dirname "$ko")
if [ -n "$module" ]; then
	[ -f "$module" ] || die "--module: no such file: $module"
	ko=$(cd "$(dirname "$module")" && pwd)/$(basename "$module")
	krel=$(cat "$kdir/include/config/kernel.release")
	magic=$(/sbin/modinfo -F vermagic "$ko" | cut -d' ' -f1)
	[ "$magic" = "$krel" ] || die "--module: $ko is built for kernel '$magic', not the $variant kernel's $krel"
	log "the VMs' srnic.ko: $ko (--module)"
fi
"$SRNIC_TOP/scripts/tools.sh" "$build/tools"
"$SRNIC_TOP/tests/vm/initramfs.sh" "$ko" "$build/tools" "$build/initramfs.cpio.gz" "$clients"

logs=$SRNIC_TOP/build/vm-logs/$(date +%Y%m%d-%H%M%S)-$variant-$mode
mkdir -p "$logs"
ln -sfn "$logs" "$SRNIC_TOP/build/vm-logs/latest"

# KVM only when a probe on this machine showed it works (cached); else TCG.
accel=tcg
probe=$SRNIC_CACHE/kvm-probe
if [ ! -f "$probe" ]; then
	if [ -w /dev/kvm ] && timeout 60 qemu-system-x86_64 -accel kvm -cpu host -m 256 -nographic \
		-no-reboot -kernel "$kdir/arch/x86/boot/bzImage" -initrd "$build/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 srnic.role=probe" 2>/dev/null | grep -q SRNIC-VM-DONE; then
		echo kvm >"$probe"
	else
		echo tcg >"$probe"
	fi
fi
[ "$(cat "$probe")" = kvm ] && accel=kvm
cpu=max; [ $accel = kvm ] && cpu=host
# Multi-threaded TCG: each vCPU on its own host thread.
[ $accel = tcg ] && accel=tcg,thread=multi

elapsed_since() { local s=$(($(date +%s) - $1)); printf '%02d:%02d' $((s / 60)) $((s % 60)); }
# Five distinct free ports (the link's two ends, the control line, the gdb
# stubs), all bound at once: ports asked for one at a time can repeat.
free_ports() {
	python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}
read -r port_a port_b ctl_port gdb_port_a gdb_port_b < <(free_ports 5)
mem=1024
caselist=$(IFS=,; echo "${cases[*]:-}")

# The guests have no HPET or ACPI PM timer, so the kernel calibrates the TSC
# against the PIT. Under TCG that usually fails, and time is kept with jiffies
# (4 ms steps); but when it "succeeds" on a loaded host the TSC clocksource
# runs with a wrong frequency (seen: a guest clock 18 times too fast, every
# guest timeout firing early). Under TCG the guests' TSC is the host's: when
# the host's TSC is constant, give the guests its rate (tsc_early_khz, no
# calibration) and keep the watchdog from dropping it under load
# (tsc=reliable), so they get a fine clock (perftest times with the TSC and
# gettimeofday). Otherwise tsc=unstable keeps the jiffies clock.
clock="tsc=unstable"
if [ "${accel%%,*}" = tcg ] && grep -qw constant_tsc /proc/cpuinfo; then
	tsc_khz=$(awk -F': *' '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
	[ -n "$tsc_khz" ] && clock="tsc=reliable tsc_early_khz=$tsc_khz"
fi

# One vCPU per socket: the test kernels have no ACPI, so they find CPUs in
# SeaBIOS's MP table, and that lists only the first CPU of each package
# (QEMU's default -smp N topology is one socket of N cores: the guest would
# bring up one CPU). The guest prints how many it brought up; that is checked
# below.
#
# The lines out of a VM: the legacy serial port ttyS0 gets the kernel's messages
# (<logs>/NAME.boot: the kernel writes them by polling); everything else
# travels on virtio-serial, whose interrupts are not the legacy ports' (under
# TCG those were lost, and a VM's console and control line stopped for good:
# Documentation/srnic/testing.rst): hvc0, the console of /init and the cases
# (<logs>/NAME.log; not a kernel console: virtio's console frees memory while
# it prints, which kmemleak's own messages under its object lock turned into
# a lockdep report); the port "srnic.ctl", the control line between the VMs;
# the port "srnic.files", the files a case exports (<logs>/NAME.files).
vm() { # vm NAME ADDR PEER NETDEV CTL_CHARDEV MAC_DIGIT GDB_PORT
	timeout "$vm_timeout" qemu-system-x86_64 -accel $accel -cpu $cpu -m $mem \
		-smp "$cpus,sockets=$cpus,cores=1,threads=1" -pidfile "$logs/$1.pid" -gdb "tcp:127.0.0.1:$7" \
		-nographic -no-reboot -monitor none -serial "file:$logs/$1.boot" \
		-device virtio-serial-pci,id=vser \
		-chardev "file,id=con,path=$logs/$1.log" -device virtconsole,bus=vser.0,nr=0,chardev=con \
		-chardev "$5" -device virtserialport,bus=vser.0,nr=1,chardev=ctl,name=srnic.ctl \
		-chardev "file,id=files,path=$logs/$1.files" \
		-device virtserialport,bus=vser.0,nr=2,chardev=files,name=srnic.files \
		-netdev "$4" -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:0$6 \
		-kernel "$kdir/arch/x86/boot/bzImage" -initrd "$build/initramfs.cpio.gz" \
		-append "console=ttyS0 srnic.console=hvc0 loglevel=6 panic=-1 $clock srnic.role=$1 srnic.addr=$2 srnic.peer=$3 srnic.mode=$mode srnic.long=$long srnic.cases=$caselist$fuzz$suite_deadline $bench" \
		</dev/null >"$logs/$1.qemu" 2>&1
}

# One VM run at a time on this machine (two would share its cores and slow
# each other's timing-sensitive cases): wait for the other to finish.
mkdir -p "$SRNIC_CACHE"
exec 9>"$SRNIC_CACHE/vm-run.lock"
if ! flock -n 9; then
	log "another VM run is under way on this machine; waiting for it"
	flock 9
fi
log "booting VMs ($variant kernel, $accel, $cpus vCPUs each), logs in $logs"
start=$(date +%s)
# A VM whose kernel does not reach its init (which prints its CPU count
# first) within boot_limit seconds hung while booting, before srnic was
# loaded: seen twice on 2026-11-26, each time in both VMs at once, one vCPU
# thread spinning. The watchdog prints where each vCPU of such a VM is (a
# backtrace from QEMU's gdb stub, symbolised with the kernel's vmlinux) and
# stops the VMs; the run boots them once more, and fails if that hangs too.
# A QEMU that dies before its guest reached its init is handled the same way
# (seen on 2026-11-30: QEMU 10.0's TCG assertion in iotlb_to_section aborted
# one VM while it booted; its peer would have waited the pair's grace, and
# the run failed).
boot_limit=${SRNIC_VM_BOOT_LIMIT:-300}
# stop_vms: ends both VMs' QEMU (the watchdogs below).
stop_vms() { kill $(cat "$logs/a.pid" "$logs/b.pid" 2>/dev/null) 2>/dev/null || true; }
booted() { grep -qa "srnic-vm: [0-9]* CPUs online" "$logs/$1.log" 2>/dev/null; }
boot_watch() {
	local t=0 v port died=
	while [ $t -lt "$boot_limit" ]; do
		booted a && booted b && return 0
		if ! kill -0 "$pid_a" 2>/dev/null || ! kill -0 "$pid_b" 2>/dev/null; then
			# Give the other VM's init a moment to show if it got there.
			sleep 2
			died=1
			break
		fi
		sleep 2
		t=$((t + 2))
	done
	for v in a b; do
		booted $v && continue
		echo $v >>"$logs/boot-hang"
		if [ -n "$died" ]; then
			log "VM $v did not reach its init: a QEMU ended while booting; its last words:"
			tail -n 3 "$logs/$v.qemu" | sed 's/^/    qemu: /' >&2
			continue
		fi
		log "VM $v did not reach its init within $boot_limit s; its last console lines and vCPUs:"
		tr -d '\r' <"$logs/$v.boot" | tail -n 3 | sed 's/^/    /' >&2
		port=$gdb_port_a; [ $v = b ] && port=$gdb_port_b
		if command -v gdb >/dev/null; then
			timeout 120 gdb -q -batch -nx -ex "set pagination off" -ex "target remote 127.0.0.1:$port" \
				-ex "info threads" -ex "thread apply all bt 6" -ex detach "$kdir/vmlinux" \
				>"$logs/$v.boot-hang" 2>&1 || true
			grep -v '^warning' "$logs/$v.boot-hang" | sed 's/^/    /' >&2
		fi
	done
	stop_vms
}

# When one VM's QEMU has ended (the run is over, or QEMU itself died: seen,
# an assertion in QEMU's TCG aborting one VM mid-run), the other gets
# pair_grace seconds to end too (its last cleanup and kmemleak's scan), then
# is stopped: it would otherwise wait on its peer until the run's timeout.
pair_grace=${SRNIC_VM_PAIR_GRACE:-300}
pair_watch() {
	local t=0
	while kill -0 "$pid_a" 2>/dev/null && kill -0 "$pid_b" 2>/dev/null; do sleep 2; done
	while [ $t -lt "$pair_grace" ]; do
		kill -0 "$pid_a" 2>/dev/null || kill -0 "$pid_b" 2>/dev/null || return 0
		sleep 2
		t=$((t + 2))
	done
	log "one VM ended $pair_grace s before the other; stopping it"
	stop_vms
}

for attempt in 1 2; do
	rm -f "$logs/boot-hang"
	vm_timeout=$timeout_s suite_deadline=
	if [ -n "${SRNIC_DEADLINE:-}" ]; then
		left=$((SRNIC_DEADLINE - $(date +%s) - deadline_margin))
		[ "$left" -gt 60 ] || die "SRNIC_DEADLINE leaves only $((left + deadline_margin)) s for the VM run"
		# The guests' uptime counts from about now; they need 60 s more
		# than their deadline to shut down (kmemleak's scans, the last
		# cleanup).
		suite_deadline=" srnic.deadline=$((left - 60))"
		[ "$vm_timeout" -le "$left" ] || vm_timeout=$left
		log "deadline: the VMs end within $vm_timeout s (SRNIC_DEADLINE)"
	fi
	vm a 192.0.2.1 192.0.2.2 "socket,id=n0,udp=127.0.0.1:$port_b,localaddr=127.0.0.1:$port_a" \
		"socket,id=ctl,host=127.0.0.1,port=$ctl_port,server=on,wait=off" 1 "$gdb_port_a" &
	pid_a=$!
	sleep 1
	vm b 192.0.2.2 192.0.2.1 "socket,id=n0,udp=127.0.0.1:$port_a,localaddr=127.0.0.1:$port_b" \
		"socket,id=ctl,host=127.0.0.1,port=$ctl_port,server=off" 2 "$gdb_port_b" &
	pid_b=$!
	boot_watch &
	watch=$!
	pair_watch &
	pair=$!
	samplers=
	if [ $mode = bench ] && [ "$bench_profile" = sample ]; then
		for v in a b; do
			port=$gdb_port_a; [ $v = b ] && port=$gdb_port_b
			python3 "$SRNIC_TOP/scripts/vm-sample.py" --port "$port" --log "$logs/a.log" \
				--out "$logs/sample-$v.txt" 2>"$logs/sample-$v.err" &
			samplers="$samplers $!"
		done
	fi
	if [ $mode = test ]; then
		# Progress on the terminal (and in CI's log) as the cases end: a run
		# that is stopped from outside still shows how far it got.
		tail -F --pid="$pid_a" "$logs/a.log" 2>/dev/null | while IFS= read -r line; do
			line=${line%$'\r'}
			case "$line" in
			"# ---- "*": cleanup") ;;
			"# ---- "*) printf '[srnic] %s %s\n' "$(elapsed_since "$start")" "${line#\# ---- } ..." ;;
			"ok "*|"not ok "*) printf '[srnic] %s %s\n' "$(elapsed_since "$start")" "$line" ;;
			esac
		done >&2 &
		progress=$!
	fi
	if [ $mode = bench ]; then
		# The host's time of each line of the guest's clock check (bench.sh).
		tail -F --pid="$pid_a" "$logs/a.log" 2>/dev/null | while IFS= read -r line; do
			case "$line" in *BENCH-CLOCK*) echo "$(date +%s.%N) ${line##*BENCH-CLOCK }" ;; esac
		done >"$logs/clock" &
		stamper=$!
	fi
	rc_a=0 rc_b=0
	wait $pid_a || rc_a=$?
	wait $pid_b || rc_b=$?
	# shellcheck disable=SC2086 # $samplers: none, or the two samplers' pids
	kill "$watch" "$pair" $samplers 2>/dev/null || true
	wait "$watch" 2>/dev/null || true
	wait "$pair" 2>/dev/null || true
	# shellcheck disable=SC2086
	[ -z "$samplers" ] || wait $samplers 2>/dev/null || true
	# The stamper and the progress lines end with VM a (tail --pid).
	[ -z "${stamper:-}" ] || wait "$stamper" || true
	[ -z "${progress:-}" ] || wait "$progress" || true
	[ -f "$logs/boot-hang" ] && [ $attempt = 1 ] || break
	log "warning: VM(s) $(tr '\n' ' ' <"$logs/boot-hang")hung or died while booting (before srnic was loaded); booting again"
	for v in a b; do
		mv "$logs/$v.log" "$logs/$v.log.boot-hang"
		mv "$logs/$v.boot" "$logs/$v.boot.boot-hang"
		mv "$logs/$v.qemu" "$logs/$v.qemu.boot-hang"
		: >"$logs/$v.files"
	done
done
vm_seconds=$(($(date +%s) - start))
log "VMs finished in $vm_seconds s"

fail=0
for v in a b; do
	if ! grep -q "SRNIC-VM-DONE" "$logs/$v.log"; then
		log "VM $v did not finish (timeout or crash): see $logs/$v.log"
		# QEMU's own last words (an assertion, a signal), if any.
		[ ! -s "$logs/$v.qemu" ] || tail -n 5 "$logs/$v.qemu" | sed 's/^/    qemu: /' >&2
		fail=1
	fi
	online=$(tr -d '\r' <"$logs/$v.log" | sed -n 's/^srnic-vm: \([0-9]*\) CPUs online$/\1/p' | head -n1)
	if [ "${online:-0}" != "$cpus" ]; then
		log "VM $v brought up ${online:-an unknown number of} CPUs, not $cpus"
		fail=1
	fi
	# With --module, the srnic.ko each VM had (/init prints its sha256).
	if [ -n "$module" ]; then
		want=$(sha256sum "$ko" | cut -d' ' -f1)
		got=$(tr -d '\r' <"$logs/$v.log" | sed -n 's/^srnic-vm: srnic.ko sha256 //p')
		got=${got%%$'\n'*}
		if [ "$got" = "$want" ]; then
			log "VM $v had the --module srnic.ko (sha256 $want)"
		else
			log "VM $v had a srnic.ko with sha256 ${got:-unknown}, not --module's $want"
			fail=1
		fi
	fi
	# The kernel's messages are all in NAME.boot; kmemleak's reports (printed
	# by /init) are in NAME.log.
	if grep -nE 'Oops|BUG:|WARNING:|KASAN:|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU|Kernel panic|Call Trace:|unreferenced object 0x|blocked for more than' "$logs/$v.boot" "$logs/$v.log" >"$logs/$v.reports"; then
		log "kernel reports in VM $v:"; cat "$logs/$v.reports" >&2
		fail=1
	fi
	if ! grep -q "kmemleak: 0 unreferenced objects" "$logs/$v.log" && grep -q "kmemleak:" "$logs/$v.log"; then
		log "kmemleak found leaks in VM $v (see $logs/$v.log)"
		fail=1
	fi
done

if [ $mode = demo ]; then
	sed -n 's/^.*DEMO| \{0,1\}//p' "$logs/a.log"
	exit $fail
fi
# Files the cases (or the benchmark) exported.
"$SRNIC_TOP/tests/vm/extract-files.sh" "$logs/a.files" "$logs/files" || fail=1
if [ $mode = bench ]; then
	if ! grep -q "BENCH| done" "$logs/a.log"; then
		log "the benchmark did not finish: see $logs/a.log"
		grep -a -E "FAIL|BENCH\|" "$logs/a.log" | tail -n 20 >&2
		fail=1
	fi
	echo "$logs"
	exit $fail
fi

# The KTAP lines of VM a (strip the console's carriage returns).
tr -d '\r' <"$logs/a.log" | sed -n '/^KTAP version 1/,$p' | grep -E '^(KTAP|1\.\.|ok |not ok |# )' >"$logs/ktap" || true

# The host checks of the cases that passed.
for check in "$SRNIC_TOP"/tests/vm/host/*.sh; do
	name=$(basename "$check" .sh)
	line=$(grep -E "^ok [0-9]+ $name\$" "$logs/ktap" || true)
	[ -n "$line" ] || continue
	if "$check" "$logs" >"$logs/$name.host" 2>&1; then
		log "host check $name: ok (details in $logs/$name.host)"
	else
		log "host check $name failed:"; sed 's/^/    /' "$logs/$name.host" >&2
		sed -i "s/^$line\$/not ok ${line#ok } # host check failed/" "$logs/ktap"
	fi
done
grep -E '^(ok|not ok) ' "$logs/ktap" >&2 || true
sed -n 's/^# time: \(.*\)$/  \1/p' "$logs/ktap" | sort -k2 -n -r | head -n 8 | sed '1i slowest cases:' >&2 || true
# Cases over their budget: a warning, not a failure (timing is no test verdict).
# Budgets are for make check's counts, not check-long's.
[ $long = 1 ] ||
sed -n 's/^# time: \([^ ]*\) \([0-9]*\) s (budget \([0-9]*\) s)$/\1 \2 \3/p' "$logs/ktap" |
	while read -r name secs budget; do
		[ "$secs" -le "$budget" ] || log "warning: $name took $secs s, over its budget of $budget s"
	done
# Why each failed case failed (what its FAIL_DIAG printed, up to 60 lines;
# its first FAIL line; then its last lines), at the end where a CI log's tail
# shows it.
awk '/^# ---- [^ ]*$/ { n = 0; why = ""; nd = 0; indiag = 0 } /^# / { buf[n++ % 20] = $0 }
	/^# \[ *[0-9.]*\] -- .* \(the case.s FAIL_DIAG\):$/ { indiag = 1 }
	/^# \[ *[0-9.]*\] FAIL: / && why == "" { why = $0; at = n; indiag = 0 }
	indiag && /^# / && nd < 60 { dpos[nd] = n; diag[nd++] = $0 }
	/^not ok / {
		print "--- " $0 ": its last lines"
		for (i = 0; i < nd; i++) if (dpos[i] <= n - 20) print "    " diag[i]
		if (why != "" && at <= n - 20) print "    " why "\n    ..."
		for (i = (n > 20 ? n - 20 : 0); i < n; i++) print "    " buf[i % 20]
		n = 0; why = ""; nd = 0; indiag = 0
	}' "$logs/ktap" >&2 || true
log "VM time: $vm_seconds s ($((vm_seconds / 60)) min $((vm_seconds % 60)) s) for $(grep -cE '^(ok|not ok) ' "$logs/ktap" || true) cases"
passed=$(grep -cE '^ok ' "$logs/ktap" || true)
failed=$(grep -cE '^not ok ' "$logs/ktap" || true)
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$logs/ktap" | head -n1)
if [ -z "$planned" ] || [ $((passed + failed)) -ne "$planned" ]; then
	log "expected ${planned:-?} results, got $((passed + failed))"
	failed=$((failed + ${planned:-1} - passed - failed))
	[ $failed -gt 0 ] || failed=1
fi
[ $fail = 0 ] || failed=$((failed + 1))
echo "vm: $passed passed, $failed failed"
[ "$failed" = 0 ]
