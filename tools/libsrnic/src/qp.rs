// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Queue pairs (ibverbs' `ibv_qp`, reliable connected) and their typed work
//! requests. A batch of work requests becomes one `write()` of records: each a
//! `struct srnic_post_wr` followed by its `struct srnic_sge`s.

use crate::context::ContextInner;
use crate::cq::{CompletionQueue, CqInner};
use crate::error::{Error, Result};
use crate::event::{Event, EventKind, MpaFlags, ObjectKind};
use crate::mr::{RemoteAddr, Sge};
use crate::pd::{PdInner, ProtectionDomain};
use crate::pod;
use srnic_uapi as abi;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Queue capacities (in/out: the module may round them up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpCap {
    /// Send queue depth.
    pub max_send_wr: u32,
    /// Receive queue depth.
    pub max_recv_wr: u32,
    /// SGEs per send work request.
    pub max_send_sge: u32,
    /// SGEs per receive work request.
    pub max_recv_sge: u32,
    /// Inline bytes per send work request.
    pub max_inline_data: u32,
}

impl Default for QpCap {
    fn default() -> Self {
        Self {
            max_send_wr: 64,
            max_recv_wr: 64,
            max_send_sge: 4,
            max_recv_sge: 4,
            max_inline_data: 64,
        }
    }
}

/// What a queue pair is created with (ibverbs' `ibv_qp_init_attr`).
#[derive(Clone, Copy, Debug)]
pub struct QpInitAttr<'a> {
    /// Where send completions go.
    pub send_cq: &'a CompletionQueue,
    /// Where receive completions go.
    pub recv_cq: &'a CompletionQueue,
    /// Capacities.
    pub cap: QpCap,
    /// Every send is signalled, whatever its flags say.
    pub sq_sig_all: bool,
}

impl<'a> QpInitAttr<'a> {
    /// Default capacities, sends signalled only on request.
    pub fn new(send_cq: &'a CompletionQueue, recv_cq: &'a CompletionQueue) -> Self {
        Self {
            send_cq,
            recv_cq,
            cap: QpCap::default(),
            sq_sig_all: false,
        }
    }
}

abi_enum! {
    /// Queue pair states (`SRNIC_QPS_*`).
    pub enum QpState: "SRNIC_QPS_", unknown "state {}" {
        /// Created, not connected.
        Init = SRNIC_QPS_INIT,
        /// Connection being established.
        Connecting = SRNIC_QPS_CONNECTING,
        /// Connected: ready to send.
        Rts = SRNIC_QPS_RTS,
        /// Being closed.
        Closing = SRNIC_QPS_CLOSING,
        /// Failed or closed; outstanding requests are flushed.
        Error = SRNIC_QPS_ERROR,
    }
}

/// What `SRNIC_IOCTL_QUERY_QP` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpAttr {
    /// The state.
    pub state: QpState,
    /// MPA options as negotiated.
    pub mpa_flags: MpaFlags,
    /// Inbound READ depth.
    pub ird: u32,
    /// Outbound READ depth.
    pub ord: u32,
    /// The TERMINATE word that ended the QP, or 0.
    pub term: u32,
    /// The local address once connected.
    pub local: Option<SocketAddr>,
    /// The peer's address once connected.
    pub remote: Option<SocketAddr>,
    /// Payload bytes this QP has sent so far.
    pub tx_bytes: u64,
    /// Payload bytes this QP has received and placed so far.
    pub rx_bytes: u64,
}

/// Send-side operations (`SRNIC_WR_*` but RECV; ibverbs' `ibv_wr_opcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrOpcode {
    /// SEND.
    Send,
    /// SEND with Invalidate of a peer STag.
    SendWithInv,
    /// SEND with Solicited Event.
    SendWithSe,
    /// SEND with Solicited Event and Invalidate.
    SendWithSeInv,
    /// RDMA WRITE.
    RdmaWrite,
    /// RDMA READ.
    RdmaRead,
}

impl WrOpcode {
    /// The ABI value.
    pub fn to_abi(self) -> u16 {
        (match self {
            Self::Send => abi::SRNIC_WR_SEND,
            Self::SendWithInv => abi::SRNIC_WR_SEND_WITH_INV,
            Self::SendWithSe => abi::SRNIC_WR_SEND_WITH_SE,
            Self::SendWithSeInv => abi::SRNIC_WR_SEND_WITH_SE_INV,
            Self::RdmaWrite => abi::SRNIC_WR_RDMA_WRITE,
            Self::RdmaRead => abi::SRNIC_WR_RDMA_READ,
        }) as u16
    }
}

/// A send-queue work request (ibverbs' `ibv_send_wr`), built with one of the
/// constructors and the modifiers [`SendWr::signaled`], [`SendWr::inline`],
/// [`SendWr::fence`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendWr<'a> {
    /// The id reported in the completion.
    pub wr_id: u64,
    /// The operation.
    pub opcode: WrOpcode,
    /// `SRNIC_SEND_*`.
    pub flags: u32,
    /// The local memory (source; destination for RDMA READ).
    pub sges: Vec<Sge<'a>>,
    /// SEND_WITH_INV / SEND_WITH_SE_INV: the peer STag to invalidate.
    pub invalidate_rkey: u32,
    /// RDMA WRITE / READ: where in the peer's memory.
    pub remote: RemoteAddr,
}

impl<'a> SendWr<'a> {
    fn new(wr_id: u64, opcode: WrOpcode, sges: Vec<Sge<'a>>) -> Self {
        Self {
            wr_id,
            opcode,
            flags: 0,
            sges,
            invalidate_rkey: 0,
            remote: RemoteAddr::default(),
        }
    }

    /// A SEND of the bytes the SGEs describe (possibly none).
    pub fn send(wr_id: u64, sges: impl Into<Vec<Sge<'a>>>) -> Self {
        Self::new(wr_id, WrOpcode::Send, sges.into())
    }

    /// A SEND that invalidates the peer's STag `rkey`.
    pub fn send_with_inv(wr_id: u64, sges: impl Into<Vec<Sge<'a>>>, rkey: u32) -> Self {
        let mut w = Self::new(wr_id, WrOpcode::SendWithInv, sges.into());
        w.invalidate_rkey = rkey;
        w
    }

    /// A SEND with Solicited Event.
    pub fn send_with_se(wr_id: u64, sges: impl Into<Vec<Sge<'a>>>) -> Self {
        Self::new(wr_id, WrOpcode::SendWithSe, sges.into())
    }

    /// A SEND with Solicited Event that invalidates the peer's STag `rkey`.
    pub fn send_with_se_inv(wr_id: u64, sges: impl Into<Vec<Sge<'a>>>, rkey: u32) -> Self {
        let mut w = Self::new(wr_id, WrOpcode::SendWithSeInv, sges.into());
        w.invalidate_rkey = rkey;
        w
    }

    /// An RDMA WRITE of the SGEs' bytes to `remote`.
    pub fn rdma_write(wr_id: u64, sges: impl Into<Vec<Sge<'a>>>, remote: RemoteAddr) -> Self {
        let mut w = Self::new(wr_id, WrOpcode::RdmaWrite, sges.into());
        w.remote = remote;
        w
    }

    /// An RDMA READ from `remote` into the SGEs.
    ///
    /// # Safety
    ///
    /// The device writes the memory the SGEs describe at some point until the
    /// request completes (or is flushed, or the QP is destroyed). Until then the
    /// program must neither read nor write those bytes, e.g. through
    /// [`crate::MemoryRegion::as_slice`], nor drop the region.
    pub unsafe fn rdma_read(wr_id: u64, sges: impl Into<Vec<Sge<'a>>>, remote: RemoteAddr) -> Self {
        let mut w = Self::new(wr_id, WrOpcode::RdmaRead, sges.into());
        w.remote = remote;
        w
    }

    /// Asks for a completion even if the QP signals only on request.
    pub fn signaled(mut self) -> Self {
        self.flags |= abi::SRNIC_SEND_SIGNALED;
        self
    }

    /// Copies the data at post time (the keys are ignored; the memory may be
    /// reused as soon as the post returns).
    pub fn inline(mut self) -> Self {
        self.flags |= abi::SRNIC_SEND_INLINE;
        self
    }

    /// Waits for earlier RDMA READs to complete first.
    pub fn fence(mut self) -> Self {
        self.flags |= abi::SRNIC_SEND_FENCE;
        self
    }
}

/// A receive-queue work request (ibverbs' `ibv_recv_wr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecvWr<'a> {
    /// The id reported in the completion.
    pub wr_id: u64,
    /// Where an incoming SEND is placed.
    pub sges: Vec<Sge<'a>>,
}

impl<'a> RecvWr<'a> {
    /// A receive into the SGEs.
    ///
    /// # Safety
    ///
    /// The device writes the memory the SGEs describe when a message arrives,
    /// at any time until the request completes (or is flushed, or the QP is
    /// destroyed). Until then the program must neither read nor write it, nor
    /// drop the region it belongs to.
    pub unsafe fn new(wr_id: u64, sges: impl Into<Vec<Sge<'a>>>) -> Self {
        Self {
            wr_id,
            sges: sges.into(),
        }
    }
}

/// A work request as the module reads it, for [`QueuePair::post_raw`]: a
/// `struct srnic_post_wr` (whose `qp_handle` and `num_sge` the post fills in)
/// and its `struct srnic_sge`s. For bindings whose callers hand over work
/// requests in this form already (the C API): posting them needs no
/// [`SendWr`] or [`RecvWr`], and no allocation.
#[derive(Clone, Copy, Debug)]
pub struct RawWr<'s> {
    /// The record's header.
    pub header: abi::SrnicPostWr,
    /// Its SGEs.
    pub sges: &'s [abi::SrnicSge],
}

/// Bytes of post records a post encodes on the stack (nine requests of one
/// SGE); a larger batch takes one allocation.
const STACK_RECORDS: usize = 512;
const WR_LEN: usize = std::mem::size_of::<abi::SrnicPostWr>();
const SGE_LEN: usize = std::mem::size_of::<abi::SrnicSge>();
/// Where a record's `num_sge` lies.
const NUM_SGE_AT: usize = std::mem::offset_of!(abi::SrnicPostWr, num_sge);

/// One work request as a post record.
trait Record {
    /// The header; [`encode`] sets its `qp_handle` and `num_sge`.
    fn header(&self) -> abi::SrnicPostWr;
    fn num_sge(&self) -> usize;
    /// Writes the SGEs into `out`, `num_sge() * SGE_LEN` bytes.
    fn put_sges(&self, out: &mut [u8]);
}

fn put_sges<'s>(out: &mut [u8], sges: impl Iterator<Item = &'s Sge<'s>>) {
    for (o, s) in out.chunks_exact_mut(SGE_LEN).zip(sges) {
        o.copy_from_slice(pod::as_bytes(&s.to_abi()));
    }
}

impl Record for &SendWr<'_> {
    fn header(&self) -> abi::SrnicPostWr {
        abi::SrnicPostWr {
            wr_id: self.wr_id,
            opcode: self.opcode.to_abi(),
            flags: self.flags,
            invalidate_rkey: self.invalidate_rkey,
            remote_addr: self.remote.addr,
            rkey: self.remote.rkey,
            ..Default::default()
        }
    }

    fn num_sge(&self) -> usize {
        self.sges.len()
    }

    fn put_sges(&self, out: &mut [u8]) {
        put_sges(out, self.sges.iter());
    }
}

impl Record for &RecvWr<'_> {
    fn header(&self) -> abi::SrnicPostWr {
        abi::SrnicPostWr {
            wr_id: self.wr_id,
            opcode: abi::SRNIC_WR_RECV as u16,
            ..Default::default()
        }
    }

    fn num_sge(&self) -> usize {
        self.sges.len()
    }

    fn put_sges(&self, out: &mut [u8]) {
        put_sges(out, self.sges.iter());
    }
}

impl Record for RawWr<'_> {
    fn header(&self) -> abi::SrnicPostWr {
        self.header
    }

    fn num_sge(&self) -> usize {
        self.sges.len()
    }

    fn put_sges(&self, out: &mut [u8]) {
        for (o, s) in out.chunks_exact_mut(SGE_LEN).zip(self.sges) {
            o.copy_from_slice(pod::as_bytes(s));
        }
    }
}

/// The bytes of the records of `wrs`; a request with more SGEs than a record
/// can count is an error.
fn batch_len<R: Record>(wrs: impl Iterator<Item = R>) -> Result<usize> {
    wrs.map(|w| {
        let n = w.num_sge();
        u16::try_from(n).map_err(|_| Error::InvalidArgument("more than 65535 SGEs"))?;
        Ok(WR_LEN + n * SGE_LEN)
    })
    .sum()
}

/// Writes the records of `wrs` for QP `qp` into `out`, which [`batch_len`]
/// sized. An error if they do not fill it exactly: the requests changed
/// between the two walks (a caller's iterator may).
fn encode<R: Record>(qp: u32, wrs: impl Iterator<Item = R>, out: &mut [u8]) -> Result<()> {
    let changed = || Error::InvalidArgument("the work requests changed while being posted");
    let mut rest = out;
    for w in wrs {
        let n = w.num_sge();
        let mut hdr = w.header();
        hdr.qp_handle = qp;
        hdr.num_sge = u16::try_from(n).map_err(|_| changed())?;
        let (rec, tail) = std::mem::take(&mut rest)
            .split_at_mut_checked(WR_LEN + n * SGE_LEN)
            .ok_or_else(changed)?;
        let (h, sges) = rec.split_at_mut(WR_LEN);
        h.copy_from_slice(pod::as_bytes(&hdr));
        w.put_sges(sges);
        rest = tail;
    }
    if rest.is_empty() {
        Ok(())
    } else {
        Err(changed())
    }
}

/// The length of the record that starts at `at` in `bytes` (records
/// [`encode`] wrote).
fn record_len(bytes: &[u8], at: usize) -> usize {
    let nsge = bytes
        .get(at + NUM_SGE_AT..at + NUM_SGE_AT + 2)
        .map_or(0, |b| u16::from_ne_bytes([b[0], b[1]]));
    WR_LEN + usize::from(nsge) * SGE_LEN
}

/// Posts the records in `bytes` with as few `write()`s as the module allows:
/// after a short count, the rest is written again, so that the failing
/// record's errno is learnt (it is then the first record of a write).
fn post_bytes(bytes: &[u8], mut write: impl FnMut(&[u8]) -> std::io::Result<usize>) -> Result<()> {
    // Bytes the module took, and the records in them.
    let (mut off, mut posted) = (0, 0);
    while off < bytes.len() {
        match write(&bytes[off..]) {
            Ok(0) => {
                return Err(Error::Protocol(
                    "write() of work requests returned 0".into(),
                ))
            }
            Ok(n) if n > bytes.len() - off => {
                return Err(Error::Protocol(format!(
                    "write() of {} bytes of work requests returned {n}",
                    bytes.len() - off
                )))
            }
            Ok(n) => {
                let end = off + n;
                while off < end {
                    off += record_len(bytes, off);
                    posted += 1;
                }
                if off != end {
                    return Err(Error::Protocol(format!(
                        "write() stopped inside a work request record (at byte {end})"
                    )));
                }
            }
            Err(source) => return Err(Error::Post { posted, source }),
        }
    }
    Ok(())
}

/// A reliable connected queue pair. It holds its PD and CQs alive.
#[derive(Debug)]
pub struct QueuePair {
    pub(crate) ctx: Arc<ContextInner>,
    _pd: Arc<PdInner>,
    _send_cq: Arc<CqInner>,
    _recv_cq: Arc<CqInner>,
    pub(crate) handle: u32,
    cap: QpCap,
}

/// What an established connection looks like (from the ESTABLISHED event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnInfo {
    /// Inbound READ depth as negotiated.
    pub ird: u32,
    /// Outbound READ depth as negotiated.
    pub ord: u32,
    /// MPA options as negotiated (per direction).
    pub mpa_flags: MpaFlags,
    /// Local address.
    pub local: Option<SocketAddr>,
    /// Peer address.
    pub remote: Option<SocketAddr>,
    /// The peer's private data (its MPA request or reply).
    pub private_data: Vec<u8>,
}

impl ConnInfo {
    pub(crate) fn from_event(e: Event) -> Self {
        Self {
            ird: e.ird,
            ord: e.ord,
            mpa_flags: e.mpa_flags,
            local: e.local,
            remote: e.remote,
            private_data: e.private_data,
        }
    }
}

impl ProtectionDomain {
    /// Creates a reliable connected queue pair in this PD.
    pub fn create_qp(&self, attr: &QpInitAttr<'_>) -> Result<QueuePair> {
        let mut c = abi::SrnicCreateQp {
            size: std::mem::size_of::<abi::SrnicCreateQp>() as u32,
            pd_handle: self.inner.handle,
            send_cq: attr.send_cq.inner.handle,
            recv_cq: attr.recv_cq.inner.handle,
            max_send_wr: attr.cap.max_send_wr,
            max_recv_wr: attr.cap.max_recv_wr,
            max_send_sge: attr.cap.max_send_sge,
            max_recv_sge: attr.cap.max_recv_sge,
            max_inline_data: attr.cap.max_inline_data,
            sq_sig_all: u32::from(attr.sq_sig_all),
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_CREATE_QP, &mut c) }?;
        Ok(QueuePair {
            ctx: self.inner.ctx.clone(),
            _pd: self.inner.clone(),
            _send_cq: attr.send_cq.inner.clone(),
            _recv_cq: attr.recv_cq.inner.clone(),
            handle: c.qp_handle,
            cap: QpCap {
                max_send_wr: c.max_send_wr,
                max_recv_wr: c.max_recv_wr,
                max_send_sge: c.max_send_sge,
                max_recv_sge: c.max_recv_sge,
                max_inline_data: c.max_inline_data,
            },
        })
    }
}

impl QueuePair {
    /// The kernel handle (also in every completion of this QP).
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The capacities as the module set them.
    pub fn cap(&self) -> QpCap {
        self.cap
    }

    /// Posts send-queue work requests with one `write()`. On
    /// [`Error::Post`] the first `posted` requests are on the queue.
    pub fn post_send(&self, wrs: &[SendWr<'_>]) -> Result<()> {
        self.post_records(wrs.iter())
    }

    /// Posts receive work requests with one `write()`.
    pub fn post_recv(&self, wrs: &[RecvWr<'_>]) -> Result<()> {
        self.post_records(wrs.iter())
    }

    /// Posts work requests of both queues, in the module's own form, with
    /// one `write()` (a receive is one whose opcode is `SRNIC_WR_RECV`); as
    /// [`Self::post_send`] otherwise. The module checks every field.
    ///
    /// # Safety
    ///
    /// The memory the SGEs describe obeys what [`RecvWr::new`] says for a
    /// receive and [`SendWr::rdma_read`] for an RDMA READ.
    pub unsafe fn post_raw<'s>(&self, wrs: impl Iterator<Item = RawWr<'s>> + Clone) -> Result<()> {
        self.post_records(wrs)
    }

    /// Encodes `wrs` (on the stack unless they are many) and posts them.
    fn post_records<R: Record>(&self, wrs: impl Iterator<Item = R> + Clone) -> Result<()> {
        let len = batch_len(wrs.clone())?;
        let mut stack = [0u8; STACK_RECORDS];
        let mut heap = Vec::new();
        let buf = match stack.get_mut(..len) {
            Some(b) => b,
            None => {
                heap.resize(len, 0);
                &mut heap[..]
            }
        };
        encode(self.handle, wrs, buf)?;
        post_bytes(buf, |b| self.ctx.write_records(b))
    }

    /// Queries state, negotiated options and addresses.
    pub fn query(&self) -> Result<QpAttr> {
        let mut q = abi::SrnicQueryQp {
            size: std::mem::size_of::<abi::SrnicQueryQp>() as u32,
            qp_handle: self.handle,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { self.ctx.cmd(abi::SRNIC_IOCTL_QUERY_QP, &mut q) }?;
        Ok(QpAttr {
            state: q.state.into(),
            mpa_flags: MpaFlags(q.mpa_flags),
            ird: q.ird,
            ord: q.ord,
            term: q.term,
            local: crate::addr::from_abi(&q.local),
            remote: crate::addr::from_abi(&q.remote),
            tx_bytes: q.tx_bytes,
            rx_bytes: q.rx_bytes,
        })
    }

    /// A measure of this QP's progress: the payload bytes it has sent and
    /// received so far (see [`CompletionQueue::wait_progress`]).
    pub fn progress(&self) -> Result<u64> {
        self.query().map(|a| a.tx_bytes.wrapping_add(a.rx_bytes))
    }

    /// Closes the connection: gracefully, or with `abort` by resetting it.
    /// A DISCONNECTED event follows ([`Self::wait_disconnected`]); outstanding
    /// requests complete with [`crate::WcStatus::WrFlushErr`].
    pub fn disconnect(&self, abort: bool) -> Result<()> {
        let mut d = abi::SrnicDisconnect {
            size: std::mem::size_of::<abi::SrnicDisconnect>() as u32,
            qp_handle: self.handle,
            flags: if abort {
                abi::SRNIC_DISCONNECT_ABORT
            } else {
                0
            },
            reserved0: 0,
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { self.ctx.cmd(abi::SRNIC_IOCTL_DISCONNECT, &mut d) }?;
        Ok(())
    }

    /// Waits up to `timeout` for the next event of this QP (ESTABLISHED,
    /// REJECTED, DISCONNECTED, CONNECT_ERROR, QP_ERROR); `Ok(None)` on timeout.
    pub fn wait_event(&self, timeout: Option<Duration>) -> Result<Option<Event>> {
        let h = self.handle;
        self.ctx
            .wait_event(|e| e.target() == (ObjectKind::Qp, h), timeout)
    }

    /// Waits for the outcome of a connect or accept: the connection on
    /// ESTABLISHED, else [`Error::Rejected`], [`Error::ConnectFailed`],
    /// [`Error::QpFailed`] or [`Error::TimedOut`].
    pub fn wait_established(&self, timeout: Option<Duration>) -> Result<ConnInfo> {
        loop {
            let Some(e) = self.wait_event(timeout)? else {
                return Err(Error::TimedOut);
            };
            return match e.kind {
                EventKind::Established => Ok(ConnInfo::from_event(e)),
                EventKind::Rejected => Err(Error::Rejected {
                    private_data: e.private_data,
                }),
                EventKind::ConnectError => Err(Error::ConnectFailed {
                    source: std::io::Error::from_raw_os_error(if e.status < 0 {
                        -e.status
                    } else {
                        libc::ECONNABORTED
                    }),
                }),
                EventKind::Disconnected => Err(Error::QpFailed {
                    qp: self.handle,
                    what: "disconnected",
                    term: e.term,
                }),
                EventKind::QpError => Err(Error::QpFailed {
                    qp: self.handle,
                    what: "error",
                    term: e.term,
                }),
                _ => continue,
            };
        }
    }

    /// Waits for DISCONNECTED (after [`Self::disconnect`] or the peer's close);
    /// other events of the QP are dropped. `Ok(false)` on timeout.
    pub fn wait_disconnected(&self, timeout: Option<Duration>) -> Result<bool> {
        let h = self.handle;
        let e = self.ctx.wait_event(
            |e| e.target() == (ObjectKind::Qp, h) && e.kind == EventKind::Disconnected,
            timeout,
        )?;
        self.ctx.purge(ObjectKind::Qp, h);
        Ok(e.is_some())
    }
}

impl Drop for QueuePair {
    fn drop(&mut self) {
        self.ctx.destroy(abi::SRNIC_IOCTL_DESTROY_QP, self.handle);
        self.ctx.purge(ObjectKind::Qp, self.handle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sge(addr: u64, length: u32, lkey: u32) -> Sge<'static> {
        // SAFETY: only encoded, never posted.
        unsafe { Sge::from_raw(addr, length, lkey) }
    }

    /// The C layout of `struct srnic_post_wr`, written out by hand.
    #[allow(clippy::too_many_arguments)]
    fn c_record(
        wr_id: u64,
        qp: u32,
        op: u16,
        nsge: u16,
        flags: u32,
        inv: u32,
        raddr: u64,
        rkey: u32,
    ) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(wr_id.to_ne_bytes()); // 0
        b.extend(qp.to_ne_bytes()); // 8
        b.extend(op.to_ne_bytes()); // 12
        b.extend(nsge.to_ne_bytes()); // 14
        b.extend(flags.to_ne_bytes()); // 16
        b.extend(inv.to_ne_bytes()); // 20
        b.extend(raddr.to_ne_bytes()); // 24
        b.extend(rkey.to_ne_bytes()); // 32
        b.extend(0u32.to_ne_bytes()); // 36 reserved
        assert_eq!(b.len(), 40);
        b
    }

    /// The records of `wrs`, as a post writes them.
    fn encoded<R: Record>(qp: u32, wrs: impl Iterator<Item = R> + Clone) -> Result<Vec<u8>> {
        let mut b = vec![0; batch_len(wrs.clone())?];
        encode(qp, wrs, &mut b)?;
        Ok(b)
    }

    /// Where each record of `bytes` starts.
    fn starts(bytes: &[u8]) -> Vec<usize> {
        let mut v = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            v.push(at);
            at += record_len(bytes, at);
        }
        assert_eq!(at, bytes.len());
        v
    }

    fn c_sge(addr: u64, len: u32, lkey: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(addr.to_ne_bytes());
        b.extend(len.to_ne_bytes());
        b.extend(lkey.to_ne_bytes());
        b
    }

    #[test]
    fn send_batch_is_byte_exact() {
        let remote = RemoteAddr {
            addr: 0x1122_3344_5566_7788,
            rkey: 0xabcd,
        };
        let wrs = [
            SendWr::send(1, vec![sge(0x1000, 10, 7), sge(0x2000, 20, 8)]).signaled(),
            SendWr::rdma_write(2, vec![sge(0x3000, 30, 9)], remote).fence(),
            SendWr::send_with_se_inv(3, vec![], 0x77).inline(),
            // SAFETY: only encoded.
            unsafe { SendWr::rdma_read(4, vec![sge(0x4000, 40, 10)], remote) },
            SendWr::send_with_inv(5, vec![], 0x55),
            SendWr::send_with_se(6, vec![]),
        ];
        let b = encoded(9, wrs.iter()).unwrap();
        let mut want = Vec::new();
        want.extend(c_record(1, 9, 0, 2, 1, 0, 0, 0));
        want.extend(c_sge(0x1000, 10, 7));
        want.extend(c_sge(0x2000, 20, 8));
        want.extend(c_record(2, 9, 4, 1, 4, 0, 0x1122_3344_5566_7788, 0xabcd));
        want.extend(c_sge(0x3000, 30, 9));
        want.extend(c_record(3, 9, 3, 0, 2, 0x77, 0, 0));
        want.extend(c_record(4, 9, 5, 1, 0, 0, 0x1122_3344_5566_7788, 0xabcd));
        want.extend(c_sge(0x4000, 40, 10));
        want.extend(c_record(5, 9, 1, 0, 0, 0x55, 0, 0));
        want.extend(c_record(6, 9, 2, 0, 0, 0, 0, 0));
        assert_eq!(b, want);
        assert_eq!(starts(&b), vec![0, 72, 128, 168, 224, 264]);
        // The same requests in the module's own form encode the same.
        let sges: Vec<Vec<abi::SrnicSge>> = wrs
            .iter()
            .map(|w| w.sges.iter().map(|s| s.to_abi()).collect())
            .collect();
        let raw = wrs.iter().zip(&sges).map(|(w, s)| RawWr {
            header: (&w).header(),
            sges: s,
        });
        assert_eq!(encoded(9, raw).unwrap(), want);
    }

    #[test]
    fn recv_batch_is_byte_exact() {
        // SAFETY: only encoded.
        let wrs = unsafe {
            [
                RecvWr::new(0xfeed, vec![sge(0x5000, 64, 3)]),
                RecvWr::new(0xbeef, vec![]),
            ]
        };
        let b = encoded(2, wrs.iter()).unwrap();
        let mut want = c_record(0xfeed, 2, 6, 1, 0, 0, 0, 0);
        want.extend(c_sge(0x5000, 64, 3));
        want.extend(c_record(0xbeef, 2, 6, 0, 0, 0, 0, 0));
        assert_eq!(b, want);
        assert_eq!(starts(&b), vec![0, 56]);
    }

    #[test]
    fn short_write_reposts_the_rest_and_reports_the_failing_index() {
        let wrs: Vec<_> = (0..4)
            .map(|i| SendWr::send(i, vec![sge(0, 1, 1)]))
            .collect();
        let b = encoded(1, wrs.iter()).unwrap();
        // The module takes two records, then refuses the third with ENOMEM.
        let mut calls = Vec::new();
        let r = post_bytes(&b, |buf| {
            calls.push(buf.len());
            if calls.len() == 1 {
                Ok(2 * 56)
            } else {
                Err(std::io::Error::from_raw_os_error(libc::ENOMEM))
            }
        });
        assert_eq!(calls, vec![4 * 56, 2 * 56]);
        match r {
            Err(Error::Post { posted, source }) => {
                assert_eq!(posted, 2);
                assert_eq!(source.raw_os_error(), Some(libc::ENOMEM));
            }
            r => panic!("{r:?}"),
        }
        // A short count followed by success posts everything.
        let mut n = 0;
        post_bytes(&b, |buf| {
            n += 1;
            Ok(if n == 1 { 56 } else { buf.len() })
        })
        .unwrap();
        assert_eq!(n, 2);
        // A count inside a record is a protocol error.
        assert!(matches!(
            post_bytes(&b, |_| Ok(50)),
            Err(Error::Protocol(_))
        ));
        // So is a count beyond what was written.
        assert!(matches!(
            post_bytes(&b, |buf| Ok(buf.len() + 1)),
            Err(Error::Protocol(_))
        ));
        // The first record failing gives posted = 0.
        assert!(matches!(
            post_bytes(&b, |_| Err(std::io::Error::from_raw_os_error(libc::EINVAL))),
            Err(Error::Post { posted: 0, .. })
        ));
        // An empty batch makes no call.
        post_bytes(&[], |_| panic!()).unwrap();
    }

    #[test]
    fn too_many_sges_is_rejected() {
        let w = SendWr::send(1, vec![sge(0, 0, 0); 65536]);
        assert!(matches!(
            encoded(1, [w].iter()),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn requests_that_change_between_the_walks_are_not_posted() {
        // The first walk (sizing) sees no SGE, the second one SGE.
        let walks = std::cell::Cell::new(0);
        let sg = [abi::SrnicSge::default()];
        let wrs = std::iter::once(()).map(|()| {
            walks.set(walks.get() + 1);
            RawWr {
                header: abi::SrnicPostWr::default(),
                sges: if walks.get() == 1 { &[] } else { &sg },
            }
        });
        let mut b = vec![0; batch_len(wrs.clone()).unwrap()];
        assert_eq!(b.len(), WR_LEN);
        assert!(matches!(
            encode(1, wrs, &mut b),
            Err(Error::InvalidArgument(_))
        ));
        // Nor those that shrink: the sizing walk sees one SGE, the second none.
        walks.set(0);
        let wrs = std::iter::once(()).map(|()| {
            walks.set(walks.get() + 1);
            RawWr {
                header: abi::SrnicPostWr::default(),
                sges: if walks.get() == 1 { &sg } else { &[] },
            }
        });
        let mut b = vec![0; batch_len(wrs.clone()).unwrap()];
        assert_eq!(b.len(), WR_LEN + SGE_LEN);
        assert!(matches!(
            encode(1, wrs, &mut b),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn opcodes_follow_the_abi() {
        assert_eq!(WrOpcode::Send.to_abi(), 0);
        assert_eq!(WrOpcode::SendWithInv.to_abi(), 1);
        assert_eq!(WrOpcode::SendWithSe.to_abi(), 2);
        assert_eq!(WrOpcode::SendWithSeInv.to_abi(), 3);
        assert_eq!(WrOpcode::RdmaWrite.to_abi(), 4);
        assert_eq!(WrOpcode::RdmaRead.to_abi(), 5);
        assert_eq!(QpState::from(2), QpState::Rts);
        assert_eq!(QpState::from(9), QpState::Unknown(9));
    }
}
