# SPDX-License-Identifier: GPL-2.0
# budget: 15
# tiny_mss: a peer that forces a tiny TCP MSS cannot make srnic send many
# more packets than the path needs (srnic-vmtest tiny-mss, one process over
# loopback): announcing an MSS of 200 to a srnic listener gets a reset before
# MPA, and no connection request; at the min_mss parameter (536) it is served
# and a 64 KiB READ comes back in FPDUs sized for that MSS (at most 131),
# verified; srnic connecting to a listener that announces 200 gets
# CONNECT_ERROR with -EMSGSIZE and sends it no MPA. Nothing is left behind.
. /srnic/lib.sh
load_srnic
PARAM=/sys/module/srnic/parameters/min_mss
expect_eq "the default min_mss" "$(cat $PARAM)" 536
srnic-vmtest tiny-mss -p $((VMTEST_PORT + 90)) --min-mss "$(cat $PARAM)" -t 60 || fail "srnic-vmtest tiny-mss"
expect_idle
pass
