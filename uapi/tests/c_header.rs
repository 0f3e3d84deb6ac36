// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Compiles `uapi/srnic.h` with the host C compiler and checks that every
//! structure size, field offset, field size, constant value and constant width
//! (the ioctl numbers' values) equals the generated Rust. The lists come from the
//! generated tables (`srnic_abi_structs!`, `srnic_abi_consts!`), and the test
//! checks that they cover every `SRNIC_*` macro of the header.
//! `-Wpadded -Werror` makes any implicit padding in the header an error.

use srnic_uapi::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

const CFLAGS: [&str; 6] = ["-std=c11", "-Wall", "-Wextra", "-Wpadded", "-Werror", "-I"];

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

fn uapi_dir() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// What the C compiler says, keyed by `struct.field` / `struct` / `CONST`.
fn c_layout() -> BTreeMap<String, String> {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"srnic.h\"\nint main(void) {\n",
    );
    macro_rules! strukt {
        ($r:ident, $c:ident, [$($f:ident),*]) => {
            writeln!(c, "printf(\"{0} %zu\\n\", sizeof(struct {0}));", stringify!($c)).unwrap();
            $(
                writeln!(
                    c,
                    "printf(\"{0}.{1} %zu %zu\\n\", offsetof(struct {0}, {1}), sizeof(((struct {0} *)0)->{1}));",
                    stringify!($c),
                    stringify!($f)
                )
                .unwrap();
            )*
        };
    }
    macro_rules! konst {
        ($($c:ident),*) => {$(
            writeln!(
                c,
                "printf(\"{0} %llu\\n{0}.width %zu\\n\", (unsigned long long)({0}), sizeof({0}));",
                stringify!($c)
            )
            .unwrap();
        )*};
    }
    srnic_abi_structs!(strukt);
    srnic_abi_consts!(konst);
    c.push_str("return 0;\n}\n");

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("srnic_layout.c");
    let exe = dir.join("srnic_layout");
    std::fs::write(&src, c).unwrap();
    let out = Command::new(cc())
        .args(CFLAGS)
        .arg(uapi_dir())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C compiler");
    assert!(
        out.status.success(),
        "compiling srnic.h failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// The same facts from the generated Rust.
fn rust_layout() -> BTreeMap<String, String> {
    let mut r = BTreeMap::new();
    macro_rules! strukt {
        ($r:ident, $c:ident, [$($f:ident),*]) => {
            r.insert(stringify!($c).to_string(), core::mem::size_of::<$c>().to_string());
            let v = $c::default();
            $(
                r.insert(
                    format!("{}.{}", stringify!($c), stringify!($f)),
                    format!("{} {}", core::mem::offset_of!($c, $f), core::mem::size_of_val(&v.$f)),
                );
            )*
        };
    }
    macro_rules! konst {
        ($($c:ident),*) => {$(
            r.insert(stringify!($c).to_string(), ($c as u64).to_string());
            r.insert(
                format!("{}.width", stringify!($c)),
                core::mem::size_of_val(&$c).to_string(),
            );
        )*};
    }
    srnic_abi_structs!(strukt);
    srnic_abi_consts!(konst);
    r
}

fn is_ioctl_width(key: &str) -> bool {
    key.starts_with("SRNIC_IOCTL_") && key.ends_with(".width") && key != "SRNIC_IOCTL_MAGIC.width"
}

#[test]
fn c_header_matches_the_generated_rust() {
    let c = c_layout();
    let r = rust_layout();
    assert!(!c.is_empty());
    for (k, v) in &r {
        if is_ioctl_width(k) {
            // _IOWR() is an unsigned long in C (it adds sizeof); the kernel's
            // ioctl handler and ioctl(2) take the command as 32 bits.
            assert!(c[k] == "8" && *v == "4", "{k}");
            continue;
        }
        assert_eq!(
            c.get(k),
            Some(v),
            "{k}: C says {:?}, Rust says {v}",
            c.get(k)
        );
    }
    assert_eq!(c.len(), r.len());
}

#[test]
fn every_macro_of_the_header_is_generated() {
    // `cc -dM -E` lists every macro the header defines: each SRNIC_ one must be
    // a generated constant (bindgen skips what it cannot evaluate, silently).
    let out = Command::new(cc())
        .args(["-dM", "-E", "-I", uapi_dir()])
        .arg(format!("{}/srnic.h", uapi_dir()))
        .output()
        .expect("run the C preprocessor");
    assert!(out.status.success());
    let macros: BTreeSet<&str> = std::str::from_utf8(&out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| l.split([' ', '(']).next())
        .filter(|n| n.starts_with("SRNIC_"))
        .collect();
    let generated: BTreeSet<&str> = CONSTANTS.iter().map(|c| c.name).collect();
    assert_eq!(macros, generated);
}

#[test]
fn ioctl_numbers_follow_iowr() {
    // _IOWR(0xB9, 0, 104 bytes) computed by hand: dir 3 << 30, size 104 << 16, type 0xB9 << 8.
    assert_eq!(SRNIC_IOCTL_QUERY_DEVICE, 0xC068_B900);
}

#[test]
fn names_come_from_the_header() {
    assert_eq!(name_of("SRNIC_CAP_", SRNIC_CAP_MPA_CRC), Some("MPA_CRC"));
    assert_eq!(name_of("SRNIC_CAP_", 1 << 40), None);
    assert_eq!(
        name_of("SRNIC_IOCTL_", u64::from(SRNIC_IOCTL_REJECT)),
        Some("REJECT")
    );
    // The fields after `reserved` (the structure grew) count too.
    assert_eq!(SrnicStats::COUNTER_NAMES.len(), 25);
    assert_eq!(SrnicStats::COUNTER_NAMES[0], "contexts");
    assert_eq!(SrnicStats::COUNTER_NAMES[16], "sockets");
    assert_eq!(SrnicStats::COUNTER_NAMES[17], "terminates_sent_rdmap");
    assert_eq!(SrnicStats::COUNTER_NAMES[23], "flushed_wrs");
    assert_eq!(SrnicStats::COUNTER_NAMES[24], "tx_zcopy_bytes");
    assert_eq!(SrnicRmppStats::COUNTER_NAMES[0], "rmpp_endpoints");
    assert_eq!(SrnicRmppStats::COUNTER_NAMES[32], "rmpp_tx_errors");
    assert_eq!(SrnicQueryDevice::LIMIT_NAMES[0], "max_pd");
    assert_eq!(SrnicQueryDevice::LIMIT_NAMES[12], "page_size");
    let s = SrnicStats {
        crc_errors: 11,
        ..Default::default()
    };
    assert_eq!(s.counters()[10], ("crc_errors", 11));
}
