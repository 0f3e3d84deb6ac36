# SPDX-License-Identifier: GPL-2.0
# budget: 40
# netns: srnic's sockets and netdevs belong to the network namespace of the
# process that made them, and its sockets to that process's user.
# VM a gets a namespace "blue" joined to the initial one by a veth pair
# (10.9.0.1 here, 10.9.0.2 in blue).
# 1. A listener made in blue lives in blue: the initial namespace has no
#    socket on its port, and a client there reaches it at blue's address
#    (verified WRITE). The same port is still free in the initial namespace.
# 2. A process in blue reaches only what blue reaches: not the peer VM
#    (blue has no route there), which a process of the initial namespace
#    reaches at once.
# 3. A listener of an unprivileged process (uid 65534) is that user's socket
#    (/proc/net/tcp), not root's.
# 4. RMPP: a process in blue cannot name the initial namespace's eth0.
. /srnic/lib.sh
load_srnic_both
# iproute2's ip (busybox's shell prefers its own applet for a bare "ip").
IP=/bin/ip
P=$((XFER_PORT + 70))
port_hex() { printf ':%04X' "$1"; }
# listening_in NS PORT: whether a TCP socket listens on PORT in namespace NS
# ("" for the initial one); /proc/net/tcp and tcp6 show the reader's
# namespace (srnic xfer -s listens on [::]).
listening_in() {
	local cmd="grep -qE '$(listen_pattern "$2")' /proc/net/tcp /proc/net/tcp6"
	if [ -n "$1" ]; then $IP netns exec "$1" sh -c "$cmd"; else sh -c "$cmd"; fi
}
$IP netns add blue || fail "$IP netns add"
$IP link add vb0 type veth peer name vb1 || fail "$IP link add veth"
$IP link set vb1 netns blue || fail "moving vb1 to blue"
$IP addr add 10.9.0.1/24 dev vb0 && $IP link set vb0 up || fail "vb0"
$IP netns exec blue sh -c "$IP addr add 10.9.0.2/24 dev vb1 && $IP link set vb1 up && $IP link set lo up" ||
	fail "vb1"

# 1.
bg_start blue_srv "$IP netns exec blue srnic xfer -s -p $P -t 60 --count 1"
wait_until 30 listening_in blue "$P" || { cat /tmp/blue_srv.log; fail "no listener in blue"; }
listening_in "" "$P" && fail "the listener made in blue listens in the initial namespace"
echo "ok: the listener made in blue is in blue only"
bg_start init_srv "srnic xfer -s -p $P -t 60 --count 1"
wait_until 30 listening_in "" "$P" || { cat /tmp/init_srv.log; fail "the same port in the initial namespace"; }
echo "ok: the same port listens in the initial namespace too"
srnic xfer -c 10.9.0.2 -p "$P" -t 60 --op write --size 65536 --sge 2 ||
	{ cat /tmp/blue_srv.log; fail "no transfer to blue's listener"; }
wait_until 60 test -f /tmp/blue_srv.rc || fail "blue's server did not finish"
expect_eq "blue's server exit status" "$(cat /tmp/blue_srv.rc)" 0
srnic xfer -c 127.0.0.1 -p "$P" -t 60 --op write --size 4096 ||
	{ cat /tmp/init_srv.log; fail "no transfer to the initial namespace's listener"; }
wait_until 60 test -f /tmp/init_srv.rc || fail "the initial namespace's server did not finish"
expect_eq "the initial namespace's server exit status" "$(cat /tmp/init_srv.rc)" 0

# 2.
P2=$((P + 1))
peer_bg xfer_srv "srnic xfer -s -p $P2 -t 60 --count 1"
wait_listen "$P2" peer || fail "the peer's server did not listen"
if $IP netns exec blue srnic xfer -c "$PEER" -p "$P2" -t 10 --op write --size 4096 >/tmp/blue_cli.log 2>&1; then
	cat /tmp/blue_cli.log
	fail "a process in blue reached the peer VM"
fi
cat /tmp/blue_cli.log
grep -qi "unreachable" /tmp/blue_cli.log || fail "blue's connection failed, but not as unreachable"
echo "ok: a process in blue cannot reach the peer VM"
srnic xfer -c "$PEER" -p "$P2" -t 60 --op write --size 4096 || fail "the initial namespace reaches the peer"
peer_wait xfer_srv 60 || fail "the peer's server failed"

# 3.
P3=$((P + 2))
bg_start nobody_srv "su -s /bin/sh nobody -c 'srnic xfer -s -p $P3 -t 60 --count 1'"
wait_until 30 listening_in "" "$P3" || { cat /tmp/nobody_srv.log; fail "no listener of uid 65534"; }
uid=$(awk -v p="$(port_hex "$P3")" '$2 ~ p"$" && $4 == "0A" { print $8 }' /proc/net/tcp /proc/net/tcp6)
expect_eq "owner of the unprivileged listener's socket" "$uid" 65534
srnic xfer -c 127.0.0.1 -p "$P3" -t 60 --op send --size 4096 || fail "no transfer to the unprivileged listener"
wait_until 60 test -f /tmp/nobody_srv.rc || fail "the unprivileged server did not finish"
expect_eq "the unprivileged server's exit status" "$(cat /tmp/nobody_srv.rc)" 0

# 4.
if $IP netns exec blue srnic rmpp recv --nid 7 -i eth0 -t 5 >/tmp/blue_rmpp.log 2>&1; then
	fail "an RMPP endpoint in blue received on the initial namespace's eth0"
fi
cat /tmp/blue_rmpp.log
grep -qi "no such device" /tmp/blue_rmpp.log || fail "blue's RMPP endpoint failed, but not with ENODEV"
echo "ok: a process in blue cannot use the initial namespace's eth0 for RMPP"

$IP netns del blue || fail "$IP netns del"
$IP link del vb0 2>/dev/null
expect_idle
pass
