// SPDX-License-Identifier: GPL-2.0
//! Reading MPA start-up frames (RFC 5044 section 7.1) from a socket without
//! waiting, and how long the initiator's side of the start-up may take.
//!
//! Frames are read exactly (20 bytes, then the private data length they
//! announce), so no byte of the first FPDU is consumed here.

use crate::{
    proto::mpa::frame::{HDR_LEN, MAX_FRAME_LEN},
    sys::{errno::econnreset, socket::TcpSocket},
};
use kernel::prelude::*;

/// The private data length is the frame header's last field.
fn pd_len(hdr: &[u8]) -> usize {
    usize::from(u16::from_be_bytes([hdr[HDR_LEN - 2], hdr[HDR_LEN - 1]]))
}

/// One start-up frame read without waiting, in as many pieces as it comes:
/// the header, then exactly the private data it announces (a byte more
/// would belong to the first FPDU).
pub(crate) struct FrameReader {
    buf: [u8; MAX_FRAME_LEN],
    have: usize,
}

impl FrameReader {
    /// Nothing read yet.
    pub(crate) const fn new() -> Self {
        Self { buf: [0; MAX_FRAME_LEN], have: 0 }
    }

    /// How many bytes the frame has, as far as it is known.
    fn want(&self) -> usize {
        if self.have < HDR_LEN {
            return HDR_LEN;
        }
        let total = HDR_LEN + pd_len(&self.buf[..HDR_LEN]);
        // Too long: hand the negotiator the header alone, which it refuses.
        if total > MAX_FRAME_LEN { HDR_LEN } else { total }
    }

    /// Reads what has arrived. `Ok(Some(frame))` once the frame is complete,
    /// `Ok(None)` while more must come; ECONNRESET when the peer closed, or
    /// the socket's error.
    pub(crate) fn read(&mut self, sock: &TcpSocket) -> Result<Option<&[u8]>> {
        loop {
            let want = self.want();
            if self.have >= want {
                return Ok(Some(&self.buf[..want]));
            }
            match sock.recv_now(&mut self.buf[self.have..want]) {
                Ok(0) => return Err(econnreset()),
                Ok(n) => self.have += n,
                Err(e) if e == EAGAIN => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }
}

/// Whether the initiator sent nothing behind its MPA Request: RFC 5044
/// section 7.1 has it wait for the Reply before its first FPDU, and a byte
/// behind the Request (or its close) breaks the start-up (siw refuses such a
/// connection too, in `siw_recv_mpa_rr`). Reads (and so consumes) at most one
/// byte: call it only where the connection is refused when it finds one.
pub(crate) fn nothing_behind(sock: &TcpSocket) -> bool {
    let mut b = [0u8; 1];
    matches!(sock.recv_now(&mut b), Err(e) if e == EAGAIN)
}

/// How long a connect may wait for TCP.
pub(crate) const CONNECT_TIMEOUT_MS: i32 = 10_000;
/// How long an initiator waits for the MPA Reply (siw: 5 s).
pub(crate) const REPLY_TIMEOUT_MS: i32 = 5_000;
