// SPDX-License-Identifier: GPL-2.0
//! Sandia RMPP: the Reliable Message Passing Protocol of Riesen and Maccabe
//! (Sandia National Laboratories / UNM, used in Cplant).
//!
//! Not to be confused with the InfiniBand MAD "RMPP" (reliable multi-packet
//! transaction protocol) in Linux's `drivers/infiniband/core`: the two share an acronym
//! and nothing else.
//!
//! Sandia RMPP moves whole messages between nodes of a cluster over an unreliable
//! datagram network (for srnic: Ethernet frames with EtherType
//! [`wire::ETHERTYPE`]). Each message is an implicit connection: the sender's RTS (or
//! LAST RTS for a one-packet message) carries the first data, the receiver's upper layer
//! decides where the data goes, the receiver grants blocks of data packets with CTS,
//! acknowledges the whole message with MSGEND (or refuses it with MSGDROP) and the
//! sender's GCH lets it forget the message. Recovery is sender driven: on a timeout the
//! sender restarts the message; srnic adds the receiver-driven recovery the paper
//! proposes (section 4), negotiated per message: a NAK on a sequence gap, or a
//! selective NAK that lists the missing packets ([`Recovery`]).
//!
//! - [`wire`]: the 44-byte header, zero-copy [`wire::Packet`] view and [`wire::Repr`].
//! - [`flow`]: the CTS grant rule (paper, Figure 8).
//! - [`mask`]: the packet set of one block that selective recovery keeps.
//! - [`rtt`]: the sender's round-trip estimate and retransmission timeout.
//! - [`engine`]: the sans-IO per-node protocol engine ([`engine::Engine`]).

pub mod engine;
pub mod flow;
pub mod mask;
pub mod rtt;
pub mod wire;

pub use engine::{
    AbortError, Arrival, Completion, Config, ConfigError, Counters, Decision, Engine, PayloadRef,
    PeerState, Placement, Recovery, RecvSlot, RecvStatus, RestartPolicy, Retry, RxDrop, SendError,
    SendHandle, SendSlot, SendStatus, Transmit, Upcall,
};
pub use wire::{caps, Packet, PacketType, ParseError, Repr, HEADER_LEN, SNAK_SPAN};
