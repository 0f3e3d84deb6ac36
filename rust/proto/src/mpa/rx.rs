// SPDX-License-Identifier: GPL-2.0
//! Incremental MPA receive framer (RFC 5044 sections 4, 6.2).
//!
//! Feed it TCP bytes in chunks of any size (one byte at a time works) with
//! [`RxFramer::feed`]; each call consumes a prefix of the chunk and yields at most one
//! [`RxEvent`]:
//!
//! 1. [`RxEvent::Header`]: the DDP/RDMAP header, parsed. Header bytes are buffered
//!    internally (up to [`MAX_HDR_LEN`]), so a header may straddle chunks.
//! 2. [`RxEvent::Payload`]: a slice *of the caller's chunk* holding ULPDU payload, its
//!    position in the chunk and its offset inside the segment's payload. A kernel
//!    `tcp_read_sock` actor copies exactly these bytes into the placement target; no
//!    payload byte is copied here. Markers are skipped, so one chunk may yield several
//!    payload events.
//! 3. [`RxEvent::End`]: end of the FPDU; the CRC matched (or CRC is off).
//!
//! Errors carry the TERMINATE code and are sticky. The ULPDU length is checked against
//! the minimum (control word) before the control word is read, and against the opcode's
//! header length before any further header field is read.

use super::super::crc::{finish, from_wire, to_wire, Crc32c, CRC32C_INIT};
use super::super::ddp::{self, Ctrl};
use super::super::rdmap::{self, Header, Opcode, TermCode, MAX_HDR_LEN};
use super::{pad_len, LEN_FIELD, MARKER_INTERVAL, MARKER_LEN};

/// One step of receive progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxEvent<'a> {
    /// A complete, parsed segment header.
    Header {
        /// The header.
        header: Header,
        /// The FPDU's ULPDU length.
        ulpdu_len: u16,
        /// Payload bytes that follow the header in this FPDU.
        payload_len: u16,
    },
    /// Payload bytes inside the chunk passed to [`RxFramer::feed`].
    Payload {
        /// The bytes (borrowed from the chunk).
        data: &'a [u8],
        /// Where `data` starts in the chunk.
        input_offset: usize,
        /// Offset of `data` within this segment's payload (add the placement's TO or
        /// MO to get the message position).
        seg_offset: u16,
    },
    /// The FPDU ended and its CRC verified (or CRC is not in use).
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Len,
    Hdr,
    Payload,
    Pad,
    Crc,
}

/// Receive framer state for one direction of a connection.
#[derive(Debug, Clone)]
pub struct RxFramer {
    crc_on: bool,
    markers_on: bool,
    failed: Option<TermCode>,
    /// After a CRC failure: the CRC the FPDU carried and the one computed.
    bad_crc: Option<(u32, u32)>,
    phase: Phase,
    /// Stream position modulo the marker interval.
    mpos: u16,
    marker: [u8; MARKER_LEN],
    marker_have: usize,
    marker_start: u32,
    /// Bytes of the current FPDU seen so far, markers included.
    fpdu_pos: u32,
    /// `fpdu_pos` of the length field's first byte.
    len_pos: Option<u32>,
    small: [u8; 4],
    small_have: usize,
    ulpdu_len: u16,
    hdr: [u8; MAX_HDR_LEN],
    hdr_have: usize,
    hdr_need: usize,
    payload_len: u16,
    payload_done: u16,
    pad_left: usize,
    reg: u32,
}

impl RxFramer {
    /// A framer positioned at the first byte of the first FPDU of the direction
    /// (right after the MPA Request or Reply), with CRC checking and marker removal
    /// as negotiated.
    #[must_use]
    pub const fn new(crc_on: bool, markers_on: bool) -> Self {
        RxFramer {
            crc_on,
            markers_on,
            failed: None,
            bad_crc: None,
            phase: Phase::Len,
            mpos: 0,
            marker: [0; MARKER_LEN],
            marker_have: 0,
            marker_start: 0,
            fpdu_pos: 0,
            len_pos: None,
            small: [0; 4],
            small_have: 0,
            ulpdu_len: 0,
            hdr: [0; MAX_HDR_LEN],
            hdr_have: 0,
            hdr_need: 0,
            payload_len: 0,
            payload_done: 0,
            pad_left: 0,
            reg: CRC32C_INIT,
        }
    }

    /// Whether the framer is between FPDUs.
    #[must_use]
    pub fn at_boundary(&self) -> bool {
        self.phase == Phase::Len && self.small_have == 0 && self.marker_have == 0
    }

    /// After a failure of the FPDU's CRC (`TermCode::LlpCrc`): the CRC it
    /// carried and the one computed over it, as numbers (for tracing).
    #[must_use]
    pub fn bad_crc(&self) -> Option<(u32, u32)> {
        self.bad_crc
    }

    /// After a failure found in a complete segment header (by
    /// [`Header::parse`]): the header as received, from its control word,
    /// and the FPDU's ULPDU length, for the TERMINATE's copy of the
    /// offending header (RFC 5040 section 4.8). `None` for failures found
    /// before the header was complete (lengths, versions, opcode) or after
    /// it (CRC, markers).
    #[must_use]
    pub fn failed_header(&self) -> Option<(&[u8], u16)> {
        let whole = self.phase == Phase::Hdr
            && self.hdr_need > ddp::CTRL_LEN
            && self.hdr_have >= self.hdr_need;
        if self.failed.is_some() && whole {
            Some((self.hdr.get(..self.hdr_need)?, self.ulpdu_len))
        } else {
            None
        }
    }

    fn advance(&mut self, n: usize) {
        let n16 = (n % 512) as u16;
        self.mpos = self.mpos.wrapping_add(n16) % MARKER_INTERVAL;
        self.fpdu_pos = self
            .fpdu_pos
            .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
    }

    fn fail(&mut self, code: TermCode) -> TermCode {
        self.failed = Some(code);
        code
    }

    fn reset_fpdu(&mut self) {
        self.phase = Phase::Len;
        self.small_have = 0;
        self.fpdu_pos = 0;
        self.len_pos = None;
        self.reg = CRC32C_INIT;
    }

    /// Consumes a prefix of `input`; returns how many bytes were consumed and the
    /// event they completed, if any. With `(n, None)` all of `input` was consumed.
    pub fn feed<'a, C: Crc32c>(
        &mut self,
        crc: &C,
        input: &'a [u8],
    ) -> Result<(usize, Option<RxEvent<'a>>), TermCode> {
        let mut off = 0usize;
        loop {
            if let Some(code) = self.failed {
                return Err(code);
            }
            let rest = input.get(off..).unwrap_or(&[]);
            if rest.is_empty() {
                return Ok((off, None));
            }
            if self.markers_on && (self.marker_have > 0 || self.mpos == 0) {
                off = off.saturating_add(self.take_marker(crc, rest)?);
                continue;
            }
            if let Some((used, ev)) = self.whole_header(crc, rest) {
                return Ok((off.saturating_add(used), Some(ev)));
            }
            let avail = if self.markers_on {
                rest.len()
                    .min(usize::from(MARKER_INTERVAL.saturating_sub(self.mpos)))
            } else {
                rest.len()
            };
            let (used, ev) = self.step(crc, rest, avail, off)?;
            off = off.saturating_add(used);
            if ev.is_some() {
                return Ok((off, ev));
            }
        }
    }

    /// The fast path of an FPDU's start, without markers: when its length
    /// field and whole header are in `rest`, parses them straight from it
    /// and leaves the framer where [`Self::step`] would after the header,
    /// with the same event. `None` (nothing consumed) when they are not all
    /// there, or anything about them is wrong: the byte-wise path then
    /// takes them and fails exactly as it always does.
    fn whole_header<'a, C: Crc32c>(
        &mut self,
        crc: &C,
        rest: &[u8],
    ) -> Option<(usize, RxEvent<'a>)> {
        if self.markers_on || self.phase != Phase::Len || self.small_have != 0 {
            return None;
        }
        let ulpdu_len = u16::from_be_bytes([*rest.first()?, *rest.get(1)?]);
        let seg = rest.get(LEN_FIELD..)?;
        let ctrl = Ctrl::parse(seg)?;
        // A TERMINATE's header is as long as its attachments: the byte-wise
        // path sizes it.
        if Opcode::from_raw(ctrl.opcode()) == Opcode::Terminate {
            return None;
        }
        let hlen = rdmap::header_len(ctrl).ok()?;
        if usize::from(ulpdu_len) < hlen {
            return None;
        }
        let header = Header::parse(seg.get(..hlen)?, ulpdu_len).ok()?;
        let used = LEN_FIELD.saturating_add(hlen);
        let head = rest.get(..used)?;
        let hlen16 = u16::try_from(hlen).ok()?;
        // Nothing can fail from here on: the state changes only now.
        if self.crc_on {
            self.reg = crc.update(self.reg, head);
        }
        self.len_pos = Some(self.fpdu_pos);
        self.advance(used);
        self.ulpdu_len = ulpdu_len;
        self.hdr_have = hlen;
        self.hdr_need = hlen;
        self.payload_len = ulpdu_len.saturating_sub(hlen16);
        self.payload_done = 0;
        self.enter_payload_or_pad();
        Some((
            used,
            RxEvent::Header {
                header,
                ulpdu_len,
                payload_len: self.payload_len,
            },
        ))
    }

    fn take_marker<C: Crc32c>(&mut self, crc: &C, rest: &[u8]) -> Result<usize, TermCode> {
        if self.marker_have == 0 {
            self.marker_start = self.fpdu_pos;
        }
        let n = MARKER_LEN.saturating_sub(self.marker_have).min(rest.len());
        let end = self.marker_have.saturating_add(n);
        if let (Some(d), Some(s)) = (self.marker.get_mut(self.marker_have..end), rest.get(..n)) {
            d.copy_from_slice(s);
            if self.crc_on {
                self.reg = crc.update(self.reg, s);
            }
        }
        self.marker_have = end;
        self.advance(n);
        if self.marker_have == MARKER_LEN {
            self.marker_have = 0;
            let expect = self
                .len_pos
                .map_or(0, |lp| self.marker_start.saturating_sub(lp));
            let got = u32::from(u16::from_be_bytes([self.marker[2], self.marker[3]]));
            if got != expect {
                return Err(self.fail(TermCode::LlpMarker));
            }
        }
        Ok(n)
    }

    /// Processes up to `avail` bytes of `rest` in the current phase.
    fn step<'a, C: Crc32c>(
        &mut self,
        crc: &C,
        rest: &'a [u8],
        avail: usize,
        off: usize,
    ) -> Result<(usize, Option<RxEvent<'a>>), TermCode> {
        match self.phase {
            Phase::Len => {
                if self.small_have == 0 {
                    self.len_pos = Some(self.fpdu_pos);
                }
                let n = self.take_small(crc, rest, avail, 2, true);
                if self.small_have == 2 {
                    self.ulpdu_len = u16::from_be_bytes([self.small[0], self.small[1]]);
                    if usize::from(self.ulpdu_len) < ddp::CTRL_LEN {
                        return Err(self.fail(TermCode::LlpUlpduTooShort));
                    }
                    self.phase = Phase::Hdr;
                    self.hdr_have = 0;
                    self.hdr_need = ddp::CTRL_LEN;
                }
                Ok((n, None))
            }
            Phase::Hdr => {
                let n = self.hdr_need.saturating_sub(self.hdr_have).min(avail);
                let end = self.hdr_have.saturating_add(n);
                if let (Some(d), Some(s)) = (self.hdr.get_mut(self.hdr_have..end), rest.get(..n)) {
                    d.copy_from_slice(s);
                    if self.crc_on {
                        self.reg = crc.update(self.reg, s);
                    }
                }
                self.hdr_have = end;
                self.advance(n);
                if self.hdr_have < self.hdr_need {
                    return Ok((n, None));
                }
                if self.hdr_need == ddp::CTRL_LEN {
                    let ctrl = Ctrl::parse(&self.hdr).ok_or(TermCode::LlpUlpduTooShort);
                    let base = match ctrl.and_then(rdmap::header_len) {
                        Ok(b) => b,
                        Err(e) => return Err(self.fail(e)),
                    };
                    let ulpdu = usize::from(self.ulpdu_len);
                    if ulpdu < base {
                        return Err(self.fail(TermCode::LlpUlpduTooShort));
                    }
                    let is_term =
                        ctrl.map(|c| Opcode::from_raw(c.opcode())) == Ok(Opcode::Terminate);
                    self.hdr_need = if is_term {
                        ulpdu.min(MAX_HDR_LEN)
                    } else {
                        base
                    };
                    if self.hdr_have < self.hdr_need {
                        return Ok((n, None));
                    }
                }
                let hdr_bytes = self.hdr.get(..self.hdr_need).unwrap_or(&[]);
                let header = match Header::parse(hdr_bytes, self.ulpdu_len) {
                    Ok(h) => h,
                    Err(e) => return Err(self.fail(e)),
                };
                let hlen = u16::try_from(self.hdr_need).unwrap_or(u16::MAX);
                self.payload_len = self.ulpdu_len.saturating_sub(hlen);
                self.payload_done = 0;
                self.enter_payload_or_pad();
                Ok((
                    n,
                    Some(RxEvent::Header {
                        header,
                        ulpdu_len: self.ulpdu_len,
                        payload_len: self.payload_len,
                    }),
                ))
            }
            Phase::Payload => {
                let left = usize::from(self.payload_len.saturating_sub(self.payload_done));
                let n = left.min(avail);
                let data = rest.get(..n).unwrap_or(&[]);
                if self.crc_on {
                    self.reg = crc.update(self.reg, data);
                }
                self.advance(n);
                let seg_offset = self.payload_done;
                self.payload_done = self
                    .payload_done
                    .saturating_add(u16::try_from(n).unwrap_or(u16::MAX));
                if self.payload_done >= self.payload_len {
                    self.enter_pad();
                }
                Ok((
                    n,
                    Some(RxEvent::Payload {
                        data,
                        input_offset: off,
                        seg_offset,
                    }),
                ))
            }
            Phase::Pad => {
                if self.pad_left == 0 {
                    self.phase = Phase::Crc;
                    self.small_have = 0;
                    return Ok((0, None));
                }
                let n = self.pad_left.min(avail);
                if let (Some(s), true) = (rest.get(..n), self.crc_on) {
                    self.reg = crc.update(self.reg, s);
                }
                self.pad_left = self.pad_left.saturating_sub(n);
                self.advance(n);
                Ok((n, None))
            }
            Phase::Crc => {
                let n = self.take_small(crc, rest, avail, 4, false);
                if self.small_have < 4 {
                    return Ok((n, None));
                }
                let computed = finish(self.reg);
                if self.crc_on && to_wire(computed) != self.small {
                    self.bad_crc = Some((from_wire(self.small), computed));
                    return Err(self.fail(TermCode::LlpCrc));
                }
                self.reset_fpdu();
                Ok((n, Some(RxEvent::End)))
            }
        }
    }

    fn enter_payload_or_pad(&mut self) {
        if self.payload_len > 0 {
            self.phase = Phase::Payload;
        } else {
            self.enter_pad();
        }
    }

    fn enter_pad(&mut self) {
        self.phase = Phase::Pad;
        self.pad_left = pad_len(self.ulpdu_len);
    }

    /// Accumulates up to `want` bytes into the small buffer (length field or CRC).
    fn take_small<C: Crc32c>(
        &mut self,
        crc: &C,
        rest: &[u8],
        avail: usize,
        want: usize,
        feed_crc: bool,
    ) -> usize {
        let n = want.saturating_sub(self.small_have).min(avail);
        let end = self.small_have.saturating_add(n);
        if let (Some(d), Some(s)) = (self.small.get_mut(self.small_have..end), rest.get(..n)) {
            d.copy_from_slice(s);
            if feed_crc && self.crc_on {
                self.reg = crc.update(self.reg, s);
            }
        }
        self.small_have = end;
        self.advance(n);
        n
    }
}
