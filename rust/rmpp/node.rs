// SPDX-License-Identifier: GPL-2.0
//! The Sandia RMPP node table and the registry of bound endpoints.
//!
//! The node table maps a NID to the MAC address and netdev (interface index)
//! it is reached at; it is shared by every file (like the kernel's neighbour
//! table) and changed with `SRNIC_IOCTL_RMPP_SET_NODE` under `CAP_NET_ADMIN`.
//! The registry makes (netdev, EtherType, NID) unique among endpoints: two
//! endpoints with the same address would split one peer's packets between them.
//! Both are used from process context only (ioctls and endpoint work items).

use crate::{
    sys::global::{Global, Installed},
    uapi::SRNIC_RMPP_MAX_NID,
};
use kernel::{
    alloc::KVec,
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// Number of NIDs (0 ..= `SRNIC_RMPP_MAX_NID`).
pub(crate) const NIDS: usize = SRNIC_RMPP_MAX_NID as usize + 1;

/// Where a node is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    /// Its MAC address.
    pub(crate) mac: [u8; 6],
    /// The local netdev it is reached through.
    pub(crate) ifindex: i32,
}

/// An endpoint's address: netdev, EtherType and NID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bound {
    pub(crate) ifindex: i32,
    pub(crate) ethertype: u16,
    pub(crate) nid: u32,
}

struct Inner {
    nodes: KVec<Option<Node>>,
    /// Claimed addresses; freed entries are `None` and reused.
    bound: KVec<Option<Bound>>,
}

/// The node table and the endpoint registry.
#[pin_data]
pub(crate) struct NodeTable {
    #[pin]
    inner: Mutex<Inner>,
}

static TABLE: Global<NodeTable> = Global::new();

/// Owns the node table from module init to module exit.
pub(crate) struct Registration {
    _table: Installed<NodeTable>,
}

impl Registration {
    /// Creates the (empty) table and makes it [`table()`].
    pub(crate) fn new() -> Result<Self> {
        let nodes = KVec::from_elem(None, NIDS, GFP_KERNEL)?;
        let t = Arc::pin_init(
            pin_init!(NodeTable {
                inner <- new_mutex!(Inner { nodes, bound: KVec::new() }, "srnic_rmpp_nodes"),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self {
            _table: TABLE.install(t),
        })
    }
}

/// The node table. Only `None` outside the module's lifetime.
fn table() -> Option<&'static NodeTable> {
    TABLE.get()
}

/// Sets (`Some`) or removes (`None`) the entry of `nid`.
pub(crate) fn set(nid: u32, node: Option<Node>) -> Result {
    let t = table().ok_or(ENODEV)?;
    let mut g = t.inner.lock();
    let e = g.nodes.get_mut(nid as usize).ok_or(EINVAL)?;
    if node.is_none() && e.is_none() {
        return Err(ENOENT);
    }
    *e = node;
    Ok(())
}

/// The entry of `nid`, if any.
pub(crate) fn lookup(nid: u32) -> Option<Node> {
    let t = table()?;
    let g = t.inner.lock();
    g.nodes.get(usize::try_from(nid).ok()?).copied().flatten()
}

/// Claims an endpoint address; `EADDRINUSE` if an endpoint has it.
pub(crate) fn bind(b: Bound) -> Result {
    let t = table().ok_or(ENODEV)?;
    let mut g = t.inner.lock();
    if g.bound.iter().any(|x| *x == Some(b)) {
        return Err(crate::sys::errno::eaddrinuse());
    }
    match g.bound.iter_mut().find(|x| x.is_none()) {
        Some(free) => *free = Some(b),
        None => g.bound.push(Some(b), GFP_KERNEL)?,
    }
    Ok(())
}

/// Releases an address claimed by [`bind`].
pub(crate) fn unbind(b: Bound) {
    if let Some(t) = table() {
        let mut g = t.inner.lock();
        if let Some(x) = g.bound.iter_mut().find(|x| **x == Some(b)) {
            *x = None;
        }
    }
}
