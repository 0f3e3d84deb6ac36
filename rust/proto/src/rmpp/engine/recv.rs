// SPDX-License-Identifier: GPL-2.0
//! The receiver side of the [`Engine`]: the receive table's entries ([`RecvSlot`])
//! and the life of an incoming message: its first packet offered to the [`Upcall`],
//! its data packets placed in order, the grants (CTS) of Figure 8 from the pool of
//! `outstanding` packets, the final reply (MSGEND / MSGDROP), the sender's NULL and
//! GCH, reclaim after the reclaim timeout, and its completion.

use super::super::flow::cts_grant;
use super::super::wire::{Packet, PacketType, Repr, HEADER_LEN};
use super::{
    Arrival, Completion, Config, Counters, Ctrl, Decision, Engine, PeerState, Placement,
    RecvStatus, RxDrop, SendSlot, Transmit, Upcall,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Final {
    End { accepted: u32 },
    Drop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reply {
    Cts { seq: u32, n: u32 },
    Final,
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
}

/// One entry of the receive table. Opaque; create with `RecvSlot::default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecvSlot {
    st: Option<RecvState>,
}

/// Signed distance `a - b` in wrapping u32 sequence space.
fn seq_diff(a: u32, b: u32) -> i32 {
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
        if restart {
            if s > st.expected {
                return Err(RxDrop::Stale);
            }
        } else if s != st.expected || s >= st.granted_end {
            return Err(RxDrop::Stale);
        }
        // Validate the packet's size against the message's chunking.
        let offset = s.checked_mul(st.chunk).ok_or(RxDrop::Malformed)?;
        let rest = st.len.checked_sub(offset).ok_or(RxDrop::Malformed)?;
        let want = rest.min(st.chunk);
        let plen = u32::from(r.payload_len);
        if want == 0 || plen != want || (r.ptype == PacketType::LastData) != (want == rest) {
            return Err(RxDrop::Malformed);
        }
        if restart {
            // Resynchronise on the sender's restart (section 3.5).
            release_grants(st, outstanding);
            st.attempt = r.info2;
            st.expected = s;
            st.granted_end = s.saturating_add(1);
        }
        if st.grant_left > 0 {
            st.grant_left = st.grant_left.saturating_sub(1);
            *outstanding = outstanding.saturating_sub(1);
        }
        st.expected = s.saturating_add(1);
        st.last_activity = now;
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
        let st = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.reply.is_some())?;
        let reply = st.reply.take()?;
        let (ptype, seq, info1) = match (reply, st.done) {
            (Reply::Cts { seq, n }, _) => (PacketType::Cts, seq, n),
            (Reply::Final, Some(Final::End { accepted })) => (PacketType::MsgEnd, 0, accepted),
            (Reply::Final, _) => (PacketType::MsgDrop, 0, 0),
        };
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
            tag: 0,
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
    st.reply = Some(Reply::Cts {
        seq: st.expected,
        n,
    });
}
