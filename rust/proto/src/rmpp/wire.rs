// SPDX-License-Identifier: GPL-2.0
//! Sandia RMPP packet header: zero-copy view ([`Packet`]) and typed form ([`Repr`]).
//!
//! The paper (Riesen and Maccabe, "RMPP: The Reliable Message Passing Protocol") names
//! the header fields but leaves their sizes and the byte order to the implementation.
//! srnic uses a fixed 44-byte header, all fields big-endian:
//!
//! | offset | size | field    | meaning                                                    |
//! |--------|------|----------|------------------------------------------------------------|
//! | 0      | 1    | version  | [`VERSION`]; anything else is dropped                      |
//! | 1      | 1    | type     | [`PacketType`] code 1..=12                                 |
//! | 2      | 2    | plen     | payload bytes following the header (frames may be padded) |
//! | 4      | 4    | srcNID   | node that sends the *message* (same in both directions)    |
//! | 8      | 4    | dstNID   | node that receives the *message* (same in both directions) |
//! | 12     | 4    | msgID    | sender-local message identifier                            |
//! | 16     | 4    | msgNum   | per (sender, receiver) pair message number, for ordering   |
//! | 20     | 4    | len      | length of the whole message in bytes                       |
//! | 24     | 4    | seq      | data packet sequence number (RTS is 0, data starts at 1)   |
//! | 28     | 4    | info1    | type specific (RTS: [`caps`]; CTS: grant n; DATA: block size; MSGEND: accepted bytes; SNAK: packets asked for) |
//! | 32     | 4    | info2    | attempt number of the sender (echoed by the receiver)      |
//! | 36     | 8    | tag      | RTS / LAST RTS: 64-bit upper-layer match tag; SNAK: the missing-packet mask; else 0 |
//!
//! NAK and SNAK (types 11 and 12) are srnic's receiver-driven recovery, the
//! paper's section 4 proposal: a NAK asks the sender to go back to packet `seq`,
//! a selective NAK to send again the packets `seq + i` for every bit `i` set in
//! `tag` (bit 0, the least significant, is `seq` itself). A receiver sends them
//! only for messages whose RTS advertised them in `info1` ([`caps`]), so peers
//! without them never see one.
//!
//! This is *not* the InfiniBand MAD "RMPP" (reliable multi-packet transaction protocol);
//! nothing here is related to it.

use core::ops::Range;

/// Protocol version carried in every header.
pub const VERSION: u8 = 1;

/// Length of the fixed header in bytes.
pub const HEADER_LEN: usize = 44;

/// Default EtherType for Sandia RMPP frames (IEEE 802 local experimental 1).
pub const ETHERTYPE: u16 = 0x88B5;

/// Byte ranges of the header fields.
mod field {
    use core::ops::Range;

    pub(super) const VERSION: usize = 0;
    pub(super) const TYPE: usize = 1;
    pub(super) const PLEN: Range<usize> = 2..4;
    pub(super) const SRC: Range<usize> = 4..8;
    pub(super) const DST: Range<usize> = 8..12;
    pub(super) const MSG_ID: Range<usize> = 12..16;
    pub(super) const MSG_NUM: Range<usize> = 16..20;
    pub(super) const LEN: Range<usize> = 20..24;
    pub(super) const SEQ: Range<usize> = 24..28;
    pub(super) const INFO1: Range<usize> = 28..32;
    pub(super) const INFO2: Range<usize> = 32..36;
    pub(super) const TAG: Range<usize> = 36..44;
}

/// The ten Sandia RMPP packet types (paper, Table 1) and srnic's two NAKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// Request to send a long message; carries the first chunk of data.
    Rts,
    /// Request to send a short message: the whole message is in this packet.
    LastRts,
    /// Clear to send `info1` data packets starting at `seq`.
    Cts,
    /// Data packet `seq`.
    Data,
    /// Data packet `seq`, the last one of the granted block.
    StopData,
    /// Data packet `seq`, the last one of the message.
    LastData,
    /// The receiver has all the data it wanted (`info1` bytes).
    MsgEnd,
    /// The receiver does not want (more of) the message.
    MsgDrop,
    /// Garbage collection hint: the receiver may free its state.
    Gch,
    /// Abort the message (sent in place of a retry).
    Null,
    /// srnic extension: the receiver saw a gap; send again from packet `seq`.
    Nak,
    /// srnic extension: send again the packets marked in the `tag` mask from `seq`.
    SelectiveNak,
}

/// Recovery capabilities a sender advertises in the `info1` field of its RTS
/// and LAST RTS (the paper leaves it unused there, so peers that do not know
/// these bits send zero and ignore them).
pub mod caps {
    /// The sender goes back to the packet a [`super::PacketType::Nak`] names.
    pub const NAK: u32 = 1 << 0;
    /// The sender sends again the packets a [`super::PacketType::SelectiveNak`]
    /// lists.
    pub const SELECTIVE_NAK: u32 = 1 << 1;
}

/// Packets one selective NAK can list: the bits of its `tag` field.
pub const SNAK_SPAN: u32 = 64;

impl PacketType {
    /// Decodes a type code; `None` for unknown codes.
    pub const fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => Self::Rts,
            2 => Self::LastRts,
            3 => Self::Cts,
            4 => Self::Data,
            5 => Self::StopData,
            6 => Self::LastData,
            7 => Self::MsgEnd,
            8 => Self::MsgDrop,
            9 => Self::Gch,
            10 => Self::Null,
            11 => Self::Nak,
            12 => Self::SelectiveNak,
            _ => return None,
        })
    }

    /// The on-wire type code.
    pub const fn code(self) -> u8 {
        match self {
            Self::Rts => 1,
            Self::LastRts => 2,
            Self::Cts => 3,
            Self::Data => 4,
            Self::StopData => 5,
            Self::LastData => 6,
            Self::MsgEnd => 7,
            Self::MsgDrop => 8,
            Self::Gch => 9,
            Self::Null => 10,
            Self::Nak => 11,
            Self::SelectiveNak => 12,
        }
    }

    /// Whether packets of this type may carry payload.
    pub const fn carries_data(self) -> bool {
        matches!(
            self,
            Self::Rts | Self::LastRts | Self::Data | Self::StopData | Self::LastData
        )
    }

    /// Whether the packet travels from the message's receiver back to its sender.
    pub const fn is_reply(self) -> bool {
        matches!(
            self,
            Self::Cts | Self::MsgEnd | Self::MsgDrop | Self::Nak | Self::SelectiveNak
        )
    }
}

/// Why a frame could not be parsed. The kernel counts drops by these reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Shorter than the header, or than header plus `plen`.
    Truncated,
    /// Version field is not [`VERSION`].
    BadVersion(u8),
    /// Type code outside 1..=12.
    UnknownType(u8),
    /// A control packet type with a non-zero payload length.
    UnexpectedPayload,
}

/// Zero-copy view of a Sandia RMPP packet in a byte buffer.
#[derive(Clone, Copy, Debug)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

fn get_u16(b: &[u8], r: Range<usize>) -> u16 {
    b.get(r)
        .and_then(|s| <[u8; 2]>::try_from(s).ok())
        .map_or(0, u16::from_be_bytes)
}

fn get_u32(b: &[u8], r: Range<usize>) -> u32 {
    b.get(r)
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, u32::from_be_bytes)
}

fn get_u64(b: &[u8], r: Range<usize>) -> u64 {
    b.get(r)
        .and_then(|s| <[u8; 8]>::try_from(s).ok())
        .map_or(0, u64::from_be_bytes)
}

fn put(b: &mut [u8], r: Range<usize>, v: &[u8]) {
    if let Some(d) = b.get_mut(r) {
        if d.len() == v.len() {
            d.copy_from_slice(v);
        }
    }
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking its length; accessors then return 0 for
    /// missing bytes instead of panicking.
    pub const fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wraps a buffer after [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self, ParseError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the buffer holds the header and the `plen` payload bytes.
    /// Bytes beyond that (link-layer padding) are allowed and ignored.
    pub fn check_len(&self) -> Result<(), ParseError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(ParseError::Truncated);
        }
        match HEADER_LEN.checked_add(usize::from(self.payload_len())) {
            Some(end) if end <= len => Ok(()),
            _ => Err(ParseError::Truncated),
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Version field.
    pub fn version(&self) -> u8 {
        self.buffer
            .as_ref()
            .get(field::VERSION)
            .copied()
            .unwrap_or(0)
    }

    /// Raw type code.
    pub fn type_code(&self) -> u8 {
        self.buffer.as_ref().get(field::TYPE).copied().unwrap_or(0)
    }

    /// Payload length field.
    pub fn payload_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::PLEN)
    }

    /// srcNID: the node that sends the message.
    pub fn src_nid(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SRC)
    }

    /// dstNID: the node that receives the message.
    pub fn dst_nid(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::DST)
    }

    /// msgID field.
    pub fn msg_id(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::MSG_ID)
    }

    /// msgNum field.
    pub fn msg_num(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::MSG_NUM)
    }

    /// Message length field.
    pub fn msg_len(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::LEN)
    }

    /// Sequence number field.
    pub fn seq(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SEQ)
    }

    /// info1 field.
    pub fn info1(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::INFO1)
    }

    /// info2 field.
    pub fn info2(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::INFO2)
    }

    /// Upper-layer match tag.
    pub fn tag(&self) -> u64 {
        get_u64(self.buffer.as_ref(), field::TAG)
    }

    /// The `plen` payload bytes (empty if the buffer is too short).
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        HEADER_LEN
            .checked_add(usize::from(self.payload_len()))
            .and_then(|end| b.get(HEADER_LEN..end))
            .unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the version field.
    pub fn set_version(&mut self, v: u8) {
        put(self.buffer.as_mut(), field::VERSION..field::TYPE, &[v]);
    }

    /// Sets the raw type code.
    pub fn set_type_code(&mut self, v: u8) {
        put(self.buffer.as_mut(), field::TYPE..field::PLEN.start, &[v]);
    }

    /// Sets the payload length field.
    pub fn set_payload_len(&mut self, v: u16) {
        put(self.buffer.as_mut(), field::PLEN, &v.to_be_bytes());
    }

    /// Sets srcNID.
    pub fn set_src_nid(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::SRC, &v.to_be_bytes());
    }

    /// Sets dstNID.
    pub fn set_dst_nid(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::DST, &v.to_be_bytes());
    }

    /// Sets msgID.
    pub fn set_msg_id(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::MSG_ID, &v.to_be_bytes());
    }

    /// Sets msgNum.
    pub fn set_msg_num(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::MSG_NUM, &v.to_be_bytes());
    }

    /// Sets the message length.
    pub fn set_msg_len(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::LEN, &v.to_be_bytes());
    }

    /// Sets the sequence number.
    pub fn set_seq(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::SEQ, &v.to_be_bytes());
    }

    /// Sets info1.
    pub fn set_info1(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::INFO1, &v.to_be_bytes());
    }

    /// Sets info2.
    pub fn set_info2(&mut self, v: u32) {
        put(self.buffer.as_mut(), field::INFO2, &v.to_be_bytes());
    }

    /// Sets the match tag.
    pub fn set_tag(&mut self, v: u64) {
        put(self.buffer.as_mut(), field::TAG, &v.to_be_bytes());
    }
}

/// Parsed Sandia RMPP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// Packet type.
    pub ptype: PacketType,
    /// Payload bytes following the header.
    pub payload_len: u16,
    /// Node sending the message.
    pub src_nid: u32,
    /// Node receiving the message.
    pub dst_nid: u32,
    /// Sender-local message identifier.
    pub msg_id: u32,
    /// Per-pair message number.
    pub msg_num: u32,
    /// Whole message length.
    pub len: u32,
    /// Data sequence number.
    pub seq: u32,
    /// Type-specific info1.
    pub info1: u32,
    /// Type-specific info2 (attempt number).
    pub info2: u32,
    /// Upper-layer match tag.
    pub tag: u64,
}

impl Repr {
    /// Parses a checked packet. Checks length, version, type and that control
    /// packets carry no payload.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr, ParseError> {
        packet.check_len()?;
        if packet.version() != VERSION {
            return Err(ParseError::BadVersion(packet.version()));
        }
        let ptype = PacketType::from_code(packet.type_code())
            .ok_or(ParseError::UnknownType(packet.type_code()))?;
        if !ptype.carries_data() && packet.payload_len() != 0 {
            return Err(ParseError::UnexpectedPayload);
        }
        Ok(Repr {
            ptype,
            payload_len: packet.payload_len(),
            src_nid: packet.src_nid(),
            dst_nid: packet.dst_nid(),
            msg_id: packet.msg_id(),
            msg_num: packet.msg_num(),
            len: packet.msg_len(),
            seq: packet.seq(),
            info1: packet.info1(),
            info2: packet.info2(),
            tag: packet.tag(),
        })
    }

    /// Bytes needed for the header (the payload follows it).
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Bytes needed for header plus payload.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN.saturating_add(usize::from(self.payload_len))
    }

    /// Writes the header into the first [`HEADER_LEN`] bytes of `packet`. The payload
    /// itself is not touched (the caller sends it from wherever it lives).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_version(VERSION);
        packet.set_type_code(self.ptype.code());
        packet.set_payload_len(self.payload_len);
        packet.set_src_nid(self.src_nid);
        packet.set_dst_nid(self.dst_nid);
        packet.set_msg_id(self.msg_id);
        packet.set_msg_num(self.msg_num);
        packet.set_msg_len(self.len);
        packet.set_seq(self.seq);
        packet.set_info1(self.info1);
        packet.set_info2(self.info2);
        packet.set_tag(self.tag);
    }
}
