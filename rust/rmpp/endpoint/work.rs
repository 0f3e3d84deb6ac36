// SPDX-License-Identifier: GPL-2.0
//! The endpoint's work item and timer: one run of the work (queued frames,
//! expired deadlines, transmission, completions, statistics), queued by the
//! ioctls, the port's packet handler and the port's timer; a send runs it
//! inline on the caller's thread.

use super::*;
use crate::{
    proto::rmpp::{Completion, RecvStatus, SendStatus},
    sys::{
        netdev::{now_ns, PortOwner, PORT_COUNTERS},
        trace, wq,
    },
    uapi::*,
    verbs::stats::{self, Rmpp},
};
use kernel::{
    sync::{Arc, ArcBorrow},
    workqueue::WorkItem,
};

/// Frames one work run takes off the queue before it yields.
const RX_BUDGET: usize = 256;

/// Most `srnic_rmpp_drop` events one work run emits per port counter: a
/// flood of bad frames is counted in full but not traced frame by frame.
const PORT_DROPS_TRACED: u64 = 1024;

impl Ep {
    pub(super) fn kick(self: &Arc<Self>) {
        let _ = wq::queue().enqueue(self.clone());
    }

    /// Folds the counters of the frames the port's packet handler dropped
    /// before the endpoint saw them into the module's statistics, and traces
    /// each (`srnic_rmpp_drop`, up to [`PORT_DROPS_TRACED`] a run; the
    /// handler keeps counts only, so without the peer's NID).
    pub(super) fn account_port(&self, g: &mut Inner, pc: &[u64; PORT_COUNTERS]) {
        const MAP: [Rmpp; PORT_COUNTERS] = [
            Rmpp::drop_short,
            Rmpp::drop_bad_version,
            Rmpp::drop_bad_type,
            Rmpp::drop_other_nid,
            Rmpp::drop_queue_full,
        ];
        for ((c, now), seen) in MAP.iter().zip(pc.iter()).zip(g.seen_port.iter_mut()) {
            let new = now.saturating_sub(*seen);
            stats::add(*c, new);
            for _ in 0..new.min(PORT_DROPS_TRACED) {
                trace::rmpp_drop(self.site(), u32::MAX, c.name());
            }
            *seen = *now;
        }
    }

    /// Hands finished messages to the CQs.
    fn complete(&self, g: &mut Inner) {
        let Inner { engine, sends, recvs, .. } = g;
        let mut recv_done = false;
        while let Some(c) = engine.poll_completion() {
            match c {
                Completion::Send { cookie, status, .. } => {
                    let Some(s) = usize::try_from(cookie).ok().and_then(|i| sends.get_mut(i)).and_then(Option::take) else {
                        continue;
                    };
                    let (st, accepted) = match status {
                        SendStatus::Delivered { accepted } => {
                            stats::add(Rmpp::msgs_sent, 1);
                            (SRNIC_WC_SUCCESS, accepted)
                        }
                        SendStatus::Dropped => {
                            stats::add(Rmpp::send_dropped, 1);
                            (SRNIC_WC_REM_INV_REQ_ERR, 0)
                        }
                        SendStatus::Aborted => (SRNIC_WC_WR_FLUSH_ERR, 0),
                        SendStatus::Failed => {
                            stats::add(Rmpp::send_failed, 1);
                            (SRNIC_WC_RETRY_EXC_ERR, 0)
                        }
                    };
                    self.send_cq.push_notify(self.send_wc(&s, st, accepted));
                    // Dropping `s` unpins its buffer: the engine no longer reads it.
                }
                Completion::Recv {
                    ctx,
                    src,
                    tag,
                    len,
                    accepted,
                    status,
                    ..
                } => {
                    let Some(Some(r)) = usize::try_from(ctx).ok().and_then(|i| recvs.get_mut(i)) else {
                        continue;
                    };
                    let RecvState::Matched { seq, .. } = r.state else { continue };
                    let ok = status == RecvStatus::Complete;
                    let truncated = ok && accepted < len;
                    if ok {
                        stats::add(Rmpp::msgs_received, 1);
                    } else {
                        stats::add(Rmpp::recv_aborted, 1);
                    }
                    if truncated {
                        stats::add(Rmpp::msgs_truncated, 1);
                    }
                    r.state = RecvState::Done {
                        src,
                        seq,
                        wc: SrnicWc {
                            wr_id: r.wr_id,
                            status: if ok { SRNIC_WC_SUCCESS } else { SRNIC_WC_REM_ABORT_ERR },
                            opcode: SRNIC_WC_RMPP_RECV,
                            byte_len: if ok { accepted } else { 0 },
                            qp_handle: self.handle,
                            flags: if truncated { SRNIC_WC_TRUNCATED } else { 0 },
                            src_nid: src,
                            tag,
                            msg_len: u64::from(len),
                            ..Default::default()
                        },
                    };
                    recv_done = true;
                }
            }
        }
        if recv_done {
            self.report_in_order(recvs);
        }
    }

    /// One run of the endpoint's work (see the module documentation): from
    /// its work item, or inline from a send on the caller's thread.
    pub(super) fn run(self: &Arc<Self>) {
        let mut guard = self.inner.lock();
        let g = &mut *guard;
        let Some(port) = g.port.take() else { return };
        if port.is_down() {
            g.port = Some(port);
            drop(guard);
            self.stop_link_down();
            return;
        }
        let now = now_ns();
        let mut more = false;
        for i in 0..=RX_BUDGET {
            if i == RX_BUDGET {
                more = true;
                break;
            }
            let Some(skb) = port.dequeue() else { break };
            self.rx_frame(g, &skb, now);
        }
        if g.engine.poll_timeout().is_some_and(|d| d <= now) {
            g.engine.handle_timeout(now);
        }
        more |= self.transmit(&mut g.engine, &g.sends, &port, now);
        self.complete(g);
        // Module statistics: engine counters, port counters and gauges.
        let c = g.engine.counters();
        let s = g.seen_engine;
        stats::add(Rmpp::retransmits, c.retransmits.saturating_sub(s.retransmits));
        stats::add(Rmpp::grants, c.grants.saturating_sub(s.grants));
        stats::add(Rmpp::granted_packets, c.granted_pkts.saturating_sub(s.granted_pkts));
        stats::add(Rmpp::grants_limited, c.grants_limited.saturating_sub(s.grants_limited));
        stats::add(Rmpp::naks_sent, c.naks_sent.saturating_sub(s.naks_sent));
        stats::add(Rmpp::naks_received, c.naks_received.saturating_sub(s.naks_received));
        stats::add(Rmpp::resent_packets, c.resent_pkts.saturating_sub(s.resent_pkts));
        stats::add(Rmpp::resent_bytes, c.resent_bytes.saturating_sub(s.resent_bytes));
        g.seen_engine = c;
        let pc = port.counters();
        self.account_port(g, &pc);
        let (as_, ar) = (g.engine.active_sends() as u64, g.engine.active_recvs() as u64);
        stats::add(Rmpp::active_sends, as_.saturating_sub(g.seen_sends));
        stats::sub(Rmpp::active_sends, g.seen_sends.saturating_sub(as_));
        stats::add(Rmpp::active_recvs, ar.saturating_sub(g.seen_recvs));
        stats::sub(Rmpp::active_recvs, g.seen_recvs.saturating_sub(ar));
        g.seen_sends = as_;
        g.seen_recvs = ar;
        // A lingering endpoint also wakes at the end of its linger.
        let until = g.linger.as_ref().map(|l| l.until);
        let ended = until.is_some_and(|u| u <= now || g.engine.is_idle());
        match Iterator::chain(g.engine.poll_timeout().into_iter(), until).min() {
            Some(d) => port.arm(d.saturating_sub(now).max(1)),
            None => port.arm(0),
        }
        g.port = Some(port);
        drop(guard);
        if ended {
            self.end_linger();
        } else if more {
            self.kick();
        }
    }
}

impl PortOwner for Ep {
    fn notify(this: ArcBorrow<'_, Self>) {
        let ep: Arc<Ep> = this.into();
        ep.kick();
    }
}

impl WorkItem for Ep {
    type Pointer = Arc<Ep>;
    fn run(this: Arc<Ep>) {
        Ep::run(&this);
    }
}
