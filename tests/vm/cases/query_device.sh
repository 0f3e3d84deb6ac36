# SPDX-License-Identifier: GPL-2.0
# query_device: `srnic info` prints exactly the values the module reports (the
# module logs them as key=value when it loads).
. /srnic/lib.sh
unload_srnic_both
dmesg -c >/dev/null
insmod "$SRNIC_KO" || fail "insmod"
line=$(dmesg | grep -o '/dev/srnic ready: .*')
[ -n "$line" ] || fail "the module did not log its values"
info=$(srnic info) || fail "srnic info failed"
echo "$info"
n=0
for kv in ${line#*ready: }; do
	key=${kv%%=*} want=${kv#*=}
	got=$(echo "$info" | sed -n "s/^$key: \([^ ]*\).*/\1/p")
	expect_eq "$key" "$got" "$want"
	n=$((n + 1))
done
expect_eq "number of values compared" "$n" 16
pass
