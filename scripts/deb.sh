#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build srnic's Debian binary packages with dpkg-deb (no debhelper):
#
#   scripts/deb.sh VERSION OUTDIR      (make deb: VERSION from Cargo.toml, OUTDIR build/deb)
#
#   srnic-dkms     the module sources in /usr/src/srnic-VERSION with dkms.conf
#                  (srnic.ko and srnic_blk.ko; not the test module srnic_ktest),
#                  the udev rule of /dev/srnic and modules-load.d/srnic.conf;
#                  its postinst registers the sources with DKMS and builds them
#                  for the running kernel when its headers are there
#   srnic-tools    the srnic tool
#   libsrnic1      the C library, libsrnic.so.N (its SONAME, tools/libsrnic-c/build.rs)
#   libsrnic-dev   srnic_verbs.h and srnic.h in /usr/include/srnic, libsrnic.so,
#                  libsrnic.a and srnic.pc
#
# The user-space files come from `make install` into a staging tree. Any old
# .deb in OUTDIR is removed first. The Maintainer field is DEB_MAINTAINER, else
# git's user.name and user.email.
set -euo pipefail
. "$(dirname "$0")/common.sh"

version=${1:?usage: deb.sh VERSION OUTDIR}
out=${2:?usage: deb.sh VERSION OUTDIR}
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || die "not a Debian version: '$version'"
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing"
mkdir -p "$out"
out=$(cd "$out" && pwd)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
maint=${DEB_MAINTAINER:-}
if [ -z "$maint" ]; then
	name=$(git -C "$SRNIC_TOP" config user.name 2>/dev/null || true)
	mail=$(git -C "$SRNIC_TOP" config user.email 2>/dev/null || true)
	maint="${name:-srnic developers} <${mail:-root@localhost}>"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The user-space side, as `make install` lays it out for /usr.
log "deb: building the tools and the library (cargo) and staging them"
make -s -C "$SRNIC_TOP" install DESTDIR="$work/stage" PREFIX=/usr LIBDIR="/usr/lib/$multiarch" >&2
libdir=usr/lib/$multiarch
soname=$(readlink "$work/stage/$libdir/libsrnic.so")
[[ "$soname" =~ ^libsrnic\.so\.([0-9]+)$ ]] || die "unexpected SONAME '$soname'"
libpkg=libsrnic${BASH_REMATCH[1]}
# Stripped as dh_strip would: no debugging symbols (the static library's
# are most of its size), no .comment or .note sections.
strip --remove-section=.comment --remove-section=.note "$work/stage/usr/bin/srnic"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$work/stage/$libdir/$soname"
strip --strip-debug --remove-section=.comment --remove-section=.note --enable-deterministic-archives \
	"$work/stage/$libdir/libsrnic.a"
compat=usr/lib/srnic/rdma-compat
for f in "$work/stage/$compat"/*.so.1; do
	strip --remove-section=.comment --remove-section=.note --strip-unneeded "$f"
done

# pkg NAME: a fresh package root with its copyright file.
pkg() {
	mkdir -p "$work/$1/DEBIAN" "$work/$1/usr/share/doc/$1"
	install -m 0644 "$SRNIC_TOP/packaging/deb/copyright" "$work/$1/usr/share/doc/$1/copyright"
}
# move NAME PATH...: staged files into package NAME.
move() {
	local p=$1 f
	shift
	for f in "$@"; do
		mkdir -p "$work/$p/$(dirname "$f")"
		mv "$work/stage/$f" "$work/$p/$f"
	done
}
# shlibdeps NAME FILE...: the Depends of FILE's shared libraries (dpkg-shlibdeps
# wants a debian/control beside it).
shlibdeps() {
	local p=$1
	shift
	mkdir -p "$work/shlibs/debian"
	printf 'Source: srnic\n\nPackage: %s\nArchitecture: any\n' "$p" >"$work/shlibs/debian/control"
	(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$@" 2>/dev/null) | sed -n 's/^shlibs:Depends=//p'
}
# control NAME ARCH SECTION DEPENDS DESCRIPTION [FIELD: VALUE...]
control() {
	local p=$1 a=$2 section=$3 deps=$4 desc=$5
	shift 5
	{
		echo "Package: $p"
		echo "Version: $version"
		echo "Architecture: $a"
		echo "Maintainer: $maint"
		echo "Section: $section"
		echo "Priority: optional"
		echo "Installed-Size: $(du -sk --exclude=DEBIAN "$work/$p" | cut -f1)"
		[ -z "$deps" ] || echo "Depends: $deps"
		local f
		for f in "$@"; do echo "$f"; done
		echo "Description: $desc"
	} >"$work/$p/DEBIAN/control"
	cat >>"$work/$p/DEBIAN/control"
}

# srnic-dkms: the module sources (what scripts/module.sh builds, less the
# test module), without build products of an in-tree `make`.
pkg srnic-dkms
src=$work/srnic-dkms/usr/src/srnic-$version
mkdir -p "$src"
rsync -a --prune-empty-dirs \
	--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' --exclude='.*.cmd' \
	--exclude='*.d' --exclude='*.rmeta' --exclude='modules.order' --exclude='Module.symvers' \
	--include='/Kbuild' --include='/rust/proto/' --include='/rust/proto/src/***' --exclude='/rust/proto/**' \
	--include='/rust/***' --include='/include/***' --include='/uapi/' --include='/uapi/srnic.h' \
	--include='/uapi/src/***' --include='/clients/***' \
	--include='/scripts/' --include='/scripts/kmake.sh' --exclude='*' \
	"$SRNIC_TOP/" "$src/"
sed "s/@VERSION@/$version/" "$SRNIC_TOP/dkms.conf" >"$src/dkms.conf"
install -D -m 0644 "$SRNIC_TOP/packaging/modules-load.d/srnic.conf" \
	"$work/srnic-dkms/usr/lib/modules-load.d/srnic.conf"
move srnic-dkms usr/lib/udev/rules.d/60-srnic.rules
for s in postinst prerm; do
	sed "s/@VERSION@/$version/g" "$SRNIC_TOP/packaging/deb/srnic-dkms.$s" >"$work/srnic-dkms/DEBIAN/$s"
	chmod 0755 "$work/srnic-dkms/DEBIAN/$s"
done
control srnic-dkms all kernel "dkms (>= 3)" "srnic kernel modules (DKMS sources)" <<-EOF
	 srnic is a software RDMA NIC: iWARP (MPA, DDP, RDMAP) over in-kernel TCP
	 sockets, wire-compatible with Linux's siw, and Sandia RMPP over Ethernet,
	 reached through /dev/srnic.
	 .
	 This package holds the sources of srnic.ko and of srnic_blk.ko (a block
	 device over remote memory) for DKMS, which builds them for Rust-enabled
	 (CONFIG_RUST) Linux 6.12 kernels with the compilers each kernel was built
	 with (read from its configuration), the udev rule of /dev/srnic and a modules-load.d file that loads
	 srnic at boot.
EOF

# srnic-tools: the srnic tool, and the rdma-core stand-ins `srnic exec` runs
# programs on. Their Depends leave out the stand-in librdmacm's libibverbs.so.1,
# which is the stand-in beside it, not rdma-core's.
pkg srnic-tools
move srnic-tools usr/bin/srnic "$compat/libibverbs.so.1" "$compat/librdmacm.so.1" \
	"$compat/libmlx5.so.1" "$compat/libefa.so.1"
control srnic-tools "$arch" net "$(shlibdeps srnic-tools "$work/srnic-tools/usr/bin/srnic" \
	"$work/srnic-tools/$compat/libibverbs.so.1" "$work/srnic-tools/$compat/libmlx5.so.1" \
	"$work/srnic-tools/$compat/libefa.so.1")" \
	"srnic command-line tool" "Recommends: srnic-dkms" <<-EOF
	 The srnic tool talks to /dev/srnic, the software RDMA NIC srnic: device
	 information and counters, ping-pong and verified transfers, RMPP, the
	 block device server of srnic_blk, and rdma-core programs through srnic's
	 stand-ins of libibverbs and librdmacm (srnic exec), which it installs in
	 /usr/lib/srnic/rdma-compat, off the linker's path.
EOF

# libsrnicN: the shared library, named by its SONAME.
pkg "$libpkg"
move "$libpkg" "$libdir/$soname"
echo "libsrnic ${BASH_REMATCH[1]} $libpkg (>= $version)" >"$work/$libpkg/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$work/$libpkg/DEBIAN/triggers"
control "$libpkg" "$arch" libs "$(shlibdeps "$libpkg" "$work/$libpkg/$libdir/$soname")" \
	"srnic verbs library (C API)" "Multi-Arch: same" <<-EOF
	 The C API of the srnic verbs library (srnic_verbs.h), in the shape of
	 libibverbs and librdmacm: protection domains, memory regions, completion
	 queues, queue pairs and connections over /dev/srnic.
EOF

# libsrnic-dev: headers, the link-time symlink, the static library, srnic.pc.
pkg libsrnic-dev
move libsrnic-dev usr/include/srnic/srnic_verbs.h usr/include/srnic/srnic.h \
	"$libdir/libsrnic.so" "$libdir/libsrnic.a" "$libdir/pkgconfig/srnic.pc"
control libsrnic-dev "$arch" libdevel "$libpkg (= $version), linux-libc-dev" \
	"srnic verbs library (C API): development files" "Multi-Arch: same" <<-EOF
	 Headers (srnic_verbs.h and the kernel ABI header srnic.h, in
	 /usr/include/srnic), the static library and the pkg-config file srnic.pc
	 of the srnic verbs library: cc prog.c \$(pkg-config --cflags --libs srnic).
EOF

# Everything staged went into a package.
left=$(cd "$work/stage" && find . -type f -o -type l)
[ -z "$left" ] || die "staged files in no package: $left"

rm -f "$out"/*.deb
for p in srnic-dkms srnic-tools "$libpkg" libsrnic-dev; do
	a=$arch
	[ $p = srnic-dkms ] && a=all
	dpkg-deb --root-owner-group -Zxz --build "$work/$p" "$out/${p}_${version}_$a.deb" >/dev/null
	log "deb: $out/${p}_${version}_$a.deb"
done
