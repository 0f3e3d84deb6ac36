// SPDX-License-Identifier: GPL-2.0
//! The sender side of the [`Engine`]: the send table's entries ([`SendSlot`]) and
//! the life of an outgoing message: [`Engine::send`] and [`Engine::abort`], the
//! receiver's replies (CTS, MSGEND, MSGDROP, and the NAKs of [`super::Recovery`]),
//! its RTS, NULL, GCH and data packets, its retries and failure on timeouts, and
//! its completion.

use super::super::mask::BlockMask;
use super::super::rtt::RttEstimate;
use super::super::wire::{Packet, PacketType, Repr, HEADER_LEN, SNAK_SPAN};
use super::recv::seq_diff;
use super::{
    AbortError, Completion, Config, Ctrl, Engine, PayloadRef, PeerState, Recovery, RecvSlot,
    RestartPolicy, Retry, RxDrop, SendError, SendHandle, SendStatus, Transmit,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SendPhase {
    /// RTS or LAST RTS sent, waiting for CTS / MSGEND / MSGDROP (Figures 2, 3).
    Rts,
    /// At least one CTS received; sending or waiting for the next CTS (Figure 3).
    Granted,
    /// Aborted or failed: sending NULL until the receiver answers (completion
    /// already reported).
    Nulling,
    /// MSGEND / MSGDROP received: GCH to send, completion to hand out.
    Closing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SendTx {
    None,
    Rts,
    Data,
    Null,
    Gch,
}

#[derive(Clone, Copy, Debug)]
struct SendState {
    phase: SendPhase,
    tx: SendTx,
    dst: u32,
    msg_id: u32,
    msg_num: u32,
    len: u32,
    tag: u64,
    cookie: u64,
    chunk: u32,
    /// Number of data packets after the RTS (0 for a short message).
    data_pkts: u32,
    attempt: u32,
    /// The next packet sent starts a retry (after a timeout).
    retrying: bool,
    null_tries: u32,
    next_seq: u32,
    block_start: u32,
    block_end: u32,
    deadline: Option<u64>,
    completion: Option<SendStatus>,
    /// Packets of the current block a selective NAK asked for again, as
    /// offsets from `block_start`.
    resend: BlockMask,
    /// One past the highest data packet ever sent (to count what is resent).
    sent_end: u32,
    /// When the packet being timed (the RTS, or the block's last data packet)
    /// went out: its reply is a round-trip sample ([`super::super::rtt`]).
    timed: Option<u64>,
    /// Timeouts since the last reply: each doubles the next timeout.
    backoff: u32,
    /// When the RTS last went out (`None`: not yet).
    rts_at: Option<u64>,
}

/// The message's retransmission timeout: the round-trip estimate's, after its
/// consecutive timeouts.
fn timeout(rtt: &RttEstimate, cfg: &Config, st: &SendState) -> u64 {
    rtt.rto(
        cfg.min_retransmit_timeout,
        cfg.retransmit_timeout,
        st.backoff,
    )
}

/// A reply of the message's receiver for `attempt` arrived at `now`: the
/// timed packet's round trip is a sample if the reply answers the attempt it
/// was sent in (a late reply to an earlier attempt would make it too short),
/// and the backoff ends.
fn replied(rtt: &mut RttEstimate, st: &mut SendState, now: u64, attempt: u32) {
    if let Some(t) = st.timed.take() {
        if attempt == st.attempt {
            rtt.sample(now.saturating_sub(t));
        }
    }
    st.backoff = 0;
}

/// One entry of the send table. Opaque; create with `SendSlot::default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SendSlot {
    st: Option<SendState>,
}

/// The [`Retry`] a packet of the message reports, when it is the first of a
/// retry (`starts`: a packet of the message's data or its RTS, which a retry
/// sends again).
fn take_retry(st: &mut SendState, starts: bool) -> Option<Retry> {
    if !(starts && st.retrying) {
        return None;
    }
    st.retrying = false;
    Some(Retry {
        cookie: st.cookie,
        attempt: st.attempt,
    })
}

impl<SS, RS, PS> Engine<SS, RS, PS>
where
    SS: AsMut<[SendSlot]> + AsRef<[SendSlot]>,
    RS: AsMut<[RecvSlot]> + AsRef<[RecvSlot]>,
    PS: AsMut<[PeerState]> + AsRef<[PeerState]>,
{
    /// Occupied send-table entries.
    pub fn active_sends(&self) -> usize {
        self.send.as_ref().iter().filter(|s| s.st.is_some()).count()
    }

    /// Starts sending a `len`-byte message to `dst` with match `tag`. `cookie` names
    /// the message's bytes in [`PayloadRef`]s and in the completion; they must stay
    /// readable until the completion. Returns [`SendError::Full`] when the send table
    /// is full.
    pub fn send(
        &mut self,
        now: u64,
        dst: u32,
        len: u32,
        tag: u64,
        cookie: u64,
    ) -> Result<SendHandle, SendError> {
        let chunk = self.cfg.chunk();
        let rto = self.cfg.retransmit_timeout;
        let peer = usize::try_from(dst)
            .ok()
            .and_then(|i| self.peers.as_mut().get_mut(i))
            .ok_or(SendError::UnknownPeer)?;
        let slot = self
            .send
            .as_mut()
            .iter_mut()
            .find(|s| s.st.is_none())
            .ok_or(SendError::Full)?;
        let msg_id = self.next_msg_id;
        self.next_msg_id = msg_id.wrapping_add(1);
        let msg_num = peer.tx_next;
        peer.tx_next = msg_num.wrapping_add(1);
        slot.st = Some(SendState {
            phase: SendPhase::Rts,
            tx: SendTx::Rts,
            dst,
            msg_id,
            msg_num,
            len,
            tag,
            cookie,
            chunk,
            data_pkts: len.saturating_sub(1).checked_div(chunk).unwrap_or(0),
            attempt: 0,
            retrying: false,
            null_tries: 0,
            next_seq: 1,
            block_start: 1,
            block_end: 1,
            deadline: Some(now.saturating_add(rto)),
            completion: None,
            resend: BlockMask::EMPTY,
            sent_end: 1,
            timed: None,
            backoff: 0,
            rts_at: None,
        });
        Ok(SendHandle(msg_id))
    }

    /// Aborts an outgoing message (paper: NULL). Its completion
    /// ([`SendStatus::Aborted`]) is reported at once and the engine stops reading its
    /// bytes; the engine keeps sending NULL until the receiver answers so that the
    /// per-peer message numbering stays in step.
    pub fn abort(&mut self, now: u64, handle: SendHandle) -> Result<(), AbortError> {
        let rto = self.cfg.retransmit_timeout;
        let st = self
            .send
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.msg_id == handle.0)
            .ok_or(AbortError::NotFound)?;
        match st.phase {
            SendPhase::Rts | SendPhase::Granted => {
                st.completion = Some(SendStatus::Aborted);
                start_null(st, now, rto);
                Ok(())
            }
            SendPhase::Nulling | SendPhase::Closing => Err(AbortError::Finished),
        }
    }

    /// [`Engine::close`] for the send table: aborts every message still sending.
    pub(super) fn abort_all(&mut self, now: u64) -> u64 {
        let rto = self.cfg.retransmit_timeout;
        let mut n: u64 = 0;
        for st in self.send.as_mut().iter_mut().filter_map(|s| s.st.as_mut()) {
            if matches!(st.phase, SendPhase::Rts | SendPhase::Granted) {
                st.completion = Some(SendStatus::Aborted);
                start_null(st, now, rto);
                n = n.saturating_add(1);
            }
        }
        n
    }

    pub(super) fn rx_reply(&mut self, now: u64, r: &Repr) -> Result<(), RxDrop> {
        let mut accepted = None;
        self.rx_reply_one(now, r, &mut accepted)?;
        if let Some((dst, msg_num, rts_at)) = accepted {
            self.resend_held_rts(now, dst, msg_num, rts_at);
        }
        Ok(())
    }

    /// The receiver `dst` accepted message `msg_num`, whose RTS went out at
    /// `rts_at`: later messages to it whose RTS went out before that arrived
    /// while it still waited for `msg_num` and were dropped (it takes a
    /// sender's messages in msgNum order, section 3.5), so their RTSs are sent
    /// again now rather than at their timeouts, which lengthen while the
    /// first message was held (a receive not yet posted). A receiver that did
    /// take one drops the copy as stale.
    fn resend_held_rts(&mut self, now: u64, dst: u32, msg_num: u32, rts_at: u64) {
        let cfg = self.cfg;
        let rtt = self.rtt;
        for st in self.send.as_mut().iter_mut().filter_map(|s| s.st.as_mut()) {
            let later = seq_diff(st.msg_num, msg_num) > 0;
            if st.dst == dst
                && later
                && st.phase == SendPhase::Rts
                && st.tx == SendTx::None
                && st.rts_at.is_some_and(|t| t < rts_at)
            {
                st.tx = SendTx::Rts;
                st.backoff = 0;
                st.deadline = Some(now.saturating_add(timeout(&rtt, &cfg, st)));
            }
        }
    }

    fn rx_reply_one(
        &mut self,
        now: u64,
        r: &Repr,
        accepted: &mut Option<(u32, u32, u64)>,
    ) -> Result<(), RxDrop> {
        let cfg = self.cfg;
        let naks = cfg.recovery != Recovery::Timeout;
        let rtt = &mut self.rtt;
        let found = self
            .send
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.msg_id == r.msg_id && s.dst == r.dst_nid);
        let Some(st) = found else {
            if matches!(r.ptype, PacketType::MsgEnd | PacketType::MsgDrop) {
                // Answer a stray final reply with a GCH so the receiver can free
                // its state early (our own GCH was lost).
                self.push_ctrl(Ctrl {
                    ptype: PacketType::Gch,
                    src: r.src_nid,
                    dst: r.dst_nid,
                    msg_id: r.msg_id,
                    msg_num: r.msg_num,
                    info2: r.info2,
                });
                return Ok(());
            }
            return Err(RxDrop::UnknownMessage);
        };
        match r.ptype {
            PacketType::Cts => {
                // A grant continues where the block ends. A receiver with NAKs
                // may grant past that: after a restart it resumes where it is
                // (not where the restart began), and during a go-back pass it
                // may already have what is being resent.
                let waiting = match st.phase {
                    SendPhase::Rts => st.data_pkts > 0,
                    SendPhase::Granted => {
                        st.next_seq == st.block_end || (naks && r.seq >= st.block_end)
                    }
                    _ => false,
                };
                if !waiting {
                    return Err(RxDrop::Unexpected);
                }
                let resumes = naks && st.phase == SendPhase::Granted && r.seq > st.next_seq;
                if r.info2 != st.attempt || (r.seq != st.next_seq && !resumes) {
                    return Err(RxDrop::Stale);
                }
                if r.info1 == 0 || r.seq == 0 || r.seq > st.data_pkts {
                    return Err(RxDrop::Malformed);
                }
                let left = st.data_pkts.saturating_sub(r.seq).saturating_add(1);
                if st.phase == SendPhase::Rts {
                    *accepted = st.rts_at.map(|t| (st.dst, st.msg_num, t));
                }
                replied(rtt, st, now, r.info2);
                st.phase = SendPhase::Granted;
                st.next_seq = r.seq;
                st.block_start = r.seq;
                st.block_end = r.seq.saturating_add(r.info1.min(left));
                st.resend.clear();
                st.tx = SendTx::Data;
                st.deadline = Some(now.saturating_add(timeout(rtt, &cfg, st)));
                Ok(())
            }
            PacketType::Nak | PacketType::SelectiveNak => {
                if st.phase != SendPhase::Granted {
                    return Err(RxDrop::Unexpected);
                }
                // Only packets of this attempt's block that were sent.
                if r.info2 != st.attempt || r.seq < st.block_start || r.seq >= st.next_seq {
                    return Err(RxDrop::Stale);
                }
                // The block's reply now waits for the packets sent again: no
                // round-trip sample from it.
                st.timed = None;
                st.backoff = 0;
                if r.ptype == PacketType::Nak {
                    st.next_seq = r.seq;
                    st.resend.clear();
                    st.tx = SendTx::Data;
                } else {
                    if r.tag & 1 == 0 {
                        return Err(RxDrop::Malformed);
                    }
                    let mut any = false;
                    for i in (0..SNAK_SPAN).filter(|&i| r.tag.wrapping_shr(i) & 1 != 0) {
                        let p = r.seq.saturating_add(i);
                        if p < st.next_seq {
                            any |= st.resend.insert(p.saturating_sub(st.block_start));
                        }
                    }
                    if !any {
                        return Err(RxDrop::Stale);
                    }
                }
                self.counters.naks_received = self.counters.naks_received.saturating_add(1);
                Ok(())
            }
            _ => {
                let status = if r.ptype == PacketType::MsgEnd {
                    SendStatus::Delivered {
                        accepted: r.info1.min(st.len),
                    }
                } else {
                    SendStatus::Dropped
                };
                if st.phase == SendPhase::Rts {
                    *accepted = st.rts_at.map(|t| (st.dst, st.msg_num, t));
                }
                match st.phase {
                    SendPhase::Rts | SendPhase::Granted => {
                        replied(rtt, st, now, r.info2);
                        st.completion = Some(status);
                    }
                    SendPhase::Nulling => {}
                    SendPhase::Closing => return Err(RxDrop::Stale),
                }
                st.phase = SendPhase::Closing;
                st.tx = SendTx::Gch;
                st.resend.clear();
                st.deadline = None;
                Ok(())
            }
        }
    }

    pub(super) fn poll_send_control(
        &mut self,
        now: u64,
        header: &mut [u8; HEADER_LEN],
    ) -> Option<Transmit> {
        let cfg = self.cfg;
        let local = cfg.local_nid;
        let rtt = self.rtt;
        let caps = cfg.recovery.caps();
        let next_id = self.next_msg_id;
        let counters = &mut self.counters;
        // Oldest message first: paper section 3.5 resends the lowest message number.
        let slot = self
            .send
            .as_mut()
            .iter_mut()
            .filter(|s| {
                s.st.as_ref()
                    .is_some_and(|st| matches!(st.tx, SendTx::Rts | SendTx::Null | SendTx::Gch))
            })
            .max_by_key(|s| {
                s.st.as_ref()
                    .map_or(0, |st| next_id.wrapping_sub(st.msg_id))
            })?;
        let st = slot.st.as_mut()?;
        let tx = core::mem::replace(&mut st.tx, SendTx::None);
        let mut repr = Repr {
            ptype: PacketType::Gch,
            payload_len: 0,
            src_nid: local,
            dst_nid: st.dst,
            msg_id: st.msg_id,
            msg_num: st.msg_num,
            len: st.len,
            seq: 0,
            info1: 0,
            info2: st.attempt,
            tag: 0,
        };
        let mut payload = None;
        match tx {
            SendTx::Rts => {
                let first = st.len.min(st.chunk);
                repr.ptype = if st.data_pkts == 0 {
                    PacketType::LastRts
                } else {
                    PacketType::Rts
                };
                repr.payload_len = u16::try_from(first).unwrap_or(0);
                repr.tag = st.tag;
                repr.info1 = caps;
                if st.rts_at.is_some() {
                    counters.resent_pkts = counters.resent_pkts.saturating_add(1);
                    counters.resent_bytes = counters.resent_bytes.saturating_add(u64::from(first));
                }
                payload = (first > 0).then_some(PayloadRef {
                    cookie: st.cookie,
                    offset: 0,
                    len: first,
                });
                // A first RTS or a retry is timed (a reply names its
                // attempt); one sent again behind a held message is not (its
                // first copy may have been taken, with the same attempt).
                st.timed = (st.rts_at.is_none() || st.retrying).then_some(now);
                st.rts_at = Some(now);
                st.deadline = Some(now.saturating_add(timeout(&rtt, &cfg, st)));
            }
            SendTx::Null => {
                repr.ptype = PacketType::Null;
                st.deadline = Some(now.saturating_add(cfg.retransmit_timeout));
            }
            _ => {}
        }
        let to = st.dst;
        let retry = take_retry(st, tx == SendTx::Rts);
        repr.emit(&mut Packet::new_unchecked(&mut header[..]));
        if st.phase == SendPhase::Closing && st.completion.is_none() {
            slot.st = None;
        }
        Some(Transmit {
            to,
            ptype: repr.ptype,
            payload,
            retry,
        })
    }

    pub(super) fn poll_send_data(
        &mut self,
        now: u64,
        header: &mut [u8; HEADER_LEN],
    ) -> Option<Transmit> {
        let cfg = self.cfg;
        let local = cfg.local_nid;
        let rtt = self.rtt;
        let counters = &mut self.counters;
        let slots = self.send.as_mut();
        // Round robin by block, not by packet: the message being sent keeps the
        // link until its grant is used up. Its CTS then comes back while the
        // other messages' blocks go out, instead of every message's block
        // ending at once and the link waiting a round trip for their CTSs.
        let n = slots.len();
        let idx = (0..n)
            .filter_map(|k| self.rr.wrapping_add(k).checked_rem(n))
            .find(|&i| {
                slots
                    .get(i)
                    .and_then(|s| s.st.as_ref())
                    .is_some_and(|st| st.tx == SendTx::Data || !st.resend.is_empty())
            })?;
        self.rr = idx;
        let st = slots.get_mut(idx)?.st.as_mut()?;
        // Packets a selective NAK asked for first, then the block's next one.
        let asked = st.resend.pop_first();
        let s = asked.map_or(st.next_seq, |pos| st.block_start.saturating_add(pos));
        let offset = s.saturating_mul(st.chunk);
        let plen = st.len.saturating_sub(offset).min(st.chunk);
        let ptype = if s >= st.data_pkts {
            PacketType::LastData
        } else if s.saturating_add(1) >= st.block_end {
            PacketType::StopData
        } else {
            PacketType::Data
        };
        let repr = Repr {
            ptype,
            payload_len: u16::try_from(plen).unwrap_or(0),
            src_nid: local,
            dst_nid: st.dst,
            msg_id: st.msg_id,
            msg_num: st.msg_num,
            len: st.len,
            seq: s,
            info1: st.block_end.saturating_sub(st.block_start),
            info2: st.attempt,
            tag: 0,
        };
        repr.emit(&mut Packet::new_unchecked(&mut header[..]));
        if asked.is_none() {
            st.next_seq = s.saturating_add(1);
            if st.next_seq >= st.block_end {
                st.tx = SendTx::None;
                // The block's last packet: its reply (CTS or the final one)
                // follows at once.
                st.timed = Some(now);
            }
        }
        if s < st.sent_end {
            counters.resent_pkts = counters.resent_pkts.saturating_add(1);
            counters.resent_bytes = counters.resent_bytes.saturating_add(u64::from(plen));
        }
        st.sent_end = st.sent_end.max(s.saturating_add(1));
        st.deadline = Some(now.saturating_add(timeout(&rtt, &cfg, st)));
        Some(Transmit {
            to: st.dst,
            ptype,
            payload: Some(PayloadRef {
                cookie: st.cookie,
                offset,
                len: plen,
            }),
            retry: take_retry(st, true),
        })
    }

    /// [`Engine::poll_completion`] for the send table.
    pub(super) fn send_completion(&mut self) -> Option<Completion> {
        for slot in self.send.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            if let Some(status) = st.completion.take() {
                let c = Completion::Send {
                    cookie: st.cookie,
                    dst: st.dst,
                    msg_id: st.msg_id,
                    status,
                };
                if st.phase == SendPhase::Closing && st.tx == SendTx::None {
                    slot.st = None;
                }
                return Some(c);
            }
        }
        None
    }

    /// Deadlines of the send table: retransmission of RTS, data or NULL.
    pub(super) fn send_deadlines(&self) -> impl Iterator<Item = u64> + '_ {
        self.send
            .as_ref()
            .iter()
            .filter_map(|s| s.st.as_ref())
            .filter_map(|st| st.deadline)
    }

    /// [`Engine::handle_timeout`] for the send table: retries, failures after
    /// `max_retries` and NULL retries.
    pub(super) fn send_timeouts(&mut self, now: u64) {
        let cfg = self.cfg;
        let rto = cfg.retransmit_timeout;
        let rtt = self.rtt;
        let counters = &mut self.counters;
        for slot in self.send.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            match st.deadline {
                Some(d) if d <= now => {}
                _ => continue,
            }
            match st.phase {
                SendPhase::Rts | SendPhase::Granted => {
                    st.attempt = st.attempt.wrapping_add(1);
                    if st.attempt > cfg.max_retries {
                        st.completion = Some(SendStatus::Failed);
                        start_null(st, now, rto);
                        continue;
                    }
                    counters.retransmits = counters.retransmits.saturating_add(1);
                    st.retrying = true;
                    st.resend.clear();
                    st.timed = None;
                    st.backoff = st.backoff.saturating_add(1);
                    if st.phase == SendPhase::Rts {
                        st.tx = SendTx::Rts;
                    } else {
                        let s = match cfg.restart {
                            RestartPolicy::FromStart => 1,
                            RestartPolicy::FromLastGrant => st.block_start,
                        };
                        st.next_seq = s;
                        st.block_start = s;
                        st.block_end = s.saturating_add(1);
                        st.tx = SendTx::Data;
                    }
                    st.deadline = Some(now.saturating_add(timeout(&rtt, &cfg, st)));
                }
                SendPhase::Nulling => {
                    st.null_tries = st.null_tries.saturating_add(1);
                    st.attempt = st.attempt.wrapping_add(1);
                    if st.null_tries > cfg.max_retries {
                        // The peer is gone; give up quietly.
                        st.phase = SendPhase::Closing;
                        st.tx = SendTx::None;
                        st.deadline = None;
                        if st.completion.is_none() {
                            slot.st = None;
                        }
                        continue;
                    }
                    counters.null_retries = counters.null_retries.saturating_add(1);
                    st.tx = SendTx::Null;
                    st.deadline = Some(now.saturating_add(rto));
                }
                SendPhase::Closing => st.deadline = None,
            }
        }
    }
}

fn start_null(st: &mut SendState, now: u64, rto: u64) {
    st.phase = SendPhase::Nulling;
    st.resend.clear();
    st.tx = SendTx::Null;
    st.null_tries = 0;
    st.deadline = Some(now.saturating_add(rto));
}
