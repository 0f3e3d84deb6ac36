#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build fio, the verifying I/O generator of the srnic_blk cases (blk_fio) and of
# make bench's block rows, for the test VMs' initramfs.
#
#   scripts/fio.sh      prints the path of the fio binary on stdout
#
# Debian's fio package links Ceph, GlusterFS, PMDK and their dependencies
# (80 MiB of shared libraries that every VM boot would unpack), so this builds
# the same release from the source Debian's package is built from (checked
# against the sha256 of its .dsc), static and without the engines that need
# other libraries. The VMs use io_uring, psync and sync. Built once into
# $SRNIC_CACHE/fio-<version>-<key>, the key hashing the version, the source's
# checksum, the configure options and the compiler.
set -euo pipefail
. "$(dirname "$0")/common.sh"

FIO_VERSION=3.33
FIO_SHA256=d2410e13e0f379d061d077cc5ae325835bb7c6186aa7bafc1df954cbc9b014fc
FIO_TARBALL=fio_$FIO_VERSION.orig.tar.gz
# Debian's archive, then the snapshot of it the build machines' sources name
# (once bookworm's fio has left the archive).
FIO_URLS=(
	"http://deb.debian.org/debian/pool/main/f/fio/$FIO_TARBALL"
	"http://snapshot.debian.org/archive/debian/20250520T000000Z/pool/main/f/fio/$FIO_TARBALL"
)

# Static; none of the engines that need other libraries; no System V shared
# memory (the test kernels have none: fio runs its jobs as threads).
FIO_CONFIGURE=(--build-static --disable-native --disable-numa --disable-rdma
	--disable-rados --disable-rbd --disable-http --disable-gfapi --disable-libnfs
	--disable-pmem --disable-xnvme --disable-libzbc --disable-tcmalloc --disable-dfs
	--disable-lex --disable-shm)

key=$({ echo "$FIO_VERSION $FIO_SHA256 ${FIO_CONFIGURE[*]}"; gcc --version | head -n 1; } | sha256sum | cut -c1-12)
dir=$SRNIC_CACHE/fio-$FIO_VERSION-$key
if [ -f "$dir/.srnic-built" ]; then
	echo "$dir/fio"
	exit 0
fi

"$SRNIC_TOP/scripts/deps.sh" >&2

mkdir -p "$SRNIC_CACHE/src"
tarball=$SRNIC_CACHE/src/$FIO_TARBALL
good() { echo "$FIO_SHA256  $1" | sha256sum -c --status 2>/dev/null; }
if ! good "$tarball"; then
	for url in "${FIO_URLS[@]}"; do
		log "fetching $url"
		if curl -fsSL --retry 3 -o "$tarball.tmp" "$url" && good "$tarball.tmp"; then
			mv "$tarball.tmp" "$tarball"
			break
		fi
		log "no (or a wrong) $FIO_TARBALL at $url"
	done
	rm -f "$tarball.tmp"
	good "$tarball" || die "could not fetch $FIO_TARBALL with sha256 $FIO_SHA256"
fi

log "building fio $FIO_VERSION (static) in $dir"
rm -rf "$dir" "$dir.tmp"
mkdir -p "$dir.tmp"
tar -xzf "$tarball" -C "$dir.tmp" --strip-components=1
(
	cd "$dir.tmp"
	./configure "${FIO_CONFIGURE[@]}" >&2
	make -j"$(($(nproc) + 1))" fio >&2
)
mv "$dir.tmp" "$dir"
touch "$dir/.srnic-built"
echo "$dir/fio"
