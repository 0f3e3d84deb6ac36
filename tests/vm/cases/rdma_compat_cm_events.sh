# SPDX-License-Identifier: GPL-2.0
# budget: 40
# rdma_compat_cm_events: rdma_destroy_id waits for unacknowledged rdma_cm events
# exactly when rdma-core's does. tests/vm/progs/rdmacm/cm_events (see there)
# runs with the same expectations on rdma-core itself (siw) and through `srnic
# exec` on the librdmacm stand-in (srnic):
#  1. local: another id's unacknowledged event does not hold up
#     rdma_destroy_id; the id's own does, until acknowledged; an undelivered
#     event goes with its id (no wait, the channel no longer polls readable).
#     On srnic (VM a) and on siw (VM b).
#  2. orphan (srnic only: a use after free in rdma-core): rdma_destroy_id after
#     rdma_destroy_event_channel fails at once with EBADF.
#  3. server and client: the listener's rdma_destroy_id waits for its
#     unacknowledged CONNECT_REQUEST, the new id's does not; the client exits
#     with its ESTABLISHED unacknowledged and its QP, MR and CQs allocated.
#     srnic <-> srnic, then siw <-> siw. After the srnic run srnic holds
#     nothing in either VM (expect_idle): process exit cleans up.
. /srnic/lib.sh
T=$(scaled 120)
load_srnic_both
siw_peer_up

# cm_events_here WHAT ARGS...: runs cm_events here and expects exit 0.
cm_events_here() {
	local what=$1 rc
	shift
	# A file, not $(...): a program bounded leaves behind would hold the pipe.
	bounded "$T" "$@" >/tmp/cm_events.log 2>&1
	rc=$?
	cat /tmp/cm_events.log
	expect_eq "$what: exit status" "$rc" 0
}

cm_events_here "local, srnic" srnic exec -- cm_events local "$PEER"
cm_events_here "orphan, srnic" srnic exec -- cm_events orphan "$PEER"
out=$(peer "timeout $T cm_events local $ADDR")
rc=$?
echo "$out"
expect_eq "local, siw (rdma-core): exit status" "$rc" 0

# pair STACK PORT: the server here, the client on the peer, both on STACK.
pair() {
	local stack=$1 port=$2 cli rc src
	rm -f /tmp/cm_srv.log
	timeout "$T" $(stack_prefix "$stack") cm_events server "$ADDR" "$port" >/tmp/cm_srv.log 2>&1 &
	pid=$!
	wait_listen "$port" || { cat /tmp/cm_srv.log; fail "cm_events server ($stack) did not listen"; }
	cli=$(peer "timeout $T $(stack_prefix "$stack") cm_events client $ADDR $port")
	rc=$?
	echo "$cli"
	wait "$pid"
	src=$?
	cat /tmp/cm_srv.log
	expect_eq "client, $stack: exit status" "$rc" 0
	check "client, $stack: exited established" sh -c 'echo "$1" | grep -q "^client: established"' _ "$cli"
	expect_eq "server, $stack: exit status" "$src" 0
}
pair srnic 7680
expect_idle

siw_up
pair siw 7681
siw_down
siw_peer_down
expect_idle
pass
