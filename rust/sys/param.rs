// SPDX-License-Identifier: GPL-2.0
//! Module parameters (`/sys/module/srnic/parameters/`), declared in `param.c`:
//! the `module!` macro of 6.12 has no parameters.

extern "C" {
    fn srnic_param_file_mem_mib() -> core::ffi::c_uint;
    fn srnic_param_mpa_request_timeout_ms() -> core::ffi::c_uint;
    fn srnic_param_tx_stall_timeout_ms() -> core::ffi::c_uint;
    fn srnic_param_min_mss() -> core::ffi::c_uint;
    fn srnic_param_zcopy_min() -> core::ffi::c_uint;
}

/// Least request timeout used, whatever the parameter says (0 would close
/// every connection at once).
const MIN_REQUEST_TIMEOUT_MS: u32 = 100;

/// `mpa_request_timeout_ms`: how long a connection accepted by a listener may
/// take to send its MPA Request. Read when the connection is accepted.
pub(crate) fn mpa_request_timeout_ms() -> u32 {
    // SAFETY: reads an integer; no preconditions.
    unsafe { srnic_param_mpa_request_timeout_ms() }.max(MIN_REQUEST_TIMEOUT_MS)
}

/// `file_mem_mib` in bytes: the kernel memory one open file may make srnic
/// allocate (default 64 MiB). Root may change it at any time; each file reads
/// it once, when it is opened.
pub(crate) fn file_mem_bytes() -> usize {
    // SAFETY: reads an integer; no preconditions.
    let mib = unsafe { srnic_param_file_mem_mib() };
    (mib as usize).saturating_mul(1 << 20)
}

/// Least stall timeout used, whatever the parameter says (0 would turn TCP's
/// user timeout off, and with it the bound on a peer that stops reading).
const MIN_STALL_TIMEOUT_MS: u32 = 100;

/// `tx_stall_timeout_ms`: how long a connected peer may leave sent data
/// unacknowledged or its receive window closed before its QP fails. Read when
/// a connection is established.
pub(crate) fn tx_stall_timeout_ms() -> u32 {
    // SAFETY: reads an integer; no preconditions.
    unsafe { srnic_param_tx_stall_timeout_ms() }.max(MIN_STALL_TIMEOUT_MS)
}

/// `min_mss`: the smallest TCP MSS a connection may have (default 536, the
/// MSS TCP assumes without an MSS option, RFC 1122 section 4.2.2.6); one with less is
/// refused before MPA start-up. A peer that forces a tiny MSS would otherwise
/// make every READ response many times more packets (and FPDUs) than the
/// path needs. Read when a connection is made.
pub(crate) fn min_mss() -> usize {
    // SAFETY: reads an integer; no preconditions.
    unsafe { srnic_param_min_mss() as usize }
}

/// `zcopy_min`: the smallest SEND or WRITE sent zero-copy (default 0: none).
/// Its work request completes once TCP is done with its pages (the peer
/// acknowledged the bytes) instead of once TCP took them. Off by default:
/// with one FPDU per TCP segment a zero-copy buffer holds two fragments per
/// segment, so TCP builds buffers of about 8 segments instead of 45, and in
/// the benchmark's VMs that cost more than the copy saved (see
/// Documentation/srnic/performance.rst, "Zero-copy transmit"). Read when a
/// message starts.
pub(crate) fn zcopy_min() -> u32 {
    // SAFETY: reads an integer; no preconditions.
    unsafe { srnic_param_zcopy_min() }
}
