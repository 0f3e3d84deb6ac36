# SPDX-License-Identifier: GPL-2.0
# budget: 110
# rdma_compat_siw_perftest: Debian's perftest (-R, rdma_cm) between srnic,
# through `srnic exec` and the stand-ins of tools/rdma-compat (VM a), and
# Linux's siw with rdma-core's own libraries (VM b): ib_write_bw, ib_read_bw,
# ib_send_bw (64 KiB, 10 iterations) and ib_write_lat, ib_read_lat,
# ib_send_lat (64 bytes, 20 iterations), each srnic -> siw (srnic's client
# against siw's server) and siw -> srnic (siw's client against srnic's
# server), with CRC off and on (`srnic exec --crc`: srnic asks, siw honours
# it in both roles; siw itself has no switch: its mpa_crc_required is a
# constant, false, in Linux 6.12). With CRC on also srnic <-> srnic, both
# sides asking (rdma_compat_perftest runs srnic <-> srnic without CRC). Each
# side must exit 0, the client print its result line, and srnic's side have
# negotiated CRC exactly when asked (the stand-ins' trace). Tiny runs: this is
# interoperability, the figures are rdma_compat_perftest's.
# make check runs each program in each direction once, with CRC off in one
# direction and on in the other (alternating which), and srnic <-> srnic with
# CRC for every other program: 15 of the 30 pairs, every program, direction
# and CRC setting covered. check-long runs all 30.
. /srnic/lib.sh
ITERS_BW=$(count 10 500)
ITERS_LAT=$(count 20 1000)
# Each program run may take this long.
T=$(scaled 120)
load_srnic_both
siw_peer_up
pairs=0
port=7600
# lean_skip PROGRAM_INDEX DIR CRC: whether make check leaves this pair out.
lean_skip() {
	[ "${LONG_RUN:-0}" = 1 ] && return 1
	case "$2" in
	srnic-siw) [ $(($1 % 2)) = 0 ] && want=off || want=on ;;
	siw-srnic) [ $(($1 % 2)) = 0 ] && want=on || want=off ;;
	srnic-srnic) [ $(($1 % 2)) = 1 ] && want=on || want=none ;;
	esac
	[ "$3" != "$want" ]
}
for crc in off on; do
	srnic=srnic
	[ $crc = on ] && srnic=srnic-crc
	i=0
	for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
		i=$((i + 1))
		dirs="srnic-siw siw-srnic"
		[ $crc = on ] && dirs="$dirs srnic-srnic"
		for dir in $dirs; do
			lean_skip "$i" "$dir" "$crc" && continue
			pairs=$((pairs + 1))
			args="-R -p $port $(perftest_args "$t" "$ITERS_BW" "$ITERS_LAT")"
			what="$t $dir CRC $crc"
			case $dir in
			srnic-siw) perftest_pair peer "$port" "$T" siw "$t $args" "$srnic" "$t $args $PEER" ;;
			siw-srnic) perftest_pair here "$port" "$T" "$srnic" "$t $args" siw "$t $args $ADDR" ;;
			srnic-srnic) perftest_pair peer "$port" "$T" "$srnic" "$t $args" "$srnic" "$t $args $PEER" ;;
			esac
			perftest_expect "$what" "$t"
			echo "ok: $what: $PERF_FIG"
			expect_crc "$what" here "$crc"
			if [ $dir = srnic-srnic ]; then expect_crc "$what, the server" peer "$crc"; fi
			port=$((port + 1))
		done
	done
done
siw_peer_down
expect_eq "perftest pairs run" "$pairs" "$(count 15 30)"
expect_idle
pass
