# SPDX-License-Identifier: GPL-2.0
# remote_access_errors: every remote access error the target checks, each on a
# fresh QP: an RDMA WRITE and an RDMA READ to an invalid STag, beyond the
# region's end, to a region without REMOTE_WRITE (resp. REMOTE_READ), and to a
# region of another PD. Each must give the TERMINATE of the TermCode table in
# rust/proto/src/rdmap.rs (WRITE: DDP/tagged 0x1100, 0x1101, 0x1100, 0x1102;
# READ: RDMAP/remote protection 0x0100, 0x0101, 0x0102, 0x0103): on the
# initiator an error completion carrying it with bit 31 (received), a QP_ERROR
# event and QUERY_QP ERROR with it; on the target a QP_ERROR event and QUERY_QP
# ERROR with it (sent) and no byte of its regions changed. A second QP between
# the same two programs stays up and moves verified data after every error.
# The TERMINATE counters on both VMs count the 8 errors, in all and by layer,
# and the tracepoints
# show them (srnic_terminate_received here, srnic_terminate_sent on b: four
# DDP tagged-buffer errors, four RDMAP remote-protection errors each). Target
# (server) on b.
. /srnic/lib.sh
load_srnic_both
trace_start
peer '. /srnic/lib.sh; trace_start'
vmtest remote-access
for ev in terminate_received; do
	expect_eq "$ev here, DDP tagged" "$(trace_count $ev "layer=DDP etype=1 ecode=0x0[0-2]$")" 4
	expect_eq "$ev here, RDMAP remote protection" "$(trace_count $ev "layer=RDMAP etype=1 ecode=0x0[0-3]$")" 4
done
expect_eq "terminate_sent on b, DDP tagged" "$(peer_trace_count terminate_sent "layer=DDP etype=1 ecode=0x0[0-2]$")" 4
expect_eq "terminate_sent on b, RDMAP remote protection" \
	"$(peer_trace_count terminate_sent "layer=RDMAP etype=1 ecode=0x0[0-3]$")" 4
trace_stop
peer '. /srnic/lib.sh; trace_stop'
expect_eq "TERMINATEs received here (initiator)" "$(srnic_stat terminates_received)" 8
expect_eq "TERMINATEs sent by the peer (target)" "$(peer '. /srnic/lib.sh; srnic_stat terminates_sent')" 8
# By layer: four DDP (tagged buffer), four RDMAP (remote protection), no LLP.
for l in ddp:4 rdmap:4 llp:0; do
	expect_eq "TERMINATEs received here, ${l%:*}" "$(srnic_stat terminates_received_${l%:*})" "${l#*:}"
	expect_eq "TERMINATEs sent by the peer, ${l%:*}" "$(peer ". /srnic/lib.sh; srnic_stat terminates_sent_${l%:*}")" "${l#*:}"
done
expect_idle
pass
