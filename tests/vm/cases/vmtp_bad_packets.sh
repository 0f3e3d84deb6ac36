# SPDX-License-Identifier: GPL-2.0
# budget: 40
# vmtp_bad_packets: VMTP packets that are short, of another version, of a
# wrong length, with a bad checksum, of another entity domain, for a group
# (multicast, not implemented), with a delivery mask outside their segment,
# for an entity nobody has, and random bytes: each is dropped and counted by
# its reason on b (a packet the link between the VMs lost is sent again), a
# Request to nobody is answered with NONEXISTENT_ENTITY, nothing reaches the
# server's user, and the server still answers.
. /srnic/lib.sh
FAIL_DIAG=vmtp_counters
unload_srnic_both
load_srnic_both
# Dropped packets are no progress for the server (-t): its limit outlasts
# the injections on a slow host.
peer_bg vbad "srnic vmtp serve -a $PEER -D 100 -C 1 -t $(scaled 120)"
rmpp_wait_ready vbad || fail "server not ready"
K=20
# kind:counter on b. Each kind is counted by its own reason: the counter
# grows by K for it (inject_counted sends again what the link lost).
CASES="short:drop_short badver:drop_bad_header badlen:drop_bad_header garbage:drop_bad_header
checksum:drop_checksum domain:drop_unsupported group:drop_unsupported malformed:drop_malformed
unknown:drop_unknown_entity"
for c in $CASES; do
	check "inject $K ${c%%:*}, counted as ${c#*:}" \
		inject_counted $K "peer_vmtp_stat ${c#*:}" vmtp_inject "$PEER" 100 "${c%%:*}"
done
expect_eq "short" "$(peer_vmtp_stat drop_short)" $K
expect_eq "bad version, bad length, garbage" "$(peer_vmtp_stat drop_bad_header)" $((3 * K))
expect_eq "bad checksum" "$(peer_vmtp_stat drop_checksum)" $K
expect_eq "other domain, group" "$(peer_vmtp_stat drop_unsupported)" $((2 * K))
expect_eq "delivery mask outside the segment" "$(peer_vmtp_stat drop_malformed)" $K
expect_eq "unknown entity" "$(peer_vmtp_stat drop_unknown_entity)" $K
expect_eq "NONEXISTENT_ENTITY answers" "$(peer_vmtp_stat notifies_sent)" $K
expect_eq "Requests that reached the server's user" "$(peer_vmtp_stat requests)" 0
check "the server still answers" srnic vmtp ping -a "$ADDR" -s "$PEER:100" -C 1 -S 1000
peer_wait vbad 60 || fail "server"
peer "dmesg" | grep -E "BUG|WARNING|Oops" && fail "kernel report on b"
pass
