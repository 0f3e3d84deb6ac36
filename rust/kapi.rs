// SPDX-License-Identifier: GPL-2.0
//! The second front door: the kernel verbs API, for other kernel modules
//! (`include/srnic/kverbs.h`; Documentation/srnic/kernel-api.rst).
//!
//! A kernel client opens a [`client::Client`]: a verbs context that no file
//! holds, whose events are delivered to the client's callbacks. Every call
//! goes to the same verbs commands as the character device's ioctls
//! (`crate::verbs::commands`).
//!
//! - [`client`]: the client's context and the delivery of its notifications.
//!
//! The C-callable functions, where the client's raw pointers are checked and
//! become Rust values, are `crate::sys::kverbs` (with `kverbs.c`, which
//! exports them and checks the client's API version): like all the kernel
//! side's code that the compiler cannot check, they live in `sys`.

pub(crate) mod client;
