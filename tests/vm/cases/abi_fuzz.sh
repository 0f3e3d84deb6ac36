# SPDX-License-Identifier: GPL-2.0
# budget: 90
# timeout: 300
# abi_fuzz: the ABI under fuzzing. srnic-vmtest abi-fuzz runs as root on VM a
# for 40 s (check-long: 600 s; `make fuzz-abi DURATION=N`: N s) with 4 threads
# sharing two files and 2 child processes that are killed with SIGKILL at
# random moments and restarted: random sequences of raw ioctl, read, write and
# poll calls with random and boundary arguments (see
# tests/vm/vmtest/src/abi_fuzz.rs). A smaller fuzzer (2 threads, 1 child) runs
# on VM b at the same time; each connects to the other's listeners as well as
# to its own, so connections form over the link and through loopback.
# Checked: both fuzzers exit 0 (no result the ABI forbids, /dev/srnic opened);
# no kernel report in either VM's dmesg (the harness also fails the run on any
# KASAN, lockdep, WARN or kmemleak report); srnic idle in both VMs afterwards
# (every gauge back to zero); srnic unloads from both. The seed is printed
# (srnic.fuzz_seed=S on the kernel command line, `make fuzz-abi SEED=S`, runs
# the same choices again). srnic is loaded with file_mem_mib=16 so that six
# files per VM (two of the fuzzer, two of each child) stay far from the VM's
# memory.
. /srnic/lib.sh
SECS=${FUZZ_SECONDS:-$(count 40 600)}
SEED=${FUZZ_SEED:-$(date +%s)}
PORTS=29400
REPORTS='BUG:|WARNING:|KASAN:|Oops|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU|Call Trace:'
unload_srnic_both
dmesg -c >/dev/null
peer "dmesg -c >/dev/null"
insmod "$SRNIC_KO" file_mem_mib=16 || fail "insmod file_mem_mib=16"
peer "insmod $SRNIC_KO file_mem_mib=16" || fail "insmod on the peer"
echo "abi_fuzz: $SECS s, seed $SEED (peer: seed $((SEED + 1)))"
peer_bg fuzz_peer "srnic-vmtest abi-fuzz --seconds $SECS --threads 2 --children 1 --seed $((SEED + 1)) --port-base $PORTS --peer $ADDR"
srnic-vmtest abi-fuzz --seconds "$SECS" --threads 4 --children 2 --seed "$SEED" --port-base $PORTS --peer "$PEER"
rc=$?
echo "-- the peer's fuzzer:"
peer_wait fuzz_peer $((SECS + 120))
prc=$?
dmesg | grep -E "$REPORTS" && fail "kernel report here (dmesg above)"
peer "dmesg" | grep -E "$REPORTS" && fail "kernel report on the peer (dmesg above)"
echo "ok: no kernel report in either VM"
[ "$rc" = 0 ] || fail "abi-fuzz failed here (exit $rc; seed $SEED)"
[ "$prc" = 0 ] || fail "abi-fuzz failed on the peer (exit $prc; seed $((SEED + 1)))"
expect_idle
unload_srnic_both
echo "ok: srnic unloaded from both VMs"
pass
