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
. /srnic/lib.sh
ITERS_BW=$(count 10 500)
ITERS_LAT=$(count 20 1000)
# Each program run may take this long.
T=$(scaled 120)
load_srnic_both
siw_peer_up
port=7600
for crc in off on; do
	srnic=srnic
	[ $crc = on ] && srnic=srnic-crc
	for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
		dirs="srnic-siw siw-srnic"
		[ $crc = on ] && dirs="$dirs srnic-srnic"
		for dir in $dirs; do
			args="-R -p $port $(perftest_args "$t" "$ITERS_BW" "$ITERS_LAT")"
			what="$t $dir CRC $crc"
			case $dir in
			srnic-siw) compat_pair peer "$port" "$T" siw "$t $args" "$srnic" "$t $args $PEER" ;;
			siw-srnic) compat_pair here "$port" "$T" "$srnic" "$t $args" siw "$t $args $ADDR" ;;
			srnic-srnic) compat_pair peer "$port" "$T" "$srnic" "$t $args" "$srnic" "$t $args $PEER" ;;
			esac
			fig=$(perftest_figure "$t" "$CLI_OUT")
			if [ "$CLI_RC" != 0 ] || [ "$SRV_RC" != 0 ] || [ -z "$fig" ]; then
				echo "$CLI_OUT"
				echo "-- server:"
				echo "$SRV_OUT"
				dmesg | grep -i -e srnic -e siw | tail -20
			fi
			expect_eq "$what: client exit status" "$CLI_RC" 0
			expect_eq "$what: server exit status" "$SRV_RC" 0
			[ -n "$fig" ] || fail "$what: no result line"
			echo "ok: $what: $fig"
			expect_crc "$what" here "$crc"
			if [ $dir = srnic-srnic ]; then expect_crc "$what, the server" peer "$crc"; fi
			port=$((port + 1))
		done
	done
done
siw_peer_down
expect_idle
pass
