#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build (or find in the cache) the Linux 6.12 kernel srnic is tested on.
#
#   scripts/kernel.sh plain|debug      prints the build directory (a KDIR) on stdout
#
# The source comes from Debian's linux-source-6.12, unpacked once into the cache.
# Each variant is configured from tinyconfig plus tests/vm/config/base.config
# (plus debug.config for "debug", plain.config for "plain") and built out of
# tree into $SRNIC_CACHE/kbuild/<variant>-<key>, where <key> hashes the
# fragments, this script, the source package version and the toolchain. A second run with the
# same key does no kernel work at all.
set -euo pipefail
. "$(dirname "$0")/common.sh"

variant=${1:-debug}
frags=("$SRNIC_TOP/tests/vm/config/base.config")
case "$variant" in
plain) frags+=("$SRNIC_TOP/tests/vm/config/plain.config") ;;
debug) frags+=("$SRNIC_TOP/tests/vm/config/debug.config") ;;
*) die "unknown kernel variant '$variant' (plain or debug)" ;;
esac

"$SRNIC_TOP/scripts/deps.sh" >&2

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$({
	cat "${frags[@]}" "$0"
	echo "$srcver"
	/usr/bin/rustc --version
	clang-19 --version | head -n1
	"$BINDGEN" --version
} | sha256sum | cut -c1-16)
out=$SRNIC_CACHE/kbuild/$variant-$key

if [ -f "$out/.srnic-built" ]; then
	echo "$out"
	exit 0
fi

src=$SRNIC_CACHE/src/linux-source-6.12-$srcver
if [ ! -f "$src/.srnic-unpacked" ]; then
	log "unpacking linux-source-6.12 $srcver"
	rm -rf "$src" && mkdir -p "$src.tmp"
	tar -xf /usr/src/linux-source-6.12.tar.xz -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
	touch "$src/.srnic-unpacked"
fi

log "configuring the $variant kernel in $out"
rm -rf "$out" && mkdir -p "$out"
kmake() { make -C "$src" O="$out" "${KMAKE_VARS[@]}" "$@"; }
kmake -s tinyconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >&2
kmake -s olddefconfig >&2

# Every requested line must have survived olddefconfig (Kconfig silently drops
# options whose dependencies are missing).
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$out/.config" || { log "config lost: $line"; bad=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		if grep -q "^$opt=" "$out/.config"; then log "config still set: $opt"; bad=1; fi ;;
	esac
done < <(cat "${frags[@]}")
[ $bad = 0 ] || die "the $variant kernel config does not hold every requested option"

log "building the $variant kernel (several minutes)"
start=$(date +%s)
kmake -j"$(($(nproc) + 1))" bzImage modules >&2
echo $(($(date +%s) - start)) >"$out/.srnic-build-seconds"
log "built the $variant kernel in $(cat "$out/.srnic-build-seconds") s"
touch "$out/.srnic-built"
# Builds of this variant with other keys: keep the newest few (a branch or a
# worktree with other fragments must not cost the main line its build), drop
# older ones, and drop unfinished ones a day old (a build that was stopped).
keep=${SRNIC_KBUILD_KEEP:-3}
ls -dt "$SRNIC_CACHE/kbuild/$variant-"*/.srnic-built 2>/dev/null | tail -n +$((keep + 1)) |
	while IFS= read -r done; do rm -rf "${done%/.srnic-built}"; done
find "$SRNIC_CACHE/kbuild" -mindepth 1 -maxdepth 1 -name "$variant-*" -mtime +0 \
	! -path "$out" -exec test ! -e {}/.srnic-built \; -exec rm -rf {} + || true
echo "$out"
