# SPDX-License-Identifier: GPL-2.0
# destroy_connecting: a QP destroyed while its connection is being set up never
# connects (srnic-vmtest destroy-connecting, server on b). The server holds the
# client's connection request until the client has destroyed its QP, then
# accepts: the client's late MPA Reply is refused (ECONNABORTED inside the
# module), the socket closed, no event names the destroyed QP, and its QP and
# socket are freed; the server sees its connection close (DISCONNECTED).
. /srnic/lib.sh
load_srnic_both
vmtest destroy-connecting -t 30
expect_idle
pass
