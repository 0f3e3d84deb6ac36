// SPDX-License-Identifier: GPL-2.0
//! The kernel's random numbers (`get_random_u8`), for values a peer must not
//! guess (STag keys).

use kernel::bindings;

/// A random byte from the kernel's CRNG.
pub(crate) fn random_u8() -> u8 {
    // SAFETY: no preconditions; the CRNG is set up before modules load.
    unsafe { bindings::get_random_u8() }
}
