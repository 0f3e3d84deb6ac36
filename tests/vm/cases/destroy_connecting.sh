# SPDX-License-Identifier: GPL-2.0
# destroy_connecting: a QP destroyed while its connection is being set up never
# connects (srnic-vmtest destroy-connecting, server on b). The server holds the
# client's connection request until the client has destroyed its QP, then
# accepts. Destroying the QP ends its start-up at once: its QP and socket are
# freed before the server answers, no event names the destroyed QP, and the
# server sees its connection close (DISCONNECTED or CONNECT_ERROR).
. /srnic/lib.sh
load_srnic_both
vmtest destroy-connecting -t 30
expect_idle
pass
