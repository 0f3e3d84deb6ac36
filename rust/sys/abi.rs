// SPDX-License-Identifier: GPL-2.0
//! The user-space ABI structures as plain bytes: the one promise about them
//! that needs `unsafe`, made once for every structure, so that the rest of the
//! module copies them from and to user memory with the safe `UserSlice` API.

use crate::uapi::*;
use kernel::types::{AsBytes, FromBytes};

/// Implements the byte-level traits for an ABI structure.
macro_rules! abi_bytes {
    ($r:ident, $c:ident, $fields:tt) => {
        // SAFETY: the ABI structures are `#[repr(C)]`, made only of integers and
        // integer arrays, with no padding (asserted at compile time in
        // `uapi/src/abi.rs`, and by the C header test), so every bit pattern is
        // valid and every byte is initialised.
        unsafe impl FromBytes for $c {}
        // SAFETY: as above.
        unsafe impl AsBytes for $c {}
    };
}
crate::srnic_abi_structs!(abi_bytes);

/// The bytes of an ABI structure (for copying a prefix of it to user memory).
pub(crate) fn bytes<T: AsBytes>(v: &T) -> &[u8] {
    // SAFETY: `AsBytes`: every byte of `T` is initialised; the slice covers
    // exactly `*v` and borrows it.
    unsafe { core::slice::from_raw_parts((v as *const T).cast::<u8>(), core::mem::size_of::<T>()) }
}

/// The bytes of an ABI structure, writable (for reading a prefix of it from
/// user memory).
pub(crate) fn bytes_mut<T: AsBytes + FromBytes>(v: &mut T) -> &mut [u8] {
    // SAFETY: as `bytes`, and `FromBytes`: any bytes written make a valid `T`;
    // the slice borrows `*v` exclusively.
    unsafe { core::slice::from_raw_parts_mut((v as *mut T).cast::<u8>(), core::mem::size_of::<T>()) }
}
