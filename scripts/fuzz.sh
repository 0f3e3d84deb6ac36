#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build and run the cargo-fuzz targets of the protocol cores (tests/fuzz, see
# tests/fuzz/README.md): nightly toolchain, libFuzzer, AddressSanitizer.
#
#   scripts/fuzz.sh smoke                  build every target, run each briefly (make check)
#   scripts/fuzz.sh run TARGET [SECONDS]   one long run of one target (default 600 s)
#   scripts/fuzz.sh -h
#
# Without rustup or its nightly toolchain the script prints "fuzz: SKIP: ..." and
# exits 0: the stable host test rust/proto/tests/fuzz_corpus.rs still runs the seeds.
set -euo pipefail
. "$(dirname "$0")/common.sh"

CARGO_FUZZ_VERSION=0.13.2
CARGO_FUZZ_ROOT=$SRNIC_CACHE/cargo-fuzz
TARGETS=(mpa_framer mpa_negotiate ddp_rdmap rmpp_parse rmpp_receiver vmtp_engine)
SMOKE_SECONDS=${SRNIC_FUZZ_SECONDS:-10}
RUN_SECONDS=600

usage() {
	cat <<EOF
usage: scripts/fuzz.sh smoke
       scripts/fuzz.sh run TARGET [SECONDS]
       scripts/fuzz.sh -h

smoke  build all fuzz targets and run each for \$SRNIC_FUZZ_SECONDS seconds
       (default 10); prints the runs per target and "fuzz: N passed, M failed"
run    fuzz one target for SECONDS (default $RUN_SECONDS)

Targets: ${TARGETS[*]}
New inputs collect in build/fuzz/TARGET (the committed seeds in
tests/fuzz/corpus/TARGET are only read), crash inputs go to
build/fuzz/artifacts/TARGET/, the output to build/fuzz/logs/TARGET.log.
cargo-fuzz $CARGO_FUZZ_VERSION is installed into $CARGO_FUZZ_ROOT when missing.
EOF
}

case "${1:-}" in
-h | --help) usage; exit 0 ;;
smoke) [ $# -eq 1 ] || { usage >&2; exit 2; } ;;
run)
	[ $# -ge 2 ] && [ $# -le 3 ] || { usage >&2; exit 2; }
	case " ${TARGETS[*]} " in *" $2 "*) ;; *) die "unknown fuzz target '$2' (${TARGETS[*]})" ;; esac
	case "${3:-$RUN_SECONDS}" in '' | *[!0-9]*) die "SECONDS must be a number: '$3'" ;; esac
	;;
*) usage >&2; exit 2 ;;
esac
case "$SMOKE_SECONDS" in '' | *[!0-9]*) die "SRNIC_FUZZ_SECONDS must be a number: '$SMOKE_SECONDS'" ;; esac

# The targets need nightly (-Zsanitizer, sancov); rustup provides it on these machines.
if ! command -v rustup >/dev/null 2>&1; then
	echo "fuzz: SKIP: rustup not found (the fuzz targets need the nightly toolchain)"
	exit 0
fi
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
	echo "fuzz: SKIP: no rustup nightly toolchain (rustup toolchain install nightly)"
	exit 0
fi

# cargo-fuzz is a cargo subcommand: `cargo +nightly fuzz` finds it in PATH.
if ! "$CARGO_FUZZ_ROOT/bin/cargo-fuzz" --version 2>/dev/null | grep -q " $CARGO_FUZZ_VERSION\$"; then
	log "installing cargo-fuzz $CARGO_FUZZ_VERSION into $CARGO_FUZZ_ROOT"
	t0=$(date +%s)
	mkdir -p "$SRNIC_CACHE"
	cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --force --quiet \
		--root "$CARGO_FUZZ_ROOT"
	log "cargo-fuzz installed in $(($(date +%s) - t0)) s"
fi
export PATH="$CARGO_FUZZ_ROOT/bin:$PATH"

cd "$SRNIC_TOP"
mkdir -p build/fuzz/logs

# cargo-fuzz's defaults are kept: release build with debug assertions and
# AddressSanitizer, into tests/fuzz/target. It also creates (empty)
# tests/fuzz/artifacts/TARGET/ directories; ours go under build/ instead.
build_target() { # TARGET: build it, output appended to its log
	cargo +nightly fuzz build --fuzz-dir tests/fuzz "$1" >>"build/fuzz/logs/$1.log" 2>&1
}

fuzz_target() { # TARGET SECONDS: fuzz it, output appended to its log (and shown in run mode)
	local t=$1 secs=$2
	mkdir -p "build/fuzz/$t" "build/fuzz/artifacts/$t"
	# The last -artifact_prefix wins over the one cargo-fuzz passes.
	local cmd=(cargo +nightly fuzz run --fuzz-dir tests/fuzz "$t"
		"build/fuzz/$t" "tests/fuzz/corpus/$t" --
		"-max_total_time=$secs" -rss_limit_mb=2048 "-artifact_prefix=build/fuzz/artifacts/$t/")
	if [ "${verbose:-0}" = 1 ]; then
		"${cmd[@]}" 2>&1 | tee -a "build/fuzz/logs/$t.log"
	else
		"${cmd[@]}" >>"build/fuzz/logs/$t.log" 2>&1
	fi
}

# "Done N runs in S second(s)" from libFuzzer, or nothing.
runs_of() { sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "build/fuzz/logs/$1.log" | tail -n 1; }

# Explains a failed run on stderr and returns a short reason.
crash_report() { # TARGET
	local t=$1 log=build/fuzz/logs/$1.log art
	art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
	{
		echo "fuzz: $t FAILED (full output in $log):"
		# The panic message and the sanitizer's or libFuzzer's verdict, else the tail.
		if grep -q -E 'panicked at|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)' "$log"; then
			grep -E -A2 'panicked at|^(==[0-9]+== ?)?ERROR:|^SUMMARY:' "$log" | head -n 30
		else
			grep -v '^#[0-9]' "$log" | tail -n 30
		fi | sed 's/^/    /'
		if [ -n "$art" ]; then
			echo "fuzz: $t: crash input $art"
			echo "fuzz: reproduce: cargo +nightly fuzz run --fuzz-dir tests/fuzz $t $art"
			echo "fuzz:   or: cargo run --manifest-path tests/fuzz/Cargo.toml --example repro -- $t $art"
		fi
	} >&2
	if [ -n "$art" ]; then echo "crash input $art"; else echo "failed without a crash input, see $log"; fi
}

cleanup() { rmdir tests/fuzz/artifacts/* tests/fuzz/artifacts 2>/dev/null || true; }
trap cleanup EXIT

if [ "$1" = run ]; then
	t=$2 secs=${3:-$RUN_SECONDS}
	: >"build/fuzz/logs/$t.log"
	log "fuzzing $t for $secs s into build/fuzz/$t (log: build/fuzz/logs/$t.log)"
	verbose=1
	if ! fuzz_target "$t" "$secs"; then
		why=$(crash_report "$t")
		die "fuzz target $t failed: $why"
	fi
	echo "fuzz: $t: $(runs_of "$t")"
	exit 0
fi

# smoke
declare -A result
t0=$(date +%s)
for t in "${TARGETS[@]}"; do
	: >"build/fuzz/logs/$t.log"
	log "building fuzz target $t"
	if ! build_target "$t"; then
		result[$t]="build failed, see build/fuzz/logs/$t.log"
		tail -n 30 "build/fuzz/logs/$t.log" | sed 's/^/    /' >&2
	fi
done
log "fuzz targets built in $(($(date +%s) - t0)) s"

t0=$(date +%s)
for t in "${TARGETS[@]}"; do
	[ -z "${result[$t]:-}" ] || continue
	log "fuzzing $t for $SMOKE_SECONDS s"
	if fuzz_target "$t" "$SMOKE_SECONDS"; then
		result[$t]="ok, $(runs_of "$t")"
	else
		result[$t]="FAILED: $(crash_report "$t")"
	fi
done
log "fuzz runs took $(($(date +%s) - t0)) s"

passed=0 failed=0
for t in "${TARGETS[@]}"; do
	echo "fuzz: $t: ${result[$t]}"
	case "${result[$t]}" in ok*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
