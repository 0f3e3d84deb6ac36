# SPDX-License-Identifier: GPL-2.0
# The demo run by `make demo` in VM a (lines prefixed "DEMO|" are what the host
# prints): load srnic in both VMs and show what each reports.
. /srnic/lib.sh
say() { echo "DEMO| $*"; }
insmod "$SRNIC_KO" && say "a ($ADDR): srnic loaded"
peer "insmod $SRNIC_KO" && say "b ($PEER): srnic loaded"
say ""
say "== srnic info on a ($ADDR) =="
srnic info | while IFS= read -r l; do say "  $l"; done
say ""
say "== srnic info on b ($PEER) =="
peer "srnic info" | while IFS= read -r l; do say "  $l"; done
say ""
ping -c 1 -W 5 "$PEER" >/dev/null && say "link a <-> b: up"
rmmod srnic
peer "rmmod srnic"
