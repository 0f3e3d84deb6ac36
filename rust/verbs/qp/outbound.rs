// SPDX-License-Identifier: GPL-2.0
//! A message on its way out: a work request segmented into FPDUs, a batch of
//! them staged at a time and handed to TCP as far as its send buffer takes it.
//!
//! Transmit never waits for the peer. An FPDU is staged whole before its first
//! byte goes out (framing bytes and inline payload copied into [`Staged`], the
//! rest described as ranges of the message's payload, the CRC computed over
//! all of it), then handed to TCP with non-blocking sends straight from the
//! pinned pages. When TCP takes only part of a batch, the rest stays staged
//! and the socket's write-space callback resumes the transmit work, which
//! finishes the batch before anything else: an FPDU cut short would leave the
//! peer unable to parse the stream.
//!
//! A batch is up to [`BATCH_FPDUS`] consecutive FPDUs of one message that
//! each fill a TCP segment exactly, handed to TCP in as few calls as its
//! pieces allow. TCP sends what a call leaves queued when the call returns,
//! so an FPDU per call made a buffer (and a transmit, and a doorbell of the
//! virtual NIC) per segment or two; a batch lets TCP build buffers of many
//! segments, as it does for an application's large write.

use super::{InboundRead, Sge};
use crate::{
    proto::{
        mpa::tx::{TxFramer, TxStep},
        rdmap::{
            tx::{OutboundMessage, WorkRequest},
            MAX_HDR_LEN,
        },
    },
    sys::{
        crc::KernelCrc32c,
        socket::{SendList, TcpSocket},
        zcopy::{Frag, ZcRef},
    },
    verbs::limits,
};
use kernel::prelude::*;

/// Staged bytes one FPDU may need: its framing (length field and header
/// with a leading marker, at most one marker per 512 bytes of the largest
/// FPDU, pad, CRC) and inline payload.
const FPDU_STAGE_BYTES: usize = 512;
/// Staged bytes an FPDU without markers and inline payload may need: length
/// field, the largest header, pad and CRC.
const FRAMING_BYTES: usize = 2 + MAX_HDR_LEN + 3 + 4;
/// Parts one FPDU may need: a framing run and a payload range for each
/// marker interval of the largest FPDU ([`limits::FPDU_BUDGET`] / 512), and
/// the head and trailer.
const FPDU_PARTS: usize = 2 * (limits::FPDU_BUDGET / 512) + 4;
/// Parts an FPDU without markers may need: head, payload, trailer.
const FRAMING_PARTS: usize = 3;
/// FPDUs staged as one batch at most: about 46 KiB at a 1448-byte MSS, most
/// of the 64 KiB TCP builds one buffer of.
pub(super) const BATCH_FPDUS: usize = 32;
/// Staged bytes: an FPDU at its largest, and the framing of the rest of a
/// batch (FPDUs with markers are never batched: see [`Staged::has_room`]).
/// A WRITE's or Read Response's FPDU takes about 23 bytes, a SEND's 26, so
/// 448 bytes more hold a batch of 32 with [`FRAMING_BYTES`] to spare. The
/// staging lives in the QP, which must fit a 4 KiB allocation (`qp.rs`).
const STAGE_BYTES: usize = FPDU_STAGE_BYTES + 448;
/// Parts: an FPDU at its most; a batch without markers takes two per FPDU
/// (its payload, and its trailer run together with the next header), 65 for
/// a batch of 32.
const MAX_PARTS: usize = FPDU_PARTS;

/// What ends when a message's last byte went to TCP.
#[derive(Clone, Copy)]
pub(super) enum Finish {
    /// The SEND or WRITE in this send-queue slot completes.
    Complete(usize),
    /// An RDMA Read Request: its work request completes with the response.
    ReadRequest,
    /// A Read Response: this inbound Read is answered.
    ReadResponse(InboundRead),
    /// A TERMINATE: the connection closes next.
    Terminate,
    /// The RTR message of peer-to-peer start-up.
    Rtr,
}

/// Where a message's payload comes from.
#[derive(Clone, Copy)]
pub(super) enum Source {
    /// No payload.
    None,
    /// The inline bytes of this send-queue slot.
    Inline(usize),
    /// The first `n` elements of the transmit state's [`Payload`], in order.
    Sges(usize),
}

/// The scatter/gather elements of the message under way. They live in the
/// transmit state, not in the message, and are reused from message to
/// message (an array of [`limits::MAX_SGE`] moved with every message cost
/// more than its sending under emulation). The regions stay referenced (and
/// their pages pinned) until the message is sent or abandoned:
/// [`Payload::release`] then drops them.
pub(super) struct Payload {
    sges: [Sge; limits::MAX_SGE],
}

impl Payload {
    pub(super) fn new() -> Self {
        Self { sges: Default::default() }
    }

    /// The elements, for a new message to fill.
    pub(super) fn slots(&mut self) -> &mut [Sge; limits::MAX_SGE] {
        &mut self.sges
    }

    /// Drops the references to the regions of the message that ended.
    pub(super) fn release(&mut self) {
        for s in self.sges.iter_mut().filter(|s| s.mr.is_some()) {
            s.mr = None;
        }
    }

    /// The first `n` elements.
    fn of(&self, source: Source) -> &[Sge] {
        match source {
            Source::Sges(n) => self.sges.get(..n).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Whether a region of the payload lost its STag (deregistered or
    /// invalidated) since the message started.
    fn revoked(&self, source: Source) -> bool {
        self.of(source).iter().any(|s| s.mr.as_ref().is_some_and(|m| !m.is_valid()))
    }

    /// Calls `f` with the mapped pieces of message bytes `[at, at + len)`.
    fn read_pieces(&self, source: Source, at: usize, len: usize, mut f: impl FnMut(&[u8]) -> Result) -> Result {
        self.walk(source, at, len, |sge, addr, n| sge.mr.as_ref().ok_or(EINVAL)?.read_pieces(addr, n, &mut f))
    }

    /// Adds the page slices of message bytes `[at, at + len)` to `list`
    /// (`ENOSPC` when it fills up part way).
    fn push_pages<'a>(&'a self, source: Source, at: usize, len: usize, list: &mut SendList<'a>) -> Result {
        self.walk(source, at, len, |sge, addr, n| {
            sge.mr.as_ref().ok_or(EINVAL)?.page_slices(addr, n, |p| list.push_page(p))
        })
    }

    /// Calls `f(sge, address, length)` for the pieces of each element that
    /// hold message bytes `[at, at + len)`.
    fn walk<'a>(
        &'a self,
        source: Source,
        at: usize,
        len: usize,
        mut f: impl FnMut(&'a Sge, u64, usize) -> Result,
    ) -> Result {
        let Source::Sges(n) = source else {
            return if len == 0 { Ok(()) } else { Err(EINVAL) };
        };
        let end = at.checked_add(len).ok_or(EINVAL)?;
        let (mut pos, mut cur) = (0usize, at);
        for s in self.sges.get(..n).ok_or(EINVAL)? {
            let s_end = pos + s.len as usize;
            if cur < s_end && cur < end {
                let k = (s_end - cur).min(end - cur);
                f(s, s.addr + (cur - pos) as u64, k)?;
                cur += k;
            }
            pos = s_end;
        }
        if cur == end {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }
}

/// One part of a staged FPDU, in wire order.
#[derive(Clone, Copy, Debug)]
enum Part {
    /// Staged bytes `start..start + len`.
    Bytes { start: u16, len: u16 },
    /// Message payload bytes `at..at + len`, sent from the source's pages.
    Payload { at: u32, len: u16 },
}

impl Part {
    fn len(&self) -> usize {
        match *self {
            Part::Bytes { len, .. } | Part::Payload { len, .. } => usize::from(len),
        }
    }
}

/// A batch of FPDUs ready to go, and how much of it TCP has taken.
pub(super) struct Staged {
    bytes: [u8; STAGE_BYTES],
    nbytes: usize,
    parts: [Part; MAX_PARTS],
    nparts: usize,
    /// The batch's length on the wire, and the bytes of it TCP took.
    total: usize,
    sent: usize,
    /// FPDUs in the batch, and the wire length of its last.
    fpdus: usize,
    last_len: usize,
    /// Payload bytes in the batch (counted as sent once all of it is).
    payload: usize,
    /// More FPDUs of the same message follow the batch (`MSG_MORE`).
    more: bool,
    /// A zero-copy batch's framing bytes, copied from `bytes` into memory
    /// that TCP may keep referencing (`bytes` is reused by the next batch).
    frag: Option<Frag>,
}

impl Staged {
    pub(super) fn new() -> Self {
        Self {
            bytes: [0; STAGE_BYTES],
            nbytes: 0,
            parts: [Part::Bytes { start: 0, len: 0 }; MAX_PARTS],
            nparts: 0,
            total: 0,
            sent: 0,
            fpdus: 0,
            last_len: 0,
            payload: 0,
            more: false,
            frag: None,
        }
    }

    pub(super) fn clear(&mut self) {
        self.nbytes = 0;
        self.nparts = 0;
        self.total = 0;
        self.sent = 0;
        self.fpdus = 0;
        self.last_len = 0;
        self.payload = 0;
        self.more = false;
        self.frag = None;
    }

    /// Whether another FPDU fits into the batch: any FPDU into an empty one,
    /// else one without markers (a message with markers goes an FPDU at a
    /// time: their FPDUs seldom fill a segment exactly anyway).
    fn has_room(&self, markers: bool) -> bool {
        self.fpdus == 0
            || (!markers
                && self.fpdus < BATCH_FPDUS
                && STAGE_BYTES - self.nbytes >= FRAMING_BYTES
                && MAX_PARTS - self.nparts >= FRAMING_PARTS)
    }

    fn push_part(&mut self, p: Part) -> Result {
        // Framing bytes that follow framing bytes extend the run.
        if let (Part::Bytes { len, .. }, Some(Part::Bytes { len: last, .. })) =
            (p, self.nparts.checked_sub(1).and_then(|i| self.parts.get_mut(i)))
        {
            *last += len;
        } else {
            *self.parts.get_mut(self.nparts).ok_or(EINVAL)? = p;
            self.nparts += 1;
        }
        self.total += p.len();
        Ok(())
    }

    /// Stages `b` (framing bytes).
    fn push_bytes(&mut self, b: &[u8]) -> Result {
        self.stage_with(b.len(), |d| {
            d.copy_from_slice(b);
            Ok(())
        })
    }

    /// Stages `len` bytes that `fill` writes (inline payload).
    fn stage_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8]) -> Result) -> Result {
        let start = self.nbytes;
        let end = start.checked_add(len).ok_or(EINVAL)?;
        fill(self.bytes.get_mut(start..end).ok_or(EINVAL)?)?;
        self.nbytes = end;
        self.push_part(Part::Bytes {
            start: u16::try_from(start).map_err(|_| EINVAL)?,
            len: u16::try_from(len).map_err(|_| EINVAL)?,
        })
    }

    /// Hands what is left of the batch to TCP; returns whether all of it went
    /// (otherwise TCP's send buffer is full: wait for write space). With
    /// `zc` the batch goes zero-copy: its framing from a [`Frag`], its payload
    /// straight from the pages. Without memory for the fragment it is copied.
    fn push(&mut self, sock: &TcpSocket, payload: &Payload, source: Source, zc: Option<ZcRef<'_>>) -> Result<bool> {
        if zc.is_some() && self.sent == 0 && self.frag.is_none() {
            self.frag = self.bytes.get(..self.nbytes).and_then(Frag::copy_of);
        }
        let (bytes, zc) = match &self.frag {
            Some(f) => (f.as_slice(), zc),
            None => (&self.bytes[..], None),
        };
        while self.sent < self.total {
            let mut list = SendList::new();
            let mut skip = self.sent;
            for p in self.parts.get(..self.nparts).ok_or(EINVAL)? {
                let plen = p.len();
                if skip >= plen {
                    skip -= plen;
                    continue;
                }
                let r = match *p {
                    Part::Bytes { start, len } => {
                        let b = bytes.get(usize::from(start)..usize::from(start) + usize::from(len));
                        list.push_bytes(b.ok_or(EINVAL)?.get(skip..).unwrap_or(&[]))
                    }
                    Part::Payload { at, len } => {
                        payload.push_pages(source, at as usize + skip, usize::from(len) - skip, &mut list)
                    }
                };
                skip = 0;
                match r {
                    Ok(()) if !list.is_full() => {}
                    Ok(()) => break,
                    // The list filled up inside the part: send what it holds.
                    Err(e) if e == ENOSPC => break,
                    Err(e) => return Err(e),
                }
            }
            let want = list.len();
            if want == 0 {
                // Parts shorter than `total` says: a bug, not a reason to spin.
                return Err(EINVAL);
            }
            let last = self.sent + want == self.total;
            // An FPDU that fills a segment exactly lets the next one share
            // TCP's buffer: TCP cuts a buffer into segments at multiples of
            // the MSS, so each segment still holds one whole FPDU, and a
            // message goes out as a few large buffers (GSO) instead of one
            // buffer per FPDU. A shorter FPDU (a message's last, or any after
            // the MSS changed) ends a record: the next starts a new segment.
            // Only a batch's last FPDU can be shorter (`Outbound::stage_batch`).
            let eor = last && self.last_len != sock.mss();
            let n = sock.send_list(&list, !last || self.more, eor, zc)?;
            self.sent += n;
            if n < want {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A message being sent: its segmentation state, payload source and what
/// its end finishes. Its FPDU staged now is the transmit state's
/// [`Staged`], and its regions the transmit state's [`Payload`].
pub(super) struct Outbound {
    msg: OutboundMessage,
    /// Payload bytes of the whole message.
    len: u32,
    source: Source,
    finish: Finish,
}

/// How far [`Outbound::send`] got.
#[derive(Clone, Copy)]
pub(super) enum Progress {
    /// All of the message went to TCP.
    Sent(Finish),
    /// TCP's send buffer is full: the write-space callback resumes it.
    Blocked,
    /// Between two FPDUs `stop` said to give the message up.
    Stopped,
    /// A Read Response's source region was deregistered or invalidated: no
    /// more of it may go out (RFC 5040 section 8, the STag's access ended).
    Revoked(InboundRead),
    /// The caller's FPDU budget is spent, between two FPDUs: the rest of the
    /// message waits for the next run of the transmit work.
    Yield,
}

/// Transmit state that `Outbound` works on: the MPA framer (stream position
/// for markers), the largest ULPDU, the FPDU staged now and the payload's
/// regions.
pub(super) struct Framing<'a> {
    pub(super) framer: &'a mut TxFramer,
    pub(super) max_ulpdu: u16,
    pub(super) staged: &'a mut Staged,
    pub(super) payload: &'a Payload,
}

impl Outbound {
    /// Starts `wr` with payload from `source`, taking the next MSN of its
    /// queue from `queues`. The caller clears [`Staged`] (nothing of an
    /// earlier message may stay staged).
    pub(super) fn new(
        wr: WorkRequest,
        queues: &mut crate::proto::ddp::TxQueues,
        source: Source,
        finish: Finish,
    ) -> Self {
        Self {
            msg: OutboundMessage::new(wr, queues),
            len: wr.payload_len(),
            source,
            finish,
        }
    }

    /// What the message's end finishes.
    pub(super) fn finish(&self) -> Finish {
        self.finish
    }

    /// Sends as much of the message as TCP takes. `inline(slot, at, dst)`
    /// copies inline payload bytes; `stop()` is asked between batches whether
    /// to give the message up; `sent(payload, fpdus, zerocopy)` is told of every batch
    /// that went out whole. Each FPDU that went out takes one from `budget`;
    /// at zero it stops between batches ([`Progress::Yield`]).
    pub(super) fn send(
        &mut self,
        sock: &TcpSocket,
        fr: &mut Framing<'_>,
        zc: Option<ZcRef<'_>>,
        inline: &dyn Fn(usize, usize, &mut [u8]) -> Result,
        stop: &dyn Fn() -> bool,
        sent: &dyn Fn(usize, usize, bool),
        budget: &mut usize,
    ) -> Result<Progress> {
        loop {
            if !fr.staged.push(sock, fr.payload, self.source, zc)? {
                return Ok(Progress::Blocked);
            }
            if fr.staged.fpdus != 0 {
                sent(fr.staged.payload, fr.staged.fpdus, fr.staged.frag.is_some());
                *budget = budget.saturating_sub(fr.staged.fpdus);
                fr.staged.clear();
            }
            if stop() {
                return Ok(Progress::Stopped);
            }
            if let Finish::ReadResponse(ir) = self.finish {
                if fr.payload.revoked(self.source) {
                    return Ok(Progress::Revoked(ir));
                }
            }
            if *budget == 0 {
                return Ok(Progress::Yield);
            }
            if !self.stage_batch(fr, inline, *budget, sock.mss())? {
                return Ok(Progress::Sent(self.finish));
            }
        }
    }

    /// Stages the next batch: FPDUs while they fit, at most `budget` of them,
    /// up to the first that does not fill a segment of `mss` bytes exactly
    /// (only a batch's last FPDU may end a TCP record). `false` when the
    /// message has none left.
    fn stage_batch(
        &mut self,
        fr: &mut Framing<'_>,
        inline: &dyn Fn(usize, usize, &mut [u8]) -> Result,
        budget: usize,
        mss: usize,
    ) -> Result<bool> {
        let markers = fr.framer.markers_on();
        while fr.staged.fpdus < budget && fr.staged.has_room(markers) {
            if !self.stage_next(fr, inline)? || fr.staged.last_len != mss {
                break;
            }
        }
        Ok(fr.staged.fpdus != 0)
    }

    /// Stages the next FPDU behind the batch's; `false` when the message has
    /// none left.
    fn stage_next(&mut self, fr: &mut Framing<'_>, inline: &dyn Fn(usize, usize, &mut [u8]) -> Result) -> Result<bool> {
        let Some(seg) = self.msg.next_segment(fr.max_ulpdu) else {
            return Ok(false);
        };
        let crc = KernelCrc32c;
        let mut hdr = [0u8; MAX_HDR_LEN];
        let hlen = seg.header.emit(&mut hdr).ok_or(EINVAL)?;
        let seg_end = seg.payload_offset + u32::from(seg.payload_len);
        let crc_on = fr.framer.crc_on();
        let mut fpdu = fr.framer.fpdu(hdr.get(..hlen).ok_or(EINVAL)?, seg.payload_len).map_err(|_| EINVAL)?;
        let st = &mut *fr.staged;
        let start_total = st.total;
        st.more = seg_end < self.len;
        st.payload += usize::from(seg.payload_len);
        loop {
            match fpdu.next(&crc).map_err(|_| EINVAL)? {
                TxStep::Head(c) | TxStep::Marker(c) | TxStep::Trailer(c) => st.push_bytes(c.as_slice())?,
                TxStep::Payload { offset, len } => {
                    let at = seg.payload_offset as usize + usize::from(offset);
                    let n = usize::from(len);
                    if let Source::Inline(slot) = self.source {
                        let start = st.nbytes;
                        st.stage_with(n, |d| inline(slot, at, d))?;
                        if crc_on {
                            let b = st.bytes.get(start..start + n).ok_or(EINVAL)?;
                            fpdu.feed_payload(&crc, b).map_err(|_| EINVAL)?;
                        }
                    } else {
                        if crc_on {
                            fr.payload.read_pieces(self.source, at, n, |piece| {
                                fpdu.feed_payload(&crc, piece).map_err(|_| EINVAL)
                            })?;
                        }
                        st.push_part(Part::Payload { at: u32::try_from(at).map_err(|_| EINVAL)?, len })?;
                    }
                }
                TxStep::Done => break,
            }
        }
        st.fpdus += 1;
        st.last_len = st.total - start_total;
        Ok(true)
    }
}
