#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Extract the files a VM exported (export_file in tests/vm/guest/lib.sh) from
# the capture of its virtio-serial port srnic.files:
#
#   SRNIC-FILE-BEGIN NAME
#   <base64 of the gzipped file>
#   SRNIC-FILE-END NAME MD5-OF-THE-GZIP-STREAM
#
#   tests/vm/extract-files.sh SERIAL-CAPTURE OUTDIR
#
# Writes OUTDIR/NAME for each; fails if one is incomplete or its md5 differs.
set -euo pipefail
in=$1 out=$2
[ -s "$in" ] || exit 0
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tr -d '\r' <"$in" | awk -v dir="$tmp" '
	/^SRNIC-FILE-BEGIN / { name = $2; file = dir "/" name ".b64"; printf "" > file; next }
	/^SRNIC-FILE-END / { if ($2 == name) { print $3 > (dir "/" name ".md5"); close(file) } name = ""; next }
	name != "" { print >> file }
'
rc=0
for b in "$tmp"/*.b64; do
	[ -e "$b" ] || continue
	name=$(basename "$b" .b64)
	if [ ! -f "$tmp/$name.md5" ]; then
		echo "extract-files: $name is incomplete" >&2; rc=1; continue
	fi
	base64 -d <"$b" >"$tmp/$name.gz"
	if [ "$(md5sum <"$tmp/$name.gz" | cut -d' ' -f1)" != "$(cat "$tmp/$name.md5")" ]; then
		echo "extract-files: $name does not match its md5" >&2; rc=1; continue
	fi
	gzip -dc "$tmp/$name.gz" >"$out/$name"
done
exit $rc
