// SPDX-License-Identifier: GPL-2.0
//! srnic: a software RDMA NIC.
//!
//! The kernel side is organised in wings; dependencies point one way, from the
//! front door down to `sys` and `proto`:
//!
//! - [`chardev`]: the front door, `/dev/srnic`; one verbs context per open file;
//! - [`kapi`]: the second front door, the kernel verbs API for other modules
//!   (`include/srnic/kverbs.h`); one verbs context per kernel client;
//! - [`verbs`]: the object model (context, PD, MR, CQ, QP, events, counters);
//! - [`iwarp`]: connection management and MPA start-up;
//! - [`rmpp`]: Sandia RMPP endpoints and the node table;
//! - [`vmtp`]: VMTP entities and each network namespace's VMTP stack;
//! - [`sys`]: the only code that touches `bindings::` and the C glue;
//! - [`proto`]: the `no_std` protocol cores; [`uapi`]: the user-space ABI.

// pin-init's macros recurse once per field: the queue pair's initializer
// needs more than the default 128 levels.
#![recursion_limit = "256"]

use kernel::{c_str, prelude::*};

mod chardev;
mod iwarp;
mod kapi;
mod rmpp;
pub mod sys;
mod verbs;
mod vmtp;

/// The protocol cores, shared with the host as the `srnic-proto` crate (see
/// `rust/proto/src/lib.rs`): `no_std`, allocation-free, sans-IO state machines.
#[path = "proto/src"]
pub mod proto {
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
}

/// The user-space ABI, shared with user space as the `srnic-uapi` crate.
#[path = "../uapi/src/abi.rs"]
pub mod uapi;

module! {
    type: SrnicModule,
    name: "srnic",
    author: "srnic developers",
    description: "srnic: software RDMA NIC (iWARP over TCP, Sandia RMPP over Ethernet)",
    license: "GPL",
}

/// The loaded module: owns the registration of `/dev/srnic`.
struct SrnicModule {
    // Field order is drop order: the device goes first (no new files), then the
    // workqueue, whose destruction waits for every queued item.
    _misc: sys::miscdev::Registration<chardev::File>,
    _kapi: kapi::client::Registration,
    _netdevs: sys::netdev::NetdevWatch,
    // Before the workqueue: waits for every zero-copy send TCP still holds.
    _zcopy: sys::zcopy::Registration,
    _wq: sys::wq::WorkQueue,
    _nodes: rmpp::node::Registration,
    _vmtp: vmtp::stack::Registration,
    // Last: every context (file or kernel client) is gone before it.
    _contexts: verbs::registry::Installation,
}

impl kernel::Module for SrnicModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Mode 0666: opening the device grants nothing by itself. Every resource a
        // context takes is charged to its process (pinned pages to RLIMIT_MEMLOCK)
        // and bounded by the per-context limits in `limits`; see
        // Documentation/srnic/index.rst.
        let contexts = verbs::registry::Installation::new()?;
        let nodes = rmpp::node::Registration::new()?;
        let vmtp = vmtp::stack::Registration::new()?;
        let wq = sys::wq::WorkQueue::create()?;
        let zcopy = sys::zcopy::Registration::new();
        let netdevs = sys::netdev::NetdevWatch::register()?;
        let kapi = kapi::client::Registration::new()?;
        let misc = sys::miscdev::Registration::<chardev::File>::register(c_str!("srnic"), 0o666)?;
        verbs::limits::announce();
        Ok(Self {
            _misc: misc,
            _kapi: kapi,
            _netdevs: netdevs,
            _zcopy: zcopy,
            _wq: wq,
            _nodes: nodes,
            _vmtp: vmtp,
            _contexts: contexts,
        })
    }
}
