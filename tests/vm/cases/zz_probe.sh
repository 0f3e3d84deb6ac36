# temporary probe (not committed)
. /srnic/lib.sh
BENCH_REPS=1
BENCH_PROFILE=self
BENCH_CSV=/tmp/probe.csv
. /srnic/bench.sh
load_srnic_both
n=1024
prof() {
	local tag=$1
	peer "$(profile_dump b)" | sort -k4 -g -r | head -60 | sed "s/^/PROF $tag /"
}
bench_port=$((bench_port + 1))
sh -c "$(profile_cmd on)" && peer "$(profile_cmd on)"
bench_pair_cpu srnic "ib_write_bw -R -p $bench_port -s 65536 -n $n" "ib_write_bw -R -p $bench_port -s 65536 -n $n $PEER"
sh -c "$(profile_cmd off)" && peer "$(profile_cmd off)"
echo "PROBE srnic fig $(perftest_figure ib_write_bw "$CLI_OUT")"
prof srnic
bench_port=$((bench_port + 1))
sh -c "$(profile_cmd on)" && peer "$(profile_cmd on)"
bench_pair_cpu plain "iperf3 -s -1 -B $PEER -p $bench_port" "iperf3 -c $PEER -p $bench_port -n $((n * 65536)) -l 65536 -f M"
sh -c "$(profile_cmd off)" && peer "$(profile_cmd off)"
echo "PROBE tcp $(echo "$CLI_OUT" | grep receiver)"
prof tcp
unload_srnic_both
pass
