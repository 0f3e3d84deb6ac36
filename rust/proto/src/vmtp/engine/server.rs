// SPDX-License-Identifier: GPL-2.0
//! The server side of the VMTP [`Engine`] (RFC 1045, section 5): a record per
//! remote client (its current transaction) for duplicate suppression; the
//! Request group received with its delivery mask and missing blocks asked for
//! with NotifyVmtpClient RETRY after TS1; duplicates answered (NotifyVmtpClient
//! OK while processing, the Response again once responded); the Response sent
//! as a paced blast, its header sent again with APG when no acknowledgement
//! comes within TS5; a client's next transaction acknowledging its last
//! Response; the record kept for TS4 afterwards.

use super::super::entity::EntityId;
use super::super::group;
use super::super::wire::{code, ctrl, Code, Function, Repr, HEADER_LEN};
use super::{
    asked, check_data, tx_diff, Addr, Arrival, CallError, Completion, Decision, Ends, Engine,
    Handle, Local, Notify, Outgoing, Placements, Role, RxDrop, Transmit, Upcall,
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Free,
    /// Part of the Request has arrived.
    Receiving,
    /// The Request is with the server's user.
    Processing,
    /// The Response is being sent or waits for its acknowledgement.
    Responded,
    /// Finished (acknowledged, discarded or refused): kept for TS4 to
    /// recognise duplicates.
    Done,
}

/// A server's record of one remote client. Opaque; create with
/// `Csr::default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Csr {
    phase: Phase,
    server: usize,
    client: EntityId,
    addr: Addr,
    transaction: u32,
    req_code: Code,
    req_user: [u8; 12],
    req_size: u32,
    req_mask: u32,
    ctx: u64,
    max: u32,
    /// The code a refused Request was answered with.
    refused: Option<u32>,
    out: Outgoing,
    apg: bool,
    retries: u32,
    deadline: Option<u64>,
    /// Completions to hand out.
    request_ready: bool,
    abandoned: Option<u64>,
    released: Option<(u64, bool)>,
}

impl Csr {
    pub(super) fn has_data(&self) -> bool {
        self.phase == Phase::Responded && self.out.has_data()
    }

    pub(super) fn is_free(&self) -> bool {
        self.phase == Phase::Free && !self.pending()
    }

    fn pending(&self) -> bool {
        self.request_ready || self.abandoned.is_some() || self.released.is_some()
    }

    /// Ends what the record holds (for a new transaction of its client, or
    /// its server closing): an arriving Request is abandoned, a Response
    /// released (acknowledged by the next Request, or not).
    fn end(&mut self, acked: bool) {
        match self.phase {
            Phase::Receiving => self.abandoned = Some(self.ctx),
            Phase::Responded => self.released = Some((self.out.cookie, acked)),
            _ => {}
        }
        self.out.left = 0;
        self.out.probe = false;
    }
}

impl<L, R> Engine<L, R>
where
    L: AsMut<[Local]> + AsRef<[Local]>,
    R: AsMut<[Csr]> + AsRef<[Csr]>,
{
    /// The record of `client`'s `transaction` at server `h`, in `phase`.
    fn csr(
        &mut self,
        phase: Phase,
        h: Handle,
        client: EntityId,
        transaction: u32,
    ) -> Option<&mut Csr> {
        self.csrs.as_mut().iter_mut().find(|c| {
            c.phase == phase
                && c.server == h.0
                && c.client == client
                && c.transaction == transaction
        })
    }

    /// A Request packet to a local server.
    pub(super) fn rx_request<'a, U: Upcall + ?Sized>(
        &mut self,
        now: u64,
        src: Addr,
        r: &Repr,
        data: &'a [u8],
        up: &mut U,
    ) -> Result<Placements<'a>, RxDrop> {
        let Some(h) = self.find_local(r.server, Role::Server) else {
            self.notify_client(src, r, r.server, 0, code::NONEXISTENT_ENTITY);
            return Err(RxDrop::UnknownEntity);
        };
        let data = check_data(r, data)?;
        let size = r.segment_len();
        let apg = r.control.has(ctrl::APG);
        let cfg = self.cfg;
        let csrs = self.csrs.as_mut();
        let found = csrs
            .iter()
            .position(|c| c.phase != Phase::Free && c.server == h.0 && c.client == r.client);
        let i = match found {
            Some(i) => {
                let c = csrs.get_mut(i).ok_or(RxDrop::TableFull)?;
                match tx_diff(r.transaction, c.transaction) {
                    0 => return self.rx_same_transaction(now, src, i, r, size, data, apg),
                    d if d < 0 => return Err(RxDrop::Stale),
                    _ => {}
                }
                // A new transaction acknowledges the last Response.
                if c.pending() {
                    // The caller has not taken the last completions yet.
                    return Err(RxDrop::TableFull);
                }
                c.end(true);
                i
            }
            None => csrs
                .iter()
                .position(Csr::is_free)
                .ok_or(RxDrop::TableFull)?,
        };
        let decision = up.arrival(&Arrival {
            server: h,
            client: r.client,
            transaction: r.transaction,
            code: r.code,
            len: size,
        });
        let c = self.csrs.as_mut().get_mut(i).ok_or(RxDrop::TableFull)?;
        if decision == Decision::Defer {
            // An ended record stays one (its client's last transaction is
            // over); a free slot stays free.
            if found.is_some() {
                c.phase = Phase::Done;
                c.refused = None;
                c.deadline = Some(now.saturating_add(cfg.linger));
            }
            return Err(RxDrop::Deferred);
        }
        let mut req_user = [0u8; 12];
        if let Some(u) = r.user.get(8..) {
            req_user.copy_from_slice(u);
        }
        let released = c.released.take();
        let abandoned = c.abandoned.take();
        *c = Csr {
            phase: Phase::Receiving,
            server: h.0,
            client: r.client,
            addr: src,
            transaction: r.transaction,
            req_code: r.code,
            req_user,
            req_size: size,
            req_mask: 0,
            ctx: 0,
            max: 0,
            refused: None,
            out: Outgoing::default(),
            apg: false,
            retries: 0,
            deadline: Some(now.saturating_add(cfg.group_timeout)),
            request_ready: false,
            abandoned,
            released,
        };
        match decision {
            Decision::Refuse(rcode) => {
                c.phase = Phase::Done;
                c.refused = Some(rcode);
                c.deadline = Some(now.saturating_add(cfg.linger));
                self.notify_client(src, r, r.server, 0, rcode);
                Ok(Placements::NONE)
            }
            Decision::Accept { ctx, max } => {
                c.ctx = ctx;
                c.max = max;
                self.rx_same_transaction(now, src, i, r, size, data, apg)
            }
            Decision::Defer => Err(RxDrop::Deferred),
        }
    }

    /// A packet of the transaction record `i` holds.
    #[allow(clippy::too_many_arguments)]
    fn rx_same_transaction<'a>(
        &mut self,
        now: u64,
        src: Addr,
        i: usize,
        r: &Repr,
        size: u32,
        data: &'a [u8],
        apg: bool,
    ) -> Result<Placements<'a>, RxDrop> {
        let cfg = self.cfg;
        let c = self.csrs.as_mut().get_mut(i).ok_or(RxDrop::Stale)?;
        match c.phase {
            Phase::Receiving => {}
            Phase::Processing => {
                // A retransmission while the user works on it: "got it".
                let all = group::all_blocks(c.req_size);
                self.counters.duplicates = self.counters.duplicates.saturating_add(1);
                self.notify_client(src, r, r.server, all, code::OK);
                return Err(RxDrop::Stale);
            }
            Phase::Responded => {
                // The client missed the Response: its header again, with
                // APG (the client says what it lacks).
                c.out.probe = true;
                c.apg = true;
                c.deadline = Some(now.saturating_add(cfg.ack_timeout));
                self.counters.duplicates = self.counters.duplicates.saturating_add(1);
                return Err(RxDrop::Stale);
            }
            Phase::Done => {
                let refused = c.refused;
                self.counters.duplicates = self.counters.duplicates.saturating_add(1);
                if let Some(rcode) = refused {
                    self.notify_client(src, r, r.server, 0, rcode);
                }
                return Err(RxDrop::Stale);
            }
            Phase::Free => return Err(RxDrop::Stale),
        }
        if size != c.req_size {
            return Err(RxDrop::Malformed);
        }
        let fresh = r.packet_delivery & !c.req_mask;
        if r.packet_delivery != 0 && fresh == 0 {
            self.counters.duplicates = self.counters.duplicates.saturating_add(1);
        }
        c.req_mask |= r.packet_delivery;
        c.addr = src;
        let placements = Placements::new(c.ctx, r.packet_delivery, size, c.max, data);
        let mask = c.req_mask;
        if mask == group::all_blocks(size) {
            c.request_ready = true;
            if c.req_code.has(code::DGM) {
                // A datagram: no Response; the record only filters
                // duplicates.
                c.phase = Phase::Done;
                c.deadline = Some(now.saturating_add(cfg.linger));
            } else {
                c.phase = Phase::Processing;
                c.deadline = None;
            }
            if apg {
                self.notify_client(src, r, r.server, mask, code::OK);
            }
        } else {
            c.deadline = Some(now.saturating_add(cfg.group_timeout));
            if apg {
                self.notify_client(src, r, r.server, mask, code::RETRY);
            }
        }
        Ok(placements)
    }

    /// NotifyVmtpClient about the Request `r` from its server `from`.
    fn notify_client(&mut self, src: Addr, r: &Repr, from: EntityId, delivery: u32, rcode: u32) {
        let mut control = r.control;
        control.function = Function::Response;
        self.push_notify(Notify {
            to: src,
            from,
            to_client: true,
            about: r.client,
            client: r.client,
            transaction: r.transaction,
            control: control.to_word(),
            delivery,
            code: rcode,
            asked: asked(rcode, r.segment_len(), delivery),
        });
    }

    /// Answers the Request `transaction` of `client` at server `h` with a
    /// Response of `len` segment bytes (named `cookie` in the packets to
    /// send), `code` and 20 bytes of user data. Its bytes must stay readable
    /// until [`Completion::ResponseReleased`].
    #[allow(clippy::too_many_arguments)]
    pub fn respond(
        &mut self,
        now: u64,
        h: Handle,
        client: EntityId,
        transaction: u32,
        resp_code: Code,
        user: [u8; 20],
        len: u32,
        cookie: u64,
    ) -> Result<(), CallError> {
        if self.local(h, Role::Server).is_none() {
            return Err(CallError::BadHandle);
        }
        if len > group::MAX_GROUP_BYTES {
            return Err(CallError::TooLong);
        }
        let ack = self.cfg.ack_timeout;
        let c = self
            .csr(Phase::Processing, h, client, transaction)
            .ok_or(CallError::NoRequest)?;
        // Idempotent (DGM) Responses are not implemented: every Response is
        // kept until acknowledged.
        let flags = resp_code.0 & !(code::DGM | code::CMD | code::MDM | code::SDA | code::CRE);
        c.out = Outgoing::new(Code(flags), user, len, cookie);
        c.phase = Phase::Responded;
        c.apg = false;
        c.retries = 0;
        c.deadline = Some(now.saturating_add(ack));
        Ok(())
    }

    /// The next Response packet of some record.
    pub(super) fn poll_server(
        &mut self,
        _now: u64,
        header_buf: &mut [u8; HEADER_LEN],
        data: bool,
    ) -> Option<Transmit> {
        let max_data = self.cfg.max_data();
        let locals = self.locals.as_ref();
        let counters = &mut self.counters;
        for c in self.csrs.as_mut().iter_mut() {
            if c.phase != Phase::Responded {
                continue;
            }
            let ends = Ends {
                client: c.client,
                server: locals.get(c.server).map_or(EntityId(0), |l| l.entity),
                function: Function::Response,
                transaction: c.transaction,
                to: c.addr,
            };
            if let Some(t) = c
                .out
                .transmit(ends, c.apg, max_data, data, header_buf, counters)
            {
                return Some(t);
            }
        }
        None
    }

    /// A NotifyVmtpServer about server `h`'s Response to `client`.
    pub(super) fn server_notify(
        &mut self,
        now: u64,
        h: Handle,
        client: EntityId,
        transaction: u32,
        delivery: u32,
        rcode: u32,
    ) -> Result<(), RxDrop> {
        let cfg = self.cfg;
        let c = self
            .csr(Phase::Responded, h, client, transaction)
            .ok_or(RxDrop::Stale)?;
        let all = group::all_blocks(c.out.size);
        match rcode {
            code::OK | code::RETRY if delivery & all == all => {
                c.end(true);
                c.phase = Phase::Done;
                c.deadline = Some(now.saturating_add(cfg.linger));
            }
            code::OK | code::RETRY => {
                c.out.left = all & !delivery;
                c.deadline = Some(now.saturating_add(cfg.ack_timeout));
            }
            code::RETRY_ALL => {
                c.out.left = all;
                c.out.probe = all == 0;
                c.deadline = Some(now.saturating_add(cfg.ack_timeout));
            }
            _ => {
                // The client will not take it (no such transaction any
                // more, or an error): discard it.
                c.end(false);
                c.phase = Phase::Done;
                c.deadline = Some(now.saturating_add(cfg.linger));
            }
        }
        self.counters.notifies_received = self.counters.notifies_received.saturating_add(1);
        Ok(())
    }

    /// Server `h` closed: its records end.
    pub(super) fn drop_csrs_of(&mut self, h: Handle) {
        for c in self.csrs.as_mut().iter_mut() {
            if c.phase != Phase::Free && c.server == h.0 {
                c.end(false);
                c.phase = Phase::Free;
                c.deadline = None;
            }
        }
    }

    /// [`Engine::poll_completion`] for the servers.
    pub(super) fn server_completion(&mut self) -> Option<Completion> {
        for c in self.csrs.as_mut().iter_mut() {
            let server = Handle(c.server);
            if let Some(ctx) = c.abandoned.take() {
                return Some(Completion::RequestAbandoned { server, ctx });
            }
            if let Some((cookie, acked)) = c.released.take() {
                return Some(Completion::ResponseReleased {
                    server,
                    cookie,
                    acked,
                });
            }
            if core::mem::take(&mut c.request_ready) {
                let len = c.req_size.min(c.max);
                return Some(Completion::Request {
                    server,
                    client: c.client,
                    transaction: c.transaction,
                    code: c.req_code,
                    user: c.req_user,
                    len,
                    ctx: c.ctx,
                });
            }
        }
        None
    }

    pub(super) fn server_deadlines(&self) -> impl Iterator<Item = u64> + '_ {
        self.csrs.as_ref().iter().filter_map(|c| c.deadline)
    }

    /// [`Engine::handle_timeout`] for the servers.
    pub(super) fn server_timeouts(&mut self, now: u64) {
        let cfg = self.cfg;
        let locals = self.locals.as_ref();
        let mut notifies: [Option<Notify>; 4] = [None; 4];
        let mut n = 0usize;
        for c in self.csrs.as_mut().iter_mut() {
            match c.deadline {
                Some(d) if d <= now => {}
                _ => continue,
            }
            match c.phase {
                Phase::Receiving => {
                    c.retries = c.retries.saturating_add(1);
                    if c.retries > cfg.max_retries {
                        c.end(false);
                        c.phase = Phase::Done;
                        c.deadline = Some(now.saturating_add(cfg.linger));
                        continue;
                    }
                    // TS1: ask for the missing blocks.
                    let Some(slot) = notifies.get_mut(n) else {
                        c.deadline = Some(now);
                        continue;
                    };
                    let server = locals.get(c.server).map_or(EntityId(0), |l| l.entity);
                    let control = super::Control::new(Function::Response);
                    *slot = Some(Notify {
                        to: c.addr,
                        from: server,
                        to_client: true,
                        about: c.client,
                        client: c.client,
                        transaction: c.transaction,
                        control: control.to_word(),
                        delivery: c.req_mask,
                        code: code::RETRY,
                        asked: asked(code::RETRY, c.req_size, c.req_mask),
                    });
                    n = n.saturating_add(1);
                    // A round trip for the blocks asked for (the RFC's
                    // TS3, "estimated the same as TC1").
                    c.deadline = Some(now.saturating_add(cfg.response_timeout));
                }
                Phase::Responded => {
                    c.retries = c.retries.saturating_add(1);
                    if c.retries > cfg.max_retries {
                        c.end(false);
                        c.phase = Phase::Done;
                        c.deadline = Some(now.saturating_add(cfg.linger));
                        continue;
                    }
                    // TS5: the header again, with APG.
                    c.out.probe = true;
                    c.apg = true;
                    c.deadline = Some(now.saturating_add(cfg.ack_timeout));
                    self.counters.timeouts = self.counters.timeouts.saturating_add(1);
                }
                Phase::Done => {
                    c.phase = Phase::Free;
                    c.deadline = None;
                }
                Phase::Processing | Phase::Free => c.deadline = None,
            }
        }
        for note in notifies.into_iter().flatten() {
            self.push_notify(note);
        }
    }
}
