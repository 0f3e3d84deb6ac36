// SPDX-License-Identifier: GPL-2.0
//! Rate limiting of kernel log messages a remote peer can trigger.

use kernel::bindings;

/// Whether a message caused by network traffic may be logged now: the
/// networking stack's shared limit (`net_ratelimit`, by default 10 messages
/// per 5 s, tunable in `net.core.message_cost` and `message_burst`), so a
/// peer that fails connection after connection cannot flood the log.
pub(crate) fn net_ratelimit() -> bool {
    // SAFETY: no preconditions; callable from any context.
    unsafe { bindings::net_ratelimit() != 0 }
}
