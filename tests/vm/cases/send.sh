# SPDX-License-Identifier: GPL-2.0
# budget: 45
# send: verified send transfers between the VMs: 0, 1, 4095, 4096, 65536 bytes
# and 1 MiB, 1 to 16 scatter/gather elements, CRC off, CRC on, markers on; 16 MiB
# with CRC, markers and 16 elements in check-long (rdma_read has it in make check).
. /srnic/lib.sh
iwarp_matrix send
pass
