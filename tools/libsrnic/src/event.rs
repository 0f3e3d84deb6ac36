// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Event records: what `read()` on the device returns (`struct srnic_event`,
//! 352 bytes each), decoded into [`Event`], and the MPA option bits they carry.

use crate::addr;
use crate::error::{Error, Result};
use srnic_uapi as abi;
use std::fmt;
use std::net::SocketAddr;

/// Size of one event record as `read()` returns it.
pub const EVENT_RECORD_SIZE: usize = std::mem::size_of::<abi::SrnicEvent>();

abi_enum! {
    /// What an event is about (`SRNIC_EVENT_*`); unknown values stay representable.
    pub enum EventKind: "SRNIC_EVENT_", unknown "event {}" {
        /// An armed CQ received a matching completion.
        CqNotify = SRNIC_EVENT_CQ,
        /// A connection request arrived on a listener.
        ConnectRequest = SRNIC_EVENT_CONNECT_REQUEST,
        /// A QP's connection is established.
        Established = SRNIC_EVENT_ESTABLISHED,
        /// The peer rejected a QP's connection request.
        Rejected = SRNIC_EVENT_REJECTED,
        /// A QP's connection is closed.
        Disconnected = SRNIC_EVENT_DISCONNECTED,
        /// A QP's connection attempt failed; `status` is `-errno`.
        ConnectError = SRNIC_EVENT_CONNECT_ERROR,
        /// A QP went to the error state; `term` says why.
        QpError = SRNIC_EVENT_QP_ERROR,
        /// A CQ overflowed.
        CqError = SRNIC_EVENT_CQ_ERROR,
        /// An RMPP endpoint stopped (its interface went down or away);
        /// `status` is `-errno`.
        RmppError = SRNIC_EVENT_RMPP_ERROR,
    }
}

/// The kind of object an event's `handle` names. Handles are only unique within
/// one kind as far as this library assumes, so events are routed by (kind, handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A completion queue.
    Cq,
    /// A listener.
    Listener,
    /// A queue pair.
    Qp,
    /// An RMPP endpoint.
    RmppEndpoint,
    /// An event type this library does not know.
    Unknown,
}

impl EventKind {
    /// The kind of object the event's handle names.
    pub fn object(self) -> ObjectKind {
        match self {
            Self::CqNotify | Self::CqError => ObjectKind::Cq,
            Self::ConnectRequest => ObjectKind::Listener,
            Self::Established
            | Self::Rejected
            | Self::Disconnected
            | Self::ConnectError
            | Self::QpError => ObjectKind::Qp,
            Self::RmppError => ObjectKind::RmppEndpoint,
            Self::Unknown(_) => ObjectKind::Unknown,
        }
    }
}

/// MPA options (`SRNIC_MPA_*`): requested on listen and connect, negotiated in
/// events and [`crate::QpAttr`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MpaFlags(pub u32);

impl MpaFlags {
    /// Ask for CRC32c (used if either side asks).
    pub const CRC: Self = Self(abi::SRNIC_MPA_CRC);
    /// Ask the peer to insert markers.
    pub const MARKERS: Self = Self(abi::SRNIC_MPA_MARKERS);
    /// Speak MPA revision 1 only.
    pub const REV1: Self = Self(abi::SRNIC_MPA_REV1);
    /// Peer-to-peer mode with a ready-to-receive message.
    pub const P2P: Self = Self(abi::SRNIC_MPA_P2P);
    /// The RTR message is a zero-length READ (else a zero-length WRITE).
    pub const RTR_READ: Self = Self(abi::SRNIC_MPA_RTR_READ);
    /// Negotiated: CRC on what this side sends.
    pub const CRC_TX: Self = Self(abi::SRNIC_MPA_CRC_TX);
    /// Negotiated: CRC on what this side receives.
    pub const CRC_RX: Self = Self(abi::SRNIC_MPA_CRC_RX);
    /// Negotiated: markers in what this side sends.
    pub const MARKERS_TX: Self = Self(abi::SRNIC_MPA_MARKERS_TX);
    /// Negotiated: markers in what this side receives.
    pub const MARKERS_RX: Self = Self(abi::SRNIC_MPA_MARKERS_RX);

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The names of the set bits (`SRNIC_MPA_RTR_READ` is `rtr-read`); unknown
    /// bits as `bitN`.
    pub fn names(self) -> Vec<String> {
        crate::names::bit_names("SRNIC_MPA_", self.0.into())
    }
}

impl std::ops::BitOr for MpaFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl fmt::Display for MpaFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.names();
        if n.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&n.join(","))
        }
    }
}

/// One decoded event record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// The CQ, listener or QP it happened to (see [`EventKind::object`]).
    pub handle: u32,
    /// CONNECT_REQUEST: the id to accept or reject.
    pub conn_id: u32,
    /// CONNECT_ERROR and RMPP_ERROR: `-errno`; QP_ERROR: `-errno` when the
    /// connection's socket failed (`ETIMEDOUT`: the peer stopped reading or
    /// acknowledging; `ENETDOWN`: its interface went down or away), 0 for a
    /// TERMINATE; else 0.
    pub status: i32,
    /// The peer's (CONNECT_REQUEST) or negotiated (ESTABLISHED) inbound READ depth.
    pub ird: u32,
    /// The peer's (CONNECT_REQUEST) or negotiated (ESTABLISHED) outbound READ depth.
    pub ord: u32,
    /// CONNECT_REQUEST: what the peer asks for; ESTABLISHED: as negotiated.
    pub mpa_flags: MpaFlags,
    /// QP_ERROR: the TERMINATE word (as in [`crate::WorkCompletion::term`]).
    pub term: u32,
    /// The local address, when the event carries one.
    pub local: Option<SocketAddr>,
    /// The peer's address, when the event carries one.
    pub remote: Option<SocketAddr>,
    /// The peer's private data (CONNECT_REQUEST, ESTABLISHED, REJECTED).
    pub private_data: Vec<u8>,
}

impl Event {
    /// The (object kind, handle) pair this event is routed to.
    pub fn target(&self) -> (ObjectKind, u32) {
        (self.kind.object(), self.handle)
    }

    /// Decodes a raw record. A `private_data_len` beyond the array is clamped.
    pub fn from_raw(r: &abi::SrnicEvent) -> Self {
        let pd_len = (r.private_data_len as usize).min(r.private_data.len());
        Self {
            kind: r.event_type.into(),
            handle: r.handle,
            conn_id: r.conn_id,
            status: r.status,
            ird: r.ird,
            ord: r.ord,
            mpa_flags: MpaFlags(r.mpa_flags),
            term: r.term,
            local: addr::from_abi(&r.local),
            remote: addr::from_abi(&r.remote),
            private_data: r.private_data[..pd_len].to_vec(),
        }
    }

    /// Decodes what one `read()` returned: a whole number of records.
    pub fn decode_records(buf: &[u8]) -> Result<Vec<Event>> {
        if buf.len() / EVENT_RECORD_SIZE * EVENT_RECORD_SIZE != buf.len() {
            return Err(Error::Protocol(format!(
                "read() returned {} bytes, not a multiple of the {EVENT_RECORD_SIZE}-byte event record",
                buf.len()
            )));
        }
        Ok(buf
            .chunks_exact(EVENT_RECORD_SIZE)
            .map(|c| Event::from_raw(&crate::pod::from_bytes::<abi::SrnicEvent>(c)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a record byte by byte at the offsets of `struct srnic_event` in C.
    fn record(ty: u32, handle: u32, conn_id: u32, status: i32, pd: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 352];
        b[0..4].copy_from_slice(&ty.to_ne_bytes());
        b[4..8].copy_from_slice(&handle.to_ne_bytes());
        b[8..12].copy_from_slice(&conn_id.to_ne_bytes());
        b[12..16].copy_from_slice(&status.to_ne_bytes());
        b[16..20].copy_from_slice(&7u32.to_ne_bytes()); // ird
        b[20..24].copy_from_slice(&3u32.to_ne_bytes()); // ord
        b[24..28].copy_from_slice(&(abi::SRNIC_MPA_CRC | abi::SRNIC_MPA_CRC_TX).to_ne_bytes());
        b[28..32].copy_from_slice(&0x8000_1203u32.to_ne_bytes()); // term
                                                                  // local: AF_INET 10.0.0.1:18515
        b[32..34].copy_from_slice(&2u16.to_ne_bytes());
        b[34..36].copy_from_slice(&18515u16.to_ne_bytes());
        b[40..44].copy_from_slice(&[10, 0, 0, 1]);
        // remote: AF_INET6 [::2]:40000 scope 5
        b[56..58].copy_from_slice(&10u16.to_ne_bytes());
        b[58..60].copy_from_slice(&40000u16.to_ne_bytes());
        b[60..64].copy_from_slice(&5u32.to_ne_bytes());
        b[79] = 2;
        b[80..84].copy_from_slice(&(pd.len() as u32).to_ne_bytes());
        b[96..96 + pd.len()].copy_from_slice(pd);
        b
    }

    #[test]
    fn decodes_a_connect_request() {
        let b = record(abi::SRNIC_EVENT_CONNECT_REQUEST, 4, 99, 0, b"hello");
        let e = Event::decode_records(&b).unwrap();
        assert_eq!(e.len(), 1);
        let e = &e[0];
        assert_eq!(e.kind, EventKind::ConnectRequest);
        assert_eq!(e.target(), (ObjectKind::Listener, 4));
        assert_eq!(e.conn_id, 99);
        assert_eq!((e.ird, e.ord), (7, 3));
        assert!(e.mpa_flags.contains(MpaFlags::CRC | MpaFlags::CRC_TX));
        assert_eq!(e.term, 0x8000_1203);
        assert_eq!(e.local, Some("10.0.0.1:18515".parse().unwrap()));
        assert_eq!(
            e.remote,
            Some(SocketAddr::V6(std::net::SocketAddrV6::new(
                "::2".parse().unwrap(),
                40000,
                0,
                5
            )))
        );
        assert_eq!(e.private_data, b"hello");
    }

    #[test]
    fn decodes_several_records_and_negative_status() {
        let mut b = record(abi::SRNIC_EVENT_CQ, 1, 0, 0, b"");
        b.extend(record(
            abi::SRNIC_EVENT_CONNECT_ERROR,
            2,
            0,
            -libc::ECONNREFUSED,
            b"",
        ));
        b.extend(record(77, 3, 0, 0, b""));
        let e = Event::decode_records(&b).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].target(), (ObjectKind::Cq, 1));
        assert_eq!(e[1].kind, EventKind::ConnectError);
        assert_eq!(e[1].status, -libc::ECONNREFUSED);
        assert_eq!(e[1].target(), (ObjectKind::Qp, 2));
        assert_eq!(e[2].kind, EventKind::Unknown(77));
        assert_eq!(e[2].kind.object(), ObjectKind::Unknown);
        assert!(e[2].private_data.is_empty());
    }

    #[test]
    fn oversized_private_data_len_is_clamped() {
        let mut b = record(abi::SRNIC_EVENT_REJECTED, 1, 0, 0, b"");
        b[80..84].copy_from_slice(&1000u32.to_ne_bytes());
        let e = Event::decode_records(&b).unwrap();
        assert_eq!(e[0].private_data.len(), 256);
    }

    #[test]
    fn partial_record_is_an_error() {
        assert!(matches!(
            Event::decode_records(&[0u8; 353]),
            Err(Error::Protocol(_))
        ));
        assert!(Event::decode_records(&[]).unwrap().is_empty());
    }

    #[test]
    fn event_kinds_round_trip() {
        for v in 0..12u32 {
            assert_eq!(u32::from(EventKind::from(v)), v);
        }
        assert_eq!(EventKind::from(8).object(), ObjectKind::Cq);
        assert_eq!(EventKind::from(3).object(), ObjectKind::Qp);
        assert_eq!(EventKind::ConnectRequest.to_string(), "connect-request");
        assert_eq!(EventKind::Unknown(77).to_string(), "event 77");
        assert_eq!(EventKind::CqNotify.abi_name(), Some("SRNIC_EVENT_CQ"));
    }

    #[test]
    fn mpa_names() {
        assert_eq!(MpaFlags(0).to_string(), "none");
        assert_eq!(
            (MpaFlags::CRC | MpaFlags::MARKERS_RX | MpaFlags(1 << 20)).to_string(),
            "crc,markers-rx,bit20"
        );
    }
}
