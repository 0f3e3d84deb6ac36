# SPDX-License-Identifier: GPL-2.0
# budget: 60
# kernel_api: the kernel verbs API (include/srnic/kverbs.h), through its test
# client srnic_ktest.ko (tests/kernel/srnic_ktest.c), whose module init runs
# the checks and fails unless all pass (KTAP lines in the kernel log):
# 1. role=local: a client built for another API version is refused; every
#    object made, and refused with the right errno when its arguments are bad;
#    regions over a page array and over bio_vecs; every callback ran in a
#    workqueue worker; close.
# 2. srnic cannot be unloaded while a client module is loaded; a client
#    module that goes away with its context open (role=leak: a listener and
#    regions over pages it freed already) has it closed by srnic, with a
#    warning: its port is free again.
# 3. Kernel <-> kernel between the VMs: listen; a connect rejected with
#    private data; connect and accept with private data, RDMA WRITE
#    (page-array region) and RDMA READ (bio_vec region) of 64 KiB verified,
#    SEND and receive; drain_qp with a receive pending (flushed before it
#    returns; the server sees the disconnect). Then both clients unload and
#    srnic is idle on both VMs. Every exported call is made at least once.
# 4. Kernel <-> userspace: the same kernel server on b, and srnic-vmtest
#    ktest-peer here, a program on /dev/srnic speaking the kernel client's
#    protocol (the rejected request, WRITE, READ back, SEND, the answer,
#    disconnect).
. /srnic/lib.sh
load_srnic_both
KT=/srnic/srnic_ktest.ko
T=$(scaled 60)
PORT=7810

# ktest_log FROM: the test client's kernel log lines after line FROM.
ktest_log() { dmesg | grep 'srnic_ktest:' | tail -n +$(($1 + 1)); }
ktest_lines() { dmesg | grep -c 'srnic_ktest:'; }

from=$(ktest_lines)
insmod "$KT" role=local timeout_s="$T" || { ktest_log "$from"; fail "srnic_ktest role=local"; }
ktest_log "$from"
echo "ok: the local checks passed"

# The client (still loaded) holds srnic.
if rmmod srnic 2>/dev/null; then
	fail "srnic was unloaded under a loaded kernel client"
fi
echo "ok: rmmod srnic refused while srnic_ktest is loaded"
rmmod srnic_ktest || fail "rmmod srnic_ktest"
idle_wait 10 || fail "srnic not idle after the local client closed its context"

insmod "$KT" role=leak port="$PORT" timeout_s="$T" || fail "srnic_ktest role=leak"
grep -q ":$(printf '%04X' "$PORT") .* 0A " /proc/net/tcp || fail "the left-open listener is not listening"
rmmod srnic_ktest || fail "rmmod srnic_ktest (role=leak)"
dmesg | grep -q 'srnic: a kernel client module went away without srnic_kv_close' ||
	fail "no warning about the context left open"
grep -q ":$(printf '%04X' "$PORT") .* 0A " /proc/net/tcp && fail "the left-open listener still listens"
echo "ok: the context left open was closed when its module went away"
idle_wait 10 || fail "srnic not idle after the left-open context was closed"

peer "dmesg | grep -c 'srnic_ktest:' >/tmp/ktest.from"
peer_bg ktest_srv "insmod $KT role=server port=$PORT timeout_s=$T"
wait_until 60 peer "dmesg | grep -q 'srnic_ktest: # listening on port $PORT'" ||
	{ peer_wait ktest_srv 1; fail "the server did not listen"; }
from=$(ktest_lines)
insmod "$KT" role=client peer="$PEER" port="$PORT" timeout_s="$T" ||
	{ ktest_log "$from"; peer_wait ktest_srv 1; peer "dmesg | grep 'srnic_ktest:' | tail -n +\$((\$(cat /tmp/ktest.from) + 1))"; fail "srnic_ktest role=client"; }
ktest_log "$from"
echo "-- the server:"
peer_wait ktest_srv "$((T / TIME_SCALE + 30))" || { peer "dmesg | grep 'srnic_ktest:' | tail -n +\$((\$(cat /tmp/ktest.from) + 1))"; fail "srnic_ktest role=server"; }
peer "dmesg | grep 'srnic_ktest:' | tail -n +\$((\$(cat /tmp/ktest.from) + 1))"
rmmod srnic_ktest || fail "rmmod srnic_ktest"
peer "rmmod srnic_ktest" || fail "rmmod srnic_ktest on the peer"
echo "ok: kernel <-> kernel"

# 4. Kernel <-> userspace: the same kernel server, and srnic-vmtest ktest-peer
#    on /dev/srnic here speaking the kernel client's protocol.
PORT=$((PORT + 1))
peer "dmesg | grep -c 'srnic_ktest:' >/tmp/ktest.from"
peer_bg ktest_srv2 "insmod $KT role=server port=$PORT timeout_s=$T"
wait_until 60 peer "dmesg | grep -q 'srnic_ktest: # listening on port $PORT'" ||
	{ peer_wait ktest_srv2 1; fail "the server did not listen (for the userspace client)"; }
srnic-vmtest ktest-peer --to "$PEER" -p "$PORT" -t "$T" ||
	{ peer_wait ktest_srv2 1; peer "dmesg | grep 'srnic_ktest:' | tail -n +\$((\$(cat /tmp/ktest.from) + 1))"; fail "srnic-vmtest ktest-peer"; }
echo "-- the kernel server:"
peer_wait ktest_srv2 "$((T / TIME_SCALE + 30))" || { peer "dmesg | grep 'srnic_ktest:' | tail -n +\$((\$(cat /tmp/ktest.from) + 1))"; fail "srnic_ktest role=server (userspace client)"; }
peer "dmesg | grep 'srnic_ktest:' | tail -n +\$((\$(cat /tmp/ktest.from) + 1))"
peer "rmmod srnic_ktest" || fail "rmmod srnic_ktest on the peer (userspace client)"
echo "ok: kernel <-> userspace"
expect_idle
pass
