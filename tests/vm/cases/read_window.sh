# SPDX-License-Identifier: GPL-2.0
# budget: 40
# read_window: a reader that keeps its whole ORD of small RDMA Reads
# outstanding (perftest's ib_read_bw, 2-byte Reads, srnic on both sides
# through `srnic exec`) must never exceed the responder's IRD. The
# responder frees a Read Request's IRD slot when it starts the response:
# the reader may post the next Read as soon as the response arrives, which
# can be before the responder's transmit work has gone on from sending it
# (a regression test: srnic freed the slot only after the response was
# sent, and ext4 on srnic_blk met "IRD exceeded" TERMINATEs).
# Then srnic-vmtest fence (server on b): 16 READs of 16 KiB, twice the ORD
# of 8, and behind them a fenced WRITE of new data over the last 16 KiB:
# every READ completes with the old data, the WRITE completes (the transmit
# work that waits for a READ's completion, for an ORD slot or for the fence,
# is woken by it), and a READ behind it and the server find the new data.
. /srnic/lib.sh
ITERS=$(count 1000 20000)
T=$(scaled 300)
load_srnic_both
port=7460
for outs in 16 32; do
	args="-R -p $port -s 2 -n $ITERS -o $outs"
	perftest_pair peer "$port" "$T" srnic "ib_read_bw $args" srnic "ib_read_bw $args $PEER"
	perftest_expect "ib_read_bw -o $outs" ib_read_bw show
	port=$((port + 1))
done
vmtest fence
expect_idle
pass
