// SPDX-License-Identifier: GPL-2.0
//! iWARP connection management (RFC 5040 section 8, RFC 5044 section 7): the
//! listener, connection requests, and MPA start-up on the connection's socket
//! before it is handed to a queue pair. The connection manager uses the QP
//! (it moves it through its life cycle and hands it the socket); the QP
//! knows nothing of it.
//!
//! - `params.rs`: ABI addresses and flags, MPA settings, private data;
//! - `mpa_io.rs`: reading start-up frames, and the start-up timeouts;
//! - `listener.rs`: listening, accepting without waiting, the bounds;
//! - `incoming.rs`: an accepted connection until its MPA Request is in;
//! - `conn_req.rs`: a request waiting for ACCEPT or REJECT, the backlog;
//! - `outgoing.rs`: the initiator's side of a CONNECT;
//! - `startup.rs`: CONNECT and ACCEPT;
//! - `handover.rs`: the negotiated socket handed to its QP, the outcome
//!   reported.
//!
//! Nothing here blocks a worker on a peer: sockets are read and connected
//! without waiting, driven by their callbacks, and timers bound each wait.

pub(crate) mod conn_req;
pub(crate) mod handover;
pub(crate) mod incoming;
pub(crate) mod listener;
pub(crate) mod mpa_io;
pub(crate) mod outgoing;
pub(crate) mod params;
pub(crate) mod startup;
