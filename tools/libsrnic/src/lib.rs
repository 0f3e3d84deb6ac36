// SPDX-License-Identifier: GPL-2.0
//! User-space library for srnic, the software RDMA NIC.
//!
//! [`Device`] opens `/dev/srnic` (one open file is one verbs context: every object
//! created through it is freed when it is dropped) and queries the device's ABI
//! version, capabilities and limits.
#![warn(missing_docs)]

mod device;
mod error;

pub use device::{Capabilities, Device, DeviceAttr, DEFAULT_PATH};
pub use error::{Error, Result};
pub use srnic_uapi as uapi;
