// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! VMTP entities (RFC 1045; see `Documentation/srnic/vmtp.rst`).
//!
//! A [`VmtpEntity`] is a client or a server on a local IPv4 address, named
//! by a [`VmtpEntityId`]. A client runs one message transaction at a time
//! ([`VmtpEntity::request`]): a Request of up to 16 KiB to a server and a
//! buffer for its Response; the transaction's end arrives in the entity's CQ
//! as [`crate::WcOpcode::VmtpResponse`]. A server posts buffers for Requests
//! ([`VmtpEntity::post_recv`]), gets each whole Request as
//! [`crate::WcOpcode::VmtpRequest`] and answers it
//! ([`VmtpEntity::respond`]); the Response's buffer is free again at
//! [`crate::WcOpcode::VmtpResponded`].

use crate::context::{Context, ContextInner};
use crate::cq::CompletionQueue;
use crate::error::{Error, Result};
use crate::mr::Sge;
use crate::pd::ProtectionDomain;
use crate::wc::WorkCompletion;
use srnic_uapi as abi;
use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;
use std::sync::Arc;

/// A VMTP entity identifier in the Internet domain: a 28-bit discriminator
/// and the IPv4 address of its host (RFC 1045, Appendix IV). Written
/// `address:discriminator`, e.g. `10.0.0.2:100`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VmtpEntityId(pub u64);

impl VmtpEntityId {
    /// The entity `discriminator` (at most `SRNIC_VMTP_MAX_DISCRIMINATOR`)
    /// on the host `addr`.
    pub fn new(addr: Ipv4Addr, discriminator: u32) -> Result<Self> {
        if discriminator == 0 || discriminator > abi::SRNIC_VMTP_MAX_DISCRIMINATOR {
            return Err(Error::InvalidArgument("VMTP discriminator"));
        }
        Ok(Self(
            u64::from(discriminator) << 32 | u64::from(u32::from(addr)),
        ))
    }

    /// The host's address.
    pub fn addr(self) -> Ipv4Addr {
        Ipv4Addr::from(self.0 as u32)
    }

    /// The discriminator.
    pub fn discriminator(self) -> u32 {
        (self.0 >> 32) as u32 & abi::SRNIC_VMTP_MAX_DISCRIMINATOR
    }
}

impl fmt::Display for VmtpEntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.addr(), self.discriminator())
    }
}

impl FromStr for VmtpEntityId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::InvalidArgument("VMTP entity (address:discriminator)");
        let (a, d) = s.rsplit_once(':').ok_or_else(bad)?;
        let addr = a.parse::<Ipv4Addr>().map_err(|_| bad())?;
        let d = d.parse::<u32>().map_err(|_| bad())?;
        Self::new(addr, d)
    }
}

/// What an entity does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VmtpRole {
    /// Sends Requests, receives Responses.
    #[default]
    Client,
    /// Receives Requests, sends Responses.
    Server,
}

/// Parameters of a new entity. Zero tuning values take the module's
/// defaults.
#[derive(Clone, Debug)]
pub struct VmtpEntityAttr {
    /// Client or server.
    pub role: VmtpRole,
    /// A local IPv4 address.
    pub addr: Ipv4Addr,
    /// The discriminator; 0 lets the module pick one (clients only).
    pub discriminator: u32,
    /// Send without checksums (received ones are still checked).
    pub no_checksum: bool,
    /// Server: clients it keeps records of at once.
    pub max_clients: u32,
    /// Server: posted Request buffers.
    pub max_recv: u32,
    /// Milliseconds to wait for an answer before retransmitting.
    pub response_timeout_ms: u32,
    /// Retransmissions before a transaction fails.
    pub max_retries: u32,
    /// Gap between the packets of a group, microseconds.
    pub packet_gap_us: u32,
}

impl Default for VmtpEntityAttr {
    fn default() -> Self {
        Self {
            role: VmtpRole::Client,
            addr: Ipv4Addr::UNSPECIFIED,
            discriminator: 0,
            no_checksum: false,
            max_clients: 0,
            max_recv: 0,
            response_timeout_ms: 0,
            max_retries: 0,
            packet_gap_us: 0,
        }
    }
}

/// A VMTP entity. Dropping it destroys it: its transaction, posted buffers
/// and Responses end flushed.
#[derive(Clone, Debug)]
pub struct VmtpEntity {
    inner: Arc<EntityInner>,
}

#[derive(Debug)]
struct EntityInner {
    ctx: Arc<ContextInner>,
    params: abi::SrnicVmtpCreate,
    _pd: ProtectionDomain,
    _cq: CompletionQueue,
}

impl VmtpEntity {
    /// Creates an entity in `pd` (regions named by lkey must belong to it),
    /// completing into `cq`.
    pub fn new(pd: &ProtectionDomain, cq: &CompletionQueue, attr: &VmtpEntityAttr) -> Result<Self> {
        let mut a = abi::SrnicVmtpCreate {
            size: std::mem::size_of::<abi::SrnicVmtpCreate>() as u32,
            pd_handle: pd.handle(),
            cq_handle: cq.handle(),
            role: match attr.role {
                VmtpRole::Client => abi::SRNIC_VMTP_CLIENT,
                VmtpRole::Server => abi::SRNIC_VMTP_SERVER,
            },
            addr: attr.addr.octets(),
            discriminator: attr.discriminator,
            flags: if attr.no_checksum {
                abi::SRNIC_VMTP_NO_CHECKSUM
            } else {
                0
            },
            max_clients: attr.max_clients,
            max_recv: attr.max_recv,
            response_timeout_ms: attr.response_timeout_ms,
            max_retries: attr.max_retries,
            packet_gap_us: attr.packet_gap_us,
            ..Default::default()
        };
        let ctx = pd.context().inner.clone();
        // SAFETY: the structure the command takes; no pointers.
        unsafe { ctx.cmd(abi::SRNIC_IOCTL_VMTP_CREATE, &mut a) }?;
        Ok(Self {
            inner: Arc::new(EntityInner {
                ctx,
                params: a,
                _pd: pd.clone(),
                _cq: cq.clone(),
            }),
        })
    }

    /// The kernel handle (`qp_handle` of its completions).
    pub fn handle(&self) -> u32 {
        self.inner.params.handle
    }

    /// Its identifier.
    pub fn id(&self) -> VmtpEntityId {
        VmtpEntityId(self.inner.params.entity)
    }

    /// The parameters in use, as the module reported them.
    pub fn params(&self) -> &abi::SrnicVmtpCreate {
        &self.inner.params
    }

    /// The largest IP packet the entity sends.
    pub fn mtu(&self) -> u32 {
        self.inner.params.mtu
    }

    /// Starts a transaction with `server`: the Request's bytes are `req`,
    /// its code `code` (at most `SRNIC_VMTP_MAX_CODE`); the Response goes to
    /// `resp` (bytes beyond it are dropped). `EBUSY` ([`Error::errno`])
    /// while the last transaction is in progress.
    ///
    /// # Safety
    ///
    /// The device writes `resp`'s memory until the transaction completes
    /// (or the entity is destroyed): until then the program must neither
    /// read nor write those bytes, nor drop their region.
    pub unsafe fn request(
        &self,
        wr_id: u64,
        server: VmtpEntityId,
        code: u32,
        req: Sge<'_>,
        resp: Sge<'_>,
    ) -> Result<()> {
        // SAFETY: the caller leaves `resp` to the module until completion.
        unsafe { self.request_raw(wr_id, server, code, 0, req, resp) }
    }

    /// Sends `data` as a datagram Request to `server`: no Response; the
    /// transaction completes once it is sent.
    pub fn datagram(&self, wr_id: u64, server: VmtpEntityId, code: u32, data: &[u8]) -> Result<()> {
        let req = Sge::inline(data)?;
        // SAFETY: the module only reads `data` (pinning it until
        // completion); an empty Response buffer is never written.
        unsafe {
            self.request_raw(
                wr_id,
                server,
                code,
                abi::SRNIC_VMTP_DATAGRAM,
                req,
                Sge::from_raw(0, 0, 0),
            )
        }
    }

    /// `SRNIC_IOCTL_VMTP_REQUEST` with `flags`.
    ///
    /// # Safety
    ///
    /// As [`VmtpEntity::request`] for `resp`.
    unsafe fn request_raw(
        &self,
        wr_id: u64,
        server: VmtpEntityId,
        code: u32,
        flags: u32,
        req: Sge<'_>,
        resp: Sge<'_>,
    ) -> Result<()> {
        let mut a = abi::SrnicVmtpRequest {
            size: std::mem::size_of::<abi::SrnicVmtpRequest>() as u32,
            handle: self.handle(),
            wr_id,
            server: server.0,
            code,
            flags,
            addr: req.addr,
            length: req.length,
            lkey: req.lkey,
            resp_addr: resp.addr,
            resp_length: resp.length,
            resp_lkey: resp.lkey,
            reserved: 0,
        };
        // SAFETY: the module reads `req` (pinned or held until completion)
        // and writes `resp`, which the caller leaves to it.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_VMTP_REQUEST, &mut a) }?;
        Ok(())
    }

    /// Server: posts a buffer for the next Request. `EAGAIN` when
    /// `max_recv` buffers are posted.
    ///
    /// # Safety
    ///
    /// The device writes the buffer until its completion (or the entity's
    /// destruction), as for [`VmtpEntity::request`]'s `resp`.
    pub unsafe fn post_recv(&self, wr_id: u64, buf: Sge<'_>) -> Result<()> {
        let mut a = abi::SrnicVmtpPostRecv {
            size: std::mem::size_of::<abi::SrnicVmtpPostRecv>() as u32,
            handle: self.handle(),
            wr_id,
            addr: buf.addr,
            length: buf.length,
            lkey: buf.lkey,
            reserved: 0,
        };
        // SAFETY: the caller leaves the memory to the device until completion.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_VMTP_POST_RECV, &mut a) }?;
        Ok(())
    }

    /// Server: answers the Request a [`crate::WcOpcode::VmtpRequest`]
    /// completion reported (its [`WorkCompletion::vmtp_peer`] and
    /// [`WorkCompletion::vmtp_transaction`]) with `data` and `code`. The
    /// module holds the bytes (pinned, or the region of `data.lkey`) until
    /// [`crate::WcOpcode::VmtpResponded`]; the Response carries what they
    /// hold when each packet leaves.
    pub fn respond(
        &self,
        wr_id: u64,
        client: VmtpEntityId,
        transaction: u32,
        code: u32,
        data: Sge<'_>,
    ) -> Result<()> {
        let mut a = abi::SrnicVmtpRespond {
            size: std::mem::size_of::<abi::SrnicVmtpRespond>() as u32,
            handle: self.handle(),
            wr_id,
            client: client.0,
            transaction,
            code,
            addr: data.addr,
            length: data.length,
            lkey: data.lkey,
            reserved: 0,
        };
        // SAFETY: the module only reads the bytes the borrow covers now.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_VMTP_RESPOND, &mut a) }?;
        Ok(())
    }
}

impl Drop for EntityInner {
    fn drop(&mut self) {
        self.ctx
            .destroy(abi::SRNIC_IOCTL_VMTP_DESTROY, self.params.handle);
    }
}

impl Context {
    /// The module's VMTP counters, by name in ABI order (`vmtp_` and the
    /// field's name in `struct srnic_vmtp_stats`).
    pub fn vmtp_stats(&self) -> Result<Vec<(&'static str, u64)>> {
        Ok(self.vmtp_stats_raw()?.counters().to_vec())
    }

    /// The module's VMTP counters as `struct srnic_vmtp_stats`.
    pub fn vmtp_stats_raw(&self) -> Result<abi::SrnicVmtpStats> {
        let mut s = abi::SrnicVmtpStats {
            size: std::mem::size_of::<abi::SrnicVmtpStats>() as u32,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { self.inner.cmd(abi::SRNIC_IOCTL_VMTP_QUERY_STATS, &mut s) }?;
        Ok(s)
    }
}

impl WorkCompletion {
    /// VMTP: the request or response code (24 bits).
    pub fn vmtp_code(&self) -> u32 {
        self.0.term
    }

    /// VMTP: the transaction.
    pub fn vmtp_transaction(&self) -> u32 {
        self.0.src_nid
    }

    /// VMTP: the other end (the server of a Response, the client of a
    /// Request).
    pub fn vmtp_peer(&self) -> VmtpEntityId {
        VmtpEntityId(self.0.tag)
    }

    /// RMPP and VMTP: the whole message's length (more than
    /// [`WorkCompletion::byte_len`] when it was truncated).
    pub fn msg_len(&self) -> u64 {
        self.0.msg_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_ids_round_trip() {
        let id: VmtpEntityId = "10.0.0.2:100".parse().unwrap();
        assert_eq!(id.0, 0x0000_0064_0a00_0002);
        assert_eq!(id.addr(), Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(id.discriminator(), 100);
        assert_eq!(id.to_string(), "10.0.0.2:100");
        assert!("10.0.0.2".parse::<VmtpEntityId>().is_err());
        assert!("10.0.0.2:0".parse::<VmtpEntityId>().is_err());
        assert!("10.0.0.2:268435456".parse::<VmtpEntityId>().is_err());
        assert!("host:1".parse::<VmtpEntityId>().is_err());
        assert!("10.0.0.2:268435455".parse::<VmtpEntityId>().is_ok());
    }
}
