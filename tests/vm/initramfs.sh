#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the initramfs both test VMs boot: busybox, srnic.ko, the srnic tools and
# test programs, the guest scripts and cases, and the Debian binaries the cases
# need together with the shared libraries ldd lists for them.
#
#   tests/vm/initramfs.sh SRNIC_KO TOOLS_DIR OUT.cpio.gz [CLIENTS_DIR]
#
# srnic_ktest.ko and srnic_blk.ko come from CLIENTS_DIR, by default the
# directory of SRNIC_KO (scripts/module.sh builds all three there).
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

ko=$1 tools=$2 out=$3 clients=${4:-$(dirname "$1")}
root=$(mktemp -d)
# mktemp -d makes the directory 0700: the VMs' root must be usable by
# unprivileged users (memlock_limit runs as nobody).
chmod 755 "$root"
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,etc,srnic/cases,root}
cp /bin/busybox "$root/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done

# copy_libs FILE: the shared libraries ldd lists for FILE, at their paths.
copy_libs() {
	ldd "$1" | grep -o '/[^ ]*' | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# Debian binaries: iproute2's ip, tc (netem needs the real tc) and rdma (siw
# links), rdma-core's rping, ucmatose, ibv_devices, ibv_devinfo, rdma_server and
# rdma_client and perftest's latency and bandwidth tools (the siw peer, and
# srnic itself through the stand-ins: cases rdma_compat*), iperf3 (the
# plain-TCP row of make bench), e2fsprogs' mkfs.ext4 (blk_fs: busybox's
# mke2fs makes only ext2) and nbd-server and nbd-client (the NBD row of make
# bench's block rows).
host_bins=(/usr/bin/ip /usr/sbin/tc /usr/bin/rdma /usr/bin/rping /usr/bin/ucmatose
	/usr/bin/ibv_devices /usr/bin/ib_send_lat /usr/bin/ib_write_lat /usr/bin/ib_read_lat
	/usr/bin/ib_send_bw /usr/bin/ib_write_bw /usr/bin/ib_read_bw
	/usr/bin/ibv_devinfo /usr/bin/rdma_server /usr/bin/rdma_client /usr/bin/iperf3
	/sbin/mkfs.ext4 /usr/bin/nbd-server /usr/sbin/nbd-client)
for b in "${host_bins[@]}"; do
	[ -x "$b" ] || b=$(command -v "$(basename "$b")")
	rm -f "$root/bin/$(basename "$b")"
	cp "$b" "$root/bin/$(basename "$b")"
	copy_libs "$b"
done
# libibverbs loads the siw and rxe providers named by /etc/libibverbs.d/
# {siw,rxe}.driver from its compiled-in directory (rxe: the plain kernel's
# benchmark peer).
for p in /usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav*.so /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so; do
	mkdir -p "$root$(dirname "$p")"
	cp -L "$p" "$root$p"
	copy_libs "$p"
done
# glibc dlopen()s libgcc_s for pthread_exit and pthread_cancel (rping's threads).
for l in /lib/x86_64-linux-gnu/libgcc_s.so.1; do
	cp -L "$l" "$root$l"
done
mkdir -p "$root/etc/libibverbs.d"
cp /etc/libibverbs.d/siw.driver /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
# fio, static (scripts/fio.sh says why not Debian's).
cp "$("$SRNIC_TOP/scripts/fio.sh")" "$root/bin/fio"

# The rdma-core stand-ins (tools/rdma-compat) where `srnic exec` looks for
# them; rdma-core's own libraries above stay for the siw peer.
compat=$(mktemp -d)
trap 'rm -rf "$root" "$compat"' EXIT
"$SRNIC_TOP/scripts/compat.sh" build "$compat"
mkdir -p "$root/usr/lib/srnic/rdma-compat"
cp "$compat"/*.so.1 "$root/usr/lib/srnic/rdma-compat/"
# Their own libraries (glibc, libgcc_s), resolved as `srnic exec` will: with
# the stand-ins first, which are already in place.
for l in "$compat"/*.so.1; do
	LD_LIBRARY_PATH="$compat" ldd "$l" | grep -o '/[^ ]*' | grep -v "^$compat/" | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done

cp "$ko" "$root/srnic/srnic.ko"
# The kernel verbs API's test client, built beside srnic.ko (scripts/module.sh).
cp "$clients/srnic_ktest.ko" "$root/srnic/srnic_ktest.ko"
# The block device over remote memory, a kernel client (clients/blk/).
cp "$clients/srnic_blk.ko" "$root/srnic/srnic_blk.ko"
cp "$tools"/* "$root/bin/"
# The dynamically linked test programs (tests/vm/progs/rdmacm) need rdma-core's
# libraries; the static ones have none to copy.
for t in "$tools"/*; do
	deps=$(ldd "$t" 2>/dev/null || true)
	case "$deps" in *"=> /"*) copy_libs "$t" ;; esac
done
cp "$SRNIC_TOP/tests/vm/guest/init" "$root/init"
cp "$SRNIC_TOP/tests/vm/guest/lib.sh" "$SRNIC_TOP/tests/vm/guest/demo.sh" \
	"$SRNIC_TOP/tests/vm/guest/bench.sh" "$root/srnic/"
cp "$SRNIC_TOP"/tests/vm/cases/*.sh "$root/srnic/cases/"
chmod +x "$root/init"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/false" >>"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
