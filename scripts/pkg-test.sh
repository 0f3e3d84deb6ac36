#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The packages' test (make check-pkg; make check runs it with --no-vm):
#
#   scripts/pkg-test.sh [--no-vm]
#
#  1. builds the Debian packages from nothing (make deb into a fresh build/deb)
#     and checks their contents: names, fields, files, the library's SONAME,
#     srnic.pc's paths (pkg-config against the unpacked tree), the maintainer
#     scripts' syntax;
#  2. checks `make install` with the default PREFIX (/usr/local) into a DESTDIR;
#  3. installs the packages on this host (dpkg -i; DKMS from Debian, scripts/deps.sh)
#     and checks the installed result: the postinst registered srnic with DKMS,
#     pkg-config finds srnic, a C program (tools/libsrnic-c/examples/c_example.c)
#     builds against the shared library and against the static one, the srnic
#     tool runs, and the udev rule parses and sets its mode (udevadm test, on a
#     misc device of this host);
#  4. builds the modules with DKMS for the debug test kernel (scripts/kernel.sh
#     debug; dkms build --kernelsourcedir) and checks them: vermagic, license,
#     srnic_blk's dependency on srnic, no srnic_ktest, and that modprobe resolves
#     every module modules-load.d/srnic.conf names;
#  5. without --no-vm: runs `make modules_install` (out of a copy of the
#     sources) into a staging root and checks what it installed and depmod's
#     index;
#  6. without --no-vm: boots the VMs with the module DKMS built
#     (tests/vm/run.sh --module ... rdma_write), which checks that both VMs
#     had it, loaded it and moved data with it.
#
# Idempotent: a second run reinstalls the same version (the prerm removes the
# DKMS registration, the postinst adds it again) and removes a registration
# left by a run that stopped half-way first. Needs root. The packages stay
# installed.
set -euo pipefail
. "$(dirname "$0")/common.sh"
# (Checks grep a command's output from a here-string, not a pipe: with
# pipefail, grep -q ending first would fail the pipe.)

vm=1
case "${1:-}" in
--no-vm) vm=0 ;;
"") ;;
*) die "usage: pkg-test.sh [--no-vm]" ;;
esac
[ "$(id -u)" = 0 ] || die "pkg-test needs root (dpkg -i, dkms)"

start=$(date +%s) phase_start=$(date +%s)
phase() {
	local now
	now=$(date +%s)
	[ -z "${phase_name:-}" ] || log "pkg-test: $phase_name: $((now - phase_start)) s"
	phase_name=$1 phase_start=$now
	[ -z "$1" ] || log "pkg-test: $1"
}
fail() { die "pkg-test: $*"; }
# same WHAT GOT WANT
same() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

work=$(mktemp -d)
udev_tmp=/run/udev/rules.d/60-srnic-pkg-test.rules
trap 'rm -rf "$work" "$udev_tmp"' EXIT

"$SRNIC_TOP/scripts/deps.sh" >&2
version=$(make -s --no-print-directory -C "$SRNIC_TOP" version)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg --print-architecture)
libdir=/usr/lib/$multiarch
debs=$SRNIC_TOP/build/deb

# ---------------------------------------------------------------------------
phase "1. make deb $version, from nothing"
rm -rf "$debs"
make -s --no-print-directory -C "$SRNIC_TOP" deb >&2
want_debs="libsrnic-dev_${version}_$arch.deb libsrnic1_${version}_$arch.deb srnic-dkms_${version}_all.deb srnic-tools_${version}_$arch.deb"
same "packages in build/deb" "$(cd "$debs" && echo *.deb)" "$want_debs"
deb() { echo "$debs/${1}_${version}_$([ "$1" = srnic-dkms ] && echo all || echo "$arch").deb"; }
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
for p in srnic-dkms srnic-tools libsrnic1 libsrnic-dev; do
	same "$p: Package" "$(field $p Package)" "$p"
	same "$p: Version" "$(field $p Version)" "$version"
	# Every file under /usr, and the copyright file.
	grep -qx "./usr/share/doc/$p/copyright" <<<"$(dpkg-deb -c "$(deb $p)" | awk '{ print $6 }')" ||
		fail "$p: no copyright file"
	outside=$(dpkg-deb -c "$(deb $p)" | awk '{ print $6 }' | grep -vE '^\./(usr/.*)?$' || true)
	[ -z "$outside" ] || fail "$p: files outside /usr: $outside"
done
same "srnic-dkms: Depends" "$(field srnic-dkms Depends)" "dkms (>= 3)"
same "libsrnic-dev: Depends" "$(field libsrnic-dev Depends)" "libsrnic1 (= $version), linux-libc-dev"
grep -q 'libc6' <<<"$(field srnic-tools Depends)" || fail "srnic-tools: no libc6 in Depends"
# Its rdma-core stand-ins need no rdma-core (their libibverbs is the stand-in).
! grep -q 'libibverbs\|librdmacm' <<<"$(field srnic-tools Depends)" ||
	fail "srnic-tools depends on rdma-core: $(field srnic-tools Depends)"
grep -q 'libc6' <<<"$(field libsrnic1 Depends)" || fail "libsrnic1: no libc6 in Depends"

root=$work/root
for p in srnic-dkms srnic-tools libsrnic1 libsrnic-dev; do
	dpkg-deb -x "$(deb $p)" "$root"
	dpkg-deb -e "$(deb $p)" "$work/control-$p"
done
# srnic-dkms: the module sources for DKMS and nothing built, no test module.
src=$root/usr/src/srnic-$version
for f in dkms.conf Kbuild rust/srnic_main.rs rust/sys/miscdev.c rust/proto/src/lib.rs \
	uapi/srnic.h uapi/src/abi.rs include/srnic/kverbs.h clients/blk/srnic_blk.c scripts/kmake.sh; do
	[ -f "$src/$f" ] || fail "srnic-dkms: no $f in /usr/src/srnic-$version"
done
extra=$(cd "$src" && find . -path ./tests -o -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name Cargo.toml |
	head -n 5)
[ -z "$extra" ] || fail "srnic-dkms: files that are not module sources: $extra"
same "dkms.conf PACKAGE_VERSION" "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf")" "$version"
same "dkms.conf PACKAGE_NAME" "$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$src/dkms.conf")" srnic
! grep -q '@VERSION@' "$src/dkms.conf" "$work"/control-*/* || fail "an @VERSION@ left unreplaced"
same "srnic-dkms: modules-load.d" "$(grep -v '^#' "$root/usr/lib/modules-load.d/srnic.conf")" srnic
cmp "$root/usr/lib/udev/rules.d/60-srnic.rules" "$SRNIC_TOP/packaging/udev/60-srnic.rules" ||
	fail "srnic-dkms: the udev rule differs from packaging/udev/60-srnic.rules"
for s in "$work"/control-srnic-dkms/{postinst,prerm}; do
	[ -x "$s" ] || fail "srnic-dkms: $(basename "$s") is not executable"
	sh -n "$s" || fail "srnic-dkms: $(basename "$s") does not parse"
done
# libsrnic1: the library under its SONAME, an ldconfig trigger, a shlibs file.
same "libsrnic1: SONAME" "$(readelf -d "$root$libdir/libsrnic.so.1" |
	sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" libsrnic.so.1
same "libsrnic1: triggers" "$(cat "$work/control-libsrnic1/triggers")" "activate-noawait ldconfig"
same "libsrnic1: shlibs" "$(cat "$work/control-libsrnic1/shlibs")" "libsrnic 1 libsrnic1 (>= $version)"
grep -q ' T srnic_open$' <<<"$(nm -D --defined-only "$root$libdir/libsrnic.so.1")" || fail "libsrnic1: srnic_open not exported"
# libsrnic-dev: headers, the symlink, the static library and srnic.pc.
same "libsrnic-dev: libsrnic.so" "$(readlink "$root$libdir/libsrnic.so")" libsrnic.so.1
[ -f "$root$libdir/libsrnic.a" ] || fail "libsrnic-dev: no libsrnic.a"
for h in srnic_verbs.h srnic.h; do [ -f "$root/usr/include/srnic/$h" ] || fail "libsrnic-dev: no $h"; done
pc=$root$libdir/pkgconfig/srnic.pc
pkg-config --validate "$pc" || fail "srnic.pc does not validate"
same "srnic.pc prefix" "$(pkg-config --variable=prefix "$pc")" /usr
same "srnic.pc libdir" "$(pkg-config --variable=libdir "$pc")" "$libdir"
same "srnic.pc includedir" "$(pkg-config --variable=includedir "$pc")" /usr/include
same "srnic.pc Version" "$(pkg-config --modversion "$pc")" "$version"
# Against the unpacked tree: its paths point into it, and a program builds.
# (pkgconf ends its output with a blank: words are compared.)
words() { echo $("$@"); }
flags=$(words env PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_LIBDIR="$root$libdir/pkgconfig" pkg-config --cflags --libs srnic)
same "pkg-config --cflags --libs srnic (unpacked)" "$flags" "-I$root/usr/include/srnic -L$root$libdir -lsrnic"
# shellcheck disable=SC2086 # flags are words
gcc -O2 -Wall -Wextra -Werror -o "$work/c_example.unpacked" "$SRNIC_TOP/tools/libsrnic-c/examples/c_example.c" $flags
grep -q 'Shared library: \[libsrnic.so.1\]' <<<"$(readelf -d "$work/c_example.unpacked")" ||
	fail "c_example (unpacked tree) does not need libsrnic.so.1"
# srnic-tools: the tool runs; the stand-ins `srnic exec` uses are beside it.
"$root/usr/bin/srnic" --version >/dev/null || fail "srnic --version failed"
for f in libibverbs.so.1 librdmacm.so.1 libmlx5.so.1 libefa.so.1; do
	[ -f "$root/usr/lib/srnic/rdma-compat/$f" ] || fail "srnic-tools: no /usr/lib/srnic/rdma-compat/$f"
done

# ---------------------------------------------------------------------------
phase "2. make install with the default PREFIX, into a DESTDIR"
make -s --no-print-directory -C "$SRNIC_TOP" install DESTDIR="$work/local" >&2
for f in bin/srnic lib/libsrnic.so.1 lib/libsrnic.so lib/libsrnic.a include/srnic/srnic_verbs.h \
	include/srnic/srnic.h lib/pkgconfig/srnic.pc lib/udev/rules.d/60-srnic.rules \
	lib/srnic/rdma-compat/libibverbs.so.1 lib/srnic/rdma-compat/librdmacm.so.1; do
	[ -e "$work/local/usr/local/$f" ] || fail "make install: no /usr/local/$f"
done
same "make install: srnic.pc libdir" "$(pkg-config --variable=libdir "$work/local/usr/local/lib/pkgconfig/srnic.pc")" \
	/usr/local/lib
same "make install: srnic.pc Cflags" "$(words pkg-config --cflags "$work/local/usr/local/lib/pkgconfig/srnic.pc")" \
	"-I/usr/local/include/srnic"

# ---------------------------------------------------------------------------
phase "3. dpkg -i on this host"
# A registration that a stopped run left without its package.
if [ "$(dpkg-query -W -f='${Status}' srnic-dkms 2>/dev/null)" != "install ok installed" ] &&
	[ -n "$(dkms status -m srnic -v "$version")" ]; then
	log "pkg-test: removing a DKMS registration of srnic $version without its package"
	dkms remove -m srnic -v "$version" --all >&2
fi
dpkg -i "$(deb srnic-dkms)" "$(deb srnic-tools)" "$(deb libsrnic1)" "$(deb libsrnic-dev)" >"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; fail "dpkg -i failed"; }
sed 's/^/    /' "$work/dpkg.log" >&2
for p in srnic-dkms srnic-tools libsrnic1 libsrnic-dev; do
	same "$p installed" "$(dpkg-query -W -f='${Status} ${Version}' $p)" "install ok installed $version"
done
# The postinst registered the sources; it built them only with the running
# kernel's headers (this host has none for its own kernel, as a rule).
grep -q "srnic/$version" <<<"$(dkms status -m srnic -v "$version")" || fail "srnic $version is not registered with DKMS"
kernel=$(uname -r)
if [ ! -e "/lib/modules/$kernel/build/include" ]; then
	grep -q "no headers of the running kernel $kernel" "$work/dpkg.log" ||
		fail "the postinst did not say it skipped the running kernel $kernel"
fi
same "pkg-config --cflags --libs srnic" "$(words pkg-config --cflags --libs srnic)" "-I/usr/include/srnic -lsrnic"
# shellcheck disable=SC2046 # flags are words
gcc -O2 -Wall -Wextra -Werror -o "$work/c_example" "$SRNIC_TOP/tools/libsrnic-c/examples/c_example.c" \
	$(pkg-config --cflags --libs srnic)
# (/lib is /usr/lib on a merged-/usr system, ld.so.cache may say either.)
grep -qE "libsrnic\.so\.1 => (/usr)?/lib/$multiarch/libsrnic\.so\.1 " <<<"$(ldd "$work/c_example")" ||
	fail "c_example does not find libsrnic.so.1 in $libdir: $(ldd "$work/c_example")"
# The same against the static library, with srnic.pc's Libs.private.
static_libs=$(pkg-config --static --libs srnic)
# shellcheck disable=SC2086,SC2046
gcc -O2 -Wall -Wextra -Werror -o "$work/c_example.static" "$SRNIC_TOP/tools/libsrnic-c/examples/c_example.c" \
	$(pkg-config --cflags srnic) ${static_libs/-lsrnic/-l:libsrnic.a}
! grep -q 'libsrnic' <<<"$(readelf -d "$work/c_example.static")" || fail "c_example.static needs libsrnic.so"
# Without /dev/srnic the example fails to open the device, and says so.
out=$("$work/c_example" -s 2>&1) && fail "c_example ran without /dev/srnic?"
[ -e /dev/srnic ] || case "$out" in *srnic*) ;; *) fail "c_example: unexpected output: $out" ;; esac
srnic --version >/dev/null || fail "the installed srnic does not run"
# srnic exec finds the installed stand-ins, and a program run through it
# loads them, not rdma-core's.
same "srnic exec: LD_LIBRARY_PATH" "$(cd / && /usr/bin/srnic exec -- sh -c 'echo "${LD_LIBRARY_PATH%%:*}"')" \
	/usr/lib/srnic/rdma-compat
if [ -x /usr/bin/ibv_devices ]; then
	grep -q "libibverbs.so.1 => /usr/lib/srnic/rdma-compat/libibverbs.so.1 " \
		<<<"$(/usr/bin/srnic exec -- ldd /usr/bin/ibv_devices)" ||
		fail "ibv_devices through srnic exec does not load the installed stand-in"
fi
# The udev rule: it parses, and on a misc device of this host (with KERNEL==
# that device's name) it sets the mode it states. udevadm test only shows
# what it would do.
misc_dev=$(ls /sys/class/misc 2>/dev/null | head -n1 || true)
if [ -n "$misc_dev" ]; then
	rules=$(udevadm test --action=add "/sys/class/misc/$misc_dev" 2>&1 || true)
	grep -q "rules.d/60-srnic.rules" <<<"$rules" || fail "udevadm test did not read 60-srnic.rules"
	! grep -i "60-srnic.rules.*\(invalid\|error\|unknown\)" <<<"$rules" || fail "60-srnic.rules has errors"
	mkdir -p "$(dirname "$udev_tmp")"
	sed "s/KERNEL==\"srnic\"/KERNEL==\"$misc_dev\"/" /usr/lib/udev/rules.d/60-srnic.rules >"$udev_tmp"
	rules=$(udevadm test --action=add "/sys/class/misc/$misc_dev" 2>&1 || true)
	rm -f "$udev_tmp"
	grep -q "60-srnic-pkg-test.rules:[0-9]* MODE 0666" <<<"$rules" ||
		fail "the udev rule did not set MODE 0666 on $misc_dev: $(grep -i srnic <<<"$rules")"
else
	log "pkg-test: warning: this host has no misc device: the udev rule is not tried"
fi

# ---------------------------------------------------------------------------
phase "4. dkms build for the debug test kernel"
kdir=$("$SRNIC_TOP/scripts/kernel.sh" debug)
krel=$(cat "$kdir/include/config/kernel.release")
log "pkg-test: kernel $krel in $kdir"
dkms build -m srnic -v "$version" -k "$krel" --kernelsourcedir "$kdir" >"$work/dkms-build.log" 2>&1 ||
	{ cat "$work/dkms-build.log" /var/lib/dkms/srnic/"$version"/build/make.log >&2 2>/dev/null; fail "dkms build failed"; }
grep -q ': built' <<<"$(dkms status -m srnic -v "$version" -k "$krel")" ||
	fail "dkms status does not say built: $(dkms status -m srnic -v "$version" -k "$krel")"
mods=/var/lib/dkms/srnic/$version/$krel/$(uname -m)/module
same "DKMS-built modules" "$(cd "$mods" && echo *)" "srnic.ko srnic_blk.ko"
for m in srnic srnic_blk; do
	same "$m: vermagic" "$(/sbin/modinfo -F vermagic "$mods/$m.ko" | cut -d' ' -f1)" "$krel"
	same "$m: license" "$(/sbin/modinfo -F license "$mods/$m.ko")" GPL
	same "$m: name" "$(/sbin/modinfo -F name "$mods/$m.ko")" "$m"
done
same "srnic_blk: depends" "$(/sbin/modinfo -F depends "$mods/srnic_blk.ko")" srnic
# modprobe resolves what modules-load.d/srnic.conf names, and srnic_blk's
# dependency, in a module tree of the test kernel (depmod -b).
mtree=$work/modtree
mkdir -p "$mtree/lib/modules/$krel/updates/dkms"
cp "$mods"/*.ko "$mtree/lib/modules/$krel/updates/dkms/"
cp "$kdir/modules.builtin" "$kdir/modules.builtin.modinfo" "$kdir/modules.order" "$mtree/lib/modules/$krel/"
/sbin/depmod -b "$mtree" "$krel"
for m in $(grep -v '^#' /usr/lib/modules-load.d/srnic.conf); do
	grep -q "/updates/dkms/$m.ko" <<<"$(/sbin/modprobe -d "$mtree" -S "$krel" --show-depends "$m")" ||
		fail "modprobe does not find $m (modules-load.d/srnic.conf)"
done
deps=$(/sbin/modprobe -d "$mtree" -S "$krel" --show-depends srnic_blk | sed 's|.*/||')
same "modprobe --show-depends srnic_blk" "$(words echo $deps)" "srnic.ko srnic_blk.ko"
# The VM run below takes the module from here (a next run's dkms remove
# would take it away from under a VM run still under way).
mkdir -p "$SRNIC_TOP/build/pkg"
cp "$mods/srnic.ko" "$SRNIC_TOP/build/pkg/srnic.ko"

# ---------------------------------------------------------------------------
# (Not in make check's --no-vm run: a third module build, about a minute.)
if [ $vm = 1 ]; then
phase "5. make modules_install into a staging root"
tree=$work/tree
mkdir -p "$tree"
# The top Makefile with what it reads, and the module sources as the package
# has them (scripts/module.sh's, less tests/).
rsync -a --include='/Makefile' --include='/Cargo.toml' --include='/packaging/***' --exclude='*' \
	"$SRNIC_TOP/" "$tree/"
cp -a "$src/." "$tree/"
make -s --no-print-directory -C "$tree" modules_install KDIR="$kdir" DESTDIR="$work/mi" \
	>"$work/modules_install.log" 2>&1 || { cat "$work/modules_install.log" >&2; fail "make modules_install failed"; }
same "make modules_install: modules" \
	"$(cd "$work/mi/lib/modules/$krel" && find . -name '*.ko' | sort | tr '\n' ' ')" \
	"./updates/clients/blk/srnic_blk.ko ./updates/srnic.ko "
grep -q "updates/clients/blk/srnic_blk.ko: updates/srnic.ko" "$work/mi/lib/modules/$krel/modules.dep" ||
	fail "make modules_install: depmod's modules.dep lacks srnic_blk's dependency"
[ -f "$work/mi/usr/local/lib/modules-load.d/srnic.conf" ] || fail "make modules_install: no modules-load.d/srnic.conf"
fi

phase ""
log "pkg-test: packages, install and DKMS build passed in $(($(date +%s) - start)) s"

# ---------------------------------------------------------------------------
if [ $vm = 1 ]; then
	phase "6. the VMs with the DKMS-built srnic.ko: tests/vm/run.sh --module ... rdma_write"
	"$SRNIC_TOP/tests/vm/run.sh" --variant debug --module "$SRNIC_TOP/build/pkg/srnic.ko" rdma_write
	phase ""
fi
log "pkg-test: passed in $(($(date +%s) - start)) s"
