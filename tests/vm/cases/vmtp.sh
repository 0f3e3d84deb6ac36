# SPDX-License-Identifier: GPL-2.0
# budget: 60
# vmtp: VMTP message transactions (RFC 1045) between the VMs over IP protocol
# 81: a server on b echoes Requests of 0 B to 16 KiB (one packet group) and
# serves a 256 KiB read as a run of 16 KiB transactions; every Response is
# verified byte for byte on a, and the server checks that every Request
# arrived exactly once and in order. A Request to an entity nobody has is
# refused at once (NONEXISTENT_ENTITY from b's stack), and when the server
# goes away mid-run its client gets a clear error in bounded time. No packet
# is dropped as bad, every Response is acknowledged and nothing is left;
# kmemleak stays clean. The server shows in b's resource view (srnic res
# vmtp).
. /srnic/lib.sh
FAIL_DIAG=vmtp_counters
unload_srnic_both
load_srnic_both
SERVER="$PEER:100"
SIZES=0,1,7,8,100,1400,1401,1500,4096,5000,9000,16383,16384
N=$(count 26 130)
peer_bg vsrv "srnic vmtp serve -a $PEER -D 100 -C $((N + 18)) -t 120"
rmpp_wait_ready vsrv || fail "server not ready"
peer "srnic res vmtp" | tee /tmp/res_vmtp
grep -qE "^entity [0-9]+ pid [0-9]+ uid 0 ctx [0-9]+ id $PEER:100 role server in_progress 0 posted 8$" /tmp/res_vmtp ||
	fail "srnic res vmtp on b does not show the server"
srnic vmtp ping -a "$ADDR" -s "$SERVER" -C "$N" -S $SIZES -t 120 || fail "echo ping-pong"
srnic vmtp read -a "$ADDR" -s "$SERVER" -S 256K -t 120 || fail "bulk read"
srnic vmtp read -a "$ADDR" -s "$SERVER" -S 5000 --chunk 4000 -t 120 || fail "short read"
peer_wait vsrv 120 || fail "server"
expect_eq "requests b received whole" "$(peer_vmtp_stat requests)" $((N + 18))
expect_eq "transactions a completed" "$(vmtp_stat transactions)" $((N + 18))
expect_eq "failed transactions" "$(vmtp_stat failed)" 0
expect_eq "Responses acknowledged (the last by the closing client)" "$(peer_vmtp_stat responses_acked)" $((N + 18))
expect_eq "Responses discarded" "$(peer_vmtp_stat responses_discarded)" 0
for c in drop_checksum drop_bad_header drop_malformed drop_unknown_entity; do
	expect_eq "$c on b" "$(peer_vmtp_stat $c)" 0
done
expect_eq "entities left on b" "$(peer_vmtp_stat entities)" 0
expect_eq "namespaces left on b" "$(peer_vmtp_stat namespaces)" 0

# No server 100 any more, but another entity keeps b's stack: it answers at once.
peer_bg vother "srnic vmtp serve -a $PEER -D 200 -C 1 -t 120"
rmpp_wait_ready vother || fail "second server not ready"
n0=$(peer_vmtp_stat notifies_sent)
out=$(srnic vmtp ping -a "$ADDR" -s "$SERVER" -C 1 -t 60 2>&1) && fail "a Request to nobody succeeded"
echo "$out"
echo "$out" | grep -q "no such entity" || fail "no NONEXISTENT_ENTITY answer"
expect_eq "NONEXISTENT_ENTITY answers b sent" "$(($(peer_vmtp_stat notifies_sent) - n0))" 1
check "the other server still answers" srnic vmtp ping -a "$ADDR" -s "$PEER:200" -C 1 -S 64
peer_wait vother 60 || fail "second server"

# The server dies mid-run: the client's transaction fails, in bounded time.
peer_bg vdie "srnic vmtp serve -a $PEER -D 300 -t 120"
rmpp_wait_ready vdie || fail "third server not ready"
srnic vmtp ping -a "$ADDR" -s "$PEER:300" -C 100000 -S 1000 -t 60 > /tmp/vdie.out 2>&1 &
cpid=$!
wait_until 60 sh -c "[ \$(srnic stats | sed -n 's/^vmtp_transactions: //p') -ge $((N + 18 + 1 + 20)) ]" ||
	fail "the client did not get going"
peer '. /srnic/lib.sh; kill -9 $(pid_of "srnic vmtp serve")' || fail "no server to kill"
t0=$(date +%s)
wait $cpid && fail "the client did not notice its server died"
t1=$(date +%s)
cat /tmp/vdie.out
grep -Eq "no answer after the retransmissions|no such entity" /tmp/vdie.out || fail "unclear error"
echo "ok: the client failed $((t1 - t0)) s after its server died"
[ $((t1 - t0)) -le $(scaled 30) ] || fail "took $((t1 - t0)) s"
wait_until 30 sh -c "[ \"\$(srnic stats | sed -n 's/^vmtp_entities: //p')\" = 0 ]" || fail "entities left on a"
pass
