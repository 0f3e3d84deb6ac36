// SPDX-License-Identifier: GPL-2.0
//! The RDMA Reads of one connection, in both directions (RFC 5040 sections 4.8
//! and 6.5): the outstanding-Read queue (ORQ) of local Reads, which bounds
//! them by ORD and matches each Read Response to its Read, and the count of
//! inbound Read Requests not yet answered, bounded by IRD.
//!
//! The transmitter and the receiver share this state, and nothing else of the
//! receive engine: the transmitter records a Read before its Read Request goes
//! out ([`Reads::post_read`]) and frees an IRD slot when a Read Response starts
//! ([`Reads::read_response_started`]); the receiver ([`super::engine`]) reads
//! the ORQ's head for every Read Response segment and counts Read Requests.
//! Kept apart from the engine, it can live under a lock of its own, so that a
//! post never waits for a receiver that is placing a socket's worth of data
//! (siw keeps its ORQ under its own lock, `orq_lock`, for the same reason).

/// An RDMA Read this side issued and has not seen the complete response for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrqEntry {
    /// Our sink STag named in the Read Request.
    pub sink_stag: u32,
    /// Our sink tagged offset.
    pub sink_to: u64,
    /// Read size.
    pub len: u32,
    /// Caller's cookie (work request id), returned on completion.
    pub cookie: u64,
}

/// Why [`Reads::post_read`] refused a Read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrdError {
    /// Negotiated ORD is 0: this side may not issue RDMA Reads.
    NoReads,
    /// ORD Reads are already outstanding.
    Full,
}

/// The Reads of one connection; `S` is caller storage for the ORQ (its length
/// bounds ORD together with the negotiated value).
#[derive(Debug)]
pub struct Reads<S> {
    ird: u16,
    ird_used: u16,
    ord: u16,
    orq: S,
    /// Ring position of the oldest local Read, and how many there are (both
    /// below the ORQ's length, which ORD's `u16` bounds).
    orq_head: u16,
    orq_count: u16,
}

impl<S: AsRef<[OrqEntry]> + AsMut<[OrqEntry]>> Reads<S> {
    /// None outstanding, with the negotiated `ird` (inbound Reads we accept)
    /// and `ord` (outbound Reads we may have outstanding).
    pub fn new(ird: u16, ord: u16, orq: S) -> Self {
        Reads {
            ird,
            ird_used: 0,
            ord,
            orq,
            orq_head: 0,
            orq_count: 0,
        }
    }

    /// None outstanding again, with a new connection's `ird` and `ord`; the
    /// ORQ's storage is kept.
    pub fn reset(&mut self, ird: u16, ord: u16) {
        self.ird = ird;
        self.ird_used = 0;
        self.ord = ord;
        self.orq_head = 0;
        self.orq_count = 0;
    }

    /// Inbound Read Requests whose responses are not yet started.
    #[must_use]
    pub const fn reads_in(&self) -> u16 {
        self.ird_used
    }

    /// Local Reads outstanding.
    #[must_use]
    pub const fn reads_out(&self) -> usize {
        self.orq_count as usize
    }

    /// Records a local RDMA Read before its Read Request is sent (ORD enforcement).
    pub fn post_read(&mut self, e: OrqEntry) -> Result<(), OrdError> {
        let n = self.orq_len();
        let cap = n.min(self.ord);
        if cap == 0 {
            return Err(OrdError::NoReads);
        }
        if self.orq_count >= cap {
            return Err(OrdError::Full);
        }
        // Below 2 * n: no overflow.
        let idx = self
            .orq_head
            .wrapping_add(self.orq_count)
            .checked_rem(n)
            .unwrap_or(0);
        if let Some(slot) = self.orq.as_mut().get_mut(usize::from(idx)) {
            *slot = e;
            self.orq_count = self.orq_count.saturating_add(1);
        }
        Ok(())
    }

    /// The Read Response for one inbound Read Request is leaving the queue of
    /// inbound Reads to be sent: its IRD slot is free. Call this before the
    /// response's first byte goes to the transport, never after its last: the
    /// peer frees its ORD slot as soon as the response arrives and may send
    /// its next Read Request at once, which can reach the receiver before a
    /// transmitter that counted on completion has gone on from the send. (The
    /// responder still holds the request while it sends the response; its
    /// queue of inbound Reads must be able to hold IRD entries besides.)
    pub fn read_response_started(&mut self) {
        self.ird_used = self.ird_used.saturating_sub(1);
    }

    /// The oldest local Read, which the next Read Response answers.
    #[must_use]
    pub fn head(&self) -> Option<OrqEntry> {
        if self.orq_count == 0 {
            return None;
        }
        self.orq.as_ref().get(usize::from(self.orq_head)).copied()
    }

    /// Takes the oldest local Read: its response arrived in full.
    pub fn pop(&mut self) -> Option<OrqEntry> {
        let e = self.head()?;
        let n = self.orq_len();
        self.orq_head = self.orq_head.saturating_add(1).checked_rem(n).unwrap_or(0);
        self.orq_count = self.orq_count.saturating_sub(1);
        Some(e)
    }

    /// The ORQ's usable length: no more than a `u16` counts.
    fn orq_len(&self) -> u16 {
        u16::try_from(self.orq.as_ref().len()).unwrap_or(u16::MAX)
    }

    /// Whether IRD inbound Read Requests are already unanswered: one more is
    /// a protocol violation.
    #[must_use]
    pub const fn ird_full(&self) -> bool {
        self.ird_used >= self.ird
    }

    /// An inbound Read Request arrived whole (after [`Reads::ird_full`] said
    /// it fits).
    pub fn read_request_received(&mut self) {
        self.ird_used = self.ird_used.saturating_add(1);
    }
}
