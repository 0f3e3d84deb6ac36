// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! The connection manager (rdma_cm's role): listeners, incoming connection
//! requests to accept or reject, and active connects of a queue pair.
//!
//! Server: [`Listener::new`] → [`Listener::get_request`] (a CONNECT_REQUEST
//! event) → create a QP → [`ConnectRequest::accept`] (or
//! [`ConnectRequest::reject`]) → ESTABLISHED on the QP.
//! Client: create a QP → [`QueuePair::connect`] → ESTABLISHED, REJECTED or
//! CONNECT_ERROR on the QP.
//!
//! ```no_run
//! use srnic::*;
//!
//! /// The client of `Documentation/srnic/verbs.rst`: receives the server's
//! /// region, RDMA WRITEs into it and SENDs a message.
//! fn client(addr: std::net::SocketAddr) -> srnic::Result<()> {
//!     let ctx = Context::open()?;
//!     let pd = ctx.alloc_pd()?;
//!     let cq = ctx.create_cq(64)?;
//!     let qp = pd.create_qp(&QpInitAttr::new(&cq, &cq))?;
//!     let mut buf = pd.reg_buffer(MrBuffer::new(4096)?, AccessFlags::LOCAL_WRITE)?;
//!     let inbox = pd.reg_buffer(MrBuffer::new(64)?, AccessFlags::LOCAL_WRITE)?;
//!
//!     // SAFETY: `inbox` is read only after this receive completes.
//!     qp.post_recv(&[unsafe { RecvWr::new(1, vec![inbox.sge(..)?]) }])?;
//!     qp.connect(addr, &ConnParams::default())?;
//!
//!     let mut wc = [WorkCompletion::default(); 4];
//!     let n = cq.wait(&mut wc, None)?;
//!     wc[..n].iter().try_for_each(|c| c.ok().map(|_| ()))?;
//!     let peer = RemoteMr::from_bytes(inbox.as_slice()).ok_or(Error::InvalidArgument("bad peer"))?;
//!
//!     buf.as_mut_slice().fill(0xab);
//!     qp.post_send(&[
//!         SendWr::rdma_write(2, vec![buf.sge(..)?], peer.at(0)).signaled(),
//!         SendWr::send(3, vec![buf.sge(0..16)?]).signaled(),
//!     ])?;
//!     let mut done = 0;
//!     while done < 2 {
//!         let n = cq.wait(&mut wc, None)?;
//!         for c in &wc[..n] {
//!             c.ok()?;
//!         }
//!         done += n;
//!     }
//!     qp.disconnect(false)?;
//!     qp.wait_disconnected(None)?;
//!     Ok(())
//! }
//! ```

use crate::addr;
use crate::context::{Context, ContextInner};
use crate::error::{Error, Result};
use crate::event::{EventKind, MpaFlags, ObjectKind};
use crate::qp::{ConnInfo, QueuePair};
use srnic_uapi as abi;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Connection parameters (rdma_cm's `rdma_conn_param` plus the MPA options).
///
/// For [`QueuePair::connect`] every field is used; for [`ConnectRequest::accept`]
/// the private data and IRD/ORD (the MPA options were fixed at listen time); for
/// [`Listener::new`] only the MPA options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnParams {
    /// Private data for the MPA request or reply (at most 252 bytes).
    pub private_data: Vec<u8>,
    /// Inbound RDMA READs this side accepts in flight (clamped to the device's max_ird).
    pub ird: u32,
    /// Outbound RDMA READs this side issues in flight (clamped to the device's max_ord).
    pub ord: u32,
    /// Ask for MPA CRC32c.
    pub crc: bool,
    /// Ask the peer to insert MPA markers.
    pub markers: bool,
    /// Speak MPA revision 1 only.
    pub rev1: bool,
    /// Peer-to-peer mode (an RTR message after the MPA exchange).
    pub p2p: bool,
    /// The RTR is a zero-length READ (else a zero-length WRITE).
    pub rtr_read: bool,
}

impl Default for ConnParams {
    /// No private data, IRD = ORD = 4, no MPA options.
    fn default() -> Self {
        Self {
            private_data: Vec::new(),
            ird: 4,
            ord: 4,
            crc: false,
            markers: false,
            rev1: false,
            p2p: false,
            rtr_read: false,
        }
    }
}

impl ConnParams {
    /// The `SRNIC_MPA_*` request bits.
    pub fn mpa_flags(&self) -> MpaFlags {
        let mut f = 0;
        for (on, bit) in [
            (self.crc, abi::SRNIC_MPA_CRC),
            (self.markers, abi::SRNIC_MPA_MARKERS),
            (self.rev1, abi::SRNIC_MPA_REV1),
            (self.p2p, abi::SRNIC_MPA_P2P),
            (self.rtr_read, abi::SRNIC_MPA_RTR_READ),
        ] {
            if on {
                f |= bit;
            }
        }
        MpaFlags(f)
    }

    fn check_private_data(&self) -> Result<u32> {
        check_private_data(&self.private_data)
    }

    fn depths(&self, ctx: &ContextInner) -> (u32, u32) {
        let a = &ctx.device_attr().raw;
        (self.ird.min(a.max_ird), self.ord.min(a.max_ord))
    }
}

fn check_private_data(pd: &[u8]) -> Result<u32> {
    if pd.len() > abi::SRNIC_MAX_PRIVATE_DATA as usize {
        return Err(Error::InvalidArgument(
            "private data longer than SRNIC_MAX_PRIVATE_DATA (252 bytes)",
        ));
    }
    Ok(pd.len() as u32)
}

/// A listening endpoint. Its connection requests arrive as events.
#[derive(Debug)]
pub struct Listener {
    ctx: Arc<ContextInner>,
    handle: u32,
    addr: SocketAddr,
}

impl Listener {
    /// Listens on `addr` (port 0: any free port, see [`Listener::local_addr`]),
    /// asking connecting peers for the MPA options in `params`.
    pub fn new(ctx: &Context, addr: SocketAddr, backlog: u32, params: &ConnParams) -> Result<Self> {
        let mut l = abi::SrnicListen {
            size: std::mem::size_of::<abi::SrnicListen>() as u32,
            backlog,
            mpa_flags: params.mpa_flags().0,
            addr: addr::to_abi(&addr),
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { ctx.inner.cmd(abi::SRNIC_IOCTL_LISTEN, &mut l) }?;
        let mut bound = addr;
        bound.set_port(l.addr.port);
        Ok(Self {
            ctx: ctx.inner.clone(),
            handle: l.listener_handle,
            addr: bound,
        })
    }

    /// The kernel handle.
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The address with the port actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits up to `timeout` for the next connection request; `Ok(None)` on timeout.
    pub fn get_request(&self, timeout: Option<Duration>) -> Result<Option<ConnectRequest>> {
        let h = self.handle;
        let Some(e) = self.ctx.wait_event(
            |e| e.target() == (ObjectKind::Listener, h) && e.kind == EventKind::ConnectRequest,
            timeout,
        )?
        else {
            return Ok(None);
        };
        Ok(Some(ConnectRequest {
            ctx: self.ctx.clone(),
            conn_id: e.conn_id,
            listener: h,
            remote: e.remote,
            local: e.local,
            private_data: e.private_data,
            ird: e.ird,
            ord: e.ord,
            mpa_flags: e.mpa_flags,
            answered: false,
        }))
    }

    /// Waits for the next connection request.
    pub fn accept(&self) -> Result<ConnectRequest> {
        self.get_request(None)?.ok_or(Error::TimedOut)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.ctx
            .destroy(abi::SRNIC_IOCTL_DESTROY_LISTENER, self.handle);
        self.ctx.purge(ObjectKind::Listener, self.handle);
    }
}

/// An incoming connection request. Dropping it unanswered rejects it.
#[derive(Debug)]
pub struct ConnectRequest {
    ctx: Arc<ContextInner>,
    conn_id: u32,
    listener: u32,
    remote: Option<SocketAddr>,
    local: Option<SocketAddr>,
    private_data: Vec<u8>,
    ird: u32,
    ord: u32,
    mpa_flags: MpaFlags,
    answered: bool,
}

impl ConnectRequest {
    /// The module's id of this request.
    pub fn conn_id(&self) -> u32 {
        self.conn_id
    }

    /// The listener handle it arrived on.
    pub fn listener_handle(&self) -> u32 {
        self.listener
    }

    /// The peer's address.
    pub fn remote_addr(&self) -> Option<SocketAddr> {
        self.remote
    }

    /// The local address it arrived on.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local
    }

    /// The peer's private data.
    pub fn private_data(&self) -> &[u8] {
        &self.private_data
    }

    /// The peer's inbound READ depth.
    pub fn ird(&self) -> u32 {
        self.ird
    }

    /// The peer's outbound READ depth.
    pub fn ord(&self) -> u32 {
        self.ord
    }

    /// The MPA options the peer asked for.
    pub fn mpa_flags(&self) -> MpaFlags {
        self.mpa_flags
    }

    /// Accepts the request onto `qp` (state INIT) and returns at once; the
    /// outcome arrives as an event on the QP ([`QueuePair::wait_established`]).
    pub fn start_accept(mut self, qp: &QueuePair, params: &ConnParams) -> Result<()> {
        let len = params.check_private_data()?;
        let (ird, ord) = params.depths(&self.ctx);
        let mut a = abi::SrnicAccept {
            size: std::mem::size_of::<abi::SrnicAccept>() as u32,
            conn_id: self.conn_id,
            qp_handle: qp.handle,
            ird,
            ord,
            private_data_len: len,
            private_data: params.private_data.as_ptr() as u64,
            ..Default::default()
        };
        // The request is answered whether or not the module takes the accept:
        // after a failure it is rejected by nobody (the module owns it).
        self.answered = true;
        // SAFETY: private_data points at private_data_len readable bytes.
        unsafe { self.ctx.cmd(abi::SRNIC_IOCTL_ACCEPT, &mut a) }?;
        Ok(())
    }

    /// Accepts the request onto `qp` and waits until the connection is
    /// established (or fails).
    pub fn accept(self, qp: &QueuePair, params: &ConnParams) -> Result<ConnInfo> {
        self.start_accept(qp, params)?;
        qp.wait_established(None)
    }

    /// Rejects the request with an MPA reply carrying the reject bit and
    /// `private_data`.
    pub fn reject(mut self, private_data: &[u8]) -> Result<()> {
        self.answered = true;
        self.do_reject(private_data)
    }

    fn do_reject(&self, private_data: &[u8]) -> Result<()> {
        let len = check_private_data(private_data)?;
        let mut r = abi::SrnicReject {
            size: std::mem::size_of::<abi::SrnicReject>() as u32,
            conn_id: self.conn_id,
            private_data_len: len,
            private_data: private_data.as_ptr() as u64,
            ..Default::default()
        };
        // SAFETY: private_data points at private_data_len readable bytes.
        unsafe { self.ctx.cmd(abi::SRNIC_IOCTL_REJECT, &mut r) }?;
        Ok(())
    }
}

impl Drop for ConnectRequest {
    fn drop(&mut self) {
        if !self.answered && self.do_reject(&[]).is_err() {
            // Nothing to report from Drop; the module drops the request when the
            // listener or the file goes away.
        }
    }
}

impl QueuePair {
    /// Starts connecting this QP (state INIT) to `addr` and returns at once; the
    /// outcome arrives as an event ([`QueuePair::wait_established`]).
    pub fn start_connect(&self, addr: SocketAddr, params: &ConnParams) -> Result<()> {
        let len = params.check_private_data()?;
        let (ird, ord) = params.depths(&self.ctx);
        let mut c = abi::SrnicConnect {
            size: std::mem::size_of::<abi::SrnicConnect>() as u32,
            qp_handle: self.handle,
            ird,
            ord,
            mpa_flags: params.mpa_flags().0,
            private_data_len: len,
            private_data: params.private_data.as_ptr() as u64,
            addr: addr::to_abi(&addr),
            ..Default::default()
        };
        // SAFETY: private_data points at private_data_len readable bytes.
        unsafe { self.ctx.cmd(abi::SRNIC_IOCTL_CONNECT, &mut c) }?;
        Ok(())
    }

    /// Connects this QP to `addr` and waits for the outcome: the connection, or
    /// [`Error::Rejected`] / [`Error::ConnectFailed`].
    pub fn connect(&self, addr: SocketAddr, params: &ConnParams) -> Result<ConnInfo> {
        self.start_connect(addr, params)?;
        self.wait_established(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpa_request_bits() {
        let p = ConnParams {
            crc: true,
            markers: true,
            rev1: true,
            p2p: true,
            rtr_read: true,
            ..Default::default()
        };
        assert_eq!(p.mpa_flags().0, abi::SRNIC_MPA_ALL);
        assert_eq!(ConnParams::default().mpa_flags().0, 0);
        let p = ConnParams {
            crc: true,
            ..Default::default()
        };
        assert_eq!(p.mpa_flags(), MpaFlags::CRC);
    }

    #[test]
    fn private_data_limit() {
        assert_eq!(check_private_data(&[0; 252]).unwrap(), 252);
        assert!(matches!(
            check_private_data(&[0; 253]),
            Err(Error::InvalidArgument(_))
        ));
    }
}
