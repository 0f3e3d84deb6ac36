// SPDX-License-Identifier: GPL-2.0
//! Device-wide counters, reported by `SRNIC_IOCTL_QUERY_STATS` (`srnic stats`).

use crate::{
    sys::pages::PINNED_PAGES,
    uapi::{SrnicRmppStats, SrnicStats},
};
use core::sync::atomic::{AtomicU64, Ordering};

/// Open files now.
pub(crate) static CONTEXTS: AtomicU64 = AtomicU64::new(0);
/// Queue pairs now.
pub(crate) static QPS: AtomicU64 = AtomicU64::new(0);
/// Connections established, in total.
pub(crate) static CONNECTIONS: AtomicU64 = AtomicU64::new(0);
/// FPDUs sent.
pub(crate) static TX_FPDUS: AtomicU64 = AtomicU64::new(0);
/// FPDUs received.
pub(crate) static RX_FPDUS: AtomicU64 = AtomicU64::new(0);
/// Payload bytes sent.
pub(crate) static TX_BYTES: AtomicU64 = AtomicU64::new(0);
/// Payload bytes received.
pub(crate) static RX_BYTES: AtomicU64 = AtomicU64::new(0);
/// TERMINATE messages sent.
pub(crate) static TERMINATES_SENT: AtomicU64 = AtomicU64::new(0);
/// TERMINATE messages received.
pub(crate) static TERMINATES_RECEIVED: AtomicU64 = AtomicU64::new(0);
/// FPDUs received with a bad CRC.
pub(crate) static CRC_ERRORS: AtomicU64 = AtomicU64::new(0);

/// Fills the counters of a `QUERY_STATS` answer.
pub(crate) fn fill(s: &mut SrnicStats) {
    let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
    s.contexts = r(&CONTEXTS);
    s.pinned_pages = r(&PINNED_PAGES);
    s.qps = r(&QPS);
    s.connections = r(&CONNECTIONS);
    s.tx_fpdus = r(&TX_FPDUS);
    s.rx_fpdus = r(&RX_FPDUS);
    s.tx_bytes = r(&TX_BYTES);
    s.rx_bytes = r(&RX_BYTES);
    s.terminates_sent = r(&TERMINATES_SENT);
    s.terminates_received = r(&TERMINATES_RECEIVED);
    s.crc_errors = r(&CRC_ERRORS);
}

/// Declares the RMPP counters once, in the order of `struct srnic_rmpp_stats`.
macro_rules! rmpp_counters {
    ($($name:ident),* $(,)?) => {
        /// Index of an RMPP counter in [`RMPP`].
        #[derive(Clone, Copy, Debug)]
        #[expect(non_camel_case_types)]
        pub(crate) enum Rmpp {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                $name,
            )*
        }

        /// Number of RMPP counters.
        const RMPP_COUNT: usize = [$(Rmpp::$name),*].len();

        /// Fills a `RMPP_QUERY_STATS` answer.
        pub(crate) fn fill_rmpp(s: &mut SrnicRmppStats) {
            $( s.$name = get(Rmpp::$name); )*
        }
    };
}

rmpp_counters!(
    endpoints, active_sends, active_recvs, msgs_sent, msgs_received, msgs_truncated,
    send_failed, send_dropped, send_aborted, recv_aborted, tx_packets, rx_packets, tx_bytes,
    rx_bytes, retransmits, grants, granted_packets, grants_limited, unexpected_held,
    unexpected_dropped, drop_short, drop_bad_version, drop_bad_type, drop_other_nid,
    drop_unknown_nid, drop_queue_full, drop_malformed, drop_duplicate, drop_out_of_order,
    drop_table_full, drop_unknown_msg, drop_unexpected, tx_errors,
);

/// The RMPP counters (and gauges) of the module.
static RMPP: [AtomicU64; RMPP_COUNT] = [const { AtomicU64::new(0) }; RMPP_COUNT];

/// Adds `n` to an RMPP counter.
pub(crate) fn add(c: Rmpp, n: u64) {
    if n != 0 {
        RMPP[c as usize].fetch_add(n, Ordering::Relaxed);
    }
}

/// Subtracts `n` from an RMPP gauge.
pub(crate) fn sub(c: Rmpp, n: u64) {
    if n != 0 {
        RMPP[c as usize].fetch_sub(n, Ordering::Relaxed);
    }
}

fn get(c: Rmpp) -> u64 {
    RMPP[c as usize].load(Ordering::Relaxed)
}
