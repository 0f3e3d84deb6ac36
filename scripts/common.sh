# SPDX-License-Identifier: GPL-2.0
# Shared settings for srnic's build scripts (sourced, not run).

# Everything expensive (kernel source, kernel builds, bindgen) lives in a cache
# directory outside the repository, so a fresh clone reuses it.
SRNIC_CACHE=${SRNIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/srnic}
SRNIC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

BINDGEN_VERSION=0.69.5
BINDGEN=$SRNIC_CACHE/bindgen-$BINDGEN_VERSION/bin/bindgen
export LIBCLANG_PATH=/usr/lib/llvm-19/lib

# The rustup rustc that comes first in PATH has no rust-src: the kernel and its
# modules are always built with Debian's rustc 1.96 (rustc-web + rust-web-src).
KMAKE_VARS=(ARCH=x86_64 LLVM=-19 RUSTC=/usr/bin/rustc HOSTRUSTC=/usr/bin/rustc "BINDGEN=$BINDGEN")

log() { printf '[srnic] %s\n' "$*" >&2; }
die() { printf '[srnic] error: %s\n' "$*" >&2; exit 1; }
