// SPDX-License-Identifier: GPL-2.0
//! Sans-IO VMTP engine of one host: local client and server entities, their
//! message transactions, selective retransmission and timers (RFC 1045,
//! sections 2.3 to 2.5, 2.13, 2.16, 4 and 5).
//!
//! What it implements: minimal VMTP (section 2.16) for clients and servers,
//! with one packet group per message (up to 16 KiB of segment data) sent as a
//! paced blast (section 2.5.6), the delivery masks of section 2.13 and the
//! management module's NotifyVmtpClient and NotifyVmtpServer (Appendix III)
//! for acknowledgements and selective retransmission, transaction identifiers
//! with duplicate suppression (section 2.5.1), and the timers of sections 4.9
//! and 5.9. Not implemented: multicast and groups, security, streaming (runs
//! of packet groups), forwarding, idempotent (DGM) Responses, priorities,
//! CoResident routing, Probe.
//!
//! Driving it, like the Sandia RMPP engine: the caller supplies the tables
//! (local entities and the servers' records of remote clients), gives every
//! received packet to [`Engine::receive`] with its source address, polls
//! [`Engine::poll_transmit`] for packets to send (it writes the header; the
//! caller appends the payload it names, the padding, and the checksum),
//! [`Engine::poll_completion`] for finished work, and [`Engine::poll_timeout`]
//! / [`Engine::handle_timeout`] for its timers. Time is in nanoseconds.
//!
//! Wire conventions: every packet carries the Internet domain (1). A
//! Notify is a datagram Request (DGM) to the manager group whose
//! CoResidentEntity names the entity it is about; its user data holds the
//! control word, a zero receive sequence and the transaction (to a client),
//! or the client and the transaction (to a server); MsgDelivery holds the
//! delivery mask and SegmentSize the response code (Appendix III).

mod client;
mod server;

pub use self::client::ClientTx;
pub use self::server::Csr;

use super::super::bytes::{be32, be64, put};
use super::checksum;
use super::entity::{EntityId, DOMAIN_INTERNET};
use super::group;
use super::wire::{
    code, ctrl, word2, Code, Control, Function, Packet, ParseError, Repr, HEADER_LEN,
};

/// An IPv4 address.
pub type Addr = [u8; 4];

/// Bytes of the IPv4 header in front of every packet (no options).
pub const IP_HEADER_LEN: u32 = 20;

/// Where a Notify's parameters sit in its 20 bytes of CoResidentEntity and
/// user data (Appendix III).
mod notify_at {
    /// The entity the Notify is about (the CoResidentEntity field).
    pub(super) const ABOUT: usize = 0;
    /// NotifyVmtpClient: the control word (a receive sequence follows);
    /// NotifyVmtpServer: the client (8 bytes).
    pub(super) const SECOND: usize = 8;
    /// The transaction.
    pub(super) const TRANSACTION: usize = 16;
}

/// Notifies waiting to be sent when the queue is full are dropped: the
/// peer's timers recover.
const NOTIFY_QUEUE: usize = 16;

/// Run-time configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Largest IP packet (the link MTU): the data per VMTP packet is what
    /// remains after the IP header, the VMTP header and the checksum.
    pub mtu: u16,
    /// TC1: how long a client waits for a Response (or a Notify) before it
    /// sends its Request's header again, with APG.
    pub response_timeout: u64,
    /// TC3 / TS1: the longest wait between the packets of a group before the
    /// receiver asks for the missing blocks. After asking, it waits a round
    /// trip ([`Config::response_timeout`], as the RFC's TS3) before it asks
    /// again: asking again sooner would have the sender send the same
    /// blocks twice.
    pub group_timeout: u64,
    /// TS5: how long a server waits for the acknowledgement of a Response
    /// before it sends its header again, with APG.
    pub ack_timeout: u64,
    /// TS4: how long a server keeps the record of a finished transaction to
    /// recognise duplicates. It must exceed a client's whole retry span
    /// (`response_timeout * (max_retries + 1)`) plus the network's packet
    /// lifetime: a Request that arrives after its record is gone is taken
    /// for a new one (this engine does not Probe the client).
    pub linger: u64,
    /// Retransmissions of one thing before giving up (RFC: 5).
    pub max_retries: u32,
    /// The gap between the packets of a group this host sends.
    pub packet_gap: u64,
    /// Compute checksums on the packets sent (a receiver always checks a
    /// non-zero one).
    pub checksum: bool,
}

impl Config {
    /// The RFC's suggestions for a LAN: TC1 = TC2 + 200 ms with TC2 = 10 ms,
    /// TC3 = TS1 = 10 packet times (10 ms here), TS5 = 100 ms, 5 retries, no
    /// gap, checksums on; MTU 1500. TS4 is 2 s rather than the RFC's 500 ms,
    /// which assumes a server that Probes clients it does not know.
    pub const fn new() -> Self {
        Config {
            mtu: 1500,
            response_timeout: 210_000_000,
            group_timeout: 10_000_000,
            ack_timeout: 100_000_000,
            linger: 2_000_000_000,
            max_retries: 5,
            packet_gap: 0,
            checksum: true,
        }
    }

    /// Segment bytes one packet can carry (a multiple of the padding unit,
    /// at least one block).
    pub fn max_data(&self) -> u32 {
        let room = u32::from(self.mtu)
            .saturating_sub(IP_HEADER_LEN)
            .saturating_sub(HEADER_LEN as u32)
            .saturating_sub(checksum::LEN as u32);
        room.saturating_sub(room % group::PAD)
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_data() < group::BLOCK {
            return Err(ConfigError::MtuTooSmall);
        }
        if self.response_timeout == 0 || self.group_timeout == 0 || self.ack_timeout == 0 {
            return Err(ConfigError::ZeroTimeout);
        }
        let span = self
            .response_timeout
            .saturating_mul(u64::from(self.max_retries).saturating_add(1));
        if self.linger <= span {
            return Err(ConfigError::LingerTooShort);
        }
        Ok(())
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

/// An invalid [`Config`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Not even one 512-byte block fits in a packet.
    MtuTooSmall,
    /// A timeout is zero.
    ZeroTimeout,
    /// [`Config::linger`] does not exceed a client's retry span.
    LingerTooShort,
}

/// What a local entity does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends Requests and receives Responses.
    Client,
    /// Receives Requests and sends Responses.
    Server,
}

/// A local entity: its slot in the entity table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(pub usize);

/// One entry of the entity table. Opaque; create with `Local::default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local {
    entity: EntityId,
    role: Option<Role>,
    tx: ClientTx,
}

/// Why [`Engine::open`] refused an entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// Zero, a group, or the reserved bit set.
    Invalid,
    /// Already open here.
    InUse,
    /// The entity table is full.
    Full,
}

/// Why a call about a transaction was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallError {
    /// No such open entity (or not of that role).
    BadHandle,
    /// A client's transaction is still in progress.
    Busy,
    /// The server has no Request of that client and transaction to answer.
    NoRequest,
    /// More than one packet group of segment data.
    TooLong,
}

/// A Request's first packet at a server, offered to the upper layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The server entity addressed.
    pub server: Handle,
    /// The client.
    pub client: EntityId,
    /// Its transaction.
    pub transaction: u32,
    /// The request code.
    pub code: Code,
    /// Bytes of segment data the Request brings.
    pub len: u32,
}

/// The upper layer's answer to an [`Arrival`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Take the Request: its data goes to the buffer `ctx` (at most `max`
    /// bytes; the rest is dropped).
    Accept {
        /// The caller's name for the buffer.
        ctx: u64,
        /// Its size.
        max: u32,
    },
    /// Refuse it: the client's transaction ends with this response code
    /// (for example [`code::BUSY`]).
    Refuse(u32),
    /// Not now (no buffer yet): the packet is dropped
    /// ([`RxDrop::Deferred`]) and nothing is remembered; the client's
    /// retransmission brings the Request again.
    Defer,
}

/// Upper-layer hook for new Requests. Must not fail or block.
pub trait Upcall {
    /// Decides where a new Request's data goes.
    fn arrival(&mut self, a: &Arrival) -> Decision;
}

impl<F: FnMut(&Arrival) -> Decision> Upcall for F {
    fn arrival(&mut self, a: &Arrival) -> Decision {
        self(a)
    }
}

/// Copy `data` to byte `offset` of the buffer `ctx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement<'a> {
    /// The buffer: a server's [`Decision::Accept`] or a client's response
    /// buffer given to [`Engine::request`].
    pub ctx: u64,
    /// Byte offset in the message.
    pub offset: u32,
    /// The bytes (borrowed from the received packet).
    pub data: &'a [u8],
}

/// Where a received packet's data goes: one [`Placement`] per run of
/// adjacent blocks (a packet may carry blocks that are not adjacent),
/// clipped to the buffer's size. Empty when nothing is placed.
#[derive(Clone, Copy, Debug)]
pub struct Placements<'a> {
    ctx: u64,
    /// Blocks not yet handed out.
    mask: u32,
    size: u32,
    max: u32,
    /// The packet's data (without padding), from the first block not yet
    /// handed out.
    data: &'a [u8],
}

impl<'a> Placements<'a> {
    /// Nothing to place.
    pub const NONE: Placements<'static> = Placements {
        ctx: 0,
        mask: 0,
        size: 0,
        max: 0,
        data: &[],
    };

    pub(super) fn new(ctx: u64, mask: u32, size: u32, max: u32, data: &'a [u8]) -> Self {
        Placements {
            ctx,
            mask,
            size,
            max,
            data,
        }
    }
}

impl<'a> Iterator for Placements<'a> {
    type Item = Placement<'a>;

    fn next(&mut self) -> Option<Placement<'a>> {
        loop {
            let first = group::blocks(self.mask).next()?;
            // The run of adjacent blocks from `first`.
            let mut end = first;
            while end < group::MAX_BLOCKS.saturating_sub(1)
                && self.mask & 1u32.wrapping_shl(end.saturating_add(1)) != 0
            {
                end = end.saturating_add(1);
            }
            let mut len = 0u32;
            for i in first..=end {
                len = len.saturating_add(group::block_len(i, self.size));
                self.mask &= !1u32.wrapping_shl(i);
            }
            let n = usize::try_from(len).unwrap_or(0).min(self.data.len());
            let (bytes, rest) = self.data.split_at(n);
            self.data = rest;
            let off = group::block_offset(first);
            let keep = usize::try_from(self.max.saturating_sub(off)).unwrap_or(0);
            if let Some(data) = bytes.get(..keep.min(bytes.len())).filter(|d| !d.is_empty()) {
                return Some(Placement {
                    ctx: self.ctx,
                    offset: off,
                    data,
                });
            }
        }
    }
}

/// Payload bytes that follow a header from [`Engine::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PayloadRef {
    /// The message's cookie.
    pub cookie: u64,
    /// Byte offset in the message.
    pub offset: u32,
    /// Byte count.
    pub len: u32,
}

/// What a packet from [`Engine::poll_transmit`] is, for counters and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    /// A Request packet (first transmission of its blocks).
    Request,
    /// A Response packet (first transmission of its blocks).
    Response,
    /// A Request or Response packet sent again (blocks asked for, or a
    /// header with APG after a timeout).
    Retransmit,
    /// A NotifyVmtpClient or NotifyVmtpServer datagram.
    Notify,
}

/// One packet to send: the header written to the caller's buffer, then the
/// payload, `pad` zero bytes, and the checksum ([`checksum::Summer`] over all
/// of them, or four zero bytes when [`Config::checksum`] is off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Destination IPv4 address.
    pub to: Addr,
    /// Segment data, if any.
    pub payload: Option<PayloadRef>,
    /// Zero bytes after the payload.
    pub pad: u32,
    /// What it is.
    pub kind: TxKind,
}

/// How a client's transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// The Response arrived whole.
    Response {
        /// Its code (flags and value).
        code: Code,
        /// Its 20 bytes of user data.
        user: [u8; 20],
        /// Its segment size; bytes beyond the response buffer were dropped.
        len: u32,
    },
    /// A datagram Request was sent (no Response comes).
    Sent,
    /// The client entity was closed.
    Aborted,
    /// The transaction failed with this response code: from the server
    /// (for example [`code::NONEXISTENT_ENTITY`], [`code::BUSY`]) or local
    /// ([`code::RETRANS_TIMEOUT`]: no answer after the retries;
    /// [`code::BAD_REPLY_SEGMENT`]: the Response stayed incomplete).
    Failed(u32),
}

/// Finished work, from [`Engine::poll_completion`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// A client's transaction ended; its Request's bytes and response
    /// buffer are the caller's again.
    Transaction {
        /// The client.
        client: Handle,
        /// The transaction.
        transaction: u32,
        /// The Request's cookie.
        cookie: u64,
        /// The response buffer.
        ctx: u64,
        /// The outcome.
        status: TxStatus,
    },
    /// A whole Request arrived at a server: answer it with
    /// [`Engine::respond`].
    Request {
        /// The server.
        server: Handle,
        /// The client.
        client: EntityId,
        /// The transaction.
        transaction: u32,
        /// The request code.
        code: Code,
        /// The 12 bytes of user data (after the CoResidentEntity).
        user: [u8; 12],
        /// Segment bytes placed (at most the accepted maximum).
        len: u32,
        /// The buffer.
        ctx: u64,
    },
    /// A Request that was arriving was given up (incomplete after the
    /// retries, or superseded): its buffer is the caller's again.
    RequestAbandoned {
        /// The server.
        server: Handle,
        /// The buffer.
        ctx: u64,
    },
    /// A Response's bytes are no longer needed: acknowledged (`acked`), or
    /// discarded unacknowledged after the retries.
    ResponseReleased {
        /// The server.
        server: Handle,
        /// The Response's cookie.
        cookie: u64,
        /// Whether the client acknowledged it.
        acked: bool,
    },
}

/// Why [`Engine::receive`] dropped a packet. The kernel counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxDrop {
    /// The header did not parse.
    Parse(ParseError),
    /// The checksum did not match.
    Checksum,
    /// Another entity domain, or a feature not implemented (groups,
    /// streaming, security, forwarding).
    Unsupported,
    /// No local entity of that name and role.
    UnknownEntity,
    /// A duplicate, an old transaction or a stale Notify.
    Stale,
    /// Fields inconsistent with the message (blocks, sizes).
    Malformed,
    /// The table of remote clients is full (the client retries).
    TableFull,
    /// The upper layer deferred a new Request ([`Decision::Defer`]).
    Deferred,
}

impl From<ParseError> for RxDrop {
    fn from(e: ParseError) -> Self {
        RxDrop::Parse(e)
    }
}

/// Event counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets sent (all kinds).
    pub tx_packets: u64,
    /// Segment blocks sent again.
    pub retransmitted_blocks: u64,
    /// Headers sent again with APG after a timeout.
    pub timeouts: u64,
    /// Notifies sent.
    pub notifies_sent: u64,
    /// Blocks the RETRY Notifies sent asked the peer to send again.
    pub blocks_requested: u64,
    /// Notifies acted on.
    pub notifies_received: u64,
    /// Duplicate packets recognised.
    pub duplicates: u64,
    /// Transactions a client completed with a Response.
    pub transactions: u64,
    /// Transactions that failed.
    pub failed: u64,
}

/// A Notify to send.
#[derive(Clone, Copy, Debug)]
pub(super) struct Notify {
    to: Addr,
    /// The entity it is from (the Client field of the datagram).
    from: EntityId,
    /// NotifyVmtpClient (about a Request) or NotifyVmtpServer.
    to_client: bool,
    /// The entity it is about (CoResidentEntity).
    about: EntityId,
    /// The client, for a NotifyVmtpServer.
    client: EntityId,
    transaction: u32,
    control: u32,
    delivery: u32,
    code: u32,
    /// The blocks it asks for ([`asked`]).
    asked: u32,
}

/// The blocks a Notify with `rcode` about a `size`-byte segment of which
/// `delivery` arrived asks the peer to send again: the missing ones for
/// RETRY, none otherwise.
pub(super) fn asked(rcode: u32, size: u32, delivery: u32) -> u32 {
    if rcode == code::RETRY {
        (group::all_blocks(size) & !delivery).count_ones()
    } else {
        0
    }
}

/// The VMTP engine of one host.
#[derive(Debug)]
pub struct Engine<L, R> {
    cfg: Config,
    locals: L,
    csrs: R,
    notifies: [Option<Notify>; NOTIFY_QUEUE],
    counters: Counters,
    /// Earliest time the next data packet of a group may go (pacing).
    next_data_at: u64,
    /// The last transaction identifier given out: one sequence for every
    /// client of the host, so that a client entity opened again never
    /// reuses an identifier its servers may remember.
    last_transaction: u32,
}

impl<L, R> Engine<L, R>
where
    L: AsMut<[Local]> + AsRef<[Local]>,
    R: AsMut<[Csr]> + AsRef<[Csr]>,
{
    /// An engine over caller-supplied tables (reset). The host's clients
    /// take transaction identifiers from one sequence that starts after
    /// `first_transaction`, which should be random: identifiers must not
    /// repeat across restarts while servers remember them (section 2.5.1).
    pub fn new(
        cfg: Config,
        mut locals: L,
        mut csrs: R,
        first_transaction: u32,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        locals.as_mut().fill(Local::default());
        csrs.as_mut().fill(Csr::default());
        Ok(Engine {
            cfg,
            locals,
            csrs,
            notifies: [None; NOTIFY_QUEUE],
            counters: Counters::default(),
            next_data_at: 0,
            last_transaction: first_transaction,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Event counts.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Opens a local entity.
    pub fn open(&mut self, entity: EntityId, role: Role) -> Result<Handle, OpenError> {
        if !entity.is_valid() || entity.is_group() {
            return Err(OpenError::Invalid);
        }
        let locals = self.locals.as_mut();
        if locals
            .iter()
            .any(|l| l.role.is_some() && l.entity == entity)
        {
            return Err(OpenError::InUse);
        }
        let (i, slot) = locals
            .iter_mut()
            .enumerate()
            // (A closed entity's slot is free once its completion is out.)
            .find(|(_, l)| l.role.is_none() && l.tx.is_idle())
            .ok_or(OpenError::Full)?;
        *slot = Local {
            entity,
            role: Some(role),
            tx: ClientTx::default(),
        };
        Ok(Handle(i))
    }

    /// Closes a local entity: its transaction (client) or its remote
    /// clients' records (server) end, with their completions; packets for it
    /// are dropped from now on. A client whose last Response arrived
    /// acknowledges it explicitly (NotifyVmtpServer OK, section 2.5.3): no
    /// next Request will, and its server need not retransmit it until its
    /// retries run out.
    pub fn close(&mut self, h: Handle) {
        let Some(l) = self.locals.as_mut().get_mut(h.0) else {
            return;
        };
        match l.role.take() {
            Some(Role::Client) => {
                let ack = l.tx.final_ack(l.entity);
                l.tx.abort();
                if let Some(n) = ack {
                    self.push_notify(n);
                }
            }
            Some(Role::Server) => self.drop_csrs_of(h),
            None => {}
        }
    }

    fn local(&self, h: Handle, role: Role) -> Option<&Local> {
        self.locals
            .as_ref()
            .get(h.0)
            .filter(|l| l.role == Some(role))
    }

    fn local_mut(&mut self, h: Handle, role: Role) -> Option<&mut Local> {
        self.locals
            .as_mut()
            .get_mut(h.0)
            .filter(|l| l.role == Some(role))
    }

    fn find_local(&self, entity: EntityId, role: Role) -> Option<Handle> {
        self.locals
            .as_ref()
            .iter()
            .position(|l| l.role == Some(role) && l.entity == entity)
            .map(Handle)
    }

    fn push_notify(&mut self, n: Notify) {
        if let Some(e) = self.notifies.iter_mut().find(|e| e.is_none()) {
            *e = Some(n);
        }
    }

    /// Processes one received VMTP packet (the IP payload) from `src`.
    /// Returns where its data goes, if anywhere.
    pub fn receive<'a, U: Upcall + ?Sized>(
        &mut self,
        now: u64,
        src: Addr,
        packet: &'a [u8],
        up: &mut U,
    ) -> Result<Placements<'a>, RxDrop> {
        let p = Packet::new_checked(packet)?;
        let r = Repr::parse(&p)?;
        if p.verify_checksum() == checksum::Verdict::Bad {
            return Err(RxDrop::Checksum);
        }
        if r.domain != DOMAIN_INTERNET
            || r.word2_flags & (word2::EPG | word2::MPG) != 0
            || r.control.has(ctrl::NSR | ctrl::NER | ctrl::CMG | ctrl::STI)
            || r.control.forward_count != 0
        {
            return Err(RxDrop::Unsupported);
        }
        // The data, borrowed from the caller's buffer (checked by check_len).
        let data: &'a [u8] = HEADER_LEN
            .checked_add(p.data_len())
            .and_then(|end| packet.get(HEADER_LEN..end))
            .unwrap_or(&[]);
        match r.control.function {
            Function::Request if r.server == EntityId::MANAGER_GROUP => {
                self.rx_management(now, &r).map(|()| Placements::NONE)
            }
            Function::Request => self.rx_request(now, src, &r, data, up),
            Function::Response => self.rx_response(now, src, &r, data),
        }
    }

    fn rx_management(&mut self, now: u64, r: &Repr) -> Result<(), RxDrop> {
        let delivery = r.msg_delivery;
        let rcode = r.segment_size;
        let transaction = be32(&r.user, notify_at::TRANSACTION).unwrap_or(0);
        match r.code.0 {
            code::NOTIFY_VMTP_CLIENT => {
                // CoResidentEntity: the client; user data: control word,
                // receive sequence, transaction.
                let h = self
                    .find_local(r.co_resident(), Role::Client)
                    .ok_or(RxDrop::UnknownEntity)?;
                self.client_notify(now, h, transaction, delivery, rcode)
            }
            code::NOTIFY_VMTP_SERVER => {
                // CoResidentEntity: the server; user data: client, transaction.
                let h = self
                    .find_local(r.co_resident(), Role::Server)
                    .ok_or(RxDrop::UnknownEntity)?;
                let client = EntityId(be64(&r.user, notify_at::SECOND).unwrap_or(0));
                self.server_notify(now, h, client, transaction, delivery, rcode)
            }
            _ => Err(RxDrop::Unsupported),
        }
    }

    /// Writes the next packet's header into `header` and says where it goes
    /// and what follows it. Call until `None` after every call that changes
    /// state and at every deadline. Notifies go first, then control headers,
    /// then data paced by [`Config::packet_gap`].
    pub fn poll_transmit(&mut self, now: u64, header: &mut [u8; HEADER_LEN]) -> Option<Transmit> {
        let t = self
            .poll_notify(header)
            .or_else(|| self.poll_client(now, header, false))
            .or_else(|| self.poll_server(now, header, false))
            .or_else(|| {
                if now < self.next_data_at {
                    return None;
                }
                self.poll_client(now, header, true)
                    .or_else(|| self.poll_server(now, header, true))
            })?;
        if t.payload.is_some() {
            self.next_data_at = now.saturating_add(self.cfg.packet_gap);
        }
        self.counters.tx_packets = self.counters.tx_packets.saturating_add(1);
        Some(t)
    }

    fn poll_notify(&mut self, header: &mut [u8; HEADER_LEN]) -> Option<Transmit> {
        let n = self.notifies.iter_mut().find_map(Option::take)?;
        let mut user = [0u8; 20];
        put(&mut user, notify_at::ABOUT, &n.about.to_be_bytes());
        if n.to_client {
            put(&mut user, notify_at::SECOND, &n.control.to_be_bytes());
        } else {
            put(&mut user, notify_at::SECOND, &n.client.to_be_bytes());
        }
        put(
            &mut user,
            notify_at::TRANSACTION,
            &n.transaction.to_be_bytes(),
        );
        let repr = Repr {
            client: n.from,
            domain: DOMAIN_INTERNET,
            word2_flags: 0,
            length: 0,
            control: Control::new(Function::Request),
            transaction: n.transaction,
            packet_delivery: 0,
            server: EntityId::MANAGER_GROUP,
            code: Code(if n.to_client {
                code::NOTIFY_VMTP_CLIENT
            } else {
                code::NOTIFY_VMTP_SERVER
            }),
            user,
            msg_delivery: n.delivery,
            segment_size: n.code,
        };
        repr.emit(&mut Packet::new_unchecked(&mut header[..]));
        self.counters.notifies_sent = self.counters.notifies_sent.saturating_add(1);
        self.counters.blocks_requested = self
            .counters
            .blocks_requested
            .saturating_add(u64::from(n.asked));
        Some(Transmit {
            to: n.to,
            payload: None,
            pad: 0,
            kind: TxKind::Notify,
        })
    }

    /// Hands out the next finished piece of work.
    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.client_completion()
            .or_else(|| self.server_completion())
    }

    /// The earliest time [`Engine::handle_timeout`] or a paced packet has
    /// work to do.
    pub fn poll_timeout(&self) -> Option<u64> {
        let pace = self.has_data_pending().then_some(self.next_data_at);
        self.client_deadlines()
            .chain(self.server_deadlines())
            .chain(pace)
            .min()
    }

    /// Processes every deadline at or before `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        self.client_timeouts(now);
        self.server_timeouts(now);
    }

    fn has_data_pending(&self) -> bool {
        self.locals.as_ref().iter().any(|l| l.tx.has_data())
            || self.csrs.as_ref().iter().any(Csr::has_data)
    }

    /// Whether no transaction, record or Notify is left.
    pub fn is_idle(&self) -> bool {
        self.locals.as_ref().iter().all(|l| l.tx.is_idle())
            && self.csrs.as_ref().iter().all(Csr::is_free)
            && self.notifies.iter().all(Option::is_none)
    }
}

/// The local entity a received packet is for, and its role there: the
/// server of a Request, the client of a Response, the entity a Notify is
/// about. Reads the header only (the engine that owns the entity checks the
/// rest); a host with several engines uses it to pick one.
pub fn destination(packet: &[u8]) -> Result<(EntityId, Role), RxDrop> {
    let p = Packet::new_checked(packet)?;
    let r = Repr::parse(&p)?;
    match r.control.function {
        Function::Request if r.server == EntityId::MANAGER_GROUP => match r.code.0 {
            code::NOTIFY_VMTP_CLIENT => Ok((r.co_resident(), Role::Client)),
            code::NOTIFY_VMTP_SERVER => Ok((r.co_resident(), Role::Server)),
            _ => Err(RxDrop::Unsupported),
        },
        Function::Request => Ok((r.server, Role::Server)),
        Function::Response => Ok((r.client, Role::Client)),
    }
}

/// The header fields every packet of one message shares, and how its
/// segment is sent.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Outgoing {
    pub(super) code: Code,
    pub(super) user: [u8; 20],
    pub(super) size: u32,
    pub(super) cookie: u64,
    /// Blocks still to send in this burst.
    pub(super) left: u32,
    /// Blocks sent at least once.
    pub(super) sent: u32,
    /// A header without data, with APG, is to be sent.
    pub(super) probe: bool,
}

impl Outgoing {
    pub(super) fn new(code: Code, user: [u8; 20], size: u32, cookie: u64) -> Self {
        Outgoing {
            code,
            user,
            size,
            cookie,
            left: group::all_blocks(size),
            sent: 0,
            // A message without data is its header.
            probe: size == 0,
        }
    }

    /// The next packet: its PacketDelivery and data, and whether it sends
    /// blocks again. `data` selects data packets (paced) or the header-only
    /// probe.
    pub(super) fn next(
        &mut self,
        max_data: u32,
        data: bool,
    ) -> Option<(u32, Option<PayloadRef>, u32, bool)> {
        if !data {
            if !self.probe {
                return None;
            }
            self.probe = false;
            return Some((0, None, 0, false));
        }
        // Adjacent blocks only, so that the payload is one range of the
        // message (a receiver takes any blocks).
        let mask = group::next_run(self.left, self.size, max_data);
        if mask == 0 {
            return None;
        }
        self.left &= !mask;
        let again = self.sent & mask != 0;
        self.sent |= mask;
        let first = mask.trailing_zeros();
        let len = group::data_len(mask, self.size).unwrap_or(0);
        let payload = PayloadRef {
            cookie: self.cookie,
            offset: group::block_offset(first),
            len,
        };
        Some((
            mask,
            Some(payload),
            group::padded(len).saturating_sub(len),
            again,
        ))
    }

    pub(super) fn has_data(&self) -> bool {
        self.left != 0
    }

    /// The next packet of the message ([`Outgoing::next`]), its header
    /// written to `buf`. A retransmission (`apg`: the sender's timeout, or
    /// blocks sent before) asks for an acknowledgement with its last packet
    /// (or its header alone).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn transmit(
        &mut self,
        ends: Ends,
        apg: bool,
        max_data: u32,
        data: bool,
        buf: &mut [u8; HEADER_LEN],
        counters: &mut Counters,
    ) -> Option<Transmit> {
        let (mask, payload, pad, again) = self.next(max_data, data)?;
        let len = payload.map_or(0, |p| p.len);
        let retransmit = apg || again;
        let mut control = Control::new(ends.function);
        if retransmit && !self.has_data() {
            control.flags = ctrl::APG;
        }
        let sda = if self.size > 0 { code::SDA } else { 0 };
        let repr = Repr {
            client: ends.client,
            domain: DOMAIN_INTERNET,
            word2_flags: 0,
            length: u16::try_from(group::padded(len) / 4).unwrap_or(0),
            control,
            transaction: ends.transaction,
            packet_delivery: mask,
            server: ends.server,
            code: Code((self.code.0 & !(code::SDA | code::MDM)) | sda),
            user: self.user,
            msg_delivery: 0,
            segment_size: self.size,
        };
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        if again {
            counters.retransmitted_blocks = counters
                .retransmitted_blocks
                .saturating_add(u64::from(mask.count_ones()));
        }
        let kind = match (retransmit, ends.function) {
            (true, _) => TxKind::Retransmit,
            (false, Function::Request) => TxKind::Request,
            (false, Function::Response) => TxKind::Response,
        };
        Some(Transmit {
            to: ends.to,
            payload,
            pad,
            kind,
        })
    }
}

/// The two ends of a message, its direction and its transaction: what every
/// packet of it names.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ends {
    pub(super) client: EntityId,
    pub(super) server: EntityId,
    pub(super) function: Function,
    pub(super) transaction: u32,
    /// Where its packets go.
    pub(super) to: Addr,
}

/// Serial-number comparison of transaction identifiers: `a - b`.
pub(super) fn tx_diff(a: u32, b: u32) -> i32 {
    i32::from_ne_bytes(a.wrapping_sub(b).to_ne_bytes())
}

/// Data of a received packet checked against its message: the PacketDelivery
/// blocks exist in the segment and the data holds exactly them (padded).
/// Returns the data without the padding.
pub(super) fn check_data<'a>(r: &Repr, data: &'a [u8]) -> Result<&'a [u8], RxDrop> {
    let size = r.segment_len();
    if size > group::MAX_GROUP_BYTES {
        return Err(RxDrop::Unsupported);
    }
    let len = group::data_len(r.packet_delivery, size).ok_or(RxDrop::Malformed)?;
    if usize::try_from(group::padded(len)).ok() != Some(data.len()) {
        return Err(RxDrop::Malformed);
    }
    data.get(..usize::try_from(len).unwrap_or(0))
        .ok_or(RxDrop::Malformed)
}
