// SPDX-License-Identifier: GPL-2.0
//! Module parameters (`/sys/module/srnic/parameters/`), declared in `param.c`:
//! the `module!` macro of 6.12 has no parameters.

extern "C" {
    fn srnic_param_file_mem_mib() -> core::ffi::c_uint;
}

/// `file_mem_mib` in bytes: the kernel memory one open file may make srnic
/// allocate (default 64 MiB). Root may change it at any time; each file reads
/// it once, when it is opened.
pub(crate) fn file_mem_bytes() -> usize {
    // SAFETY: reads an integer; no preconditions.
    let mib = unsafe { srnic_param_file_mem_mib() };
    (mib as usize).saturating_mul(1 << 20)
}
