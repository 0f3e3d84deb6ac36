# SPDX-License-Identifier: GPL-2.0
# siw_rping_client: rdma-core's `rping -c -V` on Linux's siw (VM b) against
# srnic's rping server (VM a): sizes 64, 4096 and 65535, 20 pings each (1000 in
# check-long), with
# CRC off and with CRC on (srnic's reply asks for it; siw honours it). siw's
# client validates every echo; srnic's server checks every READ against rping's
# pattern (-V). Negotiated: MPA revision 2 enhanced, IRD = ORD = 1, CRC exactly
# when srnic asked for it.
. /srnic/lib.sh
long_only
N=$(count 20 1000)
load_srnic
siw_peer_up
port=7184
for crc in "" --crc; do
	for size in 64 4096 65535; do
		what="size $size ${crc:-no-crc}"
		srnic rping -s -p "$port" -S "$size" -V -t 120 $crc >/tmp/rping_srv.log 2>&1 &
		pid=$!
		wait_listen "$port" || fail "srnic rping -s did not listen ($what)"
		cli=$(PEER_TIMEOUT=1800 peer "timeout 1500 rping -c -a $ADDR -p $port -C $N -S $size -V")
		rc=$?
		echo "$cli"
		# rping -c exits 0 even when the connection drops in the middle of a
		# ping ("wait for ... state 10"): it must print nothing but the final
		# disconnect.
		echo "$cli" | grep -v -e '^client DISCONNECT EVENT\.\.\.$' | grep . && rc=1
		wait $pid
		src=$?
		cat /tmp/rping_srv.log
		[ $rc = 0 ] || fail "siw rping -c -V failed ($what)"
		[ $src = 0 ] || fail "srnic rping -s failed ($what)"
		grep -q "^rping: server pings=$N size=$size " /tmp/rping_srv.log || fail "pings missing ($what)"
		req=$(sed -n 's/^srnic: rping request from .*: ird=\([0-9]*\) ord=\([0-9]*\) mpa=\([^ ]*\) private_data=\([0-9]*\) bytes$/\1 \2 \3 \4/p' /tmp/rping_srv.log)
		expect_eq "siw's request: ird ord mpa private-data ($what)" "$req" "1 1 none 0"
		mpa=$(sed -n 's/^srnic: rping established: ird=\([0-9]*\) ord=\([0-9]*\) mpa=\(.*\)$/\1 \2 \3/p' /tmp/rping_srv.log)
		expect_mpa "$what" "$mpa" "$crc"
		port=$((port + 1))
	done
done
siw_peer_down
expect_idle
pass
