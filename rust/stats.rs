// SPDX-License-Identifier: GPL-2.0
//! Device-wide counters, reported by `SRNIC_IOCTL_QUERY_STATS` (`srnic stats`).

use crate::{sys::pages::PINNED_PAGES, uapi::SrnicStats};
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
