// SPDX-License-Identifier: GPL-2.0
//! srnic's tracepoints (the `srnic` trace system, `srnic_trace.h`), emitted
//! through the C glue of `trace.c`: connection management, TERMINATEs, CRC
//! errors and RMPP's retransmissions and drops, each naming the object, the
//! pid of the process that owns it and the addresses
//! (Documentation/srnic/observability.rst). Normal events go here, not to the
//! kernel log.

use crate::uapi::SrnicSockaddr;
use kernel::str::CStr;

/// The connection-management events (one C function each, `trace.c`).
macro_rules! cm_events {
    ($($variant:ident => $func:ident),* $(,)?) => {
        extern "C" {
            $(
                fn $func(pid: i32, id: u32, local: *const SrnicSockaddr, remote: *const SrnicSockaddr, status: i32);
            )*
        }

        /// A connection-management event: `srnic_<name>` in the trace system.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Cm {
            $(
                #[doc = concat!("`", stringify!($func), "`")]
                $variant,
            )*
        }

        /// Emits `ev` at `s` (a QP, or a listener for `Request` and `Reject`)
        /// with `status` (0 or a negative errno).
        pub(crate) fn cm(ev: Cm, s: Site<'_>, status: i32) {
            match ev {
                $(
                    // SAFETY: both addresses are valid for reads for the
                    // call; the tracepoint copies what it keeps.
                    Cm::$variant => unsafe { $func(s.pid, s.id, s.local, s.remote, status) },
                )*
            }
        }
    };
}

cm_events!(
    Connect => srnic_trace_connect,
    Request => srnic_trace_request,
    Accept => srnic_trace_accept,
    Reject => srnic_trace_reject,
    Rejected => srnic_trace_rejected,
    ConnectError => srnic_trace_connect_error,
    Established => srnic_trace_established,
    QpError => srnic_trace_qp_error,
    Disconnect => srnic_trace_disconnect,
);

extern "C" {
    fn srnic_trace_terminate(
        received: bool,
        pid: i32,
        id: u32,
        local: *const SrnicSockaddr,
        remote: *const SrnicSockaddr,
        layer: u8,
        etype: u8,
        ecode: u8,
    );
    fn srnic_trace_crc_error(
        pid: i32,
        id: u32,
        local: *const SrnicSockaddr,
        remote: *const SrnicSockaddr,
        received: u32,
        computed: u32,
    );
    fn srnic_trace_rmpp_retransmit(
        pid: i32,
        id: u32,
        ifindex: i32,
        nid: u32,
        peer: u32,
        peer_mac: *const u8,
        wr_id: u64,
        attempt: u32,
    );
    fn srnic_trace_rmpp_drop(pid: i32, id: u32, ifindex: i32, nid: u32, peer: u32, reason: *const u8);
}

/// Where an iWARP event happens: the owner's pid, the handle of the QP (or
/// listener) and the connection's addresses (zero while not known).
#[derive(Clone, Copy)]
pub(crate) struct Site<'a> {
    pub(crate) pid: i32,
    pub(crate) id: u32,
    pub(crate) local: &'a SrnicSockaddr,
    pub(crate) remote: &'a SrnicSockaddr,
}

/// A TERMINATE sent (or `received`) on a QP, with its layer, type and code.
pub(crate) fn terminate(s: Site<'_>, received: bool, layer: u8, etype: u8, ecode: u8) {
    // SAFETY: both addresses are valid for reads for the call.
    unsafe { srnic_trace_terminate(received, s.pid, s.id, s.local, s.remote, layer, etype, ecode) }
}

/// An FPDU with a bad CRC on a QP.
pub(crate) fn crc_error(s: Site<'_>, received: u32, computed: u32) {
    // SAFETY: both addresses are valid for reads for the call.
    unsafe { srnic_trace_crc_error(s.pid, s.id, s.local, s.remote, received, computed) }
}

/// Where an RMPP endpoint is: its owner, handle, interface and node id.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EpSite {
    pub(crate) pid: i32,
    pub(crate) id: u32,
    pub(crate) ifindex: i32,
    pub(crate) nid: u32,
}

/// An RMPP message sent again to `peer` after a timeout.
pub(crate) fn rmpp_retransmit(s: EpSite, peer: u32, peer_mac: Option<&[u8; 6]>, wr_id: u64, attempt: u32) {
    let mac = peer_mac.map_or(core::ptr::null(), |m| m.as_ptr());
    // SAFETY: `mac` is null or six readable bytes, for the call.
    unsafe { srnic_trace_rmpp_retransmit(s.pid, s.id, s.ifindex, s.nid, peer, mac, wr_id, attempt) }
}

/// An RMPP frame from `peer` dropped, counted in the RMPP counter `reason`.
pub(crate) fn rmpp_drop(s: EpSite, peer: u32, reason: &CStr) {
    // SAFETY: `reason` is a NUL-terminated string, valid for the call.
    unsafe { srnic_trace_rmpp_drop(s.pid, s.id, s.ifindex, s.nid, peer, reason.as_ptr()) }
}
