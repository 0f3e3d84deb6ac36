// SPDX-License-Identifier: GPL-2.0
//! The endpoint's receive and placement path: the posted receives, matching
//! (the engine's up-call), taking one frame (its payload copied once, from the
//! skb to the receive buffer), and receive completions in message order per
//! sender.

use super::*;
use crate::{
    proto::rmpp::{wire::PacketType, Arrival, Decision, ParseError, RxDrop, HEADER_LEN},
    rmpp::node as nodes,
    sys::{netdev::RxSkb, trace},
    uapi::*,
    verbs::stats::{self, Rmpp},
};
use kernel::alloc::KVec;

#[derive(Clone, Copy)]
pub(super) enum RecvState {
    /// Waiting for a message.
    Posted,
    /// A message from `src` is arriving; `seq` orders matches.
    Matched { src: u32, seq: u64 },
    /// Finished; its completion waits for earlier messages of `src`.
    Done { src: u32, seq: u64, wc: SrnicWc },
}

/// A posted receive.
pub(super) struct RecvEntry {
    pub(super) wr_id: u64,
    pub(super) match_bits: u64,
    pub(super) ignore_bits: u64,
    pub(super) src: u32,
    pub(super) max_len: u32,
    pub(super) post_seq: u64,
    pub(super) state: RecvState,
    pub(super) buf: Buf,
}

/// The matching up-call: the oldest posted receive that matches takes the message.
struct Matcher<'a> {
    recvs: &'a mut KVec<Option<RecvEntry>>,
    next_match: &'a mut u64,
    drop_unexpected: bool,
}

impl crate::proto::rmpp::Upcall for Matcher<'_> {
    fn arrival(&mut self, a: &Arrival<'_>) -> Decision {
        let found = self
            .recvs
            .iter_mut()
            .enumerate()
            .filter_map(|(i, e)| e.as_mut().map(|e| (i, e)))
            .filter(|(_, e)| {
                matches!(e.state, RecvState::Posted)
                    && (e.src == SRNIC_RMPP_ANY_NID || e.src == a.src)
                    && (a.tag ^ e.match_bits) & !e.ignore_bits == 0
            })
            .min_by_key(|(_, e)| e.post_seq);
        match found {
            Some((i, e)) => {
                let seq = *self.next_match;
                *self.next_match = seq.wrapping_add(1);
                e.state = RecvState::Matched { src: a.src, seq };
                Decision::Accept {
                    len: e.max_len.min(a.len),
                    ctx: i as u64,
                }
            }
            None if self.drop_unexpected => {
                stats::add(Rmpp::unexpected_dropped, 1);
                Decision::Drop
            }
            None => Decision::Defer,
        }
    }
}

/// The counter of a frame the engine did not take.
fn drop_counter(e: RxDrop) -> Rmpp {
    match e {
        RxDrop::Parse(ParseError::Truncated) => Rmpp::drop_short,
        RxDrop::Parse(ParseError::BadVersion(_)) => Rmpp::drop_bad_version,
        RxDrop::Parse(ParseError::UnknownType(_)) => Rmpp::drop_bad_type,
        RxDrop::Parse(ParseError::UnexpectedPayload) | RxDrop::Malformed => Rmpp::drop_malformed,
        RxDrop::NotForUs => Rmpp::drop_other_nid,
        RxDrop::UnknownPeer => Rmpp::drop_unknown_nid,
        RxDrop::UnknownMessage => Rmpp::drop_unknown_msg,
        RxDrop::Stale => Rmpp::drop_duplicate,
        RxDrop::OutOfOrder => Rmpp::drop_out_of_order,
        RxDrop::TableFull => Rmpp::drop_table_full,
        RxDrop::Deferred => Rmpp::unexpected_held,
        RxDrop::Unexpected => Rmpp::drop_unexpected,
    }
}

impl Ep {
    /// Counts a frame from `peer` (`u32::MAX`: not known) dropped for
    /// reason `c`, and traces it.
    fn dropped(&self, c: Rmpp, peer: u32) {
        stats::add(c, 1);
        trace::rmpp_drop(self.site(), peer, c.name());
    }

    /// Takes one frame: the engine parses it against its state, and placed
    /// payload is copied from the skb to the receive buffer.
    pub(super) fn rx_frame(&self, g: &mut Inner, skb: &RxSkb, now: u64) {
        let mut hdr = [0u8; HEADER_LEN];
        if skb.len() < HEADER_LEN || skb.copy_head(&mut hdr).is_err() {
            return self.dropped(Rmpp::drop_short, u32::MAX);
        }
        // The peer is the message's receiver for replies, else its sender.
        let field = |r: core::ops::Range<usize>| {
            hdr.get(r)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map_or(u32::MAX, u32::from_be_bytes)
        };
        let reply = PacketType::from_code(hdr[1]).is_some_and(PacketType::is_reply);
        let peer = if reply { field(8..12) } else { field(4..8) };
        match nodes::lookup(peer) {
            // The frame must come from the station the node table names for the
            // NID it claims: no host speaks for another's NID.
            Some(n) if n.ifindex == self.bound.ifindex => {
                if n.mac != skb.src_mac() {
                    return self.dropped(Rmpp::drop_spoofed, peer);
                }
            }
            _ => return self.dropped(Rmpp::drop_unknown_nid, peer),
        }
        let Inner {
            engine,
            recvs,
            shadow,
            next_match,
            ..
        } = g;
        let flen = skb.len().min(shadow.len());
        let Some(head) = shadow.get_mut(..HEADER_LEN) else { return };
        head.copy_from_slice(&hdr);
        let Some(frame) = shadow.get(..flen) else { return };
        let mut up = Matcher {
            recvs,
            next_match,
            drop_unexpected: self.params.flags & SRNIC_RMPP_EP_DROP_UNEXPECTED != 0,
        };
        let placement = match engine.receive(now, frame, &mut up) {
            Ok(p) => p,
            // A frame held for a receive not posted yet is no drop.
            Err(RxDrop::Deferred) => return stats::add(Rmpp::unexpected_held, 1),
            Err(e) => return self.dropped(drop_counter(e), peer),
        };
        stats::add(Rmpp::rx_packets, 1);
        let Some(p) = placement else { return };
        // The placed bytes are where the engine found them in the frame image:
        // the same offsets in the skb.
        let at = (p.data.as_ptr() as usize).wrapping_sub(frame.as_ptr() as usize);
        let n = p.data.len();
        let Some(Some(r)) = usize::try_from(p.ctx).ok().and_then(|i| recvs.get(i)) else {
            return self.dropped(Rmpp::drop_unexpected, peer);
        };
        let mut pos = p.offset as usize;
        let res = skb.read_with(at, n, &mut |piece: &[u8]| {
            r.buf.write(pos, piece)?;
            pos += piece.len();
            Ok(())
        });
        match res {
            Ok(()) => stats::add(Rmpp::rx_bytes, n as u64),
            Err(_) => self.dropped(Rmpp::drop_malformed, peer),
        }
    }

    /// Reports finished receives whose sender has no earlier message still
    /// arriving, oldest match first.
    pub(super) fn report_in_order(&self, recvs: &mut KVec<Option<RecvEntry>>) {
        loop {
            let mut best: Option<(usize, u64)> = None;
            for (i, e) in recvs.iter().enumerate() {
                let Some(RecvEntry {
                    state: RecvState::Done { src, seq, .. },
                    ..
                }) = e
                else {
                    continue;
                };
                let blocked = recvs.iter().flatten().any(|o| match o.state {
                    RecvState::Matched { src: s, seq: q } => s == *src && q < *seq,
                    _ => false,
                });
                if !blocked && best.is_none_or(|(_, b)| *seq < b) {
                    best = Some((i, *seq));
                }
            }
            let Some((i, _)) = best else { return };
            if let Some(RecvEntry {
                state: RecvState::Done { wc, .. },
                ..
            }) = recvs.get_mut(i).and_then(Option::take)
            {
                self.recv_cq.push_notify(wc);
            }
        }
    }
}
