// SPDX-License-Identifier: GPL-2.0
//! Completion queues.
//!
//! A CQ is a fixed ring of work completions, filled by its queue pairs (from the
//! receive and transmit work items and from ioctls that flush) and emptied by
//! `POLL_CQ`. Arming it (`REQ_NOTIFY_CQ`) asks for one notification at the next
//! completion (or the next solicited or error completion). Overflow is an
//! error: the completion is lost, the CQ is marked and reported once.
//!
//! Notifications go through one interface, [`CqNotify`]: for a file, the
//! context's event queue (`SRNIC_EVENT_CQ` and `SRNIC_EVENT_CQ_ERROR` for its
//! readers, see `events.rs`); for a kernel client, its completion callback.

use crate::uapi::{SrnicWc, SRNIC_CQ_NEXT_COMP, SRNIC_CQ_SOLICITED, SRNIC_WC_SOLICITED, SRNIC_WC_SUCCESS};
use crate::sys::gfp::ACCOUNTED;
use crate::verbs::budget::{self, Budget, Charge};
use crate::verbs::stats::{Live, Object};
use crate::proto::ring::Ring;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    alloc::KVVec,
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

/// The CQ's mutable state.
struct Inner {
    wcs: Ring<KVVec<SrnicWc>>,
    /// `SRNIC_CQ_*` flags of the pending arming, 0 when not armed.
    armed: u32,
    overflowed: bool,
}

/// Where a CQ's notifications go. Called without the CQ's lock, from the
/// context that added the completion (process context).
pub(crate) trait CqNotify: Send + Sync {
    /// The armed CQ `cq` got a completion its arming asked for.
    fn completion(&self, cq: u32);
    /// The CQ `cq` overflowed: a completion was lost (reported once).
    fn overflow(&self, cq: u32);
}

/// A completion queue.
#[pin_data]
pub(crate) struct Cq {
    /// The CQ's handle (reported in its events).
    pub(crate) handle: u32,
    #[pin]
    inner: SpinLock<Inner>,
    notify: Arc<dyn CqNotify>,
    /// Queue pairs using this CQ.
    pub(crate) users: AtomicU32,
    _charge: Charge,
    _live: Live,
}

impl Cq {
    /// What a CQ of `cqe` entries takes.
    pub(crate) fn footprint(cqe: usize) -> Result<usize> {
        budget::sum(&[budget::arc::<Self>(), budget::array::<SrnicWc>(cqe)?])
    }

    /// A CQ with room for `cqe` completions, charged to `budget`.
    pub(crate) fn new(handle: u32, cqe: usize, notify: Arc<dyn CqNotify>, budget: &Arc<Budget>) -> Result<Arc<Self>> {
        let charge = budget.charge(Self::footprint(cqe)?)?;
        let wcs = KVVec::from_elem(SrnicWc::default(), cqe, ACCOUNTED)?;
        Arc::pin_init(
            pin_init!(Self {
                handle,
                inner <- new_spinlock!(Inner { wcs: Ring::new(wcs), armed: 0, overflowed: false }, "srnic_cq"),
                notify,
                users: AtomicU32::new(0),
                _charge: charge,
                _live: Live::new(Object::Cq),
            }),
            ACCOUNTED,
        )
    }

    /// Adds a completion; fires an armed notification that it matches.
    pub(crate) fn push(&self, wc: SrnicWc) {
        let (notify, overflow) = {
            let mut r = self.inner.lock();
            if r.wcs.push(wc).is_err() {
                let first = !r.overflowed;
                r.overflowed = true;
                (false, first)
            } else {
                let matches = r.armed & SRNIC_CQ_NEXT_COMP != 0
                    || (r.armed & SRNIC_CQ_SOLICITED != 0
                        && (wc.flags & SRNIC_WC_SOLICITED != 0 || wc.status != SRNIC_WC_SUCCESS));
                if matches {
                    r.armed = 0;
                }
                (matches, false)
            }
        };
        if notify {
            self.notify.completion(self.handle);
        }
        if overflow {
            self.notify.overflow(self.handle);
        }
    }

    /// Moves up to `out.len()` completions into `out`; returns how many.
    pub(crate) fn poll(&self, out: &mut [SrnicWc]) -> usize {
        let mut r = self.inner.lock();
        let mut n = 0;
        for o in out.iter_mut() {
            let Some(wc) = r.wcs.pop_value() else { break };
            *o = wc;
            n += 1;
        }
        n
    }

    /// Arms the CQ with `SRNIC_CQ_*` flags; returns whether completions are
    /// already waiting to be polled.
    pub(crate) fn arm(&self, flags: u32) -> bool {
        let mut r = self.inner.lock();
        // A solicited-only arming does not weaken an any-completion one.
        r.armed |= flags;
        !r.wcs.is_empty()
    }

    /// Whether a queue pair still uses this CQ.
    pub(crate) fn in_use(&self) -> bool {
        self.users.load(Ordering::Acquire) != 0
    }
}
