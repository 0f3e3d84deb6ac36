# SPDX-License-Identifier: GPL-2.0
# budget: 90
# blk_fail: srnic_blk.ko when its server goes away mid-I/O
# (Documentation/srnic/blk.rst, "Failure").
# 1. The server is killed (SIGKILL) while dd writes through the device: dd
#    fails within a bound (no task hangs: the debug kernel's hung-task
#    detector would fail the run), the device is listed "failed", a later
#    read fails at once, unmap and rmmod work.
# 2. The client's link goes down (ip link set eth0 down) while dd writes: the
#    same, then the link comes back up.
# srnic is idle on both VMs afterwards (the peer's server is killed).
. /srnic/lib.sh
load_srnic_both
insmod /srnic/srnic_blk.ko || fail "insmod srnic_blk"

# wait_writing DEV: waits until dd has written through DEV (its write count
# in /sys/block/NAME/stat grew).
writes() { awk '{ print $5 }' "/sys/block/$1/stat"; }
writing() { [ "$(writes "$1")" -gt 2 ]; }
wait_writing() { wait_until 60 writing "$1"; }

# run_cut HOW PORT: maps an export served on PORT, starts dd, cuts the
# server off with HOW (a function), and checks the failure.
run_cut() {
	local how=$1 port=$2 dev name rc
	peer_bg "blk_srv$port" "srnic blk serve --size 32M -p $port"
	wait_listen "$port" peer || fail "the server did not listen"
	dev=$(srnic blk map "$PEER" -p "$port") || fail "srnic blk map"
	name=${dev#/dev/}
	bg_start dd "dd if=/dev/zero of=$dev bs=1M count=32 oflag=direct"
	wait_writing "$name" || fail "dd did not start writing"
	echo "dd is writing ($(writes "$name") writes done); $how"
	"$how"
	wait_until 60 test -f /tmp/dd.rc || fail "dd did not end after the server was cut off ($how)"
	rc=$(cat /tmp/dd.rc)
	cat /tmp/dd.log
	[ "$rc" != 0 ] || fail "dd succeeded although the server was cut off ($how)"
	echo "ok: dd failed (exit status $rc) after $how"
	srnic blk list
	expect_eq "the device's state" "$(awk -v n="$name" '$1 == n { print $5 }' /sys/kernel/srnic_blk/devices)" failed
	if dd if="$dev" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
		fail "a read from the failed device succeeded"
	fi
	echo "ok: a read from the failed device fails"
	srnic blk unmap "$name" || fail "unmap of the failed device"
	dmesg | grep 'srnic_blk:' | tail -n 3
}

kill_server() { peer "killall -9 srnic"; }
link_down() { ip link set eth0 down; }

run_cut kill_server 7020
run_cut link_down 7022
ip link set eth0 up
ip addr add "$ADDR/24" dev eth0 2>/dev/null
wait_until 30 ping -c 1 -W 1 "$PEER" >/dev/null || fail "the link did not come back"
rmmod srnic_blk || fail "rmmod srnic_blk"
peer ". /srnic/lib.sh; bg_kill_all"
expect_idle
pass
