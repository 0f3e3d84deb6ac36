#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the user-space programs that go into the test VMs, statically linked so
# that they run in a busybox initramfs: the srnic CLI, the srnic-vmtest test
# program, the C API's example and the C test programs; those of
# tests/vm/progs/rdmacm/ are linked dynamically against rdma-core's librdmacm
# and libibverbs instead, so that they run on rdma-core (siw) as they are and
# on the stand-ins of tools/rdma-compat through `srnic exec`.
#
#   scripts/tools.sh OUTDIR
set -euo pipefail
. "$(dirname "$0")/common.sh"

out=${1:?usage: tools.sh OUTDIR}
mkdir -p "$out"
# With an explicit --target, RUSTFLAGS reach only the target crates, not the
# proc macros (which cannot be linked statically).
RUSTFLAGS="-C target-feature=+crt-static" cargo build --quiet --release \
	--manifest-path "$SRNIC_TOP/Cargo.toml" --target x86_64-unknown-linux-gnu -p srnic-cli -p srnic-vmtest >&2
cp "$SRNIC_TOP/target/x86_64-unknown-linux-gnu/release/srnic" \
	"$SRNIC_TOP/target/x86_64-unknown-linux-gnu/release/srnic-vmtest" "$out/"
# The C API's example program (static, against libsrnic-c's staticlib).
"$SRNIC_TOP/tools/libsrnic-c/build-example.sh" "$out"
for c in "$SRNIC_TOP"/tests/vm/progs/*.c; do
	gcc -static -O2 -Wall -Wextra -Werror -I "$SRNIC_TOP/uapi" -o "$out/$(basename "$c" .c)" "$c"
done
for c in "$SRNIC_TOP"/tests/vm/progs/rdmacm/*.c; do
	gcc -O2 -Wall -Wextra -Werror -o "$out/$(basename "$c" .c)" "$c" -lrdmacm -libverbs -lpthread
done
