# SPDX-License-Identifier: GPL-2.0
# budget: 60
# fault_inject: srnic under injected allocation failures. The debug kernel's
# failslab and fail_page_alloc (CONFIG_FAULT_INJECTION) fail 10% of the
# allocations of a task that set /proc/thread-self/make-it-fail (task-filter;
# GFP_KERNEL ones and order-0 pages included, without the usual stack dumps).
# srnic-vmtest abi-fuzz --fail runs for 20 s on VM a, 2 threads and one child
# killed and restarted at random, each raw call (open, ioctl, read, write)
# with make-it-fail set for its thread only while inside the call: object
# creation, registration, listening, connecting over loopback, posting and
# polling meet failed allocations. Checked: the injection happened (the
# failure counters moved), the fuzzer finds no result the ABI forbids besides
# the tolerated ENOMEM/EFAULT, no kernel report (also checked by the
# harness: KASAN, lockdep, WARN, kmemleak, hung tasks), srnic idle afterwards,
# a clean 1 MiB WRITE and READ over loopback after it, and srnic unloads.
. /srnic/lib.sh
FI=/sys/kernel/debug
TIMES=1000000
REPORTS='BUG:|WARNING:|KASAN:|Oops|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU|Call Trace:'
[ -d $FI/failslab ] && [ -d $FI/fail_page_alloc ] || skip "no failslab/fail_page_alloc in this kernel"
# inject ATTR VALUE: sets ATTR of both fault types.
inject() {
	echo "$2" >"$FI/failslab/$1" && echo "$2" >"$FI/fail_page_alloc/$1" || fail "setting $1"
}
unload_srnic_both
insmod "$SRNIC_KO" file_mem_mib=16 || fail "insmod"
dmesg -c >/dev/null
inject task-filter Y
inject ignore-gfp-wait N
inject verbose 0
inject interval 1
inject space 0
inject times $TIMES
echo N >$FI/fail_page_alloc/ignore-gfp-highmem
echo 0 >$FI/fail_page_alloc/min-order
inject probability 10
SEED=${FUZZ_SEED:-$(date +%s)}
srnic-vmtest abi-fuzz --fail --seconds 20 --threads 2 --children 1 --seed "$SEED" --port-base 29500 \
	>/tmp/fuzz.log 2>&1
rc=$?
cat /tmp/fuzz.log
inject probability 0
slab=$((TIMES - $(cat $FI/failslab/times)))
pages=$((TIMES - $(cat $FI/fail_page_alloc/times)))
inject times -1
echo "injected: $slab slab and $pages page allocation failures (seed $SEED)"
[ "$slab" -gt 0 ] || fail "failslab injected nothing"
[ "$pages" -gt 0 ] || fail "fail_page_alloc injected nothing"
dmesg | grep -E "$REPORTS" && fail "kernel report (dmesg above)"
[ "$rc" = 0 ] || fail "abi-fuzz --fail failed (exit $rc; seed $SEED): $(grep -m1 -E 'abi-fuzz: (FAIL|VIOLATION)' /tmp/fuzz.log)"
expect_idle
# srnic still works.
P=$((XFER_PORT + 95))
bg_start fi_srv "srnic xfer -s -p $P -t 60 --count 2"
wait_listen "$P" || { cat /tmp/fi_srv.log; fail "no server after the injection"; }
srnic xfer -c 127.0.0.1 -p "$P" -t 60 --op write --size 1048576 || fail "a WRITE after the injection"
srnic xfer -c 127.0.0.1 -p "$P" -t 60 --op read --size 1048576 || fail "a READ after the injection"
wait_until 60 test -f /tmp/fi_srv.rc || fail "the server did not finish"
expect_eq "the server's exit status" "$(cat /tmp/fi_srv.rc)" 0
expect_idle
unload_checked || fail "rmmod after the injection"
pass
