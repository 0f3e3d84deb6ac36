// SPDX-License-Identifier: GPL-2.0
//! The end of MPA start-up, for both sides: a negotiated socket handed to its
//! QP (which refuses it if it was destroyed meanwhile), and the event that
//! reports the outcome.

use crate::{
    iwarp::params::negotiated_flags,
    proto::mpa::Negotiated,
    sys::{socket::TcpSocket, trace::Cm},
    uapi::*,
    verbs::{
        events::event,
        qp::{Established, Qp},
    },
};
use kernel::{prelude::*, sync::Arc};

/// Hands the negotiated socket to the QP and reports the outcome; `responder`:
/// this side accepted.
pub(crate) fn establish(qp: &Arc<Qp>, sock: Arc<TcpSocket>, neg: Negotiated, peer_pd: &[u8], responder: bool) {
    // Before any QP lock: the socket lock nests inside the QP's `rx`.
    let (local, remote) = sock.addrs().unwrap_or_default();
    let est = Established { neg, local, remote, mpa_flags: negotiated_flags(&neg), responder };
    match qp.establish(sock, est) {
        Ok(()) => {
            qp.trace_cm(Cm::Established, 0);
            established_event(qp, &neg, local, remote, peer_pd)
        }
        Err(e) => connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]),
    }
}

fn established_event(qp: &Qp, neg: &Negotiated, local: SrnicSockaddr, remote: SrnicSockaddr, peer_pd: &[u8]) {
    let mut ev = event(SRNIC_EVENT_ESTABLISHED, qp.handle);
    ev.local = local;
    ev.remote = remote;
    ev.ird = u32::from(neg.ird);
    ev.ord = u32::from(neg.ord);
    ev.mpa_flags = negotiated_flags(neg);
    let n = peer_pd.len().min(ev.private_data.len());
    ev.private_data[..n].copy_from_slice(&peer_pd[..n]);
    ev.private_data_len = n as u32;
    qp.events.push(ev);
}

/// Reports that `qp`'s start-up failed with `err` (`event_type`: the peer
/// rejected it, or it failed), unless the QP was destroyed meanwhile; the
/// tracepoint says it either way.
pub(crate) fn connect_failed(qp: &Qp, event_type: u32, err: Error, peer_pd: &[u8]) {
    let ev = if event_type == SRNIC_EVENT_REJECTED { Cm::Rejected } else { Cm::ConnectError };
    qp.trace_cm(ev, err.to_errno());
    if !qp.connect_failed() {
        // Destroyed: nobody holds the handle any more (it may even name another QP).
        return;
    }
    let mut ev = event(event_type, qp.handle);
    ev.status = err.to_errno();
    let n = peer_pd.len().min(ev.private_data.len());
    ev.private_data[..n].copy_from_slice(&peer_pd[..n]);
    ev.private_data_len = n as u32;
    qp.events.push(ev);
}

