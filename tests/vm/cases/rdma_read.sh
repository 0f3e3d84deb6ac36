# SPDX-License-Identifier: GPL-2.0
# budget: 50
# rdma_read: verified read transfers between the VMs: 0, 1, 4095, 4096, 65536 bytes,
# 1 MiB and 4 MiB (check-long: 16 MiB), 1 to 16 scatter/gather elements, CRC off, CRC on, markers on.
. /srnic/lib.sh
iwarp_matrix read big
pass
