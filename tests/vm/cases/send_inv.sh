# SPDX-License-Identifier: GPL-2.0
# budget: 45
# send_inv: verified send-inv transfers between the VMs: 0, 1, 4095, 4096, 65536 bytes
# and 1 MiB, 1 to 16 scatter/gather elements, each size with CRC off, CRC on
# or markers in turn (iwarp_matrix lean: send's case runs the full matrix of
# the SEND framing; check-long runs the full one here too, 16 MiB included).
# Then the invalidation itself (srnic-vmtest invalidate, target on b), twice on
# a fresh QP: the region takes an RDMA WRITE; a SEND with Invalidate of its
# STag arrives with WITH_INV and invalidated_stag = the STag; then an RDMA
# WRITE (resp. READ) to it fails: the initiator gets an error completion with
# the TERMINATE received (WRITE: DDP/tagged/invalid STag, 0x80001100; READ:
# RDMAP/remote protection/invalid STag, 0x80000100, as the TermCode table
# says), a QP_ERROR event and QUERY_QP ERROR with it; the target's QP is in
# ERROR with the TERMINATE it sent, and the region's data is unchanged.
. /srnic/lib.sh
iwarp_matrix send-inv lean
vmtest invalidate
expect_idle
pass
