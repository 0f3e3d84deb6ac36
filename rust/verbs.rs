// SPDX-License-Identifier: GPL-2.0
//! The verbs object model: a context and the objects it owns (protection
//! domains, memory regions, completion queues, queue pairs), their events, the
//! per-context limits and memory budget, and the module's counters. A context belongs to whoever
//! created it (today an open file, see `crate::chardev`), not to a file.

pub(crate) mod budget;
pub(crate) mod buf;
pub(crate) mod commands;
pub(crate) mod context;
pub(crate) mod cq;
pub(crate) mod events;
pub(crate) mod limits;
pub(crate) mod mr;
pub(crate) mod objects;
pub(crate) mod pd;
pub(crate) mod qp;
pub(crate) mod registry;
pub(crate) mod resources;
pub(crate) mod slots;
pub(crate) mod stats;
pub(crate) mod table;
