// SPDX-License-Identifier: GPL-2.0
//! The module's parameters (`params.c`), as `/sys/module/srnic/parameters/`
//! shows them: read each time they are used, so a change applies to what
//! starts afterwards.

extern "C" {
    fn srnic_param_mpa_request_timeout_ms() -> u32;
}

/// Least request timeout used, whatever the parameter says (0 would close
/// every connection at once).
const MIN_REQUEST_TIMEOUT_MS: u32 = 100;

/// How long an accepted connection may take to send its MPA Request.
pub(crate) fn mpa_request_timeout_ms() -> u32 {
    // SAFETY: the glue reads an integer; no preconditions.
    unsafe { srnic_param_mpa_request_timeout_ms() }.max(MIN_REQUEST_TIMEOUT_MS)
}
