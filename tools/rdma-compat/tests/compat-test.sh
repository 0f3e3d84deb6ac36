#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host tests of the stand-ins in DIR that need no srnic module:
#  1. without a device, the Debian programs load the stand-ins, find no
#     device and fail cleanly (no signal);
#  2. on the mock device (DIR/mock: the libibverbs stand-in linked against
#     tests/mock_srnic.c, SRNIC_DEVICE pointing at an existing file),
#     ibv_devices and ibv_devinfo list srnic0 as an iWARP device, and
#     verbs_smoke and cm_smoke (the librdmacm stand-in over the mock) pass,
#     and so do the scenarios of tests/vm/progs/rdmacm/cm_events that need no
#     connection (when rdma_destroy_id waits for unacknowledged events).
#
#   tools/rdma-compat/tests/compat-test.sh DIR
set -euo pipefail

dir=${1:?usage: compat-test.sh DIR}
fail=0
# Longest a program may take to give up without a device.
timeout_s=20

bad() { echo "compat-test: $*"; fail=1; }

# run WANT_RC CMD...: runs CMD against the real stand-ins without a device.
run_nodev() {
	local want=$1 rc=0 outf
	shift
	outf=$(mktemp)
	SRNIC_DEVICE=/nonexistent/srnic LD_LIBRARY_PATH="$dir" timeout "$timeout_s" "$@" >"$outf" 2>&1 || rc=$?
	# timeout(1) exits 124 when time ran out, 128 + N for a signal N (the
	# programs themselves exit 255 for their -1).
	if [ "$rc" = 124 ] || { [ "$rc" -gt 128 ] && [ "$rc" -lt 255 ]; }; then
		bad "'$*' without a device: exit $rc (timeout or signal)"; cat "$outf"
	elif [ "$want" != any ] && [ "$rc" != "$want" ]; then
		bad "'$*' without a device: exit $rc, expected $want"; cat "$outf"
	fi
	rm -f "$outf"
}

# The programs resolve to the stand-ins, not to rdma-core. (ldd's output is
# taken whole first: grep -q would end the pipe early, and pipefail would
# count ldd's SIGPIPE as a failure.)
deps=$(LD_LIBRARY_PATH="$dir" ldd /usr/bin/ib_write_bw)
for lib in libibverbs.so.1 librdmacm.so.1 libmlx5.so.1 libefa.so.1; do
	grep -q "$lib => $dir/$lib" <<<"$deps" || bad "ib_write_bw does not load $dir/$lib"
done

out=$(SRNIC_DEVICE=/nonexistent/srnic LD_LIBRARY_PATH="$dir" ibv_devices)
grep -q srnic0 <<<"$out" && bad "ibv_devices lists srnic0 without a device"
run_nodev 0 ibv_devices
run_nodev 255 ibv_devinfo
run_nodev any rping -s -a 127.0.0.1 -C 1
run_nodev any rping -c -a 127.0.0.1 -C 1
run_nodev any ucmatose -s 127.0.0.1
run_nodev any rdma_server
run_nodev any rdma_client -s 127.0.0.1
run_nodev any ib_write_bw -R
run_nodev any ib_send_lat -R 127.0.0.1

# The mock device: any existing path will do for the device node.
mock=(env SRNIC_DEVICE=/dev/null LD_LIBRARY_PATH="$dir/mock")
out=$("${mock[@]}" ibv_devices)
grep -q srnic0 <<<"$out" || bad "ibv_devices on the mock does not list srnic0: $out"
out=$("${mock[@]}" ibv_devinfo -v)
for want in 'hca_id:.*srnic0' 'transport:.*iWARP' 'link_layer:.*Ethernet' 'atomic_cap:.*ATOMIC_NONE' \
	'max_srq:.*0' 'state:.*PORT_'; do
	grep -q "$want" <<<"$out" || bad "ibv_devinfo -v on the mock lacks /$want/"
done
"${mock[@]}" "$dir/verbs_smoke" || bad "verbs_smoke failed"
# The librdmacm stand-in from DIR, the mock libibverbs before it.
SRNIC_DEVICE=/dev/null LD_LIBRARY_PATH="$dir/mock:$dir" timeout "$timeout_s" "$dir/cm_smoke" ||
	bad "cm_smoke failed"
for scenario in local orphan; do
	if out=$(SRNIC_DEVICE=/dev/null LD_LIBRARY_PATH="$dir/mock:$dir" timeout 60 \
		"$dir/cm_events" "$scenario" 127.0.0.1 2>&1); then
		echo "cm_events $scenario: OK"
	else
		bad "cm_events $scenario failed:"; echo "$out"
	fi
done

if [ "$fail" = 0 ]; then
	echo "compat-test: OK"
fi
exit "$fail"
