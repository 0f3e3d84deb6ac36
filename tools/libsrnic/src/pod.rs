// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Byte views of the ABI's plain-old-data structures (for read() and write()).

use srnic_uapi as abi;

/// A `#[repr(C)]` ABI structure made only of integers and integer arrays with
/// explicit padding: every byte pattern is a valid value and it has no padding
/// bytes (the uapi crate asserts that no structure has padding;
/// `uapi/tests/c_header.rs` compares the layout with the C header).
///
/// # Safety
///
/// Implement only for types that satisfy the above.
pub(crate) unsafe trait Pod: Copy + 'static {}

// SAFETY: all of these are #[repr(C)] structs of u8/u16/u32/i32/u64 fields laid
// out without holes (uapi/srnic.h is compiled with -Wpadded -Werror in the test).
unsafe impl Pod for abi::SrnicEvent {}
// SAFETY: as above.
unsafe impl Pod for abi::SrnicPostWr {}
// SAFETY: as above.
unsafe impl Pod for abi::SrnicSge {}

/// The bytes of `v`.
pub(crate) fn as_bytes<T: Pod>(v: &T) -> &[u8] {
    // SAFETY: T is Pod: no padding, so every byte is initialised; the slice covers
    // exactly the value and lives as long as the borrow.
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
}

/// A `T` read from the first `size_of::<T>()` bytes of `b` (which must be that long).
pub(crate) fn from_bytes<T: Pod>(b: &[u8]) -> T {
    assert!(b.len() >= std::mem::size_of::<T>());
    // SAFETY: the length was checked; T is Pod, so any bytes form a valid T;
    // read_unaligned copes with any alignment of `b`.
    unsafe { std::ptr::read_unaligned(b.as_ptr() as *const T) }
}
