# SPDX-License-Identifier: GPL-2.0
# budget: 65
# many_qps: 64 QPs between one process on each VM, all transferring at once:
# per round every QP RDMA WRITEs 64 KiB and SENDs a message (the server verifies
# the region on the message and ACKs), then every QP READs its region back
# (verified); 4 rounds. Every QP is then disconnected in order (DISCONNECTED
# on both sides of each), and no QP or pinned page is left.
. /srnic/lib.sh
long_only
load_srnic_both
vmtest many-qps -t 120 --qps 64 --rounds 4 --size 65536
expect_idle
pass
