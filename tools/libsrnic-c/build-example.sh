#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build the C examples statically against the srnic C API, for the test VMs'
# busybox initramfs:
#
#   tools/libsrnic-c/build-example.sh OUTDIR    -> OUTDIR/c_example, OUTDIR/vmtp_example
#
# The staticlib is built alone (`cargo rustc --crate-type staticlib`): a cdylib
# cannot be built with +crt-static. With an explicit --target, RUSTFLAGS reach
# only the target crates, not the proc macros.
set -euo pipefail

out=${1:?usage: build-example.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
target=x86_64-unknown-linux-gnu

mkdir -p "$out"
RUSTFLAGS="-C target-feature=+crt-static" cargo rustc --quiet --release \
	--manifest-path "$top/Cargo.toml" --target "$target" -p srnic-c --lib \
	--crate-type staticlib >&2
lib="$top/target/$target/release/libsrnic_verbs.a"
test -f "$lib"
for c in "$here"/examples/*.c; do
	gcc -static -O2 -Wall -Wextra -Werror \
		-I "$here/include" -I "$top/uapi" \
		-o "$out/$(basename "$c" .c)" "$c" \
		"$lib" -lpthread -ldl -lm
done
