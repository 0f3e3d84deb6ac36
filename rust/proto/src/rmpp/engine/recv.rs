// SPDX-License-Identifier: GPL-2.0
//! The receiver side of the [`Engine`]: the receive table's entries ([`RecvSlot`])
//! and the life of an incoming message: its first packet offered to the [`Upcall`],
//! its data packets placed in order, the grants (CTS) of Figure 8 from the pool of
//! `outstanding` packets, the final reply (MSGEND / MSGDROP), the sender's NULL and
//! GCH, reclaim after the reclaim timeout, and its completion; and the
//! receiver-driven recovery of [`Recovery`]: NAK on a sequence gap, or packets
//! kept across gaps and the missing ones listed in selective NAKs.

use super::super::flow::cts_grant;
use super::super::mask::BlockMask;
use super::super::wire::{Packet, PacketType, Repr, HEADER_LEN, SNAK_SPAN};
use super::{
    Arrival, Completion, Config, Counters, Ctrl, Decision, Engine, PeerState, Placement, Recovery,
    RecvStatus, RxDrop, SendSlot, Transmit, Upcall,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Final {
    End { accepted: u32 },
    Drop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reply {
    Cts {
        seq: u32,
        n: u32,
    },
    Final,
    /// Go back to the first missing packet (`expected`).
    Nak,
    /// The missing packets not asked for yet, computed when it is sent.
    SelectiveNak,
}

#[derive(Clone, Copy, Debug)]
struct RecvState {
    done: Option<Final>,
    src: u32,
    msg_id: u32,
    msg_num: u32,
    len: u32,
    tag: u64,
    ctx: u64,
    accept: u32,
    chunk: u32,
    /// Last data sequence number the receiver needs (covers byte `accept - 1`).
    last_seq: u32,
    expected: u32,
    granted_end: u32,
    grant_left: u32,
    attempt: u32,
    reply: Option<Reply>,
    last_activity: u64,
    completion: Option<RecvStatus>,
    /// GCH seen or reclaimed: free as soon as the completion is handed out.
    release: bool,
    /// When the final reply was last re-sent to probe for a lost GCH.
    probed_at: u64,
    /// Receiver-driven recovery for this message (the RTS's offer and ours).
    mode: Recovery,
    /// First packet of the current grant: `got` and `asked` count from it.
    base: u32,
    /// Selective: packets of the grant received after a gap.
    got: BlockMask,
    /// Selective: packets of the grant asked for again, not received since.
    asked: BlockMask,
    /// One past the highest packet of the grant received.
    seen_end: u32,
    /// NAK: the packet it asked for, and the latest packet dropped after it (a
    /// lower one starts the sender's next pass, which lost it again).
    nak: Option<(u32, u32)>,
}

/// One entry of the receive table. Opaque; create with `RecvSlot::default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecvSlot {
    st: Option<RecvState>,
}

/// Signed distance `a - b` in wrapping u32 sequence space.
pub(super) fn seq_diff(a: u32, b: u32) -> i32 {
    i32::from_ne_bytes(a.wrapping_sub(b).to_ne_bytes())
}

impl<SS, RS, PS> Engine<SS, RS, PS>
where
    SS: AsMut<[SendSlot]> + AsRef<[SendSlot]>,
    RS: AsMut<[RecvSlot]> + AsRef<[RecvSlot]>,
    PS: AsMut<[PeerState]> + AsRef<[PeerState]>,
{
    /// Occupied receive-table entries.
    pub fn active_recvs(&self) -> usize {
        self.recv.as_ref().iter().filter(|s| s.st.is_some()).count()
    }

    pub(super) fn rx_rts<'a, U: Upcall + ?Sized>(
        &mut self,
        now: u64,
        r: &Repr,
        payload: &'a [u8],
        up: &mut U,
    ) -> Result<Option<Placement<'a>>, RxDrop> {
        let plen = u32::from(r.payload_len);
        let short = r.ptype == PacketType::LastRts;
        if (short && plen != r.len) || (!short && (plen == 0 || plen >= r.len)) {
            return Err(RxDrop::Malformed);
        }
        let cfg = self.cfg;
        let outstanding = &mut self.outstanding;
        if let Some(st) = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.src == r.src_nid && s.msg_id == r.msg_id)
        {
            // A retried RTS: our CTS or final answer was lost.
            if seq_diff(r.info2, st.attempt) <= 0 {
                return Err(RxDrop::Stale);
            }
            st.attempt = r.info2;
            st.last_activity = now;
            if st.done.is_some() {
                st.reply = Some(Reply::Final);
            } else {
                release_grants(st, outstanding);
                st.expected = 1;
                grant(st, outstanding, &cfg, &mut self.counters);
            }
            return Ok(None);
        }
        if self.closing {
            // Nobody takes new messages: they stay with their senders.
            return Err(RxDrop::Deferred);
        }
        let peer = usize::try_from(r.src_nid)
            .ok()
            .and_then(|i| self.peers.as_mut().get_mut(i))
            .ok_or(RxDrop::UnknownPeer)?;
        match seq_diff(r.msg_num, peer.rx_next) {
            d if d < 0 => return Err(RxDrop::Stale),
            d if d > 0 => return Err(RxDrop::OutOfOrder),
            _ => {}
        }
        let Some(slot) = self.recv.as_mut().iter_mut().find(|s| s.st.is_none()) else {
            probe_for_lost_gch(self.recv.as_mut(), now, cfg.retransmit_timeout);
            return Err(RxDrop::TableFull);
        };
        let arrival = Arrival {
            src: r.src_nid,
            msg_id: r.msg_id,
            msg_num: r.msg_num,
            len: r.len,
            tag: r.tag,
            first: payload,
        };
        let mut st = RecvState {
            done: None,
            src: r.src_nid,
            msg_id: r.msg_id,
            msg_num: r.msg_num,
            len: r.len,
            tag: r.tag,
            ctx: 0,
            accept: 0,
            chunk: plen,
            last_seq: 0,
            expected: 1,
            granted_end: 1,
            grant_left: 0,
            attempt: r.info2,
            reply: None,
            last_activity: now,
            completion: None,
            release: false,
            probed_at: now,
            mode: cfg.recovery.negotiate(r.info1),
            base: 1,
            got: BlockMask::EMPTY,
            asked: BlockMask::EMPTY,
            seen_end: 1,
            nak: None,
        };
        let placement = match up.arrival(&arrival) {
            Decision::Defer => return Err(RxDrop::Deferred),
            Decision::Drop => {
                st.done = Some(Final::Drop);
                st.reply = Some(Reply::Final);
                None
            }
            Decision::Accept { len, ctx } => {
                let accept = len.min(r.len);
                st.ctx = ctx;
                st.accept = accept;
                let first = usize::try_from(accept.min(plen))
                    .ok()
                    .and_then(|n| payload.get(..n))
                    .unwrap_or(&[]);
                if accept <= plen {
                    st.done = Some(Final::End { accepted: accept });
                    st.reply = Some(Reply::Final);
                    st.completion = Some(RecvStatus::Complete);
                } else {
                    // accept > plen > 0, so the division is by a non-zero chunk.
                    st.last_seq = accept.saturating_sub(1).checked_div(plen).unwrap_or(0);
                    grant(&mut st, outstanding, &cfg, &mut self.counters);
                }
                (!first.is_empty()).then_some(Placement {
                    ctx,
                    src: r.src_nid,
                    msg_id: r.msg_id,
                    offset: 0,
                    data: first,
                })
            }
        };
        peer.rx_next = peer.rx_next.wrapping_add(1);
        slot.st = Some(st);
        Ok(placement)
    }

    pub(super) fn rx_data<'a>(
        &mut self,
        now: u64,
        r: &Repr,
        payload: &'a [u8],
    ) -> Result<Option<Placement<'a>>, RxDrop> {
        let cfg = self.cfg;
        let outstanding = &mut self.outstanding;
        let st = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.src == r.src_nid && s.msg_id == r.msg_id)
            .ok_or(RxDrop::UnknownMessage)?;
        let newer = seq_diff(r.info2, st.attempt);
        if st.done.is_some() {
            // The sender restarted: our MSGEND / MSGDROP was lost (section 3.2).
            if newer <= 0 {
                return Err(RxDrop::Stale);
            }
            st.attempt = r.info2;
            st.last_activity = now;
            st.reply = Some(Reply::Final);
            return Ok(None);
        }
        let s = r.seq;
        let restart = newer > 0;
        if newer < 0 || s == 0 || r.len != st.len {
            return Err(if r.len != st.len {
                RxDrop::Malformed
            } else {
                RxDrop::Stale
            });
        }
        // A packet past the first missing one of the grant: a gap.
        let gap = if restart {
            if s > st.expected {
                return Err(RxDrop::Stale);
            }
            false
        } else {
            if s < st.expected || s >= st.granted_end {
                return Err(RxDrop::Stale);
            }
            s > st.expected
        };
        let pos = s.saturating_sub(st.base);
        match st.mode {
            Recovery::Timeout if gap => return Err(RxDrop::Stale),
            Recovery::SelectiveNak if gap && st.got.contains(pos) => return Err(RxDrop::Stale),
            _ => {}
        }
        // Validate the packet's size against the message's chunking.
        let offset = s.checked_mul(st.chunk).ok_or(RxDrop::Malformed)?;
        let rest = st.len.checked_sub(offset).ok_or(RxDrop::Malformed)?;
        let want = rest.min(st.chunk);
        let plen = u32::from(r.payload_len);
        if want == 0 || plen != want || (r.ptype == PacketType::LastData) != (want == rest) {
            return Err(RxDrop::Malformed);
        }
        if gap && st.mode == Recovery::Nak {
            // Go-back: the packet is dropped; the first missing one is asked for.
            nak_gap(st, s);
            return Err(RxDrop::Stale);
        }
        if restart && st.mode != Recovery::Timeout && s < st.expected {
            // A sender with NAKs restarted below what we have: resume where we
            // are, granting from the first missing packet (it takes a grant
            // past its restart point).
            release_grants(st, outstanding);
            st.attempt = r.info2;
            st.last_activity = now;
            grant(st, outstanding, &cfg, &mut self.counters);
            return Ok(None);
        }
        if restart {
            // Resynchronise on the sender's restart (section 3.5).
            release_grants(st, outstanding);
            st.attempt = r.info2;
            st.expected = s;
            st.granted_end = s.saturating_add(1);
            start_block(st);
        }
        if st.grant_left > 0 {
            st.grant_left = st.grant_left.saturating_sub(1);
            *outstanding = outstanding.saturating_sub(1);
        }
        st.seen_end = st.seen_end.max(s.saturating_add(1));
        st.last_activity = now;
        if gap {
            // Selective: kept, and the holes below it not asked for yet are.
            let resent = st.asked.contains(pos);
            st.got.insert(pos);
            if resent {
                relost(st, s);
            }
            if first_unasked(st).is_some() {
                ask(st, Reply::SelectiveNak);
            }
        } else {
            st.expected = s.saturating_add(1);
            while st.got.contains(st.expected.saturating_sub(st.base)) {
                st.expected = st.expected.saturating_add(1);
            }
        }
        let placement = if offset < st.accept {
            let n = usize::try_from(plen.min(st.accept.saturating_sub(offset))).unwrap_or(0);
            payload.get(..n).map(|data| Placement {
                ctx: st.ctx,
                src: st.src,
                msg_id: st.msg_id,
                offset,
                data,
            })
        } else {
            None
        };
        if st.expected > st.last_seq {
            release_grants(st, outstanding);
            st.done = Some(Final::End {
                accepted: st.accept,
            });
            st.reply = Some(Reply::Final);
            st.completion = Some(RecvStatus::Complete);
        } else if st.expected >= st.granted_end {
            grant(st, outstanding, &cfg, &mut self.counters);
        }
        Ok(placement)
    }

    pub(super) fn rx_gch(&mut self, r: &Repr) -> Result<(), RxDrop> {
        let slot = self
            .recv
            .as_mut()
            .iter_mut()
            .find(|s| {
                s.st.as_ref()
                    .is_some_and(|st| st.src == r.src_nid && st.msg_id == r.msg_id)
            })
            .ok_or(RxDrop::UnknownMessage)?;
        let Some(st) = slot.st.as_mut() else {
            return Err(RxDrop::UnknownMessage);
        };
        if st.done.is_none() {
            return Err(RxDrop::Unexpected);
        }
        st.release = true;
        if st.completion.is_none() {
            slot.st = None;
        }
        Ok(())
    }

    pub(super) fn rx_null(&mut self, now: u64, r: &Repr) -> Result<(), RxDrop> {
        let outstanding = &mut self.outstanding;
        let found = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.src == r.src_nid && s.msg_id == r.msg_id);
        if let Some(st) = found {
            st.last_activity = now;
            if seq_diff(r.info2, st.attempt) > 0 {
                st.attempt = r.info2;
            }
            if st.done.is_none() {
                release_grants(st, outstanding);
                st.done = Some(Final::Drop);
                st.completion = Some(RecvStatus::Aborted);
            }
            st.reply = Some(Reply::Final);
            return Ok(());
        }
        let peer = usize::try_from(r.src_nid)
            .ok()
            .and_then(|i| self.peers.as_mut().get_mut(i))
            .ok_or(RxDrop::UnknownPeer)?;
        let d = seq_diff(r.msg_num, peer.rx_next);
        if d > 0 {
            return Err(RxDrop::OutOfOrder);
        }
        if d == 0 {
            // The message never arrived here: consume its number (section 3.2).
            peer.rx_next = peer.rx_next.wrapping_add(1);
        }
        self.push_ctrl(Ctrl {
            ptype: PacketType::MsgDrop,
            src: r.src_nid,
            dst: r.dst_nid,
            msg_id: r.msg_id,
            msg_num: r.msg_num,
            info2: r.info2,
        });
        Ok(())
    }

    pub(super) fn poll_recv_reply(&mut self, header: &mut [u8; HEADER_LEN]) -> Option<Transmit> {
        let local = self.cfg.local_nid;
        let counters = &mut self.counters;
        let (st, (ptype, seq, info1, tag)) = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find_map(|st| {
                let reply = st.reply.take()?;
                let out = match (reply, st.done) {
                    (Reply::Cts { seq, n }, _) => (PacketType::Cts, seq, n, 0),
                    (Reply::Final, Some(Final::End { accepted })) => {
                        (PacketType::MsgEnd, 0, accepted, 0)
                    }
                    (Reply::Final, _) => (PacketType::MsgDrop, 0, 0, 0),
                    // A gap filled since it was noticed needs no NAK.
                    (_, Some(_)) => return None,
                    (Reply::Nak, None) => (PacketType::Nak, st.expected, 0, 0),
                    (Reply::SelectiveNak, None) => {
                        let (seq, mask) = take_unasked(st)?;
                        (PacketType::SelectiveNak, seq, mask.count_ones(), mask)
                    }
                };
                Some((st, out))
            })?;
        if matches!(ptype, PacketType::Nak | PacketType::SelectiveNak) {
            counters.naks_sent = counters.naks_sent.saturating_add(1);
        }
        let repr = Repr {
            ptype,
            payload_len: 0,
            src_nid: st.src,
            dst_nid: local,
            msg_id: st.msg_id,
            msg_num: st.msg_num,
            len: st.len,
            seq,
            info1,
            info2: st.attempt,
            tag,
        };
        repr.emit(&mut Packet::new_unchecked(&mut header[..]));
        Some(Transmit {
            to: st.src,
            ptype,
            payload: None,
            retry: None,
        })
    }

    /// [`Engine::poll_completion`] for the receive table.
    pub(super) fn recv_completion(&mut self) -> Option<Completion> {
        for slot in self.recv.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            if let Some(status) = st.completion.take() {
                let c = Completion::Recv {
                    ctx: st.ctx,
                    src: st.src,
                    msg_id: st.msg_id,
                    msg_num: st.msg_num,
                    tag: st.tag,
                    len: st.len,
                    accepted: st.accept,
                    status,
                };
                if st.release {
                    slot.st = None;
                }
                return Some(c);
            }
        }
        None
    }

    /// [`Engine::close`] for the receive table: refuses the messages still
    /// arriving, forgets completions, keeps finished messages until their GCH.
    pub(super) fn close_receives(&mut self, now: u64) {
        let outstanding = &mut self.outstanding;
        for slot in self.recv.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            if st.done.is_none() {
                release_grants(st, outstanding);
                st.done = Some(Final::Drop);
                st.reply = Some(Reply::Final);
            }
            st.completion = None;
            st.probed_at = now;
            if st.release {
                slot.st = None;
            }
        }
    }

    /// Deadlines of the receive table: reclaim of messages without activity,
    /// and once closing, the re-sending of final replies.
    pub(super) fn recv_deadlines(&self) -> impl Iterator<Item = u64> + '_ {
        let reclaim = self.cfg.reclaim_timeout;
        let probe = if self.closing {
            self.cfg.retransmit_timeout
        } else {
            u64::MAX
        };
        self.recv
            .as_ref()
            .iter()
            .filter_map(|s| s.st.as_ref())
            .filter(|st| !st.release)
            .map(move |st| {
                st.last_activity
                    .saturating_add(reclaim)
                    .min(st.probed_at.saturating_add(probe))
            })
    }

    /// [`Engine::handle_timeout`] for the receive table: reclaim (paper: ten minutes
    /// without GCH).
    pub(super) fn recv_timeouts(&mut self, now: u64) {
        let cfg = self.cfg;
        let outstanding = &mut self.outstanding;
        let closing = self.closing;
        for slot in self.recv.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            if st.release {
                continue;
            }
            if st.last_activity.saturating_add(cfg.reclaim_timeout) > now {
                // Closing: the final reply goes out again every retransmission
                // timeout. A sender that missed it completes; one that has
                // forgotten the message answers with the GCH that frees this
                // state.
                if closing && st.probed_at.saturating_add(cfg.retransmit_timeout) <= now {
                    st.probed_at = now;
                    st.reply = Some(Reply::Final);
                }
                continue;
            }
            if st.done.is_none() {
                release_grants(st, outstanding);
                st.done = Some(Final::Drop);
                st.completion = Some(RecvStatus::Abandoned);
            }
            st.reply = None;
            st.release = true;
            if st.completion.is_none() {
                slot.st = None;
            }
        }
    }
}

/// The receive table is full: re-send the final reply (MSGEND / MSGDROP) of the
/// finished message idle longest, at most once per retransmission timeout. A sender
/// that has forgotten the message answers with a stateless GCH (its first GCH was
/// lost), which frees the entry long before the reclaim timeout; a sender still
/// waiting takes it as the answer it missed. Either way the reply is true, so the
/// probe is safe.
fn probe_for_lost_gch(slots: &mut [RecvSlot], now: u64, rto: u64) {
    let oldest = slots
        .iter_mut()
        .filter_map(|s| s.st.as_mut())
        .filter(|st| st.done.is_some() && !st.release && st.probed_at.saturating_add(rto) <= now)
        .min_by_key(|st| st.last_activity);
    if let Some(st) = oldest {
        st.probed_at = now;
        st.reply = Some(Reply::Final);
    }
}

/// A new grant (or a restart): the gap state starts over at `expected`.
fn start_block(st: &mut RecvState) {
    st.base = st.expected;
    st.got.clear();
    st.asked.clear();
    st.seen_end = st.expected;
    st.nak = None;
}

/// Queues a NAK, unless a CTS or final reply is already queued (either makes
/// it moot).
fn ask(st: &mut RecvState, nak: Reply) {
    if st.reply.is_none() {
        st.reply = Some(nak);
    }
}

/// Go-back: packet `s` arrived while `expected` is missing. The first gap of a
/// pass asks for `expected`; later packets of the same pass (higher numbers) do
/// not ask again; a lower number starts the sender's next pass, which has lost
/// `expected` again.
fn nak_gap(st: &mut RecvState, s: u32) {
    let again = match st.nak {
        Some((e, last)) if e == st.expected => s <= last,
        _ => true,
    };
    st.nak = Some((st.expected, s));
    if again {
        ask(st, Reply::Nak);
    }
}

/// Selective: `s`, asked for again, arrived; the sender sends asked packets in
/// order, so asked ones below it that are still missing were lost again: they
/// may be asked for once more.
fn relost(st: &mut RecvState, s: u32) {
    for p in st.expected..s {
        let pos = p.saturating_sub(st.base);
        if !st.got.contains(pos) {
            st.asked.remove(pos);
        }
    }
}

/// Selective: the first missing packet below `seen_end` not asked for yet.
fn first_unasked(st: &RecvState) -> Option<u32> {
    (st.expected..st.seen_end).find(|&p| {
        let pos = p.saturating_sub(st.base);
        !st.got.contains(pos) && !st.asked.contains(pos)
    })
}

/// Selective: the missing packets not asked for yet, from the first of them
/// and at most [`SNAK_SPAN`] on, as a selective NAK's `(seq, mask)`; they are
/// marked asked.
fn take_unasked(st: &mut RecvState) -> Option<(u32, u64)> {
    let first = first_unasked(st)?;
    let end = st.seen_end.min(first.saturating_add(SNAK_SPAN));
    let mut mask = 0u64;
    for p in first..end {
        let pos = p.saturating_sub(st.base);
        if !st.got.contains(pos) && st.asked.insert(pos) {
            mask |= 1u64.wrapping_shl(p.wrapping_sub(first));
        }
    }
    Some((first, mask))
}

/// Returns a message's unused grants to the pool.
fn release_grants(st: &mut RecvState, outstanding: &mut u32) {
    *outstanding = outstanding.saturating_sub(st.grant_left);
    st.grant_left = 0;
}

/// Issues the next CTS for a message (Figure 8), never granting past the last packet
/// the receiver needs.
fn grant(st: &mut RecvState, outstanding: &mut u32, cfg: &Config, counters: &mut Counters) {
    let needed = st.last_seq.saturating_sub(st.expected).saturating_add(1);
    let rule = cts_grant(cfg.max_rcv_buf, cfg.nodes, *outstanding, cfg.max_data_pkts);
    let n = rule.min(needed).max(1);
    if rule < needed.min(cfg.max_data_pkts.max(1)) {
        counters.grants_limited = counters.grants_limited.saturating_add(1);
    }
    counters.grants = counters.grants.saturating_add(1);
    counters.granted_pkts = counters.granted_pkts.saturating_add(u64::from(n));
    *outstanding = outstanding.saturating_add(n);
    counters.peak_outstanding = counters.peak_outstanding.max(*outstanding);
    st.grant_left = n;
    st.granted_end = st.expected.saturating_add(n);
    start_block(st);
    st.reply = Some(Reply::Cts {
        seq: st.expected,
        n,
    });
}
