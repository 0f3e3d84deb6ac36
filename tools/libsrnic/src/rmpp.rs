// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Sandia RMPP endpoints (see `Documentation/srnic/rmpp.rst`).
//!
//! An [`RmppEndpoint`] is one local NID on one netdev. Messages go to a NID with
//! a 64-bit match tag; receives are posted with match bits, ignore bits, an
//! optional source NID and a maximum length. Completions arrive in the
//! endpoint's CQs like every other completion ([`crate::WcOpcode::RmppSend`],
//! [`crate::WcOpcode::RmppRecv`]); a NID is reached through the module's node
//! table ([`Context::rmpp_set_node`]).

use crate::context::{Context, ContextInner};
use crate::cq::CompletionQueue;
use crate::error::{Error, Result};
use crate::mr::Sge;
use crate::pd::ProtectionDomain;
use srnic_uapi as abi;
use std::sync::Arc;

/// Receiver-driven recovery an endpoint offers and uses (each message uses
/// what both its sender and its receiver have).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RmppNak {
    /// Selective NAKs: the receiver keeps packets after a gap and lists the
    /// missing ones (the default).
    #[default]
    Selective,
    /// NAKs that make the sender go back to the first missing packet.
    GoBack,
    /// None: only the sender's retransmission timeout recovers (the paper).
    Off,
}

/// Parameters of a new endpoint. Zero tuning values take the module's defaults.
#[derive(Clone, Debug, Default)]
pub struct RmppEndpointAttr {
    /// The local NID (0 ..= `SRNIC_RMPP_MAX_NID`).
    pub nid: u32,
    /// The netdev, e.g. "eth0".
    pub ifname: String,
    /// The EtherType: 0 or `SRNIC_RMPP_ETHERTYPE` (the module refuses any
    /// other with `EINVAL`).
    pub ethertype: u16,
    /// Refuse (MSGDROP) messages no posted receive matches, instead of leaving
    /// them with their sender to retry.
    pub drop_unexpected: bool,
    /// Restart a timed-out message from its start (the paper), not from the
    /// last granted block.
    pub restart_from_start: bool,
    /// Receiver-driven recovery.
    pub nak: RmppNak,
    /// Messages in flight.
    pub max_send: u32,
    /// Posted receives.
    pub max_recv: u32,
    /// Retransmission timeout in microseconds before the first round-trip
    /// sample, and the largest.
    pub rto_us: u32,
    /// Smallest retransmission timeout in microseconds that the round-trip
    /// estimate may set (`rto_us`: a fixed timeout).
    pub min_rto_us: u32,
    /// Timeouts a message survives before it fails.
    pub max_retries: u32,
    /// Milliseconds after which idle receiver state is freed.
    pub reclaim_ms: u32,
    /// The grant pool (paper: MAX_RCV_BUF).
    pub max_rcv_buf: u32,
    /// Pool share for first packets (paper: NODES).
    pub nodes: u32,
    /// Largest grant (paper: MAX_DATA_PKTS).
    pub max_data_pkts: u32,
}

/// An RMPP endpoint. Dropping it destroys it: messages in flight are aborted
/// (their receivers get a NULL) and posted receives are flushed.
#[derive(Clone, Debug)]
pub struct RmppEndpoint {
    inner: Arc<EpInner>,
}

#[derive(Debug)]
struct EpInner {
    ctx: Arc<ContextInner>,
    handle: u32,
    params: abi::SrnicRmppCreateEp,
    _pd: ProtectionDomain,
    _cqs: (CompletionQueue, CompletionQueue),
}

fn ifname_bytes(name: &str) -> Result<[u8; 16]> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 15 || b.contains(&0) {
        return Err(Error::InvalidArgument("interface name"));
    }
    let mut out = [0u8; 16];
    out[..b.len()].copy_from_slice(b);
    Ok(out)
}

impl RmppEndpoint {
    /// Creates an endpoint in `pd` (regions named by lkey must belong to it),
    /// completing sends into `send_cq` and receives into `recv_cq`.
    pub fn new(
        pd: &ProtectionDomain,
        send_cq: &CompletionQueue,
        recv_cq: &CompletionQueue,
        attr: &RmppEndpointAttr,
    ) -> Result<Self> {
        let mut flags = 0;
        if attr.drop_unexpected {
            flags |= abi::SRNIC_RMPP_EP_DROP_UNEXPECTED;
        }
        if attr.restart_from_start {
            flags |= abi::SRNIC_RMPP_EP_RESTART_FROM_START;
        }
        flags |= match attr.nak {
            RmppNak::Selective => 0,
            RmppNak::GoBack => abi::SRNIC_RMPP_EP_GO_BACK_NAK,
            RmppNak::Off => abi::SRNIC_RMPP_EP_NO_NAK,
        };
        let mut a = abi::SrnicRmppCreateEp {
            size: std::mem::size_of::<abi::SrnicRmppCreateEp>() as u32,
            pd_handle: pd.handle(),
            nid: attr.nid,
            send_cq: send_cq.handle(),
            recv_cq: recv_cq.handle(),
            flags,
            ifname: ifname_bytes(&attr.ifname)?,
            ethertype: u32::from(attr.ethertype),
            max_send: attr.max_send,
            max_recv: attr.max_recv,
            rto_us: attr.rto_us,
            min_rto_us: attr.min_rto_us,
            max_retries: attr.max_retries,
            reclaim_ms: attr.reclaim_ms,
            max_rcv_buf: attr.max_rcv_buf,
            nodes: attr.nodes,
            max_data_pkts: attr.max_data_pkts,
            ..Default::default()
        };
        let ctx = pd.context().inner.clone();
        // SAFETY: the structure the command takes; no pointers.
        unsafe { ctx.cmd(abi::SRNIC_IOCTL_RMPP_CREATE_EP, &mut a) }?;
        Ok(Self {
            inner: Arc::new(EpInner {
                ctx,
                handle: a.ep_handle,
                params: a,
                _pd: pd.clone(),
                _cqs: (send_cq.clone(), recv_cq.clone()),
            }),
        })
    }

    /// The kernel handle (`qp_handle` of its completions).
    pub fn handle(&self) -> u32 {
        self.inner.handle
    }

    /// The parameters in use, as the module reported them.
    pub fn params(&self) -> &abi::SrnicRmppCreateEp {
        &self.inner.params
    }

    /// Bytes per packet (header included): the payload per packet is this minus 44.
    pub fn packet_size(&self) -> u32 {
        self.inner.params.mtu
    }

    fn send_raw(
        &self,
        wr_id: u64,
        dst: u32,
        tag: u64,
        addr: u64,
        len: u64,
        lkey: u32,
    ) -> Result<()> {
        let mut a = abi::SrnicRmppSend {
            size: std::mem::size_of::<abi::SrnicRmppSend>() as u32,
            ep_handle: self.inner.handle,
            wr_id,
            tag,
            addr,
            length: len,
            lkey,
            dst_nid: dst,
            reserved: 0,
        };
        // SAFETY: the module only reads [addr, addr + len), which the caller's
        // borrow (a slice or a region's SGE) covers at the time of the call; it
        // pins or holds those pages itself until the send completes.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_RMPP_SEND, &mut a) }?;
        Ok(())
    }

    /// Sends the bytes of a registered region to `dst` with `tag`. `EAGAIN`
    /// ([`Error::errno`]) when the endpoint has `max_send` messages in flight.
    pub fn send(&self, wr_id: u64, dst: u32, tag: u64, sge: Sge<'_>) -> Result<()> {
        self.send_raw(wr_id, dst, tag, sge.addr, u64::from(sge.length), sge.lkey)
    }

    /// Sends `data` (pinned by the module until the send completes; the message
    /// carries what the pages hold when each packet leaves).
    pub fn send_bytes(&self, wr_id: u64, dst: u32, tag: u64, data: &[u8]) -> Result<()> {
        self.send_raw(wr_id, dst, tag, data.as_ptr() as u64, data.len() as u64, 0)
    }

    /// Posts a receive into a registered region for the first message whose tag
    /// matches (`(tag ^ match_bits) & !ignore_bits == 0`) from `src` (`None`:
    /// any sender). Messages longer than the SGE are truncated.
    ///
    /// # Safety
    ///
    /// The device writes the SGE's memory when a message arrives, at any time
    /// until the receive completes (or the endpoint is destroyed). Until then the
    /// program must neither read nor write those bytes, nor drop the region.
    pub unsafe fn post_recv(
        &self,
        wr_id: u64,
        src: Option<u32>,
        match_bits: u64,
        ignore_bits: u64,
        sge: Sge<'_>,
    ) -> Result<()> {
        let mut a = abi::SrnicRmppPostRecv {
            size: std::mem::size_of::<abi::SrnicRmppPostRecv>() as u32,
            ep_handle: self.inner.handle,
            wr_id,
            match_bits,
            ignore_bits,
            addr: sge.addr,
            length: u64::from(sge.length),
            lkey: sge.lkey,
            src_nid: src.unwrap_or(abi::SRNIC_RMPP_ANY_NID),
            reserved: 0,
        };
        // SAFETY: the caller keeps the memory to the device until completion.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_RMPP_POST_RECV, &mut a) }?;
        Ok(())
    }
}

impl Drop for EpInner {
    fn drop(&mut self) {
        self.ctx
            .destroy(abi::SRNIC_IOCTL_RMPP_DESTROY_EP, self.handle);
    }
}

impl Context {
    /// Sets the node table entry of `nid`: reached at `mac` through `ifname`
    /// (needs `CAP_NET_ADMIN`).
    pub fn rmpp_set_node(&self, nid: u32, mac: [u8; 6], ifname: &str) -> Result<()> {
        let mut a = abi::SrnicRmppNode {
            size: std::mem::size_of::<abi::SrnicRmppNode>() as u32,
            nid,
            mac,
            ifname: ifname_bytes(ifname)?,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { self.inner.cmd(abi::SRNIC_IOCTL_RMPP_SET_NODE, &mut a) }?;
        Ok(())
    }

    /// Removes the node table entry of `nid`.
    pub fn rmpp_del_node(&self, nid: u32) -> Result<()> {
        let mut a = abi::SrnicRmppNode {
            size: std::mem::size_of::<abi::SrnicRmppNode>() as u32,
            nid,
            flags: abi::SRNIC_RMPP_NODE_DELETE,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { self.inner.cmd(abi::SRNIC_IOCTL_RMPP_SET_NODE, &mut a) }?;
        Ok(())
    }

    /// The module's RMPP counters, by name in ABI order (`rmpp_` and the field's
    /// name in `struct srnic_rmpp_stats`).
    pub fn rmpp_stats(&self) -> Result<Vec<(&'static str, u64)>> {
        let mut s = abi::SrnicRmppStats {
            size: std::mem::size_of::<abi::SrnicRmppStats>() as u32,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { self.inner.cmd(abi::SRNIC_IOCTL_RMPP_QUERY_STATS, &mut s) }?;
        Ok(s.counters().to_vec())
    }
}

/// Parses a MAC address written as six hex bytes separated by `:` or `-`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split([':', '-']);
    for b in out.iter_mut() {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs() {
        assert_eq!(
            parse_mac("52:54:00:12:34:5a"),
            Some([0x52, 0x54, 0, 0x12, 0x34, 0x5a])
        );
        assert_eq!(
            parse_mac("52-54-00-12-34-5A"),
            Some([0x52, 0x54, 0, 0x12, 0x34, 0x5a])
        );
        assert_eq!(parse_mac("52:54:00:12:34"), None);
        assert_eq!(parse_mac("52:54:00:12:34:5a:00"), None);
        assert_eq!(parse_mac("52:54:00:12:34:zz"), None);
        assert_eq!(parse_mac("152:54:00:12:34:5a"), None);
    }

    #[test]
    fn interface_names() {
        assert!(ifname_bytes("eth0").is_ok());
        assert!(ifname_bytes("").is_err());
        assert!(ifname_bytes("0123456789abcdef").is_err());
        assert!(ifname_bytes("a\0b").is_err());
        assert_eq!(&ifname_bytes("lo").unwrap()[..3], b"lo\0");
    }
}
