// SPDX-License-Identifier: GPL-2.0
//! The client side of the VMTP [`Engine`] (RFC 1045, section 4): one message
//! transaction per client entity at a time: the Request group sent as a
//! paced blast, its header sent again with APG when no answer comes within
//! TC1 (the server then acknowledges it or asks for the missing blocks), the
//! Response group received with its delivery mask, missing blocks asked for
//! with NotifyVmtpServer RETRY after TC3, and the end of the transaction.

use super::super::entity::EntityId;
use super::super::group;
use super::super::wire::{code, ctrl, Code, Function, Repr, HEADER_LEN};
use super::{
    asked, check_data, tx_diff, Addr, CallError, Completion, Csr, Ends, Engine, Handle, Local,
    Notify, Outgoing, Placements, Role, RxDrop, Transmit, TxStatus,
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    /// No transaction (or the last one's completion is handed out).
    #[default]
    Idle,
    /// The Request is being sent or waits for the Response.
    Awaiting,
    /// Part of the Response has arrived.
    Receiving,
    /// The Response arrived: kept to answer its duplicates until the next
    /// transaction.
    Done,
}

/// A client entity's transaction. Part of [`Local`]; opaque.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientTx {
    phase: Phase,
    transaction: u32,
    server: EntityId,
    addr: Addr,
    out: Outgoing,
    datagram: bool,
    /// Packets sent from now on carry APG (a retransmission).
    apg: bool,
    ctx: u64,
    max: u32,
    resp_mask: u32,
    resp_size: u32,
    resp_code: Code,
    resp_user: [u8; 20],
    retries: u32,
    deadline: Option<u64>,
    completion: Option<TxStatus>,
}

impl ClientTx {
    /// The entity is closed: its transaction ends.
    pub(super) fn abort(&mut self) {
        if matches!(self.phase, Phase::Awaiting | Phase::Receiving) {
            self.completion = Some(TxStatus::Aborted);
        }
        self.phase = Phase::Idle;
        self.deadline = None;
        self.out.left = 0;
        self.out.probe = false;
    }

    pub(super) fn has_data(&self) -> bool {
        self.phase == Phase::Awaiting && self.out.has_data()
    }

    /// The explicit acknowledgement of a Response that arrived and that no
    /// next Request acknowledges, from the client `me`.
    pub(super) fn final_ack(&self, me: EntityId) -> Option<Notify> {
        (self.phase == Phase::Done && !self.datagram).then(|| Notify {
            to: self.addr,
            from: me,
            to_client: false,
            about: self.server,
            client: me,
            transaction: self.transaction,
            control: 0,
            delivery: group::all_blocks(self.resp_size),
            code: code::OK,
            asked: 0,
        })
    }

    pub(super) fn is_idle(&self) -> bool {
        matches!(self.phase, Phase::Idle | Phase::Done) && self.completion.is_none()
    }

    fn finish(&mut self, status: TxStatus) {
        self.completion = Some(status);
        self.phase = match status {
            TxStatus::Response { .. } => Phase::Done,
            _ => Phase::Idle,
        };
        self.deadline = None;
        self.out.left = 0;
        self.out.probe = false;
    }
}

impl<L, R> Engine<L, R>
where
    L: AsMut<[Local]> + AsRef<[Local]>,
    R: AsMut<[Csr]> + AsRef<[Csr]>,
{
    /// Starts a message transaction of client `h` with `server`, reached at
    /// `addr`: a Request of `len` segment bytes (named `cookie` in the
    /// packets to send) with `code` and 12 bytes of user data; the Response's
    /// data goes to the buffer `ctx` of `max` bytes. A datagram Request
    /// ([`code::DGM`]) completes once sent. Returns the transaction.
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        now: u64,
        h: Handle,
        server: EntityId,
        addr: Addr,
        req_code: Code,
        user: [u8; 12],
        len: u32,
        cookie: u64,
        ctx: u64,
        max: u32,
    ) -> Result<u32, CallError> {
        if len > group::MAX_GROUP_BYTES {
            return Err(CallError::TooLong);
        }
        let rto = self.cfg.response_timeout;
        let transaction = self.last_transaction.wrapping_add(1);
        let l = self
            .local_mut(h, Role::Client)
            .ok_or(CallError::BadHandle)?;
        let tx = &mut l.tx;
        if matches!(tx.phase, Phase::Awaiting | Phase::Receiving) || tx.completion.is_some() {
            return Err(CallError::Busy);
        }
        let mut user20 = [0u8; 20];
        if let Some(d) = user20.get_mut(8..) {
            d.copy_from_slice(&user);
        }
        // Idempotent Responses and conditional delivery are not
        // implemented; MDM and SDA are the engine's.
        let flags = req_code.0 & !(code::CMD | code::MDM | code::SDA | code::CRE | code::MRD);
        *tx = ClientTx {
            phase: Phase::Awaiting,
            transaction,
            server,
            addr,
            out: Outgoing::new(Code(flags), user20, len, cookie),
            datagram: req_code.has(code::DGM),
            apg: false,
            ctx,
            max,
            resp_mask: 0,
            resp_size: 0,
            resp_code: Code(0),
            resp_user: [0; 20],
            retries: 0,
            deadline: Some(now.saturating_add(rto)),
            completion: None,
        };
        self.last_transaction = transaction;
        Ok(transaction)
    }

    /// The next Request packet of some client: a header (`data` false) or
    /// data (`data` true, paced by the caller).
    pub(super) fn poll_client(
        &mut self,
        _now: u64,
        header_buf: &mut [u8; HEADER_LEN],
        data: bool,
    ) -> Option<Transmit> {
        let max_data = self.cfg.max_data();
        let counters = &mut self.counters;
        for l in self.locals.as_mut().iter_mut() {
            if l.role != Some(Role::Client) || l.tx.phase != Phase::Awaiting {
                continue;
            }
            let tx = &mut l.tx;
            let ends = Ends {
                client: l.entity,
                server: tx.server,
                function: Function::Request,
                transaction: tx.transaction,
                to: tx.addr,
            };
            let Some(t) = tx
                .out
                .transmit(ends, tx.apg, max_data, data, header_buf, counters)
            else {
                continue;
            };
            if tx.datagram && !tx.out.has_data() && !tx.out.probe {
                // A datagram is done once its last packet is out.
                tx.finish(TxStatus::Sent);
            }
            return Some(t);
        }
        None
    }

    /// A Response packet.
    pub(super) fn rx_response<'a>(
        &mut self,
        now: u64,
        src: Addr,
        r: &Repr,
        data: &'a [u8],
    ) -> Result<Placements<'a>, RxDrop> {
        let Some(h) = self.find_local(r.client, Role::Client) else {
            self.notify_server(src, r, 0, code::NONEXISTENT_ENTITY);
            return Err(RxDrop::UnknownEntity);
        };
        let data = check_data(r, data)?;
        let group_timeout = self.cfg.group_timeout;
        // Field access, not local_mut: the counters change while `tx` is held.
        let l = self
            .locals
            .as_mut()
            .get_mut(h.0)
            .ok_or(RxDrop::UnknownEntity)?;
        let tx = &mut l.tx;
        let apg = r.control.has(ctrl::APG);
        if r.transaction != tx.transaction || r.server != tx.server {
            // A late copy of an earlier transaction's Response from the
            // same server (blocks it sent again, or its header after a
            // duplicate of that Request reached it) is dropped quietly: the
            // client had all of it before it moved on, and its newer
            // Request acknowledges it (RFC 1045, section 2.5.3). Answering
            // BAD_TRANSACTION_ID would make the server discard that
            // Response as never acknowledged.
            if r.server == tx.server && tx_diff(r.transaction, tx.transaction) < 0 {
                return Err(RxDrop::Stale);
            }
            self.notify_server(src, r, 0, code::BAD_TRANSACTION_ID);
            return Err(RxDrop::Stale);
        }
        let size = r.segment_len();
        match tx.phase {
            Phase::Awaiting => {
                // The Request has arrived: stop sending it.
                tx.out.left = 0;
                tx.out.probe = false;
                tx.phase = Phase::Receiving;
                tx.resp_size = size;
                tx.resp_code = r.code;
                tx.resp_user = r.user;
                tx.resp_mask = 0;
                tx.retries = 0;
            }
            Phase::Receiving if size != tx.resp_size => return Err(RxDrop::Malformed),
            Phase::Receiving => {}
            Phase::Done => {
                // A duplicate: acknowledge it again if asked to.
                let (mask, transaction) = (tx.resp_mask, tx.transaction);
                self.counters.duplicates = self.counters.duplicates.saturating_add(1);
                if apg {
                    self.notify_server_about(src, r, transaction, mask, code::OK);
                }
                return Err(RxDrop::Stale);
            }
            Phase::Idle => return Err(RxDrop::Stale),
        }
        let fresh = r.packet_delivery & !tx.resp_mask;
        if r.packet_delivery != 0 && fresh == 0 {
            self.counters.duplicates = self.counters.duplicates.saturating_add(1);
        }
        tx.resp_mask |= r.packet_delivery;
        let placements = Placements::new(tx.ctx, r.packet_delivery, size, tx.max, data);
        let (mask, transaction) = (tx.resp_mask, tx.transaction);
        if tx.resp_mask == group::all_blocks(size) {
            let status = TxStatus::Response {
                code: tx.resp_code,
                user: tx.resp_user,
                len: size,
            };
            tx.finish(status);
            self.counters.transactions = self.counters.transactions.saturating_add(1);
            if apg {
                self.notify_server_about(src, r, transaction, mask, code::OK);
            }
        } else {
            tx.deadline = Some(now.saturating_add(group_timeout));
            if apg {
                // The server asks: tell it what is missing at once.
                self.notify_server_about(src, r, transaction, mask, code::RETRY);
            }
        }
        Ok(placements)
    }

    /// NotifyVmtpServer about the Response `r` (for a drop).
    fn notify_server(&mut self, src: Addr, r: &Repr, delivery: u32, rcode: u32) {
        self.notify_server_about(src, r, r.transaction, delivery, rcode);
    }

    fn notify_server_about(
        &mut self,
        src: Addr,
        r: &Repr,
        transaction: u32,
        delivery: u32,
        rcode: u32,
    ) {
        self.push_notify(Notify {
            to: src,
            from: r.client,
            to_client: false,
            about: r.server,
            client: r.client,
            transaction,
            control: 0,
            delivery,
            code: rcode,
            asked: asked(rcode, r.segment_len(), delivery),
        });
    }

    /// A NotifyVmtpClient about client `h`'s Request.
    pub(super) fn client_notify(
        &mut self,
        now: u64,
        h: Handle,
        transaction: u32,
        delivery: u32,
        rcode: u32,
    ) -> Result<(), RxDrop> {
        let rto = self.cfg.response_timeout;
        let l = self
            .local_mut(h, Role::Client)
            .ok_or(RxDrop::UnknownEntity)?;
        let tx = &mut l.tx;
        if tx.transaction != transaction || tx.phase != Phase::Awaiting {
            return Err(RxDrop::Stale);
        }
        let all = group::all_blocks(tx.out.size);
        match rcode {
            code::OK | code::RETRY if delivery & all == all => {
                // Received whole: wait for the Response.
                tx.out.left = 0;
                tx.out.probe = false;
                tx.retries = 0;
                tx.deadline = Some(now.saturating_add(rto));
            }
            code::OK | code::RETRY => {
                tx.out.left = all & !delivery;
                tx.deadline = Some(now.saturating_add(rto));
            }
            code::RETRY_ALL => {
                tx.out.left = all;
                tx.out.probe = all == 0;
                tx.deadline = Some(now.saturating_add(rto));
            }
            code::BUSY => tx.deadline = Some(now.saturating_add(rto)),
            failure => {
                tx.finish(TxStatus::Failed(failure));
                self.counters.failed = self.counters.failed.saturating_add(1);
            }
        }
        self.counters.notifies_received = self.counters.notifies_received.saturating_add(1);
        Ok(())
    }

    /// [`Engine::poll_completion`] for the clients.
    pub(super) fn client_completion(&mut self) -> Option<Completion> {
        self.locals
            .as_mut()
            .iter_mut()
            .enumerate()
            .find_map(|(i, l)| {
                let status = l.tx.completion.take()?;
                Some(Completion::Transaction {
                    client: Handle(i),
                    transaction: l.tx.transaction,
                    cookie: l.tx.out.cookie,
                    ctx: l.tx.ctx,
                    status,
                })
            })
    }

    pub(super) fn client_deadlines(&self) -> impl Iterator<Item = u64> + '_ {
        self.locals.as_ref().iter().filter_map(|l| l.tx.deadline)
    }

    /// [`Engine::handle_timeout`] for the clients.
    pub(super) fn client_timeouts(&mut self, now: u64) {
        let cfg = self.cfg;
        let mut notifies: [Option<Notify>; 4] = [None; 4];
        let mut n = 0usize;
        for l in self.locals.as_mut().iter_mut() {
            let tx = &mut l.tx;
            match tx.deadline {
                Some(d) if d <= now => {}
                _ => continue,
            }
            tx.retries = tx.retries.saturating_add(1);
            match tx.phase {
                Phase::Awaiting if tx.retries > cfg.max_retries => {
                    tx.finish(TxStatus::Failed(code::RETRANS_TIMEOUT));
                    self.counters.failed = self.counters.failed.saturating_add(1);
                }
                Phase::Awaiting => {
                    // TC1: the header again, with APG; the server answers.
                    tx.apg = true;
                    tx.out.probe = true;
                    tx.deadline = Some(now.saturating_add(cfg.response_timeout));
                    self.counters.timeouts = self.counters.timeouts.saturating_add(1);
                }
                Phase::Receiving if tx.retries > cfg.max_retries => {
                    tx.finish(TxStatus::Failed(code::BAD_REPLY_SEGMENT));
                    self.counters.failed = self.counters.failed.saturating_add(1);
                }
                Phase::Receiving => {
                    // TC3: ask for the missing blocks, then give the
                    // server a round trip (TC2, within TC1) to send them.
                    tx.deadline = Some(now.saturating_add(cfg.response_timeout));
                    if let Some(slot) = notifies.get_mut(n) {
                        *slot = Some(Notify {
                            to: tx.addr,
                            from: l.entity,
                            to_client: false,
                            about: tx.server,
                            client: l.entity,
                            transaction: tx.transaction,
                            control: 0,
                            delivery: tx.resp_mask,
                            code: code::RETRY,
                            asked: asked(code::RETRY, tx.resp_size, tx.resp_mask),
                        });
                        n = n.saturating_add(1);
                    } else {
                        // More than fit this round: the next one.
                        tx.deadline = Some(now);
                    }
                }
                Phase::Idle | Phase::Done => tx.deadline = None,
            }
        }
        for note in notifies.into_iter().flatten() {
            self.push_notify(note);
        }
    }
}
