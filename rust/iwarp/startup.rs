// SPDX-License-Identifier: GPL-2.0
//! MPA start-up of a queue pair's connection (RFC 5044 section 7.1, RFC 6581):
//! `CONNECT` and `ACCEPT` move the QP to Connecting and queue a one-shot work
//! item that runs the initiator's or the responder's side and, on success,
//! hands the socket to the QP ([`Qp::establish`], which a QP destroyed
//! meanwhile refuses).
//!
//! The work runs on srnic's workqueue with blocking socket calls bounded by
//! timeouts (siw's: 10 s for a Request, 5 s for a Reply; see `mpa_io.rs`).

use crate::{
    iwarp::{
        conn_req::ConnReq,
        mpa_io::{read_frame, CONNECT_TIMEOUT_MS, REPLY_TIMEOUT_MS},
        params::{negotiated_flags, to_abi_addr, PrivateData},
    },
    proto::mpa::{
        frame::MAX_FRAME_LEN,
        negotiate::{Initiator, InitiatorOutcome, MpaConfig, Responder},
        Negotiated,
    },
    sys::{
        errno::{econnrefused, eproto},
        socket::{SockAddrV4, TcpSocket},
        wq,
    },
    uapi::*,
    verbs::{
        events::event,
        qp::{Established, Qp},
    },
};
use kernel::{prelude::*, sync::Arc};

/// `CONNECT`: connects `qp` to `addr` as MPA initiator, in the background.
pub(crate) fn connect(qp: Arc<Qp>, addr: SockAddrV4, cfg: MpaConfig, pd: PrivateData) -> Result {
    qp.start_connect()?;
    spawn(qp, move |qp| initiate(&qp, addr, cfg, &pd))
}

/// `ACCEPT`: accepts `req` on `qp` as MPA responder, in the background.
pub(crate) fn accept(qp: Arc<Qp>, req: Arc<ConnReq>, cfg: MpaConfig, pd: PrivateData) -> Result {
    qp.start_connect()?;
    spawn(qp, move |qp| respond(&qp, &req, cfg, &pd))
}

/// Queues `job` for the Connecting `qp`; when it cannot be queued the QP
/// fails to connect at once.
fn spawn(qp: Arc<Qp>, job: impl FnOnce(Arc<Qp>) + Send + 'static) -> Result {
    let q = qp.clone();
    if wq::queue().try_spawn(GFP_KERNEL, move || job(q)).is_err() {
        qp.connect_failed();
        return Err(ENOMEM);
    }
    Ok(())
}

/// Hands the negotiated socket to the QP and reports the outcome.
fn establish(qp: &Arc<Qp>, sock: Arc<TcpSocket>, neg: Negotiated, peer_pd: &[u8]) {
    // Before any QP lock: the socket lock nests inside the QP's `rx`.
    let (local, remote) = match sock.addrs() {
        Ok((l, r)) => (to_abi_addr(l), to_abi_addr(r)),
        Err(_) => Default::default(),
    };
    let est = Established { neg, local, remote, mpa_flags: negotiated_flags(&neg) };
    match qp.establish(sock, est) {
        Ok(()) => established_event(qp, &neg, local, remote, peer_pd),
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

fn connect_failed(qp: &Qp, event_type: u32, err: Error, peer_pd: &[u8]) {
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

/// The initiator's side: TCP connect, MPA Request out, Reply in.
fn initiate(qp: &Arc<Qp>, addr: SockAddrV4, cfg: MpaConfig, pd: &PrivateData) {
    let sock = match TcpSocket::connect(addr, CONNECT_TIMEOUT_MS) {
        Ok(s) => s,
        Err(e) => return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]),
    };
    sock.set_nodelay();
    sock.set_timeouts(REPLY_TIMEOUT_MS, REPLY_TIMEOUT_MS);
    let mut ini = Initiator::new(cfg);
    let mut buf = [0u8; MAX_FRAME_LEN];
    let outcome = ini
        .request(pd.as_slice(), &mut buf)
        .map_err(|_| EINVAL)
        .and_then(|n| sock.send(&[&buf[..n]], false))
        .and_then(|()| read_frame(&sock, &mut buf))
        .and_then(|n| match ini.on_bytes(&buf[..n]) {
            Ok((_, Some(o))) => Ok(o),
            _ => Err(eproto()),
        });
    match outcome {
        Ok(InitiatorOutcome::Accepted(neg)) => {
            sock.set_timeouts(0, 0);
            let sock = match Arc::new(sock, GFP_KERNEL) {
                Ok(s) => s,
                Err(e) => return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e.into(), &[]),
            };
            establish(qp, sock, neg, ini.peer_private_data());
        }
        Ok(InitiatorOutcome::Rejected) => {
            sock.shutdown(false);
            connect_failed(qp, SRNIC_EVENT_REJECTED, econnrefused(), ini.peer_private_data());
        }
        Err(e) => {
            sock.shutdown(true);
            connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
        }
    }
}

/// The responder's side: the stored Request answered with a Reply.
fn respond(qp: &Arc<Qp>, req: &ConnReq, cfg: MpaConfig, pd: &PrivateData) {
    let Some(sock) = req.sock.lock().take() else {
        return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, EINVAL, &[]);
    };
    // Run the responder again over the stored Request with the accept's settings.
    let mut resp = Responder::new(cfg);
    let mut buf = [0u8; MAX_FRAME_LEN];
    let result = match resp.on_bytes(&req.request[..req.request_len]) {
        Ok((_, Some(_))) => resp.accept(pd.as_slice(), &mut buf).map_err(|_| eproto()),
        _ => Err(eproto()),
    };
    let (n, neg) = match result {
        Ok(x) => x,
        Err(e) => {
            // The request cannot be served with these settings: refuse it.
            if let Ok(n) = resp.reject(&[], &mut buf) {
                let _ = sock.send(&[&buf[..n]], false);
            }
            sock.shutdown(false);
            return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
        }
    };
    if let Err(e) = sock.send(&[&buf[..n]], false) {
        sock.shutdown(true);
        return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
    }
    sock.set_timeouts(0, 0);
    establish(qp, sock, neg, resp.peer_private_data());
}

