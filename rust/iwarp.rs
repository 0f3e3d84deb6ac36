// SPDX-License-Identifier: GPL-2.0
//! iWARP connection management (RFC 5040 section 8, RFC 5044 section 7): the
//! listener, connection requests, and MPA start-up on the connection's socket
//! before it is handed to a queue pair. The connection manager uses the QP
//! (it moves it through its life cycle and hands it the socket); the QP
//! knows nothing of it.
//!
//! - `params.rs`: ABI addresses and flags, MPA settings, private data;
//! - `mpa_io.rs`: reading start-up frames, and the start-up timeouts;
//! - `listener.rs`: listening and reading MPA Requests;
//! - `conn_req.rs`: a request waiting for ACCEPT or REJECT;
//! - `startup.rs`: the CONNECT and ACCEPT jobs.

pub(crate) mod conn_req;
pub(crate) mod listener;
pub(crate) mod mpa_io;
pub(crate) mod params;
pub(crate) mod startup;
