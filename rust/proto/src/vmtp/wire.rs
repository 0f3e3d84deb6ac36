// SPDX-License-Identifier: GPL-2.0
//! The VMTP packet (RFC 1045, sections 3.2 to 3.4): zero-copy view
//! ([`Packet`]) and typed header ([`Repr`]).
//!
//! Requests and Responses share one 64-byte header of big-endian 32-bit words
//! (the message control block), followed by `4 * Length` bytes of segment data
//! and the 4-byte [`super::checksum`]:
//!
//! | offset | size | field                                                                 |
//! |--------|------|-----------------------------------------------------------------------|
//! | 0      | 8    | Client entity                                                         |
//! | 8      | 4    | Version (3 bits, 0), Domain (13), HCO, EPG, MPG, Length (13: words)   |
//! | 12     | 4    | control: NRS APG NSR NER NRT MDG CMG STI DRT, RetransmitCount (3), ForwardCount (4), InterPacketGap or PGcount (8), Priority (4), reserved (3), FunctionCode (1: 0 Request, 1 Response) |
//! | 16     | 4    | Transaction                                                           |
//! | 20     | 4    | PacketDelivery: the segment blocks in this packet                     |
//! | 24     | 8    | Server entity                                                         |
//! | 32     | 4    | Code: CMD DGM MDM SDA (reserved) CRE MRD PIC, then a 24-bit request or response code |
//! | 36     | 20   | Request: CoResidentEntity (8) and 12 bytes of user data; Response: 20 bytes of user data |
//! | 56     | 4    | MsgDelivery (with MDM; else user data)                                |
//! | 60     | 4    | SegmentSize (with SDA; else user data)                                |
//! | 64     | 4·Length | segment data, padded to a multiple of 8                           |
//! | end−4  | 4    | checksum (sum1, sum2)                                                 |

use super::super::bytes::{be32, be64, put};
use super::checksum::{self, Verdict};
use super::entity::EntityId;

/// Bytes of the header.
pub const HEADER_LEN: usize = 64;
/// The VMTP version of RFC 1045.
pub const VERSION: u8 = 0;
/// VMTP's IP protocol number.
pub const IP_PROTOCOL: u8 = 81;
/// Largest Length: 4096 words, 16 KiB of segment data in one packet.
pub const MAX_LENGTH: u16 = 4096;

/// Byte offsets of the header's fields (see the table above).
mod field {
    pub(super) const CLIENT: usize = 0;
    pub(super) const WORD2: usize = 8;
    pub(super) const CONTROL: usize = 12;
    pub(super) const TRANSACTION: usize = 16;
    pub(super) const PACKET_DELIVERY: usize = 20;
    pub(super) const SERVER: usize = 24;
    pub(super) const CODE: usize = 32;
    pub(super) const USER: usize = 36;
    pub(super) const MSG_DELIVERY: usize = 56;
    pub(super) const SEGMENT_SIZE: usize = 60;
}

/// Bytes of CoResidentEntity and user data at [`field::USER`].
const USER_LEN: usize = 20;

/// Bits of the word at offset 8 besides Version, Domain and Length.
pub mod word2 {
    /// Header Checksum Only: the checksum covers the header, not the data.
    pub const HCO: u32 = 1 << 15;
    /// Encrypted Packet Group (secure VMTP).
    pub const EPG: u32 = 1 << 14;
    /// Multicast Packet Group: the packet was multicast.
    pub const MPG: u32 = 1 << 13;
}

/// The flags of the control word (offset 12).
pub mod ctrl {
    /// Next Receive Sequence (fault-tolerant logging).
    pub const NRS: u32 = 1 << 31;
    /// Acknowledge Packet Group: the receiver must acknowledge the group.
    pub const APG: u32 = 1 << 30;
    /// Not Start Run (streaming).
    pub const NSR: u32 = 1 << 29;
    /// Not End Run (streaming).
    pub const NER: u32 = 1 << 28;
    /// No ReTransmission: deliver or discard, do not ask for missing blocks.
    pub const NRT: u32 = 1 << 27;
    /// Member of Destination Group (Requests).
    pub const MDG: u32 = 1 << 26;
    /// Continued Message: the message goes on in the next packet group.
    pub const CMG: u32 = 1 << 25;
    /// Skip Transaction Identifiers (streaming).
    pub const STI: u32 = 1 << 24;
    /// Delay Response Transmission (multicast Requests).
    pub const DRT: u32 = 1 << 23;
    /// Every flag.
    pub const ALL: u32 = 0xff80_0000;
    /// The reserved bits, zero on the wire.
    pub(super) const RESERVED: u32 = 0x0000_000e;
}

/// The flags and values of the Code word (offset 32).
pub mod code {
    /// Conditional Message Delivery: only if the receiver waits for it now.
    pub const CMD: u32 = 1 << 31;
    /// Request: a datagram (no Response); Response: idempotent (not kept or
    /// retransmitted: the client repeats its Request instead).
    pub const DGM: u32 = 1 << 30;
    /// Message Delivery Mask: MsgDelivery is in use.
    pub const MDM: u32 = 1 << 29;
    /// Segment Data Appended: SegmentSize is in use and data may follow.
    pub const SDA: u32 = 1 << 28;
    /// CoResident Entity: VMTP routes the Request by its CoResidentEntity.
    pub const CRE: u32 = 1 << 26;
    /// Multiple Responses Desired (multicast).
    pub const MRD: u32 = 1 << 25;
    /// Public Interface Code: a code of VMTP or a standard protocol.
    pub const PIC: u32 = 1 << 24;
    /// The code value's bits.
    pub const VALUE: u32 = 0x00ff_ffff;

    /// Response codes (RFC 1045, Appendix I). Applications use values from
    /// [`APPLICATION`] up.
    pub const OK: u32 = 0;
    /// Send the blocks not in the delivery mask again.
    pub const RETRY: u32 = 1;
    /// Send the whole packet group again.
    pub const RETRY_ALL: u32 = 2;
    /// The receiver cannot take the group now.
    pub const BUSY: u32 = 3;
    /// No such entity.
    pub const NONEXISTENT_ENTITY: u32 = 4;
    /// The entity moved to another host.
    pub const ENTITY_MIGRATED: u32 = 5;
    /// Not allowed.
    pub const NO_PERMISSION: u32 = 6;
    /// A CMD Request found its server not waiting.
    pub const NOT_AWAITING_MSG: u32 = 7;
    /// A malformed packet.
    pub const VMTP_ERROR: u32 = 8;
    /// Message transaction overflow.
    pub const MSGTRANS_OVERFLOW: u32 = 9;
    /// A Response for a transaction the client is not in.
    pub const BAD_TRANSACTION_ID: u32 = 10;
    /// Streaming is not supported.
    pub const STREAMING_NOT_SUPPORTED: u32 = 11;
    /// No run record.
    pub const NO_RUN_RECORD: u32 = 12;
    /// The sender gave up after its retransmissions.
    pub const RETRANS_TIMEOUT: u32 = 13;
    /// The user's time limit passed.
    pub const USER_TIMEOUT: u32 = 14;
    /// The server discarded the Response.
    pub const RESPONSE_DISCARDED: u32 = 15;
    /// Secure VMTP is not supported.
    pub const SECURITY_NOT_SUPPORTED: u32 = 16;
    /// Only part of the Response segment arrived.
    pub const BAD_REPLY_SEGMENT: u32 = 17;
    /// The server requires secure VMTP.
    pub const SECURITY_REQUIRED: u32 = 18;
    /// A streamed Response.
    pub const STREAMED_RESPONSE: u32 = 19;
    /// Too many retries.
    pub const TOO_MANY_RETRIES: u32 = 20;
    /// No principal.
    pub const NO_PRINCIPAL: u32 = 21;
    /// No key.
    pub const NO_KEY: u32 = 22;
    /// Encryption is not supported.
    pub const ENCRYPTION_NOT_SUPPORTED: u32 = 23;
    /// No authenticator.
    pub const NO_AUTHENTICATOR: u32 = 24;
    /// First code free for applications.
    pub const APPLICATION: u32 = 0x0080_0000;

    /// Management requests (Appendix III): Requests to a host's VMTP manager
    /// ([`super::super::EntityId::MANAGER_GROUP`]), flags included.
    /// ProbeEntity: the state (current transaction) of an entity.
    pub const PROBE_ENTITY: u32 = 0x0500_0101;
    /// NotifyVmtpClient: a datagram to a client's manager acknowledging its
    /// Request group or asking for blocks again (`delivery`, `code`).
    pub const NOTIFY_VMTP_CLIENT: u32 = 0x4500_010f;
    /// NotifyVmtpServer: the same to a server's manager about a Response.
    pub const NOTIFY_VMTP_SERVER: u32 = 0x4500_0110;
}

/// Whether a packet goes to the server or to the client (the control word's
/// low bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// To the Server.
    Request,
    /// To the Client.
    Response,
}

/// The control word (offset 12) field by field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control {
    /// The flags of [`ctrl`], in their word positions.
    pub flags: u32,
    /// Earlier transmissions of this packet group, modulo 8.
    pub retransmit_count: u8,
    /// Times the Request was forwarded (at most 15).
    pub forward_count: u8,
    /// Request: the gap the client wants between Response packets, in 1/32
    /// of an MTU-sized packet's transmission time; Response: PGcount.
    pub gap: u8,
    /// Priority (0 normal, 0b1100 urgent, 0b1000 important, 0b0100
    /// background).
    pub priority: u8,
    /// Request or Response.
    pub function: Function,
}

impl Control {
    /// A control word with nothing set but the function.
    pub const fn new(function: Function) -> Self {
        Control {
            flags: 0,
            retransmit_count: 0,
            forward_count: 0,
            gap: 0,
            priority: 0,
            function,
        }
    }

    /// The control word as sent.
    pub fn to_word(self) -> u32 {
        (self.flags & ctrl::ALL)
            | (u32::from(self.retransmit_count) & 7) << 20
            | (u32::from(self.forward_count) & 0xf) << 16
            | u32::from(self.gap) << 8
            | (u32::from(self.priority) & 0xf) << 4
            | u32::from(self.function == Function::Response)
    }

    /// The fields of a control word.
    pub fn from_word(w: u32) -> Self {
        Control {
            flags: w & ctrl::ALL,
            retransmit_count: (w.wrapping_shr(20) & 7) as u8,
            forward_count: (w.wrapping_shr(16) & 0xf) as u8,
            gap: (w.wrapping_shr(8) & 0xff) as u8,
            priority: (w.wrapping_shr(4) & 0xf) as u8,
            function: if w & 1 != 0 {
                Function::Response
            } else {
                Function::Request
            },
        }
    }

    /// Whether flag `f` (of [`ctrl`]) is set.
    pub const fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }
}

/// The Code word (offset 32): flags and a 24-bit request or response code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Code(pub u32);

impl Code {
    /// Whether flag `f` (of [`code`]) is set.
    pub const fn has(self, f: u32) -> bool {
        self.0 & f != 0
    }

    /// The 24-bit code value.
    pub const fn value(self) -> u32 {
        self.0 & code::VALUE
    }
}

/// Why a packet could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Shorter than the header and the checksum.
    Truncated,
    /// Length is odd or over [`MAX_LENGTH`], or the packet is not exactly
    /// header, `4 * Length` bytes and checksum.
    BadLength,
    /// Version is not [`VERSION`].
    BadVersion(u8),
    /// Reserved bits of the control word are set.
    Reserved,
    /// Segment data without SDA.
    UnexpectedData,
}

/// The 20 bytes at [`field::USER`] (zero if the buffer is short).
fn user_at(b: &[u8]) -> [u8; USER_LEN] {
    b.get(field::USER..field::USER.saturating_add(USER_LEN))
        .and_then(|s| <[u8; USER_LEN]>::try_from(s).ok())
        .unwrap_or([0; USER_LEN])
}

/// Zero-copy view of a VMTP packet (the IP payload).
#[derive(Clone, Copy, Debug)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors read missing bytes as 0.
    pub const fn new_unchecked(buffer: T) -> Self {
        Packet { buffer }
    }

    /// Wraps a buffer after [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self, ParseError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// The buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u32_at(&self, off: usize) -> u32 {
        be32(self.buffer.as_ref(), off).unwrap_or(0)
    }

    fn entity_at(&self, off: usize) -> EntityId {
        EntityId(be64(self.buffer.as_ref(), off).unwrap_or(0))
    }

    /// Checks that the buffer is exactly header, `4 * Length` data bytes and
    /// checksum, with an even Length of at most [`MAX_LENGTH`].
    pub fn check_len(&self) -> Result<(), ParseError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN.saturating_add(checksum::LEN) {
            return Err(ParseError::Truncated);
        }
        let words = self.length();
        if words & 1 != 0 || words > MAX_LENGTH || self.total_len() != len {
            return Err(ParseError::BadLength);
        }
        Ok(())
    }

    /// Bytes of the packet by its Length field: header, data, checksum.
    pub fn total_len(&self) -> usize {
        HEADER_LEN
            .saturating_add(self.data_len())
            .saturating_add(checksum::LEN)
    }

    /// Bytes of segment data (with padding) by the Length field.
    pub fn data_len(&self) -> usize {
        usize::from(self.length()).saturating_mul(4)
    }

    /// The Client entity.
    pub fn client(&self) -> EntityId {
        self.entity_at(field::CLIENT)
    }

    /// The word at offset 8.
    fn word2(&self) -> u32 {
        self.u32_at(field::WORD2)
    }

    /// Version (3 bits).
    pub fn version(&self) -> u8 {
        (self.word2().wrapping_shr(29) & 7) as u8
    }

    /// Entity domain (13 bits).
    pub fn domain(&self) -> u16 {
        (self.word2().wrapping_shr(16) & 0x1fff) as u16
    }

    /// Length: 32-bit words of segment data in this packet.
    pub fn length(&self) -> u16 {
        (self.word2() & 0x1fff) as u16
    }

    /// Whether flag `f` of [`word2`] is set.
    pub fn has_word2(&self, f: u32) -> bool {
        self.word2() & f != 0
    }

    /// The control word.
    pub fn control(&self) -> Control {
        Control::from_word(self.u32_at(field::CONTROL))
    }

    /// Transaction identifier.
    pub fn transaction(&self) -> u32 {
        self.u32_at(field::TRANSACTION)
    }

    /// PacketDelivery: the blocks this packet carries.
    pub fn packet_delivery(&self) -> u32 {
        self.u32_at(field::PACKET_DELIVERY)
    }

    /// The Server entity.
    pub fn server(&self) -> EntityId {
        self.entity_at(field::SERVER)
    }

    /// The Code word.
    pub fn code(&self) -> Code {
        Code(self.u32_at(field::CODE))
    }

    /// MsgDelivery.
    pub fn msg_delivery(&self) -> u32 {
        self.u32_at(field::MSG_DELIVERY)
    }

    /// SegmentSize.
    pub fn segment_size(&self) -> u32 {
        self.u32_at(field::SEGMENT_SIZE)
    }

    /// The segment data (with padding; empty if the buffer is short).
    pub fn data(&self) -> &[u8] {
        HEADER_LEN
            .checked_add(self.data_len())
            .and_then(|end| self.buffer.as_ref().get(HEADER_LEN..end))
            .unwrap_or(&[])
    }

    /// The bytes the checksum covers: the header only with HCO.
    fn covered(&self) -> &[u8] {
        let end = if self.has_word2(word2::HCO) {
            HEADER_LEN
        } else {
            HEADER_LEN.saturating_add(self.data_len())
        };
        self.buffer.as_ref().get(..end).unwrap_or(&[])
    }

    /// The checksum field.
    pub fn checksum_field(&self) -> [u8; checksum::LEN] {
        self.u32_at(HEADER_LEN.saturating_add(self.data_len()))
            .to_be_bytes()
    }

    /// Checks the checksum (the packet must have passed [`Packet::check_len`]).
    pub fn verify_checksum(&self) -> Verdict {
        checksum::verify(self.covered(), self.checksum_field())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// The segment data, to fill in.
    pub fn data_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN.saturating_add(self.data_len());
        self.buffer
            .as_mut()
            .get_mut(HEADER_LEN..end)
            .unwrap_or(&mut [])
    }

    /// Computes the checksum and writes it after the data (the header,
    /// Length included, and the data must be final).
    pub fn fill_checksum(&mut self) {
        let sum = checksum::compute(self.covered());
        let at = HEADER_LEN.saturating_add(self.data_len());
        put(self.buffer.as_mut(), at, &sum);
    }

    /// Writes "no checksum" (four zero bytes).
    pub fn clear_checksum(&mut self) {
        let at = HEADER_LEN.saturating_add(self.data_len());
        put(self.buffer.as_mut(), at, &[0; checksum::LEN]);
    }
}

/// A parsed VMTP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    /// The Client entity.
    pub client: EntityId,
    /// Entity domain.
    pub domain: u16,
    /// The flags of [`word2`].
    pub word2_flags: u32,
    /// Words of segment data (with padding) in this packet.
    pub length: u16,
    /// The control word.
    pub control: Control,
    /// Transaction identifier.
    pub transaction: u32,
    /// The blocks this packet carries.
    pub packet_delivery: u32,
    /// The Server entity.
    pub server: EntityId,
    /// Request or response code with its flags.
    pub code: Code,
    /// Offsets 36 to 55: a Request's CoResidentEntity and user data, or a
    /// Response's user data.
    pub user: [u8; 20],
    /// MsgDelivery (with MDM).
    pub msg_delivery: u32,
    /// SegmentSize (with SDA).
    pub segment_size: u32,
}

impl Repr {
    /// Parses a packet: length, version, reserved bits, and no data without
    /// SDA. The checksum is checked apart ([`Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr, ParseError> {
        p.check_len()?;
        if p.version() != VERSION {
            return Err(ParseError::BadVersion(p.version()));
        }
        if p.u32_at(field::CONTROL) & ctrl::RESERVED != 0 {
            return Err(ParseError::Reserved);
        }
        if p.length() != 0 && !p.code().has(code::SDA) {
            return Err(ParseError::UnexpectedData);
        }
        Ok(Repr {
            client: p.client(),
            domain: p.domain(),
            word2_flags: p.word2() & (word2::HCO | word2::EPG | word2::MPG),
            length: p.length(),
            control: p.control(),
            transaction: p.transaction(),
            packet_delivery: p.packet_delivery(),
            server: p.server(),
            code: p.code(),
            user: user_at(p.buffer.as_ref()),
            msg_delivery: p.msg_delivery(),
            segment_size: p.segment_size(),
        })
    }

    /// The message's segment bytes: SegmentSize with SDA, else none.
    pub fn segment_len(&self) -> u32 {
        if self.code.has(code::SDA) {
            self.segment_size
        } else {
            0
        }
    }

    /// Bytes of the whole packet: header, data, checksum.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN
            .saturating_add(usize::from(self.length).saturating_mul(4))
            .saturating_add(checksum::LEN)
    }

    /// The CoResidentEntity of a Request (bytes 36 to 43).
    pub fn co_resident(&self) -> EntityId {
        EntityId(be64(&self.user, 0).unwrap_or(0))
    }

    /// Writes the header (the data and the checksum are the caller's:
    /// [`Packet::data_mut`], [`Packet::fill_checksum`]).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        let b = p.buffer.as_mut();
        put(b, field::CLIENT, &self.client.to_be_bytes());
        let w2 = u32::from(VERSION) << 29
            | (u32::from(self.domain) & 0x1fff) << 16
            | (self.word2_flags & (word2::HCO | word2::EPG | word2::MPG))
            | (u32::from(self.length) & 0x1fff);
        put(b, field::WORD2, &w2.to_be_bytes());
        put(b, field::CONTROL, &self.control.to_word().to_be_bytes());
        put(b, field::TRANSACTION, &self.transaction.to_be_bytes());
        put(
            b,
            field::PACKET_DELIVERY,
            &self.packet_delivery.to_be_bytes(),
        );
        put(b, field::SERVER, &self.server.to_be_bytes());
        put(b, field::CODE, &self.code.0.to_be_bytes());
        put(b, field::USER, &self.user);
        put(b, field::MSG_DELIVERY, &self.msg_delivery.to_be_bytes());
        put(b, field::SEGMENT_SIZE, &self.segment_size.to_be_bytes());
    }
}
