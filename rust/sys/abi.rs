// SPDX-License-Identifier: GPL-2.0
//! The user-space ABI structures as plain bytes: the one promise about them
//! that needs `unsafe`, made once for every structure, so that the rest of the
//! module copies them from and to user memory with the safe `UserSlice` API.

use crate::uapi::*;
use kernel::types::{AsBytes, FromBytes};

/// Implements the byte-level traits for ABI structures.
macro_rules! abi_bytes {
    ($($t:ty),* $(,)?) => {$(
        // SAFETY: the ABI structures are `#[repr(C)]`, made only of integers and
        // integer arrays, with no padding (asserted in `uapi/src/abi.rs` and by
        // the C header test), so every bit pattern is valid and every byte is
        // initialised.
        unsafe impl FromBytes for $t {}
        // SAFETY: as above.
        unsafe impl AsBytes for $t {}
    )*};
}
abi_bytes!(
    SrnicQueryDevice, SrnicHandleArg, SrnicAllocPd, SrnicRegMr, SrnicCreateCq,
    SrnicReqNotifyCq, SrnicWc, SrnicPollCq, SrnicCreateQp, SrnicQueryQp, SrnicListen,
    SrnicConnect, SrnicAccept, SrnicReject, SrnicDisconnect, SrnicEvent, SrnicSge,
    SrnicPostWr, SrnicStats, SrnicRmppNode, SrnicRmppCreateEp, SrnicRmppSend,
    SrnicRmppPostRecv, SrnicRmppStats,
);
