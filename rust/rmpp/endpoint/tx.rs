// SPDX-License-Identifier: GPL-2.0
//! The endpoint's send path: the messages in flight, their packets (header and
//! payload written straight from the pinned source pages into the skb) and
//! their work completions.

use super::*;
use crate::{
    proto::rmpp::HEADER_LEN,
    rmpp::node as nodes,
    sys::{errno::ehostunreach, netdev::Port, trace},
    uapi::*,
    verbs::stats::{self, Rmpp},
};
use kernel::{alloc::KVec, prelude::*};

/// Packets one work run sends before it yields.
const TX_BUDGET: usize = 512;

/// A message in flight.
pub(super) struct SendEntry {
    pub(super) wr_id: u64,
    pub(super) tag: u64,
    pub(super) len: u32,
    pub(super) buf: Buf,
}

impl Ep {
    pub(super) fn send_wc(&self, s: &SendEntry, status: u32, accepted: u32) -> SrnicWc {
        SrnicWc {
            wr_id: s.wr_id,
            status,
            opcode: SRNIC_WC_RMPP_SEND,
            byte_len: accepted,
            qp_handle: self.handle,
            flags: if status == SRNIC_WC_SUCCESS && accepted < s.len {
                SRNIC_WC_TRUNCATED
            } else {
                0
            },
            tag: s.tag,
            msg_len: u64::from(s.len),
            ..Default::default()
        }
    }

    /// Sends what the engine has to send, at most [`TX_BUDGET`] packets.
    /// Returns whether more may be waiting.
    pub(super) fn transmit(&self, engine: &mut Eng, sends: &KVec<Option<SendEntry>>, port: &Port<Ep>, now: u64) -> bool {
        let mut hdr = [0u8; HEADER_LEN];
        for _ in 0..TX_BUDGET {
            let Some(t) = engine.poll_transmit(now, &mut hdr) else {
                return false;
            };
            let plen = t.payload.map_or(0, |p| p.len as usize);
            let r = (|| -> Result {
                let node = nodes::lookup(t.to).ok_or(ehostunreach())?;
                if node.ifindex != self.bound.ifindex {
                    return Err(ehostunreach());
                }
                let mut skb = port.tx_alloc(&node.mac, HEADER_LEN + plen)?;
                skb.write_at(0, &hdr)?;
                if let Some(p) = t.payload {
                    let e = usize::try_from(p.cookie)
                        .ok()
                        .and_then(|i| sends.get(i))
                        .and_then(Option::as_ref)
                        .ok_or(EINVAL)?;
                    let mut pos = HEADER_LEN;
                    e.buf.read_pieces(p.offset as usize, plen, |piece| {
                        skb.write_at(pos, piece)?;
                        pos += piece.len();
                        Ok(())
                    })?;
                }
                skb.send()
            })();
            if let Some(retry) = t.retry {
                let wr_id = usize::try_from(retry.cookie)
                    .ok()
                    .and_then(|i| sends.get(i))
                    .and_then(Option::as_ref)
                    .map_or(0, |e| e.wr_id);
                let mac = nodes::lookup(t.to).map(|n| n.mac);
                trace::rmpp_retransmit(self.site(), t.to, mac.as_ref(), wr_id, retry.attempt);
            }
            match r {
                Ok(()) => {
                    stats::add(Rmpp::tx_packets, 1);
                    stats::add(Rmpp::tx_bytes, plen as u64);
                }
                // A packet that does not go out is a lost packet: the protocol
                // recovers from it.
                Err(_) => stats::add(Rmpp::tx_errors, 1),
            }
        }
        true
    }
}
