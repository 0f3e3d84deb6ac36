// SPDX-License-Identifier: GPL-2.0
//! srnic: a software RDMA NIC.
//!
//! The module registers the misc device `/dev/srnic`. Each open file is one verbs
//! context ([`context::Context`]) that owns every object created through it;
//! commands arrive as ioctls ([`ioctl`]). Everything that touches `bindings::`
//! lives in the small abstraction modules under [`sys`].

use kernel::{c_str, prelude::*};

mod cm;
mod context;
mod cq;
mod events;
mod ioctl;
mod limits;
mod mr;
mod pd;
mod post;
mod qp;
mod rmpp_ep;
mod rmpp_node;
mod stats;
pub mod sys;
mod table;

/// The protocol cores, shared with the host as the `srnic-proto` crate (see
/// `rust/proto/src/lib.rs`): `no_std`, allocation-free, sans-IO state machines.
#[path = "proto/src"]
pub mod proto {
    pub mod crc;
    pub mod ddp;
    pub mod mpa;
    pub mod rdmap;
    pub mod rmpp;
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
    _misc: sys::miscdev::Registration<context::Context>,
    _wq: sys::wq::WorkQueue,
    _nodes: rmpp_node::Registration,
}

impl kernel::Module for SrnicModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Mode 0666: opening the device grants nothing by itself. Every resource a
        // context takes is charged to its process (pinned pages to RLIMIT_MEMLOCK)
        // and bounded by the per-context limits in `limits`; see
        // Documentation/srnic/index.rst.
        let nodes = rmpp_node::Registration::new()?;
        let wq = sys::wq::WorkQueue::create()?;
        let misc = sys::miscdev::Registration::<context::Context>::register(c_str!("srnic"), 0o666)?;
        limits::announce();
        Ok(Self {
            _misc: misc,
            _wq: wq,
            _nodes: nodes,
        })
    }
}
