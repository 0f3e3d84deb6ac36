// SPDX-License-Identifier: GPL-2.0
//! An endpoint's parameters: the values of `SRNIC_IOCTL_RMPP_CREATE_EP`,
//! defaulted and checked against the limits, and the engine configuration made
//! from them.

use crate::{
    proto::rmpp::{Config, Recovery, RestartPolicy},
    sys::netdev::now_ns,
    uapi::*,
    verbs::limits,
};
use kernel::prelude::*;

// Selective NAKs keep one grant in a block mask: no grant may be wider.
const _: () = assert!(limits::RMPP_MAX_DATA_PKTS <= crate::proto::rmpp::mask::BLOCK_BITS);

/// Endpoint parameters, validated, as the endpoint uses them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EpParams {
    pub(crate) nid: u32,
    pub(crate) ethertype: u16,
    pub(crate) flags: u32,
    pub(crate) max_send: u32,
    pub(crate) max_recv: u32,
    pub(crate) rto_us: u32,
    pub(crate) min_rto_us: u32,
    pub(crate) max_retries: u32,
    pub(crate) reclaim_ms: u32,
    pub(crate) max_rcv_buf: u32,
    pub(crate) nodes: u32,
    pub(crate) max_data_pkts: u32,
}

impl EpParams {
    /// Takes the request's values (0: default) and checks them against the limits.
    pub(crate) fn from_abi(a: &SrnicRmppCreateEp) -> Result<Self> {
        let d = |v: u32, def: u32| if v == 0 { def } else { v };
        let ethertype = u16::try_from(d(a.ethertype, SRNIC_RMPP_ETHERTYPE)).map_err(|_| EINVAL)?;
        let p = Self {
            nid: a.nid,
            ethertype,
            flags: a.flags,
            max_send: d(a.max_send, limits::RMPP_DEFAULT_SEND),
            max_recv: d(a.max_recv, limits::RMPP_DEFAULT_RECV),
            rto_us: d(a.rto_us, limits::RMPP_DEFAULT_RTO_US),
            min_rto_us: a.min_rto_us,
            max_retries: d(a.max_retries, limits::RMPP_DEFAULT_RETRIES),
            reclaim_ms: a.reclaim_ms,
            max_rcv_buf: d(a.max_rcv_buf, limits::RMPP_DEFAULT_RCV_BUF),
            nodes: d(a.nodes, limits::RMPP_DEFAULT_NODES),
            max_data_pkts: d(a.max_data_pkts, limits::RMPP_DEFAULT_DATA_PKTS),
        };
        let mut p = p;
        if p.min_rto_us == 0 {
            p.min_rto_us = limits::RMPP_DEFAULT_MIN_RTO_US.min(p.rto_us);
        }
        if p.reclaim_ms == 0 {
            // Default: a minute, and always twice the sender's retry span.
            let span_ms = u64::from(p.rto_us) * (u64::from(p.max_retries) + 1) / 1000;
            p.reclaim_ms = u32::try_from(span_ms.saturating_mul(2))
                .unwrap_or(u32::MAX)
                .max(limits::RMPP_DEFAULT_RECLAIM_MS);
        }
        // Only srnic's EtherType: an endpoint must not receive another
        // protocol's frames (nor send frames that other stacks would take).
        if p.nid > SRNIC_RMPP_MAX_NID
            || p.flags & !SRNIC_RMPP_EP_ALL != 0
            || p.flags & (SRNIC_RMPP_EP_GO_BACK_NAK | SRNIC_RMPP_EP_NO_NAK)
                == SRNIC_RMPP_EP_GO_BACK_NAK | SRNIC_RMPP_EP_NO_NAK
            || u32::from(p.ethertype) != SRNIC_RMPP_ETHERTYPE
            || p.max_send as usize > limits::RMPP_MAX_SEND
            || p.max_recv as usize > limits::RMPP_MAX_RECV
            || p.rto_us < limits::RMPP_MIN_RTO_US
            || p.min_rto_us < limits::RMPP_MIN_RTO_US
            || p.min_rto_us > p.rto_us
            || p.max_retries > limits::RMPP_MAX_RETRIES
            || p.max_data_pkts > limits::RMPP_MAX_DATA_PKTS
            || p.max_rcv_buf > limits::RMPP_MAX_RCV_BUF
            || p.nodes > p.max_rcv_buf
        {
            return Err(EINVAL);
        }
        Ok(p)
    }

    pub(super) fn config(&self, mtu: u16) -> Config {
        let mut c = Config::new(self.nid);
        c.mtu = mtu;
        c.max_rcv_buf = self.max_rcv_buf;
        c.nodes = self.nodes;
        c.max_data_pkts = self.max_data_pkts;
        c.retransmit_timeout = u64::from(self.rto_us) * 1000;
        c.min_retransmit_timeout = u64::from(self.min_rto_us) * 1000;
        c.max_retries = self.max_retries;
        c.reclaim_timeout = u64::from(self.reclaim_ms) * 1_000_000;
        c.restart = if self.flags & SRNIC_RMPP_EP_RESTART_FROM_START != 0 {
            RestartPolicy::FromStart
        } else {
            RestartPolicy::FromLastGrant
        };
        // Offered to every peer; used with those that offer it too.
        c.recovery = if self.flags & SRNIC_RMPP_EP_NO_NAK != 0 {
            Recovery::Timeout
        } else if self.flags & SRNIC_RMPP_EP_GO_BACK_NAK != 0 {
            Recovery::Nak
        } else {
            Recovery::SelectiveNak
        };
        // A fresh msgID space per endpoint, so that a restarted node does not
        // reuse identifiers its peers still remember.
        let t = now_ns();
        c.first_msg_id = (t ^ (t >> 32)) as u32;
        c
    }

    /// Writes the values in use back into the request.
    pub(crate) fn to_abi(&self, a: &mut SrnicRmppCreateEp) {
        a.ethertype = u32::from(self.ethertype);
        a.max_send = self.max_send;
        a.max_recv = self.max_recv;
        a.rto_us = self.rto_us;
        a.min_rto_us = self.min_rto_us;
        a.max_retries = self.max_retries;
        a.reclaim_ms = self.reclaim_ms;
        a.max_rcv_buf = self.max_rcv_buf;
        a.nodes = self.nodes;
        a.max_data_pkts = self.max_data_pkts;
    }
}
