// SPDX-License-Identifier: GPL-2.0
//! Sandia RMPP over raw Ethernet frames (see Documentation/srnic/rmpp.rst):
//! endpoints, which run the `no_std` engine of `proto::rmpp`, and the node table
//! that maps NIDs to MAC addresses.

pub(crate) mod endpoint;
pub(crate) mod node;
