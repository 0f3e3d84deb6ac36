// SPDX-License-Identifier: GPL-2.0
//! Rust mirror of srnic's user-space ABI, `uapi/srnic.h`.
//!
//! The definitions live in [`abi`] so that the kernel module can compile that one
//! file in with `#[path]`; this crate root only re-exports them for user space.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod abi;
pub use abi::*;
