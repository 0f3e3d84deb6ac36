# SPDX-License-Identifier: GPL-2.0
# budget: 60
# destroy_race: ending a connection at a random moment by each way a local
# user can: destroying the QP, closing the file, killing the process.
# 1. srnic-vmtest destroy-race (client on a, server on b): rounds of
#    connections ended while connecting, while the server accepts, or while
#    established with SENDs in flight, at random delays (0-40 ms); the server
#    rejects some and destroys a third of its QPs itself. Checked: every
#    object and socket is gone afterwards, the server saw every connection it
#    accepted end; KASAN, lockdep and kmemleak stay silent.
# 2. Unloading srnic while a connection is being set up: a client on a waits
#    for an MPA Reply that a plain TCP server on b never sends; the client is
#    killed. srnic's refcount drops to 0 at once (the start-up ends with its
#    file, it does not wait for its 15 s timer), rmmod succeeds, and the
#    server sees its connection closed.
. /srnic/lib.sh
load_srnic_both
vmtest destroy-race -t 300 --rounds "$(count 30 300)"
expect_idle

P=$((XFER_PORT + 80))
peer "rm -f /tmp/mute.closed"
# stdin never ends, so nc ends only when the connection closes.
peer_bg mute_srv "sleep 600 | { nc -l -p $P >/dev/null; echo closed >/tmp/mute.closed; }"
# busybox nc listens on an IPv6 socket (IPv4 clients are mapped): look in both.
hex=$(printf ':%04X' "$P")
wait_until 30 peer "grep -q '$hex [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6" ||
	fail "the mute server did not listen"
bg_start muted_cli "srnic xfer -c $PEER -p $P -t 60 --op write --size 4096"
wait_until 30 peer "grep -q '$hex [0-9A-F]*:[0-9A-F]* 01 ' /proc/net/tcp /proc/net/tcp6" ||
	fail "the client did not connect to the mute server"
bg_kill_all
wait_until 5 srnic_refcnt_zero ||
	{ srnic_holders; fail "srnic still in use 5 s after its last user was killed (refcnt $(cat /sys/module/srnic/refcnt))"; }
rmmod srnic || fail "rmmod srnic while a start-up was under way"
echo "ok: srnic unloaded right after its connecting user was killed"
wait_until 10 peer "test -f /tmp/mute.closed" || fail "the server did not see the connection close"
echo "ok: the server saw the connection close"
peer ". /srnic/lib.sh; bg_kill_all"
pass
