// SPDX-License-Identifier: GPL-2.0
//! MPA start-up of a queue pair's connection (RFC 5044 section 7.1, RFC 6581):
//! `CONNECT` and `ACCEPT` move the QP to Connecting and start the initiator's
//! side ([`Outgoing`], which waits for nothing) or the responder's (a
//! one-shot work item that sends the Reply to a Request already read); on
//! success the socket goes to the QP (`handover.rs`).

use crate::{
    iwarp::{
        conn_req::ConnReq,
        handover::{connect_failed, establish},
        mpa_io::nothing_behind,
        outgoing::Outgoing,
        params::PrivateData,
    },
    proto::mpa::{
        frame::MAX_FRAME_LEN,
        negotiate::{MpaConfig, Responder},
    },
    sys::{errno::eproto, socket::SockAddr, trace::Cm, wq},
    uapi::*,
    verbs::qp::Qp,
};
use kernel::{prelude::*, sync::Arc};

/// `CONNECT`: connects `qp` to `addr` as MPA initiator, in the background.
pub(crate) fn connect(qp: Arc<Qp>, addr: SockAddr, cfg: MpaConfig, pd: PrivateData) -> Result {
    qp.start_connect(SrnicSockaddr::default(), *addr.abi())?;
    qp.trace_cm(Cm::Connect, 0);
    if let Err(e) = Outgoing::start(qp.clone(), &addr, cfg, pd) {
        qp.connect_failed();
        return Err(e);
    }
    Ok(())
}

/// `ACCEPT`: accepts `req` on `qp` as MPA responder, in the background.
pub(crate) fn accept(qp: Arc<Qp>, req: Arc<ConnReq>, cfg: MpaConfig, pd: PrivateData) -> Result {
    qp.start_connect(req.local, req.remote)?;
    qp.trace_cm(Cm::Accept, 0);
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

/// The responder's side: the stored Request answered with a Reply.
fn respond(qp: &Arc<Qp>, req: &ConnReq, cfg: MpaConfig, pd: &PrivateData) {
    let Some(sock) = req.sock.lock().take() else {
        return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, EINVAL, &[]);
    };
    // Bytes that came behind the Request since it was filed: refused as at
    // filing (see `nothing_behind`), before any Reply.
    if !nothing_behind(&sock) {
        sock.shutdown(true);
        return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, eproto(), &[]);
    }
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
                let _ = sock.send_now(&buf[..n]);
            }
            sock.shutdown(false);
            return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
        }
    };
    if let Err(e) = sock.send_now(&buf[..n]) {
        sock.shutdown(true);
        return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
    }
    establish(qp, sock, neg, resp.peer_private_data(), true);
}

