// SPDX-License-Identifier: GPL-2.0
//! Compiles `uapi/srnic.h` with the host C compiler and checks that every
//! structure size, field offset, field size and constant equals the Rust mirror.
//! `-Wpadded -Werror` makes any implicit padding in the header an error.

use srnic_uapi::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

/// What the C compiler says, keyed by `struct.field` / `struct` / `CONST`.
fn c_layout() -> BTreeMap<String, String> {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"srnic.h\"\nint main(void) {\n",
    );
    macro_rules! field {
        ($r:ident, $c:ident, $f:ident) => {
            writeln!(
                c,
                "printf(\"{0}.{1} %zu %zu\\n\", offsetof(struct {0}, {1}), sizeof(((struct {0} *)0)->{1}));",
                stringify!($c),
                stringify!($f)
            )
            .unwrap();
        };
    }
    macro_rules! strukt {
        ($r:ident, $c:ident) => {
            writeln!(
                c,
                "printf(\"{0} %zu\\n\", sizeof(struct {0}));",
                stringify!($c)
            )
            .unwrap();
        };
    }
    macro_rules! konst {
        ($r:ident, $c:ident) => {
            writeln!(
                c,
                "printf(\"{0} %llu\\n\", (unsigned long long)({0}));",
                stringify!($c)
            )
            .unwrap();
        };
    }
    srnic_abi_fields!(field);
    srnic_abi_structs!(strukt);
    srnic_abi_consts!(konst);
    c.push_str("return 0;\n}\n");

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("srnic_layout.c");
    let exe = dir.join("srnic_layout");
    std::fs::write(&src, c).unwrap();
    let hdr = concat!(env!("CARGO_MANIFEST_DIR"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Wpadded", "-Werror", "-I", hdr,
        ])
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

/// The same facts from the Rust mirror.
fn rust_layout() -> BTreeMap<String, String> {
    let mut r = BTreeMap::new();
    macro_rules! field {
        ($r:ident, $c:ident, $f:ident) => {
            let off = core::mem::offset_of!($r, $f);
            let size = {
                let v = $r::default();
                core::mem::size_of_val(&v.$f)
            };
            r.insert(
                format!("{}.{}", stringify!($c), stringify!($f)),
                format!("{off} {size}"),
            );
        };
    }
    macro_rules! strukt {
        ($r:ident, $c:ident) => {
            r.insert(
                stringify!($c).to_string(),
                core::mem::size_of::<$r>().to_string(),
            );
        };
    }
    macro_rules! konst {
        ($r:ident, $c:ident) => {
            r.insert(stringify!($c).to_string(), ($r as u64).to_string());
        };
    }
    srnic_abi_fields!(field);
    srnic_abi_structs!(strukt);
    srnic_abi_consts!(konst);
    r
}

#[test]
fn c_header_matches_rust_mirror() {
    let c = c_layout();
    let r = rust_layout();
    assert!(!c.is_empty());
    for (k, v) in &r {
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
fn every_struct_field_is_listed() {
    // The sum of the listed field sizes must be the structure size: a field added to
    // the Rust structure but not to srnic_abi_fields! (and so not compared) fails here.
    let r = rust_layout();
    let mut sums: BTreeMap<String, usize> = BTreeMap::new();
    for (k, v) in &r {
        if let Some((s, _)) = k.split_once('.') {
            let size: usize = v.split(' ').nth(1).unwrap().parse().unwrap();
            *sums.entry(s.to_string()).or_default() += size;
        }
    }
    for (s, sum) in sums {
        assert_eq!(r[&s], sum.to_string(), "fields of {s} do not cover it");
    }
}

#[test]
fn ioctl_numbers_follow_iowr() {
    // _IOWR(0xB9, 0, 104 bytes) computed by hand: dir 3 << 30, size 104 << 16, type 0xB9 << 8.
    assert_eq!(SRNIC_IOCTL_QUERY_DEVICE, 0xC068_B900);
}
