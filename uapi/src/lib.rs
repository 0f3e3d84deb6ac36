// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! srnic's user-space ABI in Rust, generated from `uapi/srnic.h` (see `abi.rs`).
//!
//! The definitions live in `abi.rs` (and the `generated.rs` it includes) so that
//! the kernel module can compile them in with `#[path]`; this crate root only
//! re-exports them for user space.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod abi;
pub use abi::*;
