#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build srnic.ko against a kernel build directory, out of the source tree.
#
#   scripts/module.sh KDIR OUTDIR      builds OUTDIR/srnic.ko, and beside it the
#                                      kernel clients: srnic_blk.ko (the block
#                                      device) and srnic_ktest.ko (the kernel
#                                      verbs API's test)
#
# The module sources (Kbuild, rust/, clients/, uapi/src) are mirrored into OUTDIR/src so
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
	--include='/clients/***' --include='/tests/' --include='/tests/kernel/***' \
	--include='/uapi/src/***' --exclude='*' \
	"$SRNIC_TOP/" "$out/src/"
# What the build depends on: the sources, the kernel tree (its config and
# symbol versions) and the toolchain variables. A build whose inputs did not
# change since the last warning-free build is skipped (make check builds the
# module twice, once in check-module and once for the VMs).
inputs() {
	(cd "$out/src" && find . -type f ! -name '*.o' ! -name '*.ko' ! -name '.*.cmd' \
		! -name '*.mod*' ! -name '*.d' ! -name 'modules.order' ! -name 'Module.symvers' \
		-print0 | sort -z | xargs -0 sha256sum)
	sha256sum "$kdir/.config" "$kdir/Module.symvers"
	echo "$kdir $vars"
}
# The toolchain KDIR was built with, from its configuration (as `make` and
# DKMS find it); fails here, saying why, if it is not installed.
vars=$("$SRNIC_TOP/scripts/kmake.sh" --vars "$kdir")
stamp=$(inputs | sha256sum | cut -d' ' -f1)
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] &&
	[ -f "$out/srnic.ko" ] && [ -f "$out/srnic_ktest.ko" ] && [ -f "$out/srnic_blk.ko" ]; then
	log "module: sources unchanged since the last warning-free build of $out/srnic.ko"
	echo "$out/srnic.ko"
	exit 0
fi
rm -f "$out/stamp"
# A full build: an up-to-date build prints nothing, and would hide warnings.
find "$out/src" \( -name '*.o' -o -name '*.ko' \) -delete
(cd "$out/src" && "$SRNIC_TOP/scripts/kmake.sh" "$kdir" modules) 2>&1 | tee "$out/build.log" >&2
if grep -qiE '(^|[^a-z_])warning' "$out/build.log"; then
	die "the module build printed warnings (see $out/build.log)"
fi
cp "$out/src/srnic.ko" "$out/srnic.ko"
cp "$out/src/tests/kernel/srnic_ktest.ko" "$out/srnic_ktest.ko"
cp "$out/src/clients/blk/srnic_blk.ko" "$out/srnic_blk.ko"
echo "$stamp" >"$out/stamp"
echo "$out/srnic.ko"
