// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! User-space verbs library for srnic, the software RDMA NIC.
//!
//! The object model is libibverbs': a [`Context`] (one open file of
//! `/dev/srnic`, ibverbs' context) owns [`ProtectionDomain`]s, in which
//! [`MemoryRegion`]s are registered and [`QueuePair`]s created; queue pairs
//! complete work into [`CompletionQueue`]s. Connections are made rdma_cm style
//! with a [`Listener`] / [`ConnectRequest`] on the passive side and
//! [`QueuePair::connect`] on the active side.
//!
//! - Children hold their parents alive (`Arc`), so dropping in any order is
//!   fine; kernel objects are destroyed when the last user is gone, and closing
//!   the file frees whatever is left. `Drop` never prints or panics; failed
//!   destroys are counted ([`Context::destroy_errors`]).
//! - Events of every object share the device fd; the library demultiplexes them
//!   per object (see [`context`](Context) and `Documentation/srnic/verbs.rst`).
//! - Work requests are typed ([`SendWr`], [`RecvWr`]); a batch is posted with one
//!   `write()`. Whatever lets the device write into program memory outside a
//!   `&mut` borrow is `unsafe` with a `# Safety` section (see [`mr`](MemoryRegion)).
//!
//! ```no_run
//! use srnic::*;
//! # fn main() -> srnic::Result<()> {
//! let ctx = Context::open()?;
//! let pd = ctx.alloc_pd()?;
//! let cq = ctx.create_cq(64)?;
//! let qp = pd.create_qp(&QpInitAttr::new(&cq, &cq))?;
//! let mut mr = pd.reg_buffer(MrBuffer::new(4096)?, AccessFlags::LOCAL_WRITE)?;
//! mr.as_mut_slice()[..5].copy_from_slice(b"hello");
//! qp.connect("192.168.7.2:18515".parse().unwrap(), &ConnParams::default())?;
//! qp.post_send(&[SendWr::send(1, vec![mr.sge(0..5)?]).signaled()])?;
//! let mut wc = [WorkCompletion::default(); 8];
//! let n = cq.wait(&mut wc, None)?;
//! wc[..n].iter().try_for_each(|c| c.ok().map(|_| ()))?;
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

#[macro_use]
mod names;

mod addr;
mod cm;
mod context;
mod cq;
mod cq_ring;
mod error;
mod event;
mod mr;
mod pd;
mod pod;
mod qp;
mod resources;
mod rmpp;
mod vmtp;
mod wc;

pub use addr::{from_abi as sockaddr_from_abi, to_abi as sockaddr_to_abi, AF_INET, AF_INET6};
pub use cm::{ConnParams, ConnectRequest, Listener};
pub use context::{Capabilities, Context, DeviceAttr, Stats, DEFAULT_PATH};
pub use cq::{CompletionQueue, PROGRESS_CHECK};
pub use cq_ring::NO_RING_ENV;
pub use error::{Error, Result};
pub use event::{Event, EventKind, MpaFlags, ObjectKind, EVENT_RECORD_SIZE};
pub use mr::{split_lengths, AccessFlags, MemoryRegion, MrBuffer, RemoteAddr, RemoteMr, Sge};
pub use pd::ProtectionDomain;
pub use qp::{
    ConnInfo, QpAttr, QpCap, QpInitAttr, QpState, QueuePair, RawWr, RecvWr, SendWr, WrOpcode,
};
pub use resources::Resource;
pub use rmpp::{parse_mac, RmppEndpoint, RmppEndpointAttr, RmppNak};
pub use srnic_uapi as uapi;
pub use vmtp::{VmtpEntity, VmtpEntityAttr, VmtpEntityId, VmtpRole};
pub use wc::{Terminate, WcOpcode, WcStatus, WorkCompletion};
