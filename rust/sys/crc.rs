// SPDX-License-Identifier: GPL-2.0
//! The kernel's (accelerated) CRC32c behind the protocol cores' [`Crc32c`] trait.

use crate::proto::crc::Crc32c;

extern "C" {
    fn srnic_crc32c(crc: u32, data: *const core::ffi::c_void, len: u32) -> u32;
}

/// CRC32c computed by the kernel's `crc32c()` (raw register in and out, no
/// inversion, exactly the trait's contract).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct KernelCrc32c;

impl Crc32c for KernelCrc32c {
    fn update(&self, mut crc: u32, data: &[u8]) -> u32 {
        for chunk in data.chunks(u32::MAX as usize) {
            // SAFETY: `chunk` is readable for its length, which fits in a `u32`.
            crc = unsafe { srnic_crc32c(crc, chunk.as_ptr().cast(), chunk.len() as u32) };
        }
        crc
    }
}
