# SPDX-License-Identifier: GPL-2.0
# budget: 60
# res_view: `srnic res` (SRNIC_IOCTL_QUERY_RES, Documentation/srnic/observability.rst)
# lists every object with its owner. A srnic_blk export on b (`srnic blk
# serve`, 1 MiB) mapped here by the kernel client:
#  - b, as root: the server's listener on its port, its QPs connected (RTS,
#    from its port to this address), its export's region with 256 pages
#    pinned, its CQs, each with the server's pid and uid 0;
#  - here: srnic_blk's QPs connected to b, and its regions pinning no user
#    pages (a kernel client's);
#  - b, as nobody: none of root's objects; nobody's own listener (an xfer
#    server it runs) and nothing else; root sees both listeners;
#  - the unmap closes the server's connections, which flushes their posted
#    receives (srnic stats' flushed_wrs counts them on b);
#  - after unmap and the servers' exit, nothing on either VM.
. /srnic/lib.sh
load_srnic_both
insmod /srnic/srnic_blk.ko || fail "insmod srnic_blk"
P=7320
peer_bg blk_srv "srnic blk serve --size 1M -p $P"
wait_listen $P peer || { peer_wait blk_srv 1; fail "the server did not listen"; }
spid=$(peer ". /srnic/lib.sh; pid_of 'srnic blk serve'") || fail "no one srnic blk server on b"
dev=$(srnic blk map "$PEER" -p $P) || fail "srnic blk map"
echo "-- srnic res on b:"
peer "srnic res" | tee /tmp/res_b || fail "srnic res on b"
echo "-- srnic res here:"
srnic res | tee /tmp/res_a || fail "srnic res here"
who="pid $spid uid 0 ctx [0-9]+"
expect_eq "b: the server's listener" "$(grep -cE "^listen [0-9]+ $who addr \[::\]:$P " /tmp/res_b)" 1
grep -qE "^qp [0-9]+ $who state rts local $PEER:$P remote $ADDR:[0-9]+ mpa .* ird [0-9]+ ord [0-9]+ sq [0-9]+/[0-9]+ " /tmp/res_b ||
	fail "b: no connected QP of the server"
expect_eq "b: the export's region (1 MiB, 256 pages pinned)" \
	"$(grep -cE "^mr [0-9]+ $who lkey 0x[0-9a-f]+ access [a-z,-]+ addr 0x[0-9a-f]+ length 1048576 pinned_pages 256$" /tmp/res_b)" 1
grep -qE "^cq [0-9]+ $who cqe [1-9][0-9]* queued [0-9]+ users [1-9]" /tmp/res_b || fail "b: no CQ of the server in use"
grep -qE "^qp [0-9]+ pid [0-9]+ uid 0 ctx [0-9]+ state rts local $ADDR:[0-9]+ remote $PEER:$P " /tmp/res_a ||
	fail "here: no connected QP of srnic_blk"
grep -E "^mr " /tmp/res_a | grep -qv " pinned_pages 0$" && fail "here: a kernel client's region pins user pages"

# Another user sees only its own objects.
asnobody() { peer "su -s /bin/sh nobody -c '$1'"; }
expect_eq "b: what nobody sees of root's" "$(asnobody 'srnic res' | wc -l)" 0
peer_bg nobody_srv "su -s /bin/sh nobody -c 'srnic xfer -s -p 7321 -t 60'"
wait_listen 7321 peer || fail "nobody's xfer server did not listen"
asnobody 'srnic res' | tee /tmp/res_nobody
expect_eq "b: nobody sees its listener" "$(grep -cE "^listen [0-9]+ pid [0-9]+ uid 65534 ctx [0-9]+ addr \[::\]:7321 " /tmp/res_nobody)" 1
expect_eq "b: and nothing else" "$(wc -l </tmp/res_nobody)" 1
expect_eq "b: root sees both listeners" "$(peer 'srnic res listen' | wc -l)" 2

flushed0=$(peer ". /srnic/lib.sh; srnic_stat flushed_wrs")
srnic blk unmap "$dev" || fail "srnic blk unmap"
# The unmap ends srnic_blk's connections: the server's QPs see them close,
# and their posted receives (rq above) complete flushed, as srnic stats
# counts on b.
posted=$(sed -n 's/^qp .* rq \([0-9]*\)\/[0-9]* .*/\1/p' /tmp/res_b | awk '{ n += $1 } END { print n + 0 }')
[ "$posted" -gt 0 ] || fail "b: no receives posted on the server's QPs"
flushed() { echo $(($(peer ". /srnic/lib.sh; srnic_stat flushed_wrs") - flushed0)); }
all_flushed() { [ "$(flushed)" -ge "$posted" ]; }
wait_until 30 all_flushed || fail "b: $(flushed) work requests counted flushed, $posted receives were posted"
echo "ok: work requests flushed on b ($(flushed) >= $posted)"
rmmod srnic_blk || fail "rmmod srnic_blk"
peer ". /srnic/lib.sh; bg_kill_all"
expect_eq "here: nothing left" "$(srnic res | wc -l)" 0
gone() { [ "$(peer 'srnic res' | wc -l)" = 0 ]; }
wait_until 30 gone || fail "b: objects left: $(peer 'srnic res')"
expect_idle
pass
