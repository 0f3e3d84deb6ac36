# SPDX-License-Identifier: GPL-2.0
# budget: 15
# rmpp_raw_perm: an RMPP endpoint sends and receives raw frames, so creating
# one needs CAP_NET_RAW, and it gets only srnic's EtherType. srnic-vmtest
# rmpp-perm: root creates endpoints on eth0 (default EtherType and 0x88B5);
# EtherTypes 0x0800 and 0x88B6 are refused with EINVAL; as nobody (65534, no
# capabilities) creating one fails with EPERM.
. /srnic/lib.sh
load_srnic
srnic-vmtest rmpp-perm --ifname eth0 --nid 7 --uid 65534 || fail "srnic-vmtest rmpp-perm"
expect_idle
pass
