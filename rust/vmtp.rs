// SPDX-License-Identifier: GPL-2.0
//! VMTP (RFC 1045) over IPv4, IP protocol 81 (see Documentation/srnic/vmtp.rst):
//! entities, which each run a sans-IO engine of `proto::vmtp`, and the stack
//! of each network namespace, which owns the raw socket and hands every
//! packet to the entity it is for.

pub(crate) mod entity;
pub(crate) mod stack;
