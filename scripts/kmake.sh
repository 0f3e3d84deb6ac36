#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Builds srnic's modules against a kernel build tree with the toolchain that
# kernel was built with, read from its configuration, not assumed.
#
#   scripts/kmake.sh KDIR [MAKE-ARGS...]   make -C KDIR M=$PWD ARCH=.. LLVM=.. RUSTC=.. MAKE-ARGS
#   scripts/kmake.sh --vars KDIR           only print those variables (one line)
#
# From KDIR/.config (or include/config/auto.conf):
#   ARCH   the architecture the kernel was configured for (CONFIG_X86_64,
#          CONFIG_ARM64, CONFIG_RISCV, CONFIG_LOONGARCH, CONFIG_UML);
#   LLVM   for a kernel built with clang (CONFIG_CC_IS_CLANG), the LLVM of the
#          same major version as CONFIG_CC_VERSION_TEXT: its directory
#          /usr/lib/llvm-N/bin goes first in PATH (so a bare "clang", as DKMS
#          passes CC=clang, is that one) and LLVM=-N names its tools where
#          they have versioned names, else LLVM=1;
#   RUSTC  a rustc whose --version is exactly CONFIG_RUSTC_VERSION_TEXT (a
#          module's crates must be compiled by the compiler that compiled the
#          kernel's): $RUSTC if set, else the first of rustc in PATH,
#          /usr/bin/rustc and /usr/lib/rust-*/bin/rustc that matches.
# ARCH, LLVM and RUSTC set in the environment are used as they are (RUSTC is
# still checked). It fails at once, saying why, for a tree without
# CONFIG_RUST, of another kernel series than 6.12, or with no matching rustc.
# Used by the top Makefile, scripts/module.sh and dkms.conf.
set -eu

die() { echo "srnic: $*" >&2; exit 1; }

vars_only=0
if [ "${1:-}" = --vars ]; then
	vars_only=1
	shift
fi
kdir=${1:?usage: kmake.sh [--vars] KDIR [MAKE-ARGS...]}
shift
[ -d "$kdir" ] || die "$kdir: no such kernel build directory (install the kernel's headers, or pass KDIR=)"
config=$kdir/.config
[ -f "$config" ] || config=$kdir/include/config/auto.conf
[ -f "$config" ] || die "$kdir has no .config: not a configured kernel build tree"

# cfg NAME: the value of CONFIG_NAME (quotes removed), empty when unset.
cfg() { sed -n "s/^CONFIG_$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$config" | head -n1; }

release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || true)
[ "$(cfg RUST)" = y ] ||
	die "the kernel in $kdir${release:+ ($release)} has no Rust support (CONFIG_RUST is not set): srnic is a Rust module and needs a kernel built with CONFIG_RUST=y"
case "$release" in
6.12|6.12.*|6.12-*|"") ;;
*) die "the kernel in $kdir is $release: srnic is written for the 6.12 series (the kernel APIs it uses change between releases)" ;;
esac

if [ -z "${ARCH:-}" ]; then
	if [ "$(cfg X86_64)" = y ]; then ARCH=x86_64
	elif [ "$(cfg ARM64)" = y ]; then ARCH=arm64
	elif [ "$(cfg RISCV)" = y ]; then ARCH=riscv
	elif [ "$(cfg LOONGARCH)" = y ]; then ARCH=loongarch
	elif [ "$(cfg UML)" = y ]; then ARCH=um
	else die "cannot tell the architecture of the kernel in $kdir from its configuration: pass ARCH="
	fi
fi

if [ -z "${LLVM:-}" ] && [ "$(cfg CC_IS_CLANG)" = y ]; then
	major=$(cfg CC_VERSION_TEXT | sed -n 's/.*clang version \([0-9]*\)\..*/\1/p')
	[ -n "$major" ] || die "the kernel in $kdir was built with clang, but its version is not in CONFIG_CC_VERSION_TEXT: pass LLVM="
	if [ -x "/usr/lib/llvm-$major/bin/clang" ]; then
		PATH=/usr/lib/llvm-$major/bin:$PATH
		export PATH
	fi
	if command -v "clang-$major" >/dev/null 2>&1; then
		LLVM=-$major
	elif command -v clang >/dev/null 2>&1 &&
		clang --version | grep -q "clang version $major\."; then
		LLVM=1
	else
		die "the kernel in $kdir was built with clang $major ($(cfg CC_VERSION_TEXT)); install clang-$major and lld-$major, or pass LLVM="
	fi
fi

want=$(cfg RUSTC_VERSION_TEXT)
[ -n "$want" ] || die "the kernel in $kdir does not say which rustc built it (no CONFIG_RUSTC_VERSION_TEXT)"
tried=
if [ -n "${RUSTC:-}" ]; then
	candidates=$RUSTC
else
	candidates="$(command -v rustc 2>/dev/null || true) /usr/bin/rustc $(ls /usr/lib/rust-*/bin/rustc 2>/dev/null || true)"
fi
found=
for r in $candidates; do
	[ -x "$r" ] || continue
	v=$("$r" --version 2>/dev/null || true)
	if [ "$v" = "$want" ]; then
		found=$r
		break
	fi
	tried="$tried
  $r: $v"
done
[ -n "$found" ] ||
	die "the kernel in $kdir was built with \"$want\", and a module must be built with the same rustc; none found:$tried
install that rustc, or pass RUSTC=/path/to/rustc"
RUSTC=$found

vars="ARCH=$ARCH${LLVM:+ LLVM=$LLVM} RUSTC=$RUSTC HOSTRUSTC=$RUSTC"
if [ $vars_only = 1 ]; then
	echo "$vars"
	exit 0
fi
# shellcheck disable=SC2086 # $vars is a list of words
exec "${MAKE:-make}" -C "$kdir" M="$PWD" $vars "$@"
