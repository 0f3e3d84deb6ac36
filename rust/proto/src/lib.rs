// SPDX-License-Identifier: GPL-2.0
//! srnic protocol cores.
//!
//! Everything here is `#![no_std]`, allocates nothing and performs no I/O: bytes and
//! the current time go in, parsed headers, placement instructions, bytes to send and
//! timer deadlines come out. The kernel module compiles these same files in (see
//! `rust/srnic_main.rs`), so modules refer to each other through `super::`, never
//! `crate::`, and use nothing outside `core`.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented,
        clippy::arithmetic_side_effects
    )
)]

pub mod bytes;
pub mod crc;
pub mod ddp;
pub mod lifecycle;
pub mod mpa;
pub mod rdmap;
pub mod ring;
pub mod rmpp;
pub mod term;
pub mod vmtp;
