// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! The shared library's SONAME. Cargo names the file `libsrnic_verbs.so`;
//! installed (`make install`, the `libsrnic1` package) it is
//! `libsrnic.so.1`, and programs linked with `-lsrnic` record that name.
//! The number is the C ABI's major version: raise it with any incompatible
//! change to `srnic_verbs.h`. `make install` and `make deb` read it back from
//! the built library (`readelf -d`), so it is set here only.
const SONAME: &str = "libsrnic.so.1";

fn main() {
    // Only the cdylib is linked with it (not the staticlib, nor tests).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{SONAME}");
    println!("cargo:rerun-if-changed=build.rs");
}
