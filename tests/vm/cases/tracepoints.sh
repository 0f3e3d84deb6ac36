# SPDX-License-Identifier: GPL-2.0
# budget: 60
# tracepoints: srnic's trace events (Documentation/srnic/observability.rst) name the
# process, the QP and the addresses, and normal connection events leave the
# kernel log alone. With the srnic events on in both VMs:
#  1. a verified WRITE, client here (a), server on b: here srnic_connect,
#     srnic_established and srnic_disconnect of the client's pid and QP, from
#     this address to the server's port; on b srnic_request (the listener),
#     srnic_accept, srnic_established and srnic_disconnect of the server's pid,
#     from the server's port to this address;
#  2. a connection to a port nobody listens on: srnic_connect_error with
#     -ECONNREFUSED;
#  3. a request the server refuses (srnic blk serve, which refuses a client
#     that is not srnic_blk's): srnic_reject on b, srnic_rejected with
#     -ECONNREFUSED here.
# Neither VM's kernel log gains a srnic line meanwhile. TERMINATEs and CRC
# errors are traced in remote_access_errors and hostile_peer, RMPP
# retransmissions and drops in rmpp_loss and rmpp_bad_frames.
. /srnic/lib.sh
load_srnic_both
log_lines() { dmesg | grep -c srnic; }
peer_log_lines() { peer 'dmesg | grep -c srnic'; }
here0=$(log_lines)
there0=$(peer_log_lines)
trace_start
peer '. /srnic/lib.sh; trace_start'

# 1. A WRITE.
P=7301
peer_bg xfer_srv "srnic xfer -s -p $P -t 60"
wait_listen $P peer || fail "the xfer server did not listen"
spid=$(peer ". /srnic/lib.sh; pid_of 'srnic xfer -s'") || fail "no one xfer server on b"
srnic xfer -c "$PEER" -p $P -t 60 --op write --size 4096 &
cpid=$!
wait $cpid || fail "the WRITE failed"
peer_wait xfer_srv || fail "the xfer server failed"
at="pid=$cpid qp=[0-9]+ local=$ADDR:[0-9]+ remote=$PEER:$P status=0"
expect_eq "srnic_connect here (remote known, local not yet)" \
	"$(trace_count connect "pid=$cpid qp=[0-9]+ local=0.0.0.0:0 remote=$PEER:$P status=0")" 1
expect_eq "srnic_established here" "$(trace_count established "$at")" 1
expect_eq "srnic_disconnect here" "$(trace_count disconnect "$at")" 1
at="pid=$spid qp=[0-9]+ local=$PEER:$P remote=$ADDR:[0-9]+ status=0"
expect_eq "srnic_request on b (the listener)" "$(peer_trace_count request "$at")" 1
expect_eq "srnic_accept on b" "$(peer_trace_count accept "$at")" 1
expect_eq "srnic_established on b" "$(peer_trace_count established "$at")" 1
expect_eq "srnic_disconnect on b" "$(peer_trace_count disconnect "$at")" 1
# The QP named is the client's: one handle throughout.
expect_eq "one QP here" "$(trace_lines '(connect|established|disconnect)' | sed 's/.* qp=\([0-9]*\) .*/\1/' | sort -u | wc -l)" 1

# 2. Nobody listens.
srnic xfer -c "$PEER" -p 7302 -t 20 --op write --size 1 && fail "a connection to a closed port succeeded"
expect_eq "srnic_connect_error here (ECONNREFUSED)" \
	"$(trace_count connect_error "remote=$PEER:7302 status=-111")" 1

# 3. Refused by the server.
P=7303
peer_bg blk_srv "srnic blk serve --size 1M -p $P"
wait_listen $P peer || fail "the blk server did not listen"
srnic xfer -c "$PEER" -p $P -t 20 --op write --size 1 && fail "srnic blk serve accepted an xfer client"
peer ". /srnic/lib.sh; bg_kill_all"
expect_eq "srnic_rejected here (ECONNREFUSED)" "$(trace_count rejected "remote=$PEER:$P status=-111")" 1
expect_eq "srnic_reject on b" "$(peer_trace_count reject "local=$PEER:$P remote=$ADDR:[0-9]+ status=0")" 1

expect_eq "srnic lines in the kernel log here" "$(log_lines)" "$here0"
expect_eq "srnic lines in the kernel log on b" "$(peer_log_lines)" "$there0"
trace_stop
peer '. /srnic/lib.sh; trace_stop'
expect_idle
pass
