# SPDX-License-Identifier: GPL-2.0
# module_load_unload: srnic.ko loads and unloads 10 times; /dev/srnic appears with
# the documented mode and disappears; the module cannot be unloaded while the
# device is open. Kernel reports are checked by the harness for the whole run.
. /srnic/lib.sh
unload_srnic_both
for i in 1 2 3 4 5 6 7 8 9 10; do
	check "insmod #$i" insmod "$SRNIC_KO"
	check "/dev/srnic exists after load #$i" test -c /dev/srnic
	check "rmmod #$i" rmmod srnic
	check "/dev/srnic gone after unload #$i" test ! -e /dev/srnic
done
insmod "$SRNIC_KO"
expect_eq "mode of /dev/srnic" "$(stat -c %a /dev/srnic)" 666
# An open file holds a reference on the module.
exec 5</dev/srnic
if rmmod srnic 2>/dev/null; then fail "rmmod succeeded while /dev/srnic was open"; fi
echo "ok: rmmod refused while open"
exec 5<&-
check "rmmod after close" rmmod srnic
pass
