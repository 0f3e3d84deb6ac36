// SPDX-License-Identifier: GPL-2.0
//! Reading MPA start-up frames (RFC 5044 section 7.1) from a socket, and how
//! long each side of the start-up waits.
//!
//! Frames are read exactly (20 bytes, then the private data length they
//! announce), so no byte of the first FPDU is consumed here.

use crate::{
    proto::mpa::frame::{HDR_LEN, MAX_FRAME_LEN},
    sys::{errno::econnreset, socket::TcpSocket},
};
use kernel::prelude::*;

/// How long a connect waits for TCP.
pub(crate) const CONNECT_TIMEOUT_MS: i32 = 10_000;
/// How long an initiator waits for the MPA Reply (siw: 5 s).
pub(crate) const REPLY_TIMEOUT_MS: i32 = 5_000;
/// How long a responder waits for the MPA Request (siw: 10 s).
pub(crate) const REQUEST_TIMEOUT_MS: i32 = 10_000;

/// Reads one MPA start-up frame exactly into `buf`; returns its length.
pub(crate) fn read_frame(sock: &TcpSocket, buf: &mut [u8; MAX_FRAME_LEN]) -> Result<usize> {
    let n = sock.recv(&mut buf[..HDR_LEN], false)?;
    if n != HDR_LEN {
        return Err(econnreset());
    }
    // The private data length is the frame header's last field.
    let pd_len = usize::from(u16::from_be_bytes([buf[HDR_LEN - 2], buf[HDR_LEN - 1]]));
    let total = HDR_LEN + pd_len;
    if total > MAX_FRAME_LEN {
        // Let the negotiator report the bad frame: hand it the header alone.
        return Ok(HDR_LEN);
    }
    if pd_len > 0 {
        let n = sock.recv(&mut buf[HDR_LEN..total], false)?;
        if n != pd_len {
            return Err(econnreset());
        }
    }
    Ok(total)
}

