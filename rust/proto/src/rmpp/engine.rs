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

use super::flow::cts_grant;
use super::wire::{Packet, PacketType, ParseError, Repr, HEADER_LEN};

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
    /// Sender retransmission timeout in nanoseconds.
    pub retransmit_timeout: u64,
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
}

impl Config {
    /// Defaults: MTU 1500, MAX_RCV_BUF 1024, NODES 64, MAX_DATA_PKTS 16, 1 ms
    /// retransmission timeout, 16 retries, 10 minute reclaim, paper restart policy.
    pub const fn new(local_nid: u32) -> Self {
        Config {
            local_nid,
            mtu: 1500,
            max_rcv_buf: 1024,
            nodes: 64,
            max_data_pkts: 16,
            retransmit_timeout: 1_000_000,
            max_retries: 16,
            reclaim_timeout: 600_000_000_000,
            restart: RestartPolicy::FromStart,
            first_msg_id: 1,
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
        if self.retransmit_timeout == 0 {
            return Err(ConfigError::ZeroTimeout);
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
    /// `retransmit_timeout` is zero.
    ZeroTimeout,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SendPhase {
    /// RTS or LAST RTS sent, waiting for CTS / MSGEND / MSGDROP (Figures 2, 3).
    Rts,
    /// At least one CTS received; sending or waiting for the next CTS (Figure 3).
    Granted,
    /// Aborted or failed: sending NULL until the receiver answers (completion
    /// already reported).
    Nulling,
    /// MSGEND / MSGDROP received: GCH to send, completion to hand out.
    Closing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SendTx {
    None,
    Rts,
    Data,
    Null,
    Gch,
}

#[derive(Clone, Copy, Debug)]
struct SendState {
    phase: SendPhase,
    tx: SendTx,
    dst: u32,
    msg_id: u32,
    msg_num: u32,
    len: u32,
    tag: u64,
    cookie: u64,
    chunk: u32,
    /// Number of data packets after the RTS (0 for a short message).
    data_pkts: u32,
    attempt: u32,
    null_tries: u32,
    next_seq: u32,
    block_start: u32,
    block_end: u32,
    deadline: Option<u64>,
    completion: Option<SendStatus>,
}

/// One entry of the send table. Opaque; create with `SendSlot::default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SendSlot {
    st: Option<SendState>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Final {
    End { accepted: u32 },
    Drop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reply {
    Cts { seq: u32, n: u32 },
    Final,
}

#[derive(Clone, Copy, Debug)]
struct RecvState {
    done: Option<Final>,
    src: u32,
    msg_id: u32,
    msg_num: u32,
    len: u32,
    tag: u64,
    ctx: u64,
    accept: u32,
    chunk: u32,
    /// Last data sequence number the receiver needs (covers byte `accept - 1`).
    last_seq: u32,
    expected: u32,
    granted_end: u32,
    grant_left: u32,
    attempt: u32,
    reply: Option<Reply>,
    last_activity: u64,
    completion: Option<RecvStatus>,
    /// GCH seen or reclaimed: free as soon as the completion is handed out.
    release: bool,
    /// When the final reply was last re-sent to probe for a lost GCH.
    probed_at: u64,
}

/// One entry of the receive table. Opaque; create with `RecvSlot::default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecvSlot {
    st: Option<RecvState>,
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

/// Signed distance `a - b` in wrapping u32 sequence space.
fn seq_diff(a: u32, b: u32) -> i32 {
    i32::from_ne_bytes(a.wrapping_sub(b).to_ne_bytes())
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
    counters: Counters,
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
            counters: Counters::default(),
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

    /// Data packets granted to incoming messages and not yet received (Figure 8's
    /// `outstanding`).
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// Occupied send-table entries.
    pub fn active_sends(&self) -> usize {
        self.send.as_ref().iter().filter(|s| s.st.is_some()).count()
    }

    /// Occupied receive-table entries.
    pub fn active_recvs(&self) -> usize {
        self.recv.as_ref().iter().filter(|s| s.st.is_some()).count()
    }

    /// Per-peer message numbering state, if `nid` is in the peer table.
    pub fn peer(&self, nid: u32) -> Option<&PeerState> {
        usize::try_from(nid)
            .ok()
            .and_then(|i| self.peers.as_ref().get(i))
    }

    /// Starts sending a `len`-byte message to `dst` with match `tag`. `cookie` names
    /// the message's bytes in [`PayloadRef`]s and in the completion; they must stay
    /// readable until the completion. Returns [`SendError::Full`] when the send table
    /// is full.
    pub fn send(
        &mut self,
        now: u64,
        dst: u32,
        len: u32,
        tag: u64,
        cookie: u64,
    ) -> Result<SendHandle, SendError> {
        let chunk = self.cfg.chunk();
        let rto = self.cfg.retransmit_timeout;
        let peer = usize::try_from(dst)
            .ok()
            .and_then(|i| self.peers.as_mut().get_mut(i))
            .ok_or(SendError::UnknownPeer)?;
        let slot = self
            .send
            .as_mut()
            .iter_mut()
            .find(|s| s.st.is_none())
            .ok_or(SendError::Full)?;
        let msg_id = self.next_msg_id;
        self.next_msg_id = msg_id.wrapping_add(1);
        let msg_num = peer.tx_next;
        peer.tx_next = msg_num.wrapping_add(1);
        slot.st = Some(SendState {
            phase: SendPhase::Rts,
            tx: SendTx::Rts,
            dst,
            msg_id,
            msg_num,
            len,
            tag,
            cookie,
            chunk,
            data_pkts: len.saturating_sub(1).checked_div(chunk).unwrap_or(0),
            attempt: 0,
            null_tries: 0,
            next_seq: 1,
            block_start: 1,
            block_end: 1,
            deadline: Some(now.saturating_add(rto)),
            completion: None,
        });
        Ok(SendHandle(msg_id))
    }

    /// Aborts an outgoing message (paper: NULL). Its completion
    /// ([`SendStatus::Aborted`]) is reported at once and the engine stops reading its
    /// bytes; the engine keeps sending NULL until the receiver answers so that the
    /// per-peer message numbering stays in step.
    pub fn abort(&mut self, now: u64, handle: SendHandle) -> Result<(), AbortError> {
        let rto = self.cfg.retransmit_timeout;
        let st = self
            .send
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.msg_id == handle.0)
            .ok_or(AbortError::NotFound)?;
        match st.phase {
            SendPhase::Rts | SendPhase::Granted => {
                st.completion = Some(SendStatus::Aborted);
                start_null(st, now, rto);
                Ok(())
            }
            SendPhase::Nulling | SendPhase::Closing => Err(AbortError::Finished),
        }
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

    fn rx_rts<'a, U: Upcall + ?Sized>(
        &mut self,
        now: u64,
        r: &Repr,
        payload: &'a [u8],
        up: &mut U,
    ) -> Result<Option<Placement<'a>>, RxDrop> {
        let plen = u32::from(r.payload_len);
        let short = r.ptype == PacketType::LastRts;
        if (short && plen != r.len) || (!short && (plen == 0 || plen >= r.len)) {
            return Err(RxDrop::Malformed);
        }
        let cfg = self.cfg;
        let outstanding = &mut self.outstanding;
        if let Some(st) = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.src == r.src_nid && s.msg_id == r.msg_id)
        {
            // A retried RTS: our CTS or final answer was lost.
            if seq_diff(r.info2, st.attempt) <= 0 {
                return Err(RxDrop::Stale);
            }
            st.attempt = r.info2;
            st.last_activity = now;
            if st.done.is_some() {
                st.reply = Some(Reply::Final);
            } else {
                release_grants(st, outstanding);
                st.expected = 1;
                grant(st, outstanding, &cfg, &mut self.counters);
            }
            return Ok(None);
        }
        let peer = usize::try_from(r.src_nid)
            .ok()
            .and_then(|i| self.peers.as_mut().get_mut(i))
            .ok_or(RxDrop::UnknownPeer)?;
        match seq_diff(r.msg_num, peer.rx_next) {
            d if d < 0 => return Err(RxDrop::Stale),
            d if d > 0 => return Err(RxDrop::OutOfOrder),
            _ => {}
        }
        let Some(slot) = self.recv.as_mut().iter_mut().find(|s| s.st.is_none()) else {
            probe_for_lost_gch(self.recv.as_mut(), now, cfg.retransmit_timeout);
            return Err(RxDrop::TableFull);
        };
        let arrival = Arrival {
            src: r.src_nid,
            msg_id: r.msg_id,
            msg_num: r.msg_num,
            len: r.len,
            tag: r.tag,
            first: payload,
        };
        let mut st = RecvState {
            done: None,
            src: r.src_nid,
            msg_id: r.msg_id,
            msg_num: r.msg_num,
            len: r.len,
            tag: r.tag,
            ctx: 0,
            accept: 0,
            chunk: plen,
            last_seq: 0,
            expected: 1,
            granted_end: 1,
            grant_left: 0,
            attempt: r.info2,
            reply: None,
            last_activity: now,
            completion: None,
            release: false,
            probed_at: now,
        };
        let placement = match up.arrival(&arrival) {
            Decision::Defer => return Err(RxDrop::Deferred),
            Decision::Drop => {
                st.done = Some(Final::Drop);
                st.reply = Some(Reply::Final);
                None
            }
            Decision::Accept { len, ctx } => {
                let accept = len.min(r.len);
                st.ctx = ctx;
                st.accept = accept;
                let first = usize::try_from(accept.min(plen))
                    .ok()
                    .and_then(|n| payload.get(..n))
                    .unwrap_or(&[]);
                if accept <= plen {
                    st.done = Some(Final::End { accepted: accept });
                    st.reply = Some(Reply::Final);
                    st.completion = Some(RecvStatus::Complete);
                } else {
                    // accept > plen > 0, so the division is by a non-zero chunk.
                    st.last_seq = accept.saturating_sub(1).checked_div(plen).unwrap_or(0);
                    grant(&mut st, outstanding, &cfg, &mut self.counters);
                }
                (!first.is_empty()).then_some(Placement {
                    ctx,
                    src: r.src_nid,
                    msg_id: r.msg_id,
                    offset: 0,
                    data: first,
                })
            }
        };
        peer.rx_next = peer.rx_next.wrapping_add(1);
        slot.st = Some(st);
        Ok(placement)
    }

    fn rx_data<'a>(
        &mut self,
        now: u64,
        r: &Repr,
        payload: &'a [u8],
    ) -> Result<Option<Placement<'a>>, RxDrop> {
        let cfg = self.cfg;
        let outstanding = &mut self.outstanding;
        let st = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.src == r.src_nid && s.msg_id == r.msg_id)
            .ok_or(RxDrop::UnknownMessage)?;
        let newer = seq_diff(r.info2, st.attempt);
        if st.done.is_some() {
            // The sender restarted: our MSGEND / MSGDROP was lost (section 3.2).
            if newer <= 0 {
                return Err(RxDrop::Stale);
            }
            st.attempt = r.info2;
            st.last_activity = now;
            st.reply = Some(Reply::Final);
            return Ok(None);
        }
        let s = r.seq;
        let restart = newer > 0;
        if newer < 0 || s == 0 || r.len != st.len {
            return Err(if r.len != st.len {
                RxDrop::Malformed
            } else {
                RxDrop::Stale
            });
        }
        if restart {
            if s > st.expected {
                return Err(RxDrop::Stale);
            }
        } else if s != st.expected || s >= st.granted_end {
            return Err(RxDrop::Stale);
        }
        // Validate the packet's size against the message's chunking.
        let offset = s.checked_mul(st.chunk).ok_or(RxDrop::Malformed)?;
        let rest = st.len.checked_sub(offset).ok_or(RxDrop::Malformed)?;
        let want = rest.min(st.chunk);
        let plen = u32::from(r.payload_len);
        if want == 0 || plen != want || (r.ptype == PacketType::LastData) != (want == rest) {
            return Err(RxDrop::Malformed);
        }
        if restart {
            // Resynchronise on the sender's restart (section 3.5).
            release_grants(st, outstanding);
            st.attempt = r.info2;
            st.expected = s;
            st.granted_end = s.saturating_add(1);
        }
        if st.grant_left > 0 {
            st.grant_left = st.grant_left.saturating_sub(1);
            *outstanding = outstanding.saturating_sub(1);
        }
        st.expected = s.saturating_add(1);
        st.last_activity = now;
        let placement = if offset < st.accept {
            let n = usize::try_from(plen.min(st.accept.saturating_sub(offset))).unwrap_or(0);
            payload.get(..n).map(|data| Placement {
                ctx: st.ctx,
                src: st.src,
                msg_id: st.msg_id,
                offset,
                data,
            })
        } else {
            None
        };
        if st.expected > st.last_seq {
            release_grants(st, outstanding);
            st.done = Some(Final::End {
                accepted: st.accept,
            });
            st.reply = Some(Reply::Final);
            st.completion = Some(RecvStatus::Complete);
        } else if st.expected >= st.granted_end {
            grant(st, outstanding, &cfg, &mut self.counters);
        }
        Ok(placement)
    }

    fn rx_gch(&mut self, r: &Repr) -> Result<(), RxDrop> {
        let slot = self
            .recv
            .as_mut()
            .iter_mut()
            .find(|s| {
                s.st.as_ref()
                    .is_some_and(|st| st.src == r.src_nid && st.msg_id == r.msg_id)
            })
            .ok_or(RxDrop::UnknownMessage)?;
        let Some(st) = slot.st.as_mut() else {
            return Err(RxDrop::UnknownMessage);
        };
        if st.done.is_none() {
            return Err(RxDrop::Unexpected);
        }
        st.release = true;
        if st.completion.is_none() {
            slot.st = None;
        }
        Ok(())
    }

    fn rx_null(&mut self, now: u64, r: &Repr) -> Result<(), RxDrop> {
        let outstanding = &mut self.outstanding;
        let found = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.src == r.src_nid && s.msg_id == r.msg_id);
        if let Some(st) = found {
            st.last_activity = now;
            if seq_diff(r.info2, st.attempt) > 0 {
                st.attempt = r.info2;
            }
            if st.done.is_none() {
                release_grants(st, outstanding);
                st.done = Some(Final::Drop);
                st.completion = Some(RecvStatus::Aborted);
            }
            st.reply = Some(Reply::Final);
            return Ok(());
        }
        let peer = usize::try_from(r.src_nid)
            .ok()
            .and_then(|i| self.peers.as_mut().get_mut(i))
            .ok_or(RxDrop::UnknownPeer)?;
        let d = seq_diff(r.msg_num, peer.rx_next);
        if d > 0 {
            return Err(RxDrop::OutOfOrder);
        }
        if d == 0 {
            // The message never arrived here: consume its number (section 3.2).
            peer.rx_next = peer.rx_next.wrapping_add(1);
        }
        self.push_ctrl(Ctrl {
            ptype: PacketType::MsgDrop,
            src: r.src_nid,
            dst: r.dst_nid,
            msg_id: r.msg_id,
            msg_num: r.msg_num,
            info2: r.info2,
        });
        Ok(())
    }

    fn rx_reply(&mut self, now: u64, r: &Repr) -> Result<(), RxDrop> {
        let rto = self.cfg.retransmit_timeout;
        let found = self
            .send
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.msg_id == r.msg_id && s.dst == r.dst_nid);
        let Some(st) = found else {
            if r.ptype != PacketType::Cts {
                // Answer a stray final reply with a GCH so the receiver can free
                // its state early (our own GCH was lost).
                self.push_ctrl(Ctrl {
                    ptype: PacketType::Gch,
                    src: r.src_nid,
                    dst: r.dst_nid,
                    msg_id: r.msg_id,
                    msg_num: r.msg_num,
                    info2: r.info2,
                });
                return Ok(());
            }
            return Err(RxDrop::UnknownMessage);
        };
        match r.ptype {
            PacketType::Cts => {
                let waiting = match st.phase {
                    SendPhase::Rts => st.data_pkts > 0,
                    SendPhase::Granted => st.next_seq == st.block_end,
                    _ => false,
                };
                if !waiting {
                    return Err(RxDrop::Unexpected);
                }
                if r.info2 != st.attempt || r.seq != st.next_seq {
                    return Err(RxDrop::Stale);
                }
                if r.info1 == 0 || r.seq == 0 || r.seq > st.data_pkts {
                    return Err(RxDrop::Malformed);
                }
                let left = st.data_pkts.saturating_sub(r.seq).saturating_add(1);
                st.phase = SendPhase::Granted;
                st.block_start = r.seq;
                st.block_end = r.seq.saturating_add(r.info1.min(left));
                st.tx = SendTx::Data;
                st.deadline = Some(now.saturating_add(rto));
                Ok(())
            }
            _ => {
                let status = if r.ptype == PacketType::MsgEnd {
                    SendStatus::Delivered {
                        accepted: r.info1.min(st.len),
                    }
                } else {
                    SendStatus::Dropped
                };
                match st.phase {
                    SendPhase::Rts | SendPhase::Granted => st.completion = Some(status),
                    SendPhase::Nulling => {}
                    SendPhase::Closing => return Err(RxDrop::Stale),
                }
                st.phase = SendPhase::Closing;
                st.tx = SendTx::Gch;
                st.deadline = None;
                Ok(())
            }
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

    fn poll_recv_reply(&mut self, header: &mut [u8; HEADER_LEN]) -> Option<Transmit> {
        let local = self.cfg.local_nid;
        let st = self
            .recv
            .as_mut()
            .iter_mut()
            .filter_map(|s| s.st.as_mut())
            .find(|s| s.reply.is_some())?;
        let reply = st.reply.take()?;
        let (ptype, seq, info1) = match (reply, st.done) {
            (Reply::Cts { seq, n }, _) => (PacketType::Cts, seq, n),
            (Reply::Final, Some(Final::End { accepted })) => (PacketType::MsgEnd, 0, accepted),
            (Reply::Final, _) => (PacketType::MsgDrop, 0, 0),
        };
        let repr = Repr {
            ptype,
            payload_len: 0,
            src_nid: st.src,
            dst_nid: local,
            msg_id: st.msg_id,
            msg_num: st.msg_num,
            len: st.len,
            seq,
            info1,
            info2: st.attempt,
            tag: 0,
        };
        repr.emit(&mut Packet::new_unchecked(&mut header[..]));
        Some(Transmit {
            to: st.src,
            ptype,
            payload: None,
        })
    }

    fn poll_send_control(&mut self, now: u64, header: &mut [u8; HEADER_LEN]) -> Option<Transmit> {
        let local = self.cfg.local_nid;
        let rto = self.cfg.retransmit_timeout;
        let next_id = self.next_msg_id;
        // Oldest message first: paper section 3.5 resends the lowest message number.
        let slot = self
            .send
            .as_mut()
            .iter_mut()
            .filter(|s| {
                s.st.as_ref()
                    .is_some_and(|st| matches!(st.tx, SendTx::Rts | SendTx::Null | SendTx::Gch))
            })
            .max_by_key(|s| {
                s.st.as_ref()
                    .map_or(0, |st| next_id.wrapping_sub(st.msg_id))
            })?;
        let st = slot.st.as_mut()?;
        let tx = core::mem::replace(&mut st.tx, SendTx::None);
        let mut repr = Repr {
            ptype: PacketType::Gch,
            payload_len: 0,
            src_nid: local,
            dst_nid: st.dst,
            msg_id: st.msg_id,
            msg_num: st.msg_num,
            len: st.len,
            seq: 0,
            info1: 0,
            info2: st.attempt,
            tag: 0,
        };
        let mut payload = None;
        match tx {
            SendTx::Rts => {
                let first = st.len.min(st.chunk);
                repr.ptype = if st.data_pkts == 0 {
                    PacketType::LastRts
                } else {
                    PacketType::Rts
                };
                repr.payload_len = u16::try_from(first).unwrap_or(0);
                repr.tag = st.tag;
                payload = (first > 0).then_some(PayloadRef {
                    cookie: st.cookie,
                    offset: 0,
                    len: first,
                });
                st.deadline = Some(now.saturating_add(rto));
            }
            SendTx::Null => {
                repr.ptype = PacketType::Null;
                st.deadline = Some(now.saturating_add(rto));
            }
            _ => {}
        }
        let to = st.dst;
        repr.emit(&mut Packet::new_unchecked(&mut header[..]));
        if st.phase == SendPhase::Closing && st.completion.is_none() {
            slot.st = None;
        }
        Some(Transmit {
            to,
            ptype: repr.ptype,
            payload,
        })
    }

    fn poll_send_data(&mut self, now: u64, header: &mut [u8; HEADER_LEN]) -> Option<Transmit> {
        let local = self.cfg.local_nid;
        let rto = self.cfg.retransmit_timeout;
        let slots = self.send.as_mut();
        let n = slots.len();
        let idx = (0..n)
            .filter_map(|k| self.rr.wrapping_add(k).checked_rem(n))
            .find(|&i| {
                slots
                    .get(i)
                    .and_then(|s| s.st.as_ref())
                    .is_some_and(|st| st.tx == SendTx::Data)
            })?;
        self.rr = idx.wrapping_add(1);
        let st = slots.get_mut(idx)?.st.as_mut()?;
        let s = st.next_seq;
        let offset = s.saturating_mul(st.chunk);
        let plen = st.len.saturating_sub(offset).min(st.chunk);
        let ptype = if s >= st.data_pkts {
            PacketType::LastData
        } else if s.saturating_add(1) >= st.block_end {
            PacketType::StopData
        } else {
            PacketType::Data
        };
        let repr = Repr {
            ptype,
            payload_len: u16::try_from(plen).unwrap_or(0),
            src_nid: local,
            dst_nid: st.dst,
            msg_id: st.msg_id,
            msg_num: st.msg_num,
            len: st.len,
            seq: s,
            info1: st.block_end.saturating_sub(st.block_start),
            info2: st.attempt,
            tag: 0,
        };
        repr.emit(&mut Packet::new_unchecked(&mut header[..]));
        st.next_seq = s.saturating_add(1);
        if st.next_seq >= st.block_end {
            st.tx = SendTx::None;
        }
        st.deadline = Some(now.saturating_add(rto));
        Some(Transmit {
            to: st.dst,
            ptype,
            payload: Some(PayloadRef {
                cookie: st.cookie,
                offset,
                len: plen,
            }),
        })
    }

    /// Hands out the next finished message, if any. Sends are reported when MSGEND /
    /// MSGDROP arrives, at [`Engine::abort`] or on failure; receives when all accepted
    /// bytes were placed, on NULL, or on reclaim of an unfinished message.
    pub fn poll_completion(&mut self) -> Option<Completion> {
        for slot in self.send.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            if let Some(status) = st.completion.take() {
                let c = Completion::Send {
                    cookie: st.cookie,
                    dst: st.dst,
                    msg_id: st.msg_id,
                    status,
                };
                if st.phase == SendPhase::Closing && st.tx == SendTx::None {
                    slot.st = None;
                }
                return Some(c);
            }
        }
        for slot in self.recv.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            if let Some(status) = st.completion.take() {
                let c = Completion::Recv {
                    ctx: st.ctx,
                    src: st.src,
                    msg_id: st.msg_id,
                    msg_num: st.msg_num,
                    tag: st.tag,
                    len: st.len,
                    accepted: st.accept,
                    status,
                };
                if st.release {
                    slot.st = None;
                }
                return Some(c);
            }
        }
        None
    }

    /// The earliest time [`Engine::handle_timeout`] has work to do, if any.
    pub fn poll_timeout(&self) -> Option<u64> {
        let reclaim = self.cfg.reclaim_timeout;
        let sends = self
            .send
            .as_ref()
            .iter()
            .filter_map(|s| s.st.as_ref())
            .filter_map(|st| st.deadline);
        let recvs = self
            .recv
            .as_ref()
            .iter()
            .filter_map(|s| s.st.as_ref())
            .filter(|st| !st.release)
            .map(|st| st.last_activity.saturating_add(reclaim));
        sends.chain(recvs).min()
    }

    /// Processes every deadline at or before `now`: sender retries (RTS again, or
    /// restart of the data), failures after `max_retries`, NULL retries, and receiver
    /// reclaim (paper: ten minutes without GCH).
    pub fn handle_timeout(&mut self, now: u64) {
        let cfg = self.cfg;
        let rto = cfg.retransmit_timeout;
        let counters = &mut self.counters;
        for slot in self.send.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            match st.deadline {
                Some(d) if d <= now => {}
                _ => continue,
            }
            match st.phase {
                SendPhase::Rts | SendPhase::Granted => {
                    st.attempt = st.attempt.wrapping_add(1);
                    if st.attempt > cfg.max_retries {
                        st.completion = Some(SendStatus::Failed);
                        start_null(st, now, rto);
                        continue;
                    }
                    counters.retransmits = counters.retransmits.saturating_add(1);
                    if st.phase == SendPhase::Rts {
                        st.tx = SendTx::Rts;
                    } else {
                        let s = match cfg.restart {
                            RestartPolicy::FromStart => 1,
                            RestartPolicy::FromLastGrant => st.block_start,
                        };
                        st.next_seq = s;
                        st.block_start = s;
                        st.block_end = s.saturating_add(1);
                        st.tx = SendTx::Data;
                    }
                    st.deadline = Some(now.saturating_add(rto));
                }
                SendPhase::Nulling => {
                    st.null_tries = st.null_tries.saturating_add(1);
                    st.attempt = st.attempt.wrapping_add(1);
                    if st.null_tries > cfg.max_retries {
                        // The peer is gone; give up quietly.
                        st.phase = SendPhase::Closing;
                        st.tx = SendTx::None;
                        st.deadline = None;
                        if st.completion.is_none() {
                            slot.st = None;
                        }
                        continue;
                    }
                    counters.null_retries = counters.null_retries.saturating_add(1);
                    st.tx = SendTx::Null;
                    st.deadline = Some(now.saturating_add(rto));
                }
                SendPhase::Closing => st.deadline = None,
            }
        }
        let outstanding = &mut self.outstanding;
        for slot in self.recv.as_mut().iter_mut() {
            let Some(st) = slot.st.as_mut() else { continue };
            if st.release || st.last_activity.saturating_add(cfg.reclaim_timeout) > now {
                continue;
            }
            if st.done.is_none() {
                release_grants(st, outstanding);
                st.done = Some(Final::Drop);
                st.completion = Some(RecvStatus::Abandoned);
            }
            st.reply = None;
            st.release = true;
            if st.completion.is_none() {
                slot.st = None;
            }
        }
    }
}

/// The receive table is full: re-send the final reply (MSGEND / MSGDROP) of the
/// finished message idle longest, at most once per retransmission timeout. A sender
/// that has forgotten the message answers with a stateless GCH (its first GCH was
/// lost), which frees the entry long before the reclaim timeout; a sender still
/// waiting takes it as the answer it missed. Either way the reply is true, so the
/// probe is safe.
fn probe_for_lost_gch(slots: &mut [RecvSlot], now: u64, rto: u64) {
    let oldest = slots
        .iter_mut()
        .filter_map(|s| s.st.as_mut())
        .filter(|st| st.done.is_some() && !st.release && st.probed_at.saturating_add(rto) <= now)
        .min_by_key(|st| st.last_activity);
    if let Some(st) = oldest {
        st.probed_at = now;
        st.reply = Some(Reply::Final);
    }
}

fn start_null(st: &mut SendState, now: u64, rto: u64) {
    st.phase = SendPhase::Nulling;
    st.tx = SendTx::Null;
    st.null_tries = 0;
    st.deadline = Some(now.saturating_add(rto));
}

/// Returns a message's unused grants to the pool.
fn release_grants(st: &mut RecvState, outstanding: &mut u32) {
    *outstanding = outstanding.saturating_sub(st.grant_left);
    st.grant_left = 0;
}

/// Issues the next CTS for a message (Figure 8), never granting past the last packet
/// the receiver needs.
fn grant(st: &mut RecvState, outstanding: &mut u32, cfg: &Config, counters: &mut Counters) {
    let needed = st.last_seq.saturating_sub(st.expected).saturating_add(1);
    let rule = cts_grant(cfg.max_rcv_buf, cfg.nodes, *outstanding, cfg.max_data_pkts);
    let n = rule.min(needed).max(1);
    if rule < needed.min(cfg.max_data_pkts.max(1)) {
        counters.grants_limited = counters.grants_limited.saturating_add(1);
    }
    counters.grants = counters.grants.saturating_add(1);
    counters.granted_pkts = counters.granted_pkts.saturating_add(u64::from(n));
    *outstanding = outstanding.saturating_add(n);
    counters.peak_outstanding = counters.peak_outstanding.max(*outstanding);
    st.grant_left = n;
    st.granted_end = st.expected.saturating_add(n);
    st.reply = Some(Reply::Cts {
        seq: st.expected,
        n,
    });
}
