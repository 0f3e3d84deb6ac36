// SPDX-License-Identifier: GPL-2.0
//! The kernel's random numbers (`get_random_u8`, `get_random_u32`), for values
//! a peer must not guess (STag keys, VMTP transaction identifiers).

use kernel::bindings;

/// A random byte from the kernel's CRNG.
pub(crate) fn random_u8() -> u8 {
    // SAFETY: no preconditions; the CRNG is set up before modules load.
    unsafe { bindings::get_random_u8() }
}

/// A random 32-bit value from the kernel's CRNG.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: no preconditions; the CRNG is set up before modules load.
    unsafe { bindings::get_random_u32() }
}
