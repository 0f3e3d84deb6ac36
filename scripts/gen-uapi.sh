#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Generate the Rust ABI, uapi/src/generated.rs, from the C header uapi/srnic.h.
#
#   scripts/gen-uapi.sh           rewrites uapi/src/generated.rs
#   scripts/gen-uapi.sh --check   fails (and shows the difference) when the
#                                 committed file is not what the header gives
#
# uapi/srnic.h is the one hand-written definition of the ABI. bindgen turns its
# structures and integer constants into Rust; the kernel module cannot run
# bindgen in its build, so the result is committed and `make check-host` runs
# the --check mode. What bindgen cannot do is done here, from the header too:
#
#  - a constant whose C expression has an L/LL suffix (SRNIC_CAP_*) is 64 bits
#    wide in C, so it is u64 in Rust (bindgen types every macro as u32); a
#    trailing /* comment */ on its #define becomes its doc comment;
#  - the ioctl numbers, function-like _IOWR() macros bindgen cannot evaluate,
#    come from the header's `#define SRNIC_IOCTL_X _IOWR(SRNIC_IOCTL_MAGIC, nr,
#    struct s)` lines as `iowr::<s>(nr)` (abi.rs); every other SRNIC_IOCTL_
#    macro is an error;
#  - the Rust names (SrnicQueryDevice for struct srnic_query_device) as aliases;
#  - two table macros, srnic_abi_structs! (every structure and its fields) and
#    srnic_abi_consts! (every constant), from which abi.rs derives Default, the
#    no-padding assertions and the counter names, and uapi/tests/c_header.rs its
#    comparison with the C compiler.
#
# Structures get no Default from bindgen (it would need unsafe for the 256-byte
# array of srnic_event); abi.rs implements Default for all of them (all zero).
# Output is deterministic for a given bindgen, clang and rustfmt.
set -euo pipefail
. "$(dirname "$0")/common.sh"

check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) die "usage: gen-uapi.sh [--check]" ;;
esac

hdr=$SRNIC_TOP/uapi/srnic.h
dst=$SRNIC_TOP/uapi/src/generated.rs
[ -x "$BINDGEN" ] || die "no bindgen at $BINDGEN (run scripts/deps.sh)"
"$BINDGEN" --version | grep -q "$BINDGEN_VERSION" || die "$BINDGEN is not bindgen $BINDGEN_VERSION"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The kernel's __u8 ... __u64 are exactly uint8_t ... uint64_t, which bindgen
# writes as u8 ... u64; <linux/types.h> is kept out so that its typedefs do not
# clash. C `char` (interface names) becomes abi.rs's ctypes::c_char, u8 as in
# the kernel (which is built with -funsigned-char).
"$BINDGEN" "$hdr" -o "$tmp/bindgen.rs" \
	--use-core --no-layout-tests --disable-header-comment \
	--allowlist-type 'srnic_.*' --allowlist-var 'SRNIC_.*' \
	--with-derive-partialeq --with-derive-eq \
	--ctypes-prefix super::ctypes \
	-- -fparse-all-comments -D_LINUX_TYPES_H -include stdint.h \
	-D__u8=uint8_t -D__u16=uint16_t -D__u32=uint32_t -D__u64=uint64_t \
	-D__s8=int8_t -D__s16=int16_t -D__s32=int32_t -D__s64=int64_t

# Every SRNIC_ object-like macro of the header, and the expansion of each.
cc -dM -E -I "$SRNIC_TOP/uapi" "$hdr" | sed -n 's/^#define \(SRNIC_[A-Za-z0-9_]*\) .*/\1/p' |
	sort >"$tmp/macros"
{
	echo '#include "srnic.h"'
	echo '#define SRNIC_GEN_STR(x) #x'
	echo '#define SRNIC_GEN_EXPAND(x) SRNIC_GEN_STR(x)'
	sed 's/.*/srnic_gen SRNIC_GEN_STR(&) SRNIC_GEN_EXPAND(&)/' "$tmp/macros"
} >"$tmp/expand.c"
cc -E -P -I "$SRNIC_TOP/uapi" "$tmp/expand.c" | sed -n 's/^srnic_gen "\([A-Z0-9_]*\)" /\1 /p' >"$tmp/expanded"

python3 - "$hdr" "$tmp/bindgen.rs" "$tmp/expanded" >"$tmp/generated.rs" <<'EOF'
import re
import sys

hdr_path, bindgen_path, expanded_path = sys.argv[1:]
hdr = open(hdr_path).read()
out = open(bindgen_path).read()


def fail(msg):
    sys.exit(f"gen-uapi: {msg}")


# C expansion of every macro: NAME "expansion".
expansion = {}
for line in open(expanded_path):
    name, text = line.rstrip("\n").split(" ", 1)
    expansion[name] = text

# Trailing comments of #define lines become doc comments.
define_doc = {}
for m in re.finditer(r"^#define\s+(SRNIC_\w+)\s[^\n]*?/\*\s*(.*?)\s*\*/\s*$", hdr, re.M):
    define_doc[m.group(1)] = m.group(2)

# Constants: widen the 64-bit ones, add the docs.
consts = []


def fix_const(m):
    name, ty, value = m.group(1), m.group(2), m.group(3)
    if name not in expansion:
        fail(f"bindgen made {name}, which is no macro of the header")
    if re.search(r"\b(0[xX][0-9a-fA-F]+|\d+)[uU]?[lL]{1,2}[uU]?\b", expansion[name]):
        ty = "u64"
    consts.append(name)
    doc = define_doc.get(name)
    doc = f"/// {doc}\n" if doc else ""
    return f"{doc}pub const {name}: {ty} = {value};"


out = re.sub(r"^pub const (SRNIC_\w+): (\w+) = (.*);$", fix_const, out, flags=re.M)

# Structures and their fields, in header order.
structs = []
for m in re.finditer(r"^pub struct (\w+) \{\n(.*?)^\}", out, re.M | re.S):
    fields = re.findall(r"^    pub (\w+): ", m.group(2), re.M)
    if not fields:
        fail(f"struct {m.group(1)} has no fields")
    structs.append((m.group(1), fields))
names = {s for s, _ in structs}
if re.search(r"\bunsafe\b", out):
    fail("bindgen's output needs unsafe")


def rust_name(c):
    return "".join(p.capitalize() for p in c.split("_"))


# ioctl numbers from the _IOWR lines.
ioctls = []
for m in re.finditer(
    r"^#define\s+(SRNIC_IOCTL_\w+)\s+_IOWR\(SRNIC_IOCTL_MAGIC,\s*(0x[0-9A-Fa-f]+),\s*struct\s+(\w+)\)\s*$",
    hdr,
    re.M,
):
    name, nr, s = m.groups()
    if s not in names:
        fail(f"{name} takes struct {s}, which bindgen did not make")
    ioctls.append((name, nr, s))
ioctl_names = {n for n, _, _ in ioctls}
for name in expansion:
    if name.startswith("SRNIC_IOCTL_") and name != "SRNIC_IOCTL_MAGIC" and name not in ioctl_names:
        fail(f"{name} is not a `#define {name} _IOWR(SRNIC_IOCTL_MAGIC, nr, struct s)` line")
    if name not in consts and name not in ioctl_names:
        fail(f"bindgen made nothing of {name} (an expression it cannot evaluate?)")

w = []
w.append("// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause")
w.append("// @generated by scripts/gen-uapi.sh from uapi/srnic.h (bindgen 0.69.5). Do not")
w.append("// edit: change the header and run scripts/gen-uapi.sh.")
w.append("")
w.append(out.rstrip("\n"))
w.append("")
for name, nr, s in ioctls:
    w.append(f"/// `_IOWR(SRNIC_IOCTL_MAGIC, {nr}, struct {s})`")
    w.append(f"pub const {name}: u32 = super::iowr::<{s}>({nr});")
w.append("")
for s, _ in structs:
    w.append(f"/// `struct {s}`")
    w.append(f"pub type {rust_name(s)} = {s};")
w.append("")
w.append("/// Calls `$m!(RustName, c_name, [field, ...])` for every structure, in header order.")
w.append("#[macro_export]")
w.append("macro_rules! srnic_abi_structs {")
w.append("    ($m:ident) => {")
for s, fields in structs:
    w.append(f"        $m!({rust_name(s)}, {s}, [{', '.join(fields)}]);")
w.append("    };")
w.append("}")
w.append("")
w.append("/// Calls `$m!(CONST, ...)` once with every integer constant, ioctl numbers last.")
w.append("#[macro_export]")
w.append("macro_rules! srnic_abi_consts {")
w.append("    ($m:ident) => {")
w.append(f"        $m!({', '.join(consts + [n for n, _, _ in ioctls])});")
w.append("    };")
w.append("}")
print("\n".join(w))
EOF
rustfmt --edition 2021 "$tmp/generated.rs"

if [ "$check" = 1 ]; then
	if ! diff -u "$dst" "$tmp/generated.rs" >&2; then
		die "uapi/src/generated.rs is stale: run scripts/gen-uapi.sh"
	fi
else
	cp "$tmp/generated.rs" "$dst"
fi
