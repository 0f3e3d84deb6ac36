#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The rdma-core stand-ins (tools/rdma-compat, Documentation/srnic/rdma-core.rst).
#
#   scripts/compat.sh build [OUTDIR]   libsrnic_verbs.a (cargo), then the stand-ins
#                                      into OUTDIR (default build/rdma-compat)
#   scripts/compat.sh check [OUTDIR]   build, then the host tests: every import of
#                                      the Debian programs is exported, the programs
#                                      run without /dev/srnic, and ibv_devinfo and
#                                      the verbs smoke test run on a mock device
set -euo pipefail
. "$(dirname "$0")/common.sh"

cmd=${1:?usage: compat.sh build|check [OUTDIR]}
out=$(mkdir -p "${2:-$SRNIC_TOP/build/rdma-compat}" && cd "${2:-$SRNIC_TOP/build/rdma-compat}" && pwd)
src=$SRNIC_TOP/tools/rdma-compat

build() {
	cargo build --quiet --release --manifest-path "$SRNIC_TOP/Cargo.toml" -p srnic-c >&2
	make -s -C "$src" OUT="$out" all >&2
}

check() {
	make -s -C "$src" OUT="$out" mock >&2
	"$src/tests/check-symbols.sh" "$out"
	"$src/tests/compat-test.sh" "$out"
}

case "$cmd" in
build) build ;;
check) build; check ;;
*) die "usage: compat.sh build|check [OUTDIR]" ;;
esac
