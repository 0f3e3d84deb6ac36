// SPDX-License-Identifier: GPL-2.0
//! What the ABI says about a connection, in the protocol cores' terms and
//! back: `SRNIC_MPA_*` flags and MPA settings, and the private data of a
//! connect, accept or reject.

use crate::{
    proto::mpa::{frame::MAX_PD_SIW, negotiate::MpaConfig, Negotiated, Rtr, RtrCaps},
    sys::{
        errno::emsgsize,
        param,
        socket::TcpSocket,
    },
    uapi::*,
    verbs::limits,
};
use kernel::prelude::*;

/// The MPA settings for `SRNIC_MPA_*` flags and the given IRD/ORD.
pub(crate) fn mpa_config(flags: u32, ird: u32, ord: u32) -> MpaConfig {
    let mut c = MpaConfig::siw_compatible();
    c.revision = if flags & SRNIC_MPA_REV1 != 0 { 1 } else { 2 };
    c.crc = flags & SRNIC_MPA_CRC != 0;
    c.markers_rx = flags & SRNIC_MPA_MARKERS != 0;
    c.markers_tx_ok = true;
    c.ird = ird.min(limits::MAX_IRD as u32) as u16;
    c.ord = ord.min(limits::MAX_ORD as u32) as u16;
    c.p2p = flags & SRNIC_MPA_P2P != 0;
    c.rtr = if flags & SRNIC_MPA_RTR_READ != 0 {
        RtrCaps { write: false, read: true, send: false }
    } else {
        RtrCaps { write: true, read: true, send: false }
    };
    c.pd_limit = MAX_PD_SIW;
    c
}

/// `SRNIC_MPA_*` flags describing what was negotiated.
pub(crate) fn negotiated_flags(n: &Negotiated) -> u32 {
    let mut f = 0;
    if n.crc_tx || n.crc_rx {
        f |= SRNIC_MPA_CRC;
    }
    if n.markers_tx || n.markers_rx {
        f |= SRNIC_MPA_MARKERS;
    }
    if n.revision == 1 {
        f |= SRNIC_MPA_REV1;
    }
    if n.rtr != Rtr::None {
        f |= SRNIC_MPA_P2P;
    }
    for (on, bit) in [
        (n.crc_tx, SRNIC_MPA_CRC_TX),
        (n.crc_rx, SRNIC_MPA_CRC_RX),
        (n.markers_tx, SRNIC_MPA_MARKERS_TX),
        (n.markers_rx, SRNIC_MPA_MARKERS_RX),
    ] {
        if on {
            f |= bit;
        }
    }
    f
}

/// Private data of a connect, accept or reject (at most 252 bytes: siw's cap).
#[derive(Clone, Copy)]
pub(crate) struct PrivateData {
    buf: [u8; SRNIC_MAX_PRIVATE_DATA as usize],
    len: usize,
}

impl PrivateData {
    /// Copies `len` bytes from user address `ptr`.
    pub(crate) fn from_user(ptr: u64, len: u32) -> Result<Self> {
        let len = len as usize;
        if len > SRNIC_MAX_PRIVATE_DATA as usize {
            return Err(EINVAL);
        }
        let mut pd = Self {
            buf: [0; SRNIC_MAX_PRIVATE_DATA as usize],
            len,
        };
        if len > 0 {
            let mut r = kernel::uaccess::UserSlice::new(ptr as usize, len).reader();
            r.read_slice(&mut pd.buf[..len])?;
        }
        Ok(pd)
    }

    /// Copies `data` (a kernel client's).
    pub(crate) fn from_slice(data: &[u8]) -> Result<Self> {
        let len = data.len();
        if len > SRNIC_MAX_PRIVATE_DATA as usize {
            return Err(EINVAL);
        }
        let mut pd = Self {
            buf: [0; SRNIC_MAX_PRIVATE_DATA as usize],
            len,
        };
        pd.buf[..len].copy_from_slice(data);
        Ok(pd)
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}


/// Whether a new TCP connection may start MPA: its MSS must be at least the
/// `min_mss` parameter (`EMSGSIZE` otherwise). This bounds the FPDUs (and
/// segments) of a READ response to what a path of `min_mss` needs.
pub(crate) fn check_mss(sock: &TcpSocket) -> Result {
    if sock.path_mss() < param::min_mss() {
        return Err(emsgsize());
    }
    Ok(())
}
