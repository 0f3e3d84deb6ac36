#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Checks that the stand-ins in DIR export every versioned symbol that the
# programs of programs.list import from libibverbs, librdmacm, libmlx5 and
# libefa, and that each stand-in has the soname the programs ask for.
#
#   tools/rdma-compat/tests/check-symbols.sh DIR
set -euo pipefail

dir=${1:?usage: check-symbols.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
fail=0

# The stand-in that must define a symbol of a version node.
lib_of_version() {
	case "$1" in
	IBVERBS_*) echo libibverbs.so.1 ;;
	RDMACM_*) echo librdmacm.so.1 ;;
	MLX5_*) echo libmlx5.so.1 ;;
	EFA_*) echo libefa.so.1 ;;
	*) echo "" ;;
	esac
}

# "name version" of every defined dynamic symbol of a library.
exports() {
	objdump -T "$1" | awk '$0 !~ /\*UND\*/ && NF >= 7 { v = $(NF-1); gsub(/[()]/, "", v); print $NF, v }'
}

declare -A have
for lib in libibverbs.so.1 librdmacm.so.1 libmlx5.so.1 libefa.so.1; do
	f="$dir/$lib"
	if [ ! -f "$f" ]; then
		echo "check-symbols: missing $f"
		fail=1
		continue
	fi
	soname=$(objdump -p "$f" | awk '$1 == "SONAME" { print $2 }')
	if [ "$soname" != "$lib" ]; then
		echo "check-symbols: $f has soname '$soname', not $lib"
		fail=1
	fi
	while read -r name ver; do have["$lib $name $ver"]=1; done < <(exports "$f")
done

checked=0
while read -r prog; do
	case "$prog" in '' | \#*) continue ;; esac
	if [ ! -x "$prog" ]; then
		echo "check-symbols: $prog is not installed (scripts/deps.sh installs it)"
		fail=1
		continue
	fi
	# Imports: undefined dynamic symbols with a version node.
	while read -r name ver; do
		lib=$(lib_of_version "$ver")
		[ -n "$lib" ] || continue
		checked=$((checked + 1))
		if [ -z "${have["$lib $name $ver"]:-}" ]; then
			echo "check-symbols: $prog imports $name@$ver, which $dir/$lib does not export"
			fail=1
		fi
	done < <(objdump -T "$prog" | awk '/\*UND\*/ { v = $(NF-1); gsub(/[()]/, "", v); print $NF, v }')
done < "$here/programs.list"

if [ "$fail" = 0 ]; then
	echo "check-symbols: OK ($checked imports of $(grep -c '^/' "$here/programs.list") programs found in $dir)"
fi
exit "$fail"
