# SPDX-License-Identifier: GPL-2.0
# budget: 40
# dereg_inflight: deregistration ends remote access at once
# (srnic-vmtest dereg-inflight, server on b). The client RDMA READs the
# server's 16 MiB region; once part of the response is out, the server
# deregisters the region: the response stops at the next FPDU, the server's
# QP fails having sent the TERMINATE of an invalid STag (0x0100), and the
# client's READ completes with a remote access error carrying it. The other
# way, the client WRITEs 16 MiB into a region the server deregisters once part
# of it arrived: the server places no more and fails with the TERMINATE of an
# invalid tagged STag (0x1100), which the client's QP receives. Also: 32
# registrations of one STag index get a new key each time, not a counter.
# Afterwards nothing is pinned (harness).
. /srnic/lib.sh
load_srnic_both
vmtest dereg-inflight -t 60
expect_idle
pass
