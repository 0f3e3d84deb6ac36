// SPDX-License-Identifier: GPL-2.0
//! The entity's protocol steps: a received packet (the Request buffers a
//! server's new Requests take, and where data is placed), the pump that
//! follows every step (packets out through the stack, with their checksum;
//! completions to the CQ; the timer armed for the next deadline), and the
//! flush of a closing entity.

use super::*;
use crate::{
    proto::vmtp::{
        checksum::Summer,
        engine::{Addr, Arrival, Completion, Decision, Transmit, TxStatus},
        wire::{code, HEADER_LEN},
    },
    sys::{errno::emsgsize, netdev::now_ns},
    vmtp::stack::{drop_counter, Member},
};

/// Times one pump handles deadlines that are already due before it leaves
/// the rest to the timer.
const PUMP_ROUNDS: usize = 8;

/// The timer's delay for a deadline `at` (ns) from `now`, rounded up to
/// whole milliseconds.
fn delay_ms(at: u64, now: u64) -> u32 {
    let ns = at.saturating_sub(now);
    u32::try_from(ns.div_ceil(1_000_000)).unwrap_or(u32::MAX).max(1)
}

impl Member for Entity {
    fn deliver(self: Arc<Self>, stack: &Stack, src: Addr, packet: &[u8], now: u64) {
        let mut g = self.inner.lock();
        if g.stack.is_none() {
            return;
        }
        let Inner { engine, tx, posted, .. } = &mut *g;
        // A server's new Request takes the oldest posted buffer, or waits
        // for its client's retransmission.
        let mut up = |a: &Arrival| -> Decision {
            let oldest = posted
                .iter_mut()
                .enumerate()
                .filter_map(|(i, p)| p.as_mut().filter(|p| p.taken.is_none()).map(|p| (i, p)))
                .min_by_key(|(_, p)| p.seq);
            match oldest {
                Some((i, p)) => {
                    p.taken = Some(a.len);
                    Decision::Accept { ctx: i as u64, max: u32::try_from(p.buf.len()).unwrap_or(0) }
                }
                None => Decision::Defer,
            }
        };
        match engine.receive(now, src, packet, &mut up) {
            Ok(placements) => {
                stats::add(Vmtp::rx_packets, 1);
                for p in placements {
                    let buf = match self.params.role {
                        Role::Client => tx.as_ref().map(|t| &t.resp),
                        Role::Server => posted.get(p.ctx as usize).and_then(Option::as_ref).map(|p| &p.buf),
                    };
                    if let Some(b) = buf {
                        if b.write(p.offset as usize, p.data).is_ok() {
                            stats::add(Vmtp::rx_bytes, p.data.len() as u64);
                        }
                    }
                }
            }
            Err(e) => stats::add(drop_counter(e), 1),
        }
        self.pump(&mut g, stack);
    }
}

impl Entity {
    /// Sends what the engine has to send, hands finished work to the CQ and
    /// arms the timer for the next deadline.
    pub(super) fn pump(self: &Arc<Self>, g: &mut Inner, stack: &Stack) {
        for _ in 0..PUMP_ROUNDS {
            let now = now_ns();
            self.transmit(g, stack, now);
            self.complete(g);
            match g.engine.poll_timeout() {
                Some(at) if at <= now => g.engine.handle_timeout(now),
                Some(at) => {
                    let _ = self.timer.arm(self, delay_ms(at, now));
                    self.account(g);
                    return;
                }
                None => break,
            }
        }
        // Still due after the rounds: the timer comes back at once.
        if g.engine.poll_timeout().is_some() {
            let _ = self.timer.arm(self, 1);
        }
        self.account(g);
    }

    /// Every packet the engine wants to send now.
    pub(super) fn transmit(&self, g: &mut Inner, stack: &Stack, now: u64) {
        let Inner { engine, tx, responding, packet, .. } = g;
        let mut hdr = [0u8; HEADER_LEN];
        while let Some(t) = engine.poll_transmit(now, &mut hdr) {
            let source = t.payload.and_then(|p| match self.params.role {
                Role::Client => tx.as_ref().map(|t| &t.req),
                Role::Server => responding.get(p.cookie as usize).and_then(Option::as_ref).map(|r| &r.buf),
            });
            match build(packet, &hdr, &t, source, engine.config().checksum) {
                Ok(n) => {
                    stack.send(t.to, packet.get(..n).unwrap_or(&[]));
                    stats::add(Vmtp::tx_bytes, t.payload.map_or(0, |p| u64::from(p.len)));
                }
                Err(_) => stats::add(Vmtp::tx_errors, 1),
            }
        }
    }

    /// Hands the engine's finished work to the CQ.
    fn complete(&self, g: &mut Inner) {
        let Inner { engine, tx, posted, responding, .. } = g;
        while let Some(c) = engine.poll_completion() {
            let wc = match c {
                Completion::Transaction { transaction, status, .. } => {
                    let Some(t) = tx.take() else { continue };
                    let mut wc = self.wc(t.wr_id, SRNIC_WC_VMTP_RESPONSE);
                    wc.tag = t.server.0;
                    wc.src_nid = transaction;
                    match status {
                        TxStatus::Response { code, len, .. } => {
                            let placed = len.min(u32::try_from(t.resp.len()).unwrap_or(0));
                            wc.byte_len = placed;
                            wc.msg_len = len.into();
                            wc.term = code.value();
                            if placed < len {
                                wc.flags = SRNIC_WC_TRUNCATED;
                            }
                            stats::add(Vmtp::transactions, 1);
                        }
                        TxStatus::Sent => stats::add(Vmtp::transactions, 1),
                        TxStatus::Aborted => wc.status = SRNIC_WC_WR_FLUSH_ERR,
                        TxStatus::Failed(c) => {
                            wc.status = if c == code::RETRANS_TIMEOUT {
                                SRNIC_WC_RETRY_EXC_ERR
                            } else {
                                SRNIC_WC_REM_OP_ERR
                            };
                            wc.term = c & code::VALUE;
                            stats::add(Vmtp::failed, 1);
                        }
                    }
                    wc
                }
                Completion::Request { client, transaction, code, len, ctx, .. } => {
                    let Some(p) = posted.get_mut(ctx as usize).and_then(Option::take) else { continue };
                    let mut wc = self.wc(p.wr_id, SRNIC_WC_VMTP_REQUEST);
                    let size = p.taken.unwrap_or(len);
                    wc.byte_len = len;
                    wc.msg_len = size.into();
                    wc.tag = client.0;
                    wc.src_nid = transaction;
                    wc.term = code.value();
                    if len < size {
                        wc.flags = SRNIC_WC_TRUNCATED;
                    }
                    stats::add(Vmtp::requests, 1);
                    wc
                }
                Completion::RequestAbandoned { ctx, .. } => {
                    // The buffer stays posted for the next Request.
                    if let Some(p) = posted.get_mut(ctx as usize).and_then(Option::as_mut) {
                        p.taken = None;
                    }
                    stats::add(Vmtp::requests_abandoned, 1);
                    continue;
                }
                Completion::ResponseReleased { cookie, acked, .. } => {
                    let Some(r) = responding.get_mut(cookie as usize).and_then(Option::take) else { continue };
                    let mut wc = self.wc(r.wr_id, SRNIC_WC_VMTP_RESPONDED);
                    if acked {
                        stats::add(Vmtp::responses_acked, 1);
                    } else {
                        wc.status = SRNIC_WC_RETRY_EXC_ERR;
                        stats::add(Vmtp::responses_discarded, 1);
                    }
                    wc
                }
            };
            self.cq.push_notify(wc);
        }
    }

    fn wc(&self, wr_id: u64, opcode: u32) -> SrnicWc {
        SrnicWc { wr_id, status: SRNIC_WC_SUCCESS, opcode, qp_handle: self.handle, ..Default::default() }
    }

    /// The entity was closed (its engine entity too): its completions go
    /// out flushed, its posted buffers too.
    pub(super) fn flush(&self, g: &mut Inner) {
        let Inner { engine, tx, posted, responding, .. } = g;
        while let Some(c) = engine.poll_completion() {
            let wr_id = match c {
                Completion::Transaction { .. } => tx.take().map(|t| (t.wr_id, SRNIC_WC_VMTP_RESPONSE)),
                Completion::Request { ctx, .. } | Completion::RequestAbandoned { ctx, .. } => {
                    // Still posted: flushed below.
                    let _ = ctx;
                    None
                }
                Completion::ResponseReleased { cookie, .. } => responding
                    .get_mut(cookie as usize)
                    .and_then(Option::take)
                    .map(|r| (r.wr_id, SRNIC_WC_VMTP_RESPONDED)),
            };
            if let Some((wr_id, opcode)) = wr_id {
                let mut wc = self.wc(wr_id, opcode);
                wc.status = SRNIC_WC_WR_FLUSH_ERR;
                self.cq.push_notify(wc);
            }
        }
        let left = tx.take().map(|t| (t.wr_id, SRNIC_WC_VMTP_RESPONSE));
        let posted = posted.iter_mut().filter_map(Option::take).map(|p| (p.wr_id, SRNIC_WC_VMTP_REQUEST));
        let responding = responding.iter_mut().filter_map(Option::take).map(|r| (r.wr_id, SRNIC_WC_VMTP_RESPONDED));
        for (wr_id, opcode) in Iterator::chain(Iterator::chain(left.into_iter(), posted), responding) {
            let mut wc = self.wc(wr_id, opcode);
            wc.status = SRNIC_WC_WR_FLUSH_ERR;
            self.cq.push_notify(wc);
        }
    }

    /// Adds what the engine counted since the last time to the module's
    /// statistics.
    pub(super) fn account(&self, g: &mut Inner) {
        let c = g.engine.counters();
        let s = &g.seen;
        let new = |now: u64, seen: u64| now.saturating_sub(seen);
        stats::add(Vmtp::tx_packets, new(c.tx_packets, s.tx_packets));
        stats::add(Vmtp::retransmitted_blocks, new(c.retransmitted_blocks, s.retransmitted_blocks));
        stats::add(Vmtp::timeouts, new(c.timeouts, s.timeouts));
        stats::add(Vmtp::notifies_sent, new(c.notifies_sent, s.notifies_sent));
        stats::add(Vmtp::blocks_requested, new(c.blocks_requested, s.blocks_requested));
        stats::add(Vmtp::notifies_received, new(c.notifies_received, s.notifies_received));
        stats::add(Vmtp::duplicates, new(c.duplicates, s.duplicates));
        g.seen = c;
    }
}

/// Writes one packet into `packet`: the engine's header, the payload from
/// `source`, the padding and the checksum (or zeros without checksums).
/// Returns its length.
fn build(packet: &mut [u8], hdr: &[u8; HEADER_LEN], t: &Transmit, source: Option<&Buf>, checksum: bool) -> Result<usize> {
    let mut at = 0usize;
    let mut put = |bytes: &[u8]| -> Result {
        let end = at.checked_add(bytes.len()).ok_or(emsgsize())?;
        packet.get_mut(at..end).ok_or(emsgsize())?.copy_from_slice(bytes);
        at = end;
        Ok(())
    };
    put(hdr)?;
    if let Some(p) = t.payload {
        source.ok_or(EINVAL)?.read_pieces(p.offset as usize, p.len as usize, &mut put)?;
    }
    const ZEROS: [u8; 8] = [0; 8];
    put(ZEROS.get(..t.pad as usize).ok_or(EINVAL)?)?;
    let body = packet.get(..at).ok_or(EINVAL)?;
    let sum = if checksum {
        let mut s = Summer::default();
        s.update(body);
        s.finish()
    } else {
        [0; 4]
    };
    let end = at.checked_add(sum.len()).ok_or(emsgsize())?;
    packet.get_mut(at..end).ok_or(emsgsize())?.copy_from_slice(&sum);
    Ok(end)
}
