// SPDX-License-Identifier: GPL-2.0
//! iWARP connection management (RFC 5040 section 8, RFC 5044 section 7): the
//! listener, connection requests, and MPA start-up on the connection's socket
//! before it is handed to a queue pair.

pub(crate) mod cm;
