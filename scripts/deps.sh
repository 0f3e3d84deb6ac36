#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install everything srnic needs on a Debian 12 machine: the Debian packages and
# bindgen-cli. Idempotent: with everything present it does nothing and takes
# well under a second.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PACKAGES=(
	# Kernel build: Debian's 6.12 LTS source, Rust 1.96 with its core sources, LLVM 19.
	linux-source-6.12 rustc-web rust-web-src libstd-rust-web-dev
	clang-19 lld-19 llvm-19 libclang-19-dev
	flex bison bc libelf-dev libssl-dev cpio make gcc xz-utils rsync kmod
	# scripts/fio.sh fetches the source of fio (built static for the VMs).
	curl
	# VM harness: QEMU and a static busybox for the initramfs; gdb prints
	# where a VM that hangs while booting is (tests/vm/run.sh).
	qemu-system-x86 busybox-static gdb
	# Peers, tools and independent checks used inside the VMs and on the host.
	iproute2 iperf3 tshark e2fsprogs
	# make bench's block rows: NBD, beside NVMe over TCP and RDMA (in the kernel).
	nbd-server nbd-client
	# make bench's plots.
	gnuplot-nox
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	# rdma-core's headers, which the stand-ins of tools/rdma-compat are built against.
	libibverbs-dev librdmacm-dev
	# make deb and its test (scripts/deb.sh, scripts/pkg-test.sh): dpkg-deb and
	# dpkg-shlibdeps, DKMS, pkg-config, udevadm.
	dpkg-dev dkms pkgconf udev
)

missing=()
for p in "${PACKAGES[@]}"; do
	case "$p" in \#*) continue ;; esac
	if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian packages: ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "need root to install packages (or install them yourself): ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# QEMU's packages must all be of one version: a machine that already has
	# qemu-utils from bookworm-backports (newer than bookworm's QEMU, which
	# it Breaks) gets qemu-system-x86 from there too, never a removal or a
	# downgrade of what is installed.
	qemu_utils=$(dpkg-query -W -f='${Status} ${Version}' qemu-utils 2>/dev/null |
		sed -n 's/^install ok installed //p')
	if [[ " ${missing[*]} " == *" qemu-system-x86 "* && "$qemu_utils" == *~bpo12* ]]; then
		if ! apt-cache madison qemu-system-x86 | grep -qF "$qemu_utils"; then
			log "qemu-utils $qemu_utils is from bookworm-backports: adding that suite (priority 100: used only when asked for)"
			cat >/etc/apt/sources.list.d/srnic-bookworm-backports.sources <<-EOF
				Types: deb
				URIs: http://deb.debian.org/debian
				Suites: bookworm-backports
				Components: main
				Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
			EOF
			apt-get update -q
		fi
		apt-get install -y -q --no-install-recommends --no-remove -t bookworm-backports qemu-system-x86
		missing=("${missing[@]/qemu-system-x86/}")
	fi
	apt-get install -y -q --no-install-recommends --no-remove ${missing[@]}
fi

# The host's Rust toolchain pieces (cargo builds the tools and bindgen;
# clippy and rustfmt run in make check): from rustup when the machine's Rust
# comes from it, else Debian's packages.
rust_piece() { # rust_piece CHECK-COMMAND RUSTUP-COMPONENT DEBIAN-PACKAGE
	if $1 >/dev/null 2>&1; then
		return 0
	fi
	if command -v rustup >/dev/null 2>&1 && [ -n "$2" ]; then
		log "adding the rustup component $2"
		rustup component add "$2"
	else
		log "installing the Debian package $3"
		[ "$(id -u)" = 0 ] || die "need root to install $3 (or install it yourself)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-remove "$3"
	fi
}
rust_piece "cargo --version" "" cargo

if ! "$BINDGEN" --version 2>/dev/null | grep -q "$BINDGEN_VERSION"; then
	log "installing bindgen-cli $BINDGEN_VERSION into $SRNIC_CACHE"
	mkdir -p "$SRNIC_CACHE"
	cargo install bindgen-cli --version "$BINDGEN_VERSION" --locked \
		--root "$SRNIC_CACHE/bindgen-$BINDGEN_VERSION"
fi

rust_piece "cargo clippy --version" clippy rust-clippy
rust_piece "cargo fmt --version" rustfmt rustfmt
