// SPDX-License-Identifier: GPL-2.0
//! Sans-IO Sandia RMPP engine for one local node (NID), talking to many peers.
//!
//! The engine owns no memory of its own beyond a few counters: the caller supplies the
//! send table, the receive table and the per-peer table (any `AsMut<[T]> + AsRef<[T]>`:
//! a `KVec` in the kernel, a `Vec` or array in tests). Their lengths are the bounds on
//! concurrent outgoing messages, concurrent incoming messages and peer NIDs.
//!
//! Driving it:
//!
//! - [`Engine::send`] starts a message (the engine never sees its bytes: transmits
//!   name byte ranges of it by the caller's `cookie`).
//! - [`Engine::receive`] takes one frame (starting at the Sandia RMPP header) and the
//!   current time, calls the [`Upcall`] for the first packet of a new message, and
//!   returns where the frame's payload goes ([`Placement`]): the engine never copies.
//! - [`Engine::poll_transmit`] writes one header and says which payload bytes follow.
//! - [`Engine::poll_completion`] hands out finished sends and receives.
//! - [`Engine::poll_timeout`] / [`Engine::handle_timeout`]: the next deadline and
//!   processing it.
//!
//! Time is a `u64` count of **nanoseconds** from any fixed origin (the kernel passes
//! `ktime_get_ns()`); it must not go backwards.
//!
//! The engine is split into its two sides: this file holds the shell (the
//! configuration, the types of the interface, the [`Engine`] with its tables and
//! counters, and the entry points that serve both sides: [`Engine::receive`],
//! [`Engine::poll_transmit`], [`Engine::poll_completion`], [`Engine::poll_timeout`]
//! and [`Engine::handle_timeout`]); `engine/send.rs` the sender side (the send table
//! and every outgoing message) and `engine/recv.rs` the receiver side (the receive
//! table, every incoming message and the grant pool).

mod recv;
mod send;

pub use self::recv::RecvSlot;
pub use self::send::SendSlot;

use super::mask::BLOCK_BITS;
use super::rtt::RttEstimate;
use super::wire::{caps, Packet, PacketType, ParseError, Repr, HEADER_LEN};

/// Entries in the fixed queue of stateless replies (MSGDROP to a NULL, GCH to a
/// stray MSGEND). When it is full the reply is not sent; the peer's retry recovers.
const CTRL_QUEUE: usize = 16;

/// Where a sender restarts a message that timed out after its first CTS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartPolicy {
    /// Paper behaviour (section 3.5): reset the sequence number to 1 and resend the
    /// whole message.
    FromStart,
    /// srnic extension: restart at the first packet of the last granted block, which
    /// the receiver implicitly acknowledged everything before by granting it. The
    /// receiver accepts either (it resynchronises on any restart at or below the
    /// sequence number it expects next).
    FromLastGrant,
}

/// How a receiver helps a sender recover lost data packets, beyond the
/// sender's own retransmission timeout (which always stays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// The paper's protocol: only the sender's timeout recovers.
    Timeout,
    /// NAK (paper, section 4): a receiver that sees a sequence gap drops the
    /// packet and asks the sender to go back to the first missing one.
    Nak,
    /// Selective NAK (paper, section 4): the receiver keeps packets that arrive
    /// after a gap and asks for the missing ones only.
    SelectiveNak,
}

impl Recovery {
    /// The RTS `info1` bits a sender with this setting advertises.
    pub const fn caps(self) -> u32 {
        match self {
            Self::Timeout => 0,
            Self::Nak => caps::NAK,
            Self::SelectiveNak => caps::NAK | caps::SELECTIVE_NAK,
        }
    }

    /// What a receiver with this setting uses for a message whose RTS
    /// advertised `peer` (unknown bits are ignored): the most both sides have.
    pub const fn negotiate(self, peer: u32) -> Self {
        let both = self.caps() & peer;
        if both & caps::SELECTIVE_NAK != 0 {
            Self::SelectiveNak
        } else if both & caps::NAK != 0 {
            Self::Nak
        } else {
            Self::Timeout
        }
    }
}

/// Run-time configuration of one [`Engine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// This node's NID.
    pub local_nid: u32,
    /// Largest Sandia RMPP packet (header plus payload) this node sends, in bytes
    /// (the link MTU minus any lower headers). Payload per packet is
    /// `mtu - HEADER_LEN`.
    pub mtu: u16,
    /// Total receive allowance pool (paper: MAX_RCV_BUF, 2048).
    pub max_rcv_buf: u32,
    /// Allowances reserved for first packets of new messages (paper: NODES).
    pub nodes: u32,
    /// Most data packets granted by one CTS (paper: MAX_DATA_PKTS, 16).
    pub max_data_pkts: u32,
    /// Sender retransmission timeout in nanoseconds: the timeout before the
    /// first round-trip sample, and the largest one.
    pub retransmit_timeout: u64,
    /// Smallest sender retransmission timeout in nanoseconds that the
    /// round-trip estimate may set ([`super::rtt`]); 0 (or
    /// `retransmit_timeout`): the timeout is fixed at `retransmit_timeout`, as
    /// in the paper.
    pub min_retransmit_timeout: u64,
    /// Timeouts tolerated per message before it fails (and again for its NULL).
    pub max_retries: u32,
    /// Receiver reclaim timeout in nanoseconds (paper: ten minutes): state of a
    /// message with no activity for this long is freed even without a GCH. Must be
    /// longer than `retransmit_timeout * (max_retries + 1)`.
    pub reclaim_timeout: u64,
    /// Restart point after a timeout.
    pub restart: RestartPolicy,
    /// First msgID this node uses (use a random value so that a restarted node does
    /// not reuse identifiers its peers still remember).
    pub first_msg_id: u32,
    /// Receiver-driven recovery this node offers as a sender and uses as a
    /// receiver, where the peer has it too.
    pub recovery: Recovery,
}

impl Config {
    /// Defaults: MTU 1500, MAX_RCV_BUF 1024, NODES 64, MAX_DATA_PKTS 16, 1 ms
    /// retransmission timeout, 16 retries, 10 minute reclaim, paper restart policy,
    /// the paper's timeout-only recovery.
    pub const fn new(local_nid: u32) -> Self {
        Config {
            local_nid,
            mtu: 1500,
            max_rcv_buf: 1024,
            nodes: 64,
            max_data_pkts: 16,
            retransmit_timeout: 1_000_000,
            min_retransmit_timeout: 0,
            max_retries: 16,
            reclaim_timeout: 600_000_000_000,
            restart: RestartPolicy::FromStart,
            first_msg_id: 1,
            recovery: Recovery::Timeout,
        }
    }

    /// Payload bytes per packet.
    pub fn chunk(&self) -> u32 {
        u32::from(self.mtu).saturating_sub(HEADER_LEN as u32)
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.chunk() == 0 {
            return Err(ConfigError::MtuTooSmall);
        }
        if self.max_data_pkts == 0 {
            return Err(ConfigError::ZeroGrant);
        }
        if self.recovery == Recovery::SelectiveNak && self.max_data_pkts > BLOCK_BITS {
            return Err(ConfigError::GrantTooWide);
        }
        if self.retransmit_timeout == 0 {
            return Err(ConfigError::ZeroTimeout);
        }
        if self.min_retransmit_timeout > self.retransmit_timeout {
            return Err(ConfigError::MinTimeoutTooLong);
        }
        let span = self
            .retransmit_timeout
            .saturating_mul(u64::from(self.max_retries).saturating_add(1));
        if self.reclaim_timeout <= span {
            return Err(ConfigError::ReclaimTooShort);
        }
        Ok(())
    }
}

/// Invalid [`Config`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `mtu` leaves no room for payload.
    MtuTooSmall,
    /// `max_data_pkts` is zero.
    ZeroGrant,
    /// Selective NAKs with grants wider than the block mask.
    GrantTooWide,
    /// `retransmit_timeout` is zero.
    ZeroTimeout,
    /// `min_retransmit_timeout` exceeds `retransmit_timeout`.
    MinTimeoutTooLong,
    /// `reclaim_timeout` does not exceed the sender's whole retry span.
    ReclaimTooShort,
}

/// Persistent per-peer state: the two integers per node of paper section 2.3.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerState {
    tx_next: u32,
    rx_next: u32,
}

impl PeerState {
    /// msgNum the next message sent to this peer gets.
    pub fn tx_next(&self) -> u32 {
        self.tx_next
    }

    /// msgNum the next message accepted from this peer must carry.
    pub fn rx_next(&self) -> u32 {
        self.rx_next
    }
}

#[derive(Clone, Copy, Debug)]
struct Ctrl {
    ptype: PacketType,
    src: u32,
    dst: u32,
    msg_id: u32,
    msg_num: u32,
    info2: u32,
}

/// Identifies an outgoing message (its msgID).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SendHandle(pub u32);

/// Why [`Engine::send`] refused a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// Destination NID is outside the peer table.
    UnknownPeer,
    /// The send table is full; retry after a completion.
    Full,
}

/// Why [`Engine::abort`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortError {
    /// No such message in the send table.
    NotFound,
    /// The message already finished (its completion is or was reported).
    Finished,
}

/// The first packet of a new message, offered to the upper layer in msgNum order.
#[derive(Clone, Copy, Debug)]
pub struct Arrival<'a> {
    /// Sending node.
    pub src: u32,
    /// Sender's message identifier.
    pub msg_id: u32,
    /// Per-pair message number.
    pub msg_num: u32,
    /// Whole message length.
    pub len: u32,
    /// Upper-layer match tag.
    pub tag: u64,
    /// Payload of the first packet (upper-layer headers live here).
    pub first: &'a [u8],
}

/// The upper layer's answer to an [`Arrival`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Take up to `len` bytes (less than the message length truncates it); `ctx`
    /// names the destination buffer in [`Placement`]s and the completion.
    Accept {
        /// Bytes wanted (clamped to the message length).
        len: u32,
        /// Caller's identifier for the receive.
        ctx: u64,
    },
    /// Refuse the message: MSGDROP is sent and its msgNum is consumed.
    Drop,
    /// Not now (for example no receive posted): the packet is ignored as if lost, so
    /// the sender retries later; later messages from the same peer wait behind it.
    Defer,
}

/// Upper-layer hook called for the first packet of each new message (paper section
/// 3.6, up-call (b)); the return value is the call-back (c).
pub trait Upcall {
    /// Decides placement for a new message. Must not fail or block.
    fn arrival(&mut self, arrival: &Arrival<'_>) -> Decision;
}

impl<F: FnMut(&Arrival<'_>) -> Decision> Upcall for F {
    fn arrival(&mut self, arrival: &Arrival<'_>) -> Decision {
        self(arrival)
    }
}

/// Copy `data` to byte `offset` of the receive named `ctx`. `data` borrows the frame
/// given to [`Engine::receive`]; it is already clipped to the accepted length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement<'a> {
    /// Receive identifier from [`Decision::Accept`].
    pub ctx: u64,
    /// Sending node.
    pub src: u32,
    /// Sender's message identifier.
    pub msg_id: u32,
    /// Byte offset inside the message.
    pub offset: u32,
    /// Bytes to copy.
    pub data: &'a [u8],
}

/// Why [`Engine::receive`] dropped a frame. Drops are normal under loss and
/// duplication; the sender's timeout recovers. The kernel counts them by reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxDrop {
    /// Header did not parse.
    Parse(ParseError),
    /// The frame names another node as the message's sender or receiver.
    NotForUs,
    /// The peer NID is outside the peer table.
    UnknownPeer,
    /// No state for this message (already finished or never known).
    UnknownMessage,
    /// Duplicate, old attempt or out of sequence.
    Stale,
    /// msgNum is ahead of the next one expected from that peer.
    OutOfOrder,
    /// The receive table is full (the sender retries).
    TableFull,
    /// The upper layer answered [`Decision::Defer`].
    Deferred,
    /// Header fields inconsistent with the message (lengths, sequence, type).
    Malformed,
    /// Valid packet that the message's state does not expect.
    Unexpected,
}

impl From<ParseError> for RxDrop {
    fn from(e: ParseError) -> Self {
        RxDrop::Parse(e)
    }
}

/// Payload bytes that follow a header produced by [`Engine::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PayloadRef {
    /// The `cookie` given to [`Engine::send`].
    pub cookie: u64,
    /// Byte offset in that message.
    pub offset: u32,
    /// Byte count (equal to the header's `plen`).
    pub len: u32,
}

/// One packet to send: the header written to the caller's buffer, then the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Node to send the frame to.
    pub to: u32,
    /// Packet type (for counters and tracing).
    pub ptype: PacketType,
    /// Payload to append after the header, if any.
    pub payload: Option<PayloadRef>,
    /// The first packet of a message sent again after a timeout (for tracing).
    pub retry: Option<Retry>,
}

/// A message sent again after a retransmission timeout: its first packet of
/// the new attempt carries this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// The message's cookie (as given to [`Engine::send`]).
    pub cookie: u64,
    /// The attempt, 1 for the first retry.
    pub attempt: u32,
}

/// Outcome of an outgoing message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendStatus {
    /// MSGEND: the receiver took `accepted` bytes (less than the length if it
    /// truncated the message).
    Delivered {
        /// Bytes the receiver accepted.
        accepted: u32,
    },
    /// MSGDROP: the receiver refused the message.
    Dropped,
    /// Aborted by [`Engine::abort`]; the engine no longer reads the message.
    Aborted,
    /// No answer after `max_retries` timeouts.
    Failed,
}

/// Outcome of an incoming message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvStatus {
    /// All accepted bytes were placed.
    Complete,
    /// The sender aborted it (NULL).
    Aborted,
    /// No progress for the reclaim timeout; state freed.
    Abandoned,
}

/// A finished message, from [`Engine::poll_completion`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// An outgoing message finished; the engine no longer reads its bytes.
    Send {
        /// Caller's cookie from [`Engine::send`].
        cookie: u64,
        /// Destination node.
        dst: u32,
        /// msgID.
        msg_id: u32,
        /// Result.
        status: SendStatus,
    },
    /// An accepted incoming message finished.
    Recv {
        /// Caller's `ctx` from [`Decision::Accept`].
        ctx: u64,
        /// Sending node.
        src: u32,
        /// Sender's msgID.
        msg_id: u32,
        /// msgNum.
        msg_num: u32,
        /// Match tag.
        tag: u64,
        /// Message length as sent.
        len: u32,
        /// Bytes accepted (and, when complete, placed); less than `len` if truncated.
        accepted: u32,
        /// Result.
        status: RecvStatus,
    },
}

/// The Sandia RMPP protocol engine of one node.
///
/// `SS`, `RS` and `PS` are the caller-supplied send table, receive table and peer
/// table (indexed by peer NID).
#[derive(Debug)]
pub struct Engine<SS, RS, PS> {
    cfg: Config,
    send: SS,
    recv: RS,
    peers: PS,
    outstanding: u32,
    next_msg_id: u32,
    ctrl: [Option<Ctrl>; CTRL_QUEUE],
    rr: usize,
    /// The round trip to this node's receivers, for the sender's timeout.
    rtt: RttEstimate,
    counters: Counters,
    /// [`Engine::close`] was called: the upper layer is gone.
    closing: bool,
}

/// Event counts of one [`Engine`] since it was created, for statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Sender timeouts that restarted a message (RTS or data again).
    pub retransmits: u64,
    /// NULL packets re-sent after a timeout.
    pub null_retries: u64,
    /// CTS grants issued (first ones and re-issued ones).
    pub grants: u64,
    /// Data packets granted in total.
    pub granted_pkts: u64,
    /// Grants the pool made smaller than both `max_data_pkts` and what the
    /// message still needed (the Figure 8 rule shrinking them under load).
    pub grants_limited: u64,
    /// Highest `outstanding` seen.
    pub peak_outstanding: u32,
    /// NAK and selective NAK packets sent (receiver).
    pub naks_sent: u64,
    /// NAK and selective NAK packets acted on (sender).
    pub naks_received: u64,
    /// Packets (RTS or data) sent again, after a timeout or a NAK.
    pub resent_pkts: u64,
    /// Payload bytes of [`Counters::resent_pkts`].
    pub resent_bytes: u64,
}

impl<SS, RS, PS> Engine<SS, RS, PS>
where
    SS: AsMut<[SendSlot]> + AsRef<[SendSlot]>,
    RS: AsMut<[RecvSlot]> + AsRef<[RecvSlot]>,
    PS: AsMut<[PeerState]> + AsRef<[PeerState]>,
{
    /// Creates an engine over caller-supplied tables (all entries are reset).
    pub fn new(
        cfg: Config,
        mut send: SS,
        mut recv: RS,
        mut peers: PS,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        send.as_mut().fill(SendSlot::default());
        recv.as_mut().fill(RecvSlot::default());
        peers.as_mut().fill(PeerState::default());
        Ok(Engine {
            cfg,
            send,
            recv,
            peers,
            outstanding: 0,
            next_msg_id: cfg.first_msg_id,
            ctrl: [None; CTRL_QUEUE],
            rr: 0,
            rtt: RttEstimate::default(),
            counters: Counters::default(),
            closing: false,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Event counts since creation.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The round-trip estimate of the sender's timeout.
    pub fn rtt(&self) -> &RttEstimate {
        &self.rtt
    }

    /// Data packets granted to incoming messages and not yet received (Figure 8's
    /// `outstanding`).
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// Per-peer message numbering state, if `nid` is in the peer table.
    pub fn peer(&self, nid: u32) -> Option<&PeerState> {
        usize::try_from(nid)
            .ok()
            .and_then(|i| self.peers.as_ref().get(i))
    }

    /// Processes one received frame (starting at the Sandia RMPP header; trailing
    /// padding is ignored). Returns where its payload goes, if anywhere.
    pub fn receive<'a, U: Upcall + ?Sized>(
        &mut self,
        now: u64,
        frame: &'a [u8],
        up: &mut U,
    ) -> Result<Option<Placement<'a>>, RxDrop> {
        let packet = Packet::new_checked(frame)?;
        let r = Repr::parse(&packet)?;
        let payload: &'a [u8] = HEADER_LEN
            .checked_add(usize::from(r.payload_len))
            .and_then(|end| frame.get(HEADER_LEN..end))
            .ok_or(RxDrop::Parse(ParseError::Truncated))?;
        if r.ptype.is_reply() {
            if r.src_nid != self.cfg.local_nid {
                return Err(RxDrop::NotForUs);
            }
            self.rx_reply(now, &r).map(|()| None)
        } else {
            if r.dst_nid != self.cfg.local_nid {
                return Err(RxDrop::NotForUs);
            }
            if self.peer(r.src_nid).is_none() {
                return Err(RxDrop::UnknownPeer);
            }
            match r.ptype {
                PacketType::Rts | PacketType::LastRts => self.rx_rts(now, &r, payload, up),
                PacketType::Data | PacketType::StopData | PacketType::LastData => {
                    self.rx_data(now, &r, payload)
                }
                PacketType::Gch => self.rx_gch(&r).map(|()| None),
                _ => self.rx_null(now, &r).map(|()| None),
            }
        }
    }

    fn push_ctrl(&mut self, c: Ctrl) {
        if let Some(e) = self.ctrl.iter_mut().find(|e| e.is_none()) {
            *e = Some(c);
        }
    }

    /// Writes the next packet's header into `header` and returns where to send it and
    /// which payload bytes follow. Call until it returns `None` after every
    /// [`Engine::send`], [`Engine::receive`], [`Engine::abort`] and
    /// [`Engine::handle_timeout`].
    ///
    /// Order: stateless replies, receiver replies (CTS, MSGEND, MSGDROP), sender
    /// control packets (RTS, NULL, GCH) oldest message first, then data packets
    /// round-robin over messages.
    pub fn poll_transmit(&mut self, now: u64, header: &mut [u8; HEADER_LEN]) -> Option<Transmit> {
        if let Some(c) = self.ctrl.iter_mut().find_map(Option::take) {
            let repr = Repr {
                ptype: c.ptype,
                payload_len: 0,
                src_nid: c.src,
                dst_nid: c.dst,
                msg_id: c.msg_id,
                msg_num: c.msg_num,
                len: 0,
                seq: 0,
                info1: 0,
                info2: c.info2,
                tag: 0,
            };
            repr.emit(&mut Packet::new_unchecked(&mut header[..]));
            let to = if c.ptype.is_reply() { c.src } else { c.dst };
            return Some(Transmit {
                to,
                ptype: c.ptype,
                payload: None,
                retry: None,
            });
        }
        if let Some(t) = self.poll_recv_reply(header) {
            return Some(t);
        }
        if let Some(t) = self.poll_send_control(now, header) {
            return Some(t);
        }
        self.poll_send_data(now, header)
    }

    /// Hands out the next finished message, if any. Sends are reported when MSGEND /
    /// MSGDROP arrives, at [`Engine::abort`] or on failure; receives when all accepted
    /// bytes were placed, on NULL, or on reclaim of an unfinished message.
    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.send_completion().or_else(|| self.recv_completion())
    }

    /// The upper layer goes away (srnic: its endpoint is closed) while peers may
    /// still need answers. Every outgoing message is aborted (NULL, as
    /// [`Engine::abort`]); every incoming message still arriving is refused
    /// (MSGDROP now, and to every retry); completions not yet handed out are
    /// discarded, and none are made from now on. Finished incoming messages keep
    /// their state: their sender may not have heard the final reply (MSGEND)
    /// yet, so it is answered again on every retry and re-sent every
    /// retransmission timeout until the sender's GCH comes (or the reclaim
    /// timeout). New messages are left with their senders. Keep driving the
    /// engine until [`Engine::is_idle`] (or for as long as the caller allows the
    /// close to linger). Returns the number of messages aborted.
    pub fn close(&mut self, now: u64) -> u64 {
        self.closing = true;
        let aborted = self.abort_all(now);
        self.close_receives(now);
        while self.poll_completion().is_some() {}
        aborted
    }

    /// Whether no message has state left: nothing to send, answer or wait for.
    pub fn is_idle(&self) -> bool {
        self.active_sends() == 0
            && self.active_recvs() == 0
            && self.ctrl.iter().all(Option::is_none)
    }

    /// The earliest time [`Engine::handle_timeout`] has work to do, if any.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.send_deadlines().chain(self.recv_deadlines()).min()
    }

    /// Processes every deadline at or before `now`: sender retries (RTS again, or
    /// restart of the data), failures after `max_retries`, NULL retries, and receiver
    /// reclaim (paper: ten minutes without GCH).
    pub fn handle_timeout(&mut self, now: u64) {
        self.send_timeouts(now);
        self.recv_timeouts(now);
    }
}
