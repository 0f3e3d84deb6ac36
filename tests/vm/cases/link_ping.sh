# SPDX-License-Identifier: GPL-2.0
# link_ping: the two VMs reach each other over the virtual Ethernet link.
. /srnic/lib.sh
check "ping $PEER from a" ping -c 3 -W 5 "$PEER"
check "ping $ADDR from b" peer "ping -c 3 -W 5 $ADDR"
pass
