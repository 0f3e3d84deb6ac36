# SPDX-License-Identifier: GPL-2.0
# budget: 30
# tool_json: the srnic tool's machine output (Documentation/srnic/tool.rst).
# `srnic --json info` and `--json stats` carry the same names and values as
# their text, in the same order; `srnic stats -w 1 -c 2` prints an absolute
# sample and then "no change" while srnic is idle; `srnic --json stats -w`
# prints one object per sample whose second sample holds the changes a
# `srnic --json xfer` made (one connection, its payload bytes); both sides'
# `--json xfer` print one object with the transfer's fields. The guest has no
# JSON parser: the objects are taken apart with sed on their known field names
# (serde_json prints them on one line, without spaces).
. /srnic/lib.sh
load_srnic_both
PORT=18600

# json_pairs OBJECT: the members of a flat JSON object of numbers (the text
# inside its braces), one "name: value" line each, as the text forms print them.
json_pairs() { printf '%s\n' "$1" | tr ',' '\n' | sed 's/^"\([a-z_0-9]*\)":/\1: /'; }

# info: the text's values, from the JSON.
info=$(srnic info) || fail "srnic info"
json=$(srnic --json info) || fail "srnic --json info"
echo "$json"
expect_eq "srnic --json info: lines" "$(printf '%s\n' "$json" | wc -l)" 1
abi=$(echo "$info" | sed -n 's/^abi_version: //p')
caps=$(echo "$info" | sed -n 's/^capabilities: \(0x[0-9a-f]*\) .*/\1/p')
names=$(echo "$info" | sed -n 's/^capabilities: 0x[0-9a-f]* (\(.*\))$/\1/p')
[ "$names" = none ] && names=
case "$json" in
"{\"device\":\"/dev/srnic\",\"abi_version\":$abi,\"capabilities\":$((caps)),\"capability_names\":["*) echo "ok: device, abi_version $abi, capabilities $caps" ;;
*) fail "srnic --json info does not start with device, abi_version $abi, capabilities $((caps))" ;;
esac
got=$(echo "$json" | sed -n 's/.*"capability_names":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' ' ')
expect_eq "capability_names" "$got" "$names"
limits=$(echo "$json" | sed -n 's/.*,"limits":{\([^}]*\)}}$/\1/p')
expect_eq "limits: names, order and values as the text's" "$(json_pairs "$limits")" "$(echo "$info" | sed '1,3d')"

# stats: every counter, as the text lists it (srnic is idle: nothing moves).
text=$(srnic stats) || fail "srnic stats"
json=$(srnic --json stats) || fail "srnic --json stats"
echo "$json"
counters=$(echo "$json" | sed -n 's/^{"counters":{\([^}]*\)}}$/\1/p')
[ -n "$counters" ] || fail "srnic --json stats is not {\"counters\":{...}}"
expect_eq "stats: names, order and values as the text's" "$(json_pairs "$counters")" "$text"

# stats -w, text: the first sample absolute, the second an idle one's.
w=$(srnic stats -w 1 -c 2) || fail "srnic stats -w 1 -c 2"
echo "$w"
expect_eq "srnic stats -w 1 -c 2: lines" "$(printf '%s\n' "$w" | wc -l)" 2
l1=$(printf '%s\n' "$w" | sed -n 1p)
l2=$(printf '%s\n' "$w" | sed -n 2p)
case "$l1" in
"0.000 s: contexts=1 "* | "0.000 s: contexts=1") case "$l1" in *=+* | *=-*) fail "first sample has changes: $l1" ;; esac ;;
*) fail "first sample: $l1" ;;
esac
case "$l2" in
[1-9].[0-9][0-9][0-9]" s: no change") echo "ok: second sample: $l2" ;;
*) fail "second sample of an idle srnic: $l2" ;;
esac

# stats -w, JSON, around a transfer: the second sample holds its changes.
peer_bg xfer_srv "srnic --json xfer -s -p $PORT -t 60"
wait_listen "$PORT" peer || fail "the xfer server did not listen"
# The interval: a few times what the client takes (under 4 s at time scale 3).
srnic --json stats -w "$(scaled 6)" -c 2 >/tmp/watch.json 2>/tmp/watch.err &
wpid=$!
wait_until 10 grep -q '"sample":0' /tmp/watch.json || fail "no first sample: $(cat /tmp/watch.err)"
srnic --json xfer -c "$PEER" -p "$PORT" -t 60 --size 64K --iters 3 >/tmp/xfer.json 2>/tmp/xfer.err ||
	{ cat /tmp/xfer.err; peer_wait xfer_srv 1; fail "srnic --json xfer (client)"; }
expect_eq "samples before the transfer ended" "$(wc -l </tmp/watch.json)" 1
wait "$wpid" || fail "srnic --json stats -w: $(cat /tmp/watch.err)"
cat /tmp/watch.json
expect_eq "srnic --json stats -w: lines" "$(wc -l </tmp/watch.json)" 2
s0=$(sed -n 1p /tmp/watch.json)
s1=$(sed -n 2p /tmp/watch.json)
case "$s0" in '{"sample":0,"elapsed_s":0.0,"delta":false,"counters":{"contexts":1,'*) echo "ok: sample 0 absolute" ;;
*) fail "sample 0: $s0" ;; esac
case "$s1" in '{"sample":1,"elapsed_s":'*',"delta":true,"counters":{"contexts":0,'*) echo "ok: sample 1 a delta" ;;
*) fail "sample 1: $s1" ;; esac
delta() { echo "$s1" | sed -n "s/.*[{,]\"$1\":\(-\{0,1\}[0-9]*\).*/\1/p"; }
expect_eq "connections made between the samples" "$(delta connections)" 1
expect_eq "qps made and destroyed between the samples" "$(delta qps)" 0
tx=$(delta tx_bytes)
[ "${tx:-0}" -ge 196608 ] || fail "tx_bytes changed by '$tx', want at least 3 x 64 KiB"
echo "ok: tx_bytes +$tx"

# xfer: one object on standard output, its diagnostics on standard error.
xfer_re='"op":"write","size":65536,"sge":1,"iters":3,"bytes":196608,"time_s":[0-9.e+-]*,"rate_mb_s":[0-9.e+-]*,"verified":true\}$'
cat /tmp/xfer.json
expect_eq "srnic --json xfer (client): lines" "$(wc -l </tmp/xfer.json)" 1
grep -Eq "^\{\"side\":\"client\",$xfer_re" /tmp/xfer.json || fail "srnic --json xfer (client): $(cat /tmp/xfer.json)"
grep -q "connected to $PEER:$PORT" /tmp/xfer.err || fail "the client's diagnostics: $(cat /tmp/xfer.err)"
srv=$(peer_wait xfer_srv) || { echo "$srv"; fail "srnic --json xfer (server)"; }
echo "$srv"
expect_eq "srnic --json xfer (server): objects" "$(echo "$srv" | grep -c '^{')" 1
echo "$srv" | grep -Eq "^\{\"side\":\"server\",$xfer_re" || fail "srnic --json xfer (server)"
expect_idle
pass
