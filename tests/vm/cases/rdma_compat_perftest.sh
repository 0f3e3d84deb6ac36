# SPDX-License-Identifier: GPL-2.0
# budget: 80
# rdma_compat_perftest: Debian's perftest (rdma_cm connection setup, -R) over
# srnic through `srnic exec`, srnic on both sides, and then the same runs over
# Linux's siw with rdma-core's own libraries, siw on both sides (siw is built
# into the test kernel, so VM a can have it too): ib_write_bw, ib_read_bw,
# ib_send_bw with 64 KiB messages (25 iterations), ib_write_lat, ib_read_lat,
# ib_send_lat with 64 bytes (200 iterations); each pair must exit 0 and the
# client print its result line. The figures of both (the bandwidths' average,
# the latencies' typical value) are printed side by side and exported as
# perftest.txt: the debug kernel under TCG makes them a smoke test, not a
# benchmark, but srnic's and siw's come from the same run. A case of its own
# so that a perftest quirk does not hide the results of rdma_compat.
# make check runs srnic <-> srnic only (siw <-> siw tests siw, not srnic, and
# make bench compares the two properly), and only ib_read_bw, ib_write_lat and
# ib_send_lat: rdma_compat_siw_perftest runs the other three srnic <-> srnic
# (with CRC). check-long runs all six on both.
. /srnic/lib.sh
ITERS_BW=$(count 25 5000)
ITERS_LAT=$(count 200 5000)
# Each program run may take this long.
T=$(scaled 300)
load_srnic_both
port=7400
rm -f /tmp/perftest.fig
stacks=srnic programs="ib_read_bw ib_write_lat ib_send_lat"
if [ "${LONG_RUN:-0}" = 1 ]; then
	stacks="srnic siw"
	programs="ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat"
fi
for stack in $stacks; do
	if [ $stack = siw ]; then
		siw_up
		siw_peer_up
	fi
	for t in $programs; do
		args="-R -p $port $(perftest_args "$t" "$ITERS_BW" "$ITERS_LAT")"
		perftest_pair peer "$port" "$T" $stack "$t $args" $stack "$t $args $PEER"
		perftest_expect "$t on $stack" "$t" show
		echo "$t $stack $PERF_FIG" >>/tmp/perftest.fig
		port=$((port + 1))
	done
done
if [ "$stacks" != srnic ]; then
	siw_down
	siw_peer_down
fi
{
	echo "perftest -R, srnic <-> srnic (the stand-ins) and siw <-> siw (rdma-core), same run"
	echo "(debug kernel, TCG; bandwidth: average MB/s, $ITERS_BW x 64 KiB;" \
		"latency: typical usec, $ITERS_LAT x 64 B)"
	awk '{ f[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
		END {
			printf "%-14s %14s %14s\n", "program", "srnic<->srnic", "siw<->siw"
			for (i = 0; i < n; i++)
				printf "%-14s %14s %14s\n", order[i], f[order[i], "srnic"],
					((order[i], "siw") in f ? f[order[i], "siw"] : "(check-long)")
		}' /tmp/perftest.fig
} >/tmp/perftest.txt
cat /tmp/perftest.txt
export_file perftest.txt /tmp/perftest.txt
expect_idle
pass
