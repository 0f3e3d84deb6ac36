// SPDX-License-Identifier: GPL-2.0
//! Device-wide counters, reported by `SRNIC_IOCTL_QUERY_STATS` (`srnic stats`).

use crate::{
    sys::{pages::PINNED_PAGES, socket::SOCKETS},
    uapi::{SrnicRmppStats, SrnicStats, SrnicVmtpStats},
};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{c_str, str::CStr};

/// Connections established, in total.
pub(crate) static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
/// FPDUs sent.
pub(crate) static TX_FPDUS: AtomicU64 = AtomicU64::new(0);
/// FPDUs received.
pub(crate) static RX_FPDUS: AtomicU64 = AtomicU64::new(0);
/// Payload bytes sent.
pub(crate) static TX_BYTES: AtomicU64 = AtomicU64::new(0);
/// Payload bytes sent zero-copy (handed to TCP by page reference).
pub(crate) static TX_ZCOPY_BYTES: AtomicU64 = AtomicU64::new(0);
/// Payload bytes received.
pub(crate) static RX_BYTES: AtomicU64 = AtomicU64::new(0);
/// TERMINATE messages sent.
pub(crate) static TERMINATES_SENT: AtomicU64 = AtomicU64::new(0);
/// TERMINATE messages received.
pub(crate) static TERMINATES_RECEIVED: AtomicU64 = AtomicU64::new(0);
/// FPDUs received with a bad CRC.
pub(crate) static CRC_ERRORS: AtomicU64 = AtomicU64::new(0);
/// TERMINATEs sent, by layer (RDMAP, DDP, LLP: `layer` 0, 1, 2).
pub(crate) static TERMINATES_SENT_BY_LAYER: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];
/// TERMINATEs received, by layer.
pub(crate) static TERMINATES_RECEIVED_BY_LAYER: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];
/// Work requests completed with `WR_FLUSH_ERR`.
pub(crate) static FLUSHED_WRS: AtomicU64 = AtomicU64::new(0);

/// Counts a TERMINATE of `layer` sent (or `received`); the total too.
pub(crate) fn count_terminate(layer: u8, received: bool) {
    let (total, by) = if received {
        (&TERMINATES_RECEIVED, &TERMINATES_RECEIVED_BY_LAYER)
    } else {
        (&TERMINATES_SENT, &TERMINATES_SENT_BY_LAYER)
    };
    total.fetch_add(1, Ordering::Relaxed);
    // A layer no RFC defines (a peer's garbage) counts in the total only.
    if let Some(c) = by.get(usize::from(layer)) {
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// The kinds of object srnic holds, each with a gauge of how many live now.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Object {
    /// An open file of `/dev/srnic`.
    Context,
    /// A protection domain.
    Pd,
    /// A memory region.
    Mr,
    /// A completion queue.
    Cq,
    /// A queue pair.
    Qp,
    /// A listening endpoint.
    Listener,
    /// A connection request not yet accepted or rejected.
    ConnRequest,
}

/// Number of [`Object`] kinds.
const OBJECT_KINDS: usize = Object::ConnRequest as usize + 1;

/// How many objects of each kind live now.
static LIVE: [AtomicU64; OBJECT_KINDS] = [const { AtomicU64::new(0) }; OBJECT_KINDS];

/// One live object of a kind: the gauge counts it from [`Live::new`] until
/// this value is dropped, so an object holds it as a field and is counted for
/// exactly as long as it exists (including after its handle is destroyed, while
/// work in flight still holds it).
pub(crate) struct Live(Object);

impl Live {
    /// Counts a new object of kind `o`.
    pub(crate) fn new(o: Object) -> Self {
        LIVE[o as usize].fetch_add(1, Ordering::Relaxed);
        Self(o)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE[self.0 as usize].fetch_sub(1, Ordering::Relaxed);
    }
}

/// Fills the counters of a `QUERY_STATS` answer.
pub(crate) fn fill(s: &mut SrnicStats) {
    let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let live = |o: Object| r(&LIVE[o as usize]);
    s.contexts = live(Object::Context);
    s.pinned_pages = r(&PINNED_PAGES);
    s.qps = live(Object::Qp);
    s.pds = live(Object::Pd);
    s.mrs = live(Object::Mr);
    s.cqs = live(Object::Cq);
    s.listeners = live(Object::Listener);
    s.conn_requests = live(Object::ConnRequest);
    s.sockets = r(&SOCKETS);
    s.connections = r(&CONNECTIONS);
    s.tx_fpdus = r(&TX_FPDUS);
    s.rx_fpdus = r(&RX_FPDUS);
    s.tx_bytes = r(&TX_BYTES);
    s.rx_bytes = r(&RX_BYTES);
    s.terminates_sent = r(&TERMINATES_SENT);
    s.terminates_received = r(&TERMINATES_RECEIVED);
    s.crc_errors = r(&CRC_ERRORS);
    let [rdmap, ddp, llp] = &TERMINATES_SENT_BY_LAYER;
    (s.terminates_sent_rdmap, s.terminates_sent_ddp, s.terminates_sent_llp) = (r(rdmap), r(ddp), r(llp));
    let [rdmap, ddp, llp] = &TERMINATES_RECEIVED_BY_LAYER;
    (s.terminates_received_rdmap, s.terminates_received_ddp, s.terminates_received_llp) =
        (r(rdmap), r(ddp), r(llp));
    s.flushed_wrs = r(&FLUSHED_WRS);
    s.tx_zcopy_bytes = r(&TX_ZCOPY_BYTES);
}

/// Declares a protocol's counters once, in the order of its `struct
/// srnic_*_stats`: the enum that names them, their atomic table, and the
/// functions that add to them and fill a `*_QUERY_STATS` answer.
macro_rules! protocol_counters {
    ($kind:ident, $table:ident, $abi:ty, $fill:ident, $what:literal: $($name:ident),* $(,)?) => {
        #[doc = concat!("Index of a ", $what, " counter.")]
        #[derive(Clone, Copy, Debug)]
        #[expect(non_camel_case_types)]
        pub(crate) enum $kind {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                $name,
            )*
        }

        impl $kind {
            /// The counter's name (as `srnic stats` prints it).
            #[allow(dead_code)]
            pub(crate) fn name(self) -> &'static CStr {
                match self {
                    $( $kind::$name => c_str!(stringify!($name)), )*
                }
            }

            const COUNT: usize = [$($kind::$name),*].len();

            #[doc = concat!("The ", $what, " counters (and gauges) of the module.")]
            fn cell(self) -> &'static AtomicU64 {
                static $table: [AtomicU64; $kind::COUNT] = [const { AtomicU64::new(0) }; $kind::COUNT];
                &$table[self as usize]
            }
        }

        // `$fill` sets every counter listed, so a name that is no field fails
        // to compile; this catches a field of the structure left out.
        const _: () = assert!($kind::COUNT == <$abi>::COUNTER_NAMES.len());

        #[doc = concat!("Fills a ", $what, " `QUERY_STATS` answer.")]
        pub(crate) fn $fill(s: &mut $abi) {
            $( s.$name = $kind::$name.cell().load(Ordering::Relaxed); )*
        }

        impl Counter for $kind {
            fn cell(self) -> &'static AtomicU64 {
                $kind::cell(self)
            }
        }
    };
}

/// A counter of one of the protocol tables.
pub(crate) trait Counter: Copy {
    /// Its atomic cell.
    fn cell(self) -> &'static AtomicU64;
}

protocol_counters!(Rmpp, RMPP, SrnicRmppStats, fill_rmpp, "RMPP":
    endpoints, active_sends, active_recvs, msgs_sent, msgs_received, msgs_truncated,
    send_failed, send_dropped, send_aborted, recv_aborted, tx_packets, rx_packets, tx_bytes,
    rx_bytes, retransmits, grants, granted_packets, grants_limited, unexpected_held,
    unexpected_dropped, drop_short, drop_bad_version, drop_bad_type, drop_other_nid,
    drop_unknown_nid, drop_queue_full, drop_malformed, drop_duplicate, drop_out_of_order,
    drop_table_full, drop_unknown_msg, drop_unexpected, tx_errors, drop_spoofed,
    endpoints_lingering, linger_expired, naks_sent, naks_received, resent_packets, resent_bytes,
);

protocol_counters!(Vmtp, VMTP, SrnicVmtpStats, fill_vmtp, "VMTP":
    entities, namespaces, transactions, failed, requests, requests_abandoned, responses_acked,
    responses_discarded, tx_packets, rx_packets, tx_bytes, rx_bytes, retransmitted_blocks,
    timeouts, notifies_sent, notifies_received, duplicates, drop_short, drop_bad_header,
    drop_checksum, drop_unsupported, drop_unknown_entity, drop_stale, drop_malformed,
    drop_table_full, drop_no_buffer, tx_errors, blocks_requested,
);

/// Adds `n` to a protocol counter.
pub(crate) fn add(c: impl Counter, n: u64) {
    if n != 0 {
        c.cell().fetch_add(n, Ordering::Relaxed);
    }
}

/// Subtracts `n` from a protocol gauge.
pub(crate) fn sub(c: impl Counter, n: u64) {
    if n != 0 {
        c.cell().fetch_sub(n, Ordering::Relaxed);
    }
}
