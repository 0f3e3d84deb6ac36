// SPDX-License-Identifier: GPL-2.0
//! Error codes the 6.12 `kernel` crate does not name (its `code` module lacks the
//! networking ones).

use kernel::{bindings, error::Error};

fn errno(e: u32) -> Error {
    Error::from_errno(-(e as i32))
}

/// `EPROTO`: a protocol violation.
pub(crate) fn eproto() -> Error {
    errno(bindings::EPROTO)
}

/// `ECONNRESET`: the peer reset the connection.
pub(crate) fn econnreset() -> Error {
    errno(bindings::ECONNRESET)
}

/// `ECONNREFUSED`: the peer refused (an MPA reject).
pub(crate) fn econnrefused() -> Error {
    errno(bindings::ECONNREFUSED)
}

/// `ECONNABORTED`: the QP was destroyed (or failed) while it was connecting.
pub(crate) fn econnaborted() -> Error {
    errno(bindings::ECONNABORTED)
}

/// `EAFNOSUPPORT`: an address family srnic does not speak.
pub(crate) fn eafnosupport() -> Error {
    errno(bindings::EAFNOSUPPORT)
}

/// `EHOSTUNREACH`: no node table entry (or on another netdev) for a NID.
pub(crate) fn ehostunreach() -> Error {
    errno(bindings::EHOSTUNREACH)
}

/// `ESHUTDOWN`: the endpoint is closed.
pub(crate) fn eshutdown() -> Error {
    errno(bindings::ESHUTDOWN)
}

/// `EADDRINUSE`: an endpoint already has this address.
pub(crate) fn eaddrinuse() -> Error {
    errno(bindings::EADDRINUSE)
}

/// `EMSGSIZE`: a frame larger than the device takes.
pub(crate) fn emsgsize() -> Error {
    errno(bindings::EMSGSIZE)
}

/// `ETIMEDOUT`.
pub(crate) fn etimedout() -> Error {
    errno(bindings::ETIMEDOUT)
}

/// `EINPROGRESS`.
pub(crate) fn einprogress() -> Error {
    errno(bindings::EINPROGRESS)
}

/// `ENETDOWN`: the interface a connection or endpoint used went down or away.
pub(crate) fn enetdown() -> Error {
    errno(bindings::ENETDOWN)
}
