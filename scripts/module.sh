#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build srnic.ko against a kernel build directory, out of the source tree.
#
#   scripts/module.sh KDIR OUTDIR      builds OUTDIR/srnic.ko (and the kernel
#                                      verbs API's test client, srnic_ktest.ko)
#
# The module sources (Kbuild, rust/, uapi/src) are mirrored into OUTDIR/src so
# that builds for several kernels never share object files. Any compiler warning
# fails the build.
set -euo pipefail
. "$(dirname "$0")/common.sh"

kdir=${1:?usage: module.sh KDIR OUTDIR}
out=${2:?usage: module.sh KDIR OUTDIR}
mkdir -p "$out/src"
out=$(cd "$out" && pwd)
rsync -a --delete --prune-empty-dirs \
	--include='/Kbuild' --include='/rust/proto/' --include='/rust/proto/src/***' --exclude='/rust/proto/**' \
	--include='/rust/***' --include='/include/***' --include='/uapi/' --include='/uapi/srnic.h' \
	--include='/tests/' --include='/tests/kernel/***' \
	--include='/uapi/src/***' --exclude='*' \
	"$SRNIC_TOP/" "$out/src/"
# Always rebuild: an up-to-date build prints nothing, and would hide warnings.
find "$out/src" \( -name '*.o' -o -name '*.ko' \) -delete
make -C "$kdir" M="$out/src" "${KMAKE_VARS[@]}" modules 2>&1 | tee "$out/build.log" >&2
if grep -qiE '(^|[^a-z_])warning' "$out/build.log"; then
	die "the module build printed warnings (see $out/build.log)"
fi
cp "$out/src/srnic.ko" "$out/srnic.ko"
cp "$out/src/tests/kernel/srnic_ktest.ko" "$out/srnic_ktest.ko"
echo "$out/srnic.ko"
