# SPDX-License-Identifier: GPL-2.0
# Sourced by the host checks that decode iWARP captures (hostile_peer.sh,
# siw_tshark.sh): the tshark options they share.
#
# - Wireshark finds iWARP only by a heuristic (the MPA key at the start of a
#   stream). By default it asks the dissector registered for either TCP port
#   first, and the ephemeral port a connection gets can be one (48898 is
#   ADS/AMS, 44818 EtherNet/IP, ...): that stream then decodes as the other
#   protocol, with no MPA and no TERMINATE in it. The heuristics go first.
# - The payloads are test data, not RPC-over-RDMA or SMB Direct: those
#   heuristic dissectors (which sit on top of iWARP) stay out.
IWARP_TSHARK=(-n -o tcp.try_heuristic_first:TRUE
	--disable-protocol rpcordma --disable-protocol smb_direct)
