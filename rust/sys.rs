// SPDX-License-Identifier: GPL-2.0
//! Safe abstractions over the kernel APIs srnic uses that the 6.12 `kernel` crate
//! does not wrap. These modules, and only these, use `bindings::` and the C glue
//! beside them (`socket.c` for `socket.rs`, and so on, declared in `glue.h`);
//! each is small enough to be reviewed on its own. The module's
//! other `unsafe` code lives here too (`global`: objects reachable through a
//! `static`).

pub mod abi;
pub mod crc;
pub mod errno;
pub mod gfp;
pub mod global;
pub mod kv_ops;
pub mod kverbs;
pub mod miscdev;
pub mod module_ref;
pub mod netdev;
pub mod pages;
pub mod param;
pub mod random;
pub mod rawip;
pub mod ratelimit;
pub mod shared;
pub mod socket;
pub mod sync;
pub mod task;
pub mod timer;
pub mod trace;
pub mod waitqueue;
pub mod wq;
pub mod zcopy;
