// SPDX-License-Identifier: GPL-2.0
//! VMTP, the Versatile Message Transaction Protocol of RFC 1045 (Cheriton,
//! 1988): request/response message transactions between 64-bit entities, carried
//! directly in IP (protocol 81).
//!
//! A message is a packet group: up to 32 blocks of 512 bytes (16 KiB), sent as a
//! blast of packets that all carry the same 64-byte header (the message control
//! block) and each name the blocks they carry in a delivery mask (RFC 1045,
//! section 2.13). The receiver of an incomplete group asks for the missing blocks
//! (selective retransmission), a new Request from a client acknowledges the
//! Response to its previous one, and every packet ends with a two-sum checksum
//! (section 3.2).
//!
//! - [`wire`]: the header, zero-copy [`wire::Packet`] view and [`wire::Repr`];
//! - [`entity`]: entity identifiers (section 3.1, Appendix IV);
//! - [`checksum`]: the VMTP checksum (section 3.2);
//! - [`group`]: delivery masks and how a packet group is cut into packets;
//! - [`engine`]: the sans-IO transaction engine of one host ([`engine::Engine`]).

pub mod checksum;
pub mod engine;
pub mod entity;
pub mod group;
pub mod wire;

pub use entity::EntityId;
pub use wire::{Code, Control, Function, Packet, ParseError, Repr, HEADER_LEN};
