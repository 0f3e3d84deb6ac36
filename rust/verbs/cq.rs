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

use crate::uapi::{SrnicResCq, SrnicWc, SRNIC_CQ_NEXT_COMP, SRNIC_CQ_SOLICITED, SRNIC_WC_SOLICITED, SRNIC_WC_SUCCESS};
use crate::new_spinlock_bh;
use crate::sys::{
    gfp::{NoIo, ACCOUNTED},
    sync::{may_sleep, SpinLockBh},
    wq,
};
use crate::verbs::budget::{self, Budget, Charge};
use crate::verbs::stats::{Live, Object};
use crate::proto::ring::Ring;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    alloc::KVVec,
    impl_has_work,
    new_mutex,
    new_work,
    prelude::*,
    sync::{Arc, Mutex},
    workqueue::{Work, WorkItem},
};

/// The CQ's mutable state.
struct Inner {
    wcs: Ring<KVVec<SrnicWc>>,
    /// `SRNIC_CQ_*` flags of the pending arming, 0 when not armed.
    armed: u32,
    overflowed: bool,
    /// Notifications due where sleeping is not allowed (a QP's receive path
    /// in softirq context), left to the CQ's work item.
    late: Due,
}

/// Notifications a completion made due ([`Cq::push`]).
#[must_use = "fire it with Cq::notify once no spinlock is held"]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Due {
    /// An armed CQ got a completion its arming asked for.
    completion: bool,
    /// The CQ overflowed (the first time).
    overflow: bool,
}

impl Due {
    /// The notifications of both.
    pub(crate) fn and(self, other: Due) -> Due {
        Due { completion: self.completion || other.completion, overflow: self.overflow || other.overflow }
    }
}

/// Where a CQ's notifications go. Called without the CQ's lock, in process
/// context: from the context that added the completion, or from the CQ's work
/// item when that context may not sleep.
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
    inner: SpinLockBh<Inner>,
    /// Delivers the notifications left in `Inner` (see [`Cq::push`]).
    #[pin]
    notify_work: Work<Cq>,
    /// Serializes `POLL_CQ` callers across their writes to user memory (see
    /// [`Cq::peek`]); only pollers of this CQ wait for it.
    #[pin]
    pub(crate) pollers: Mutex<()>,
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
                inner <- new_spinlock_bh!(
                    Inner {
                        wcs: Ring::new(wcs),
                        armed: 0,
                        overflowed: false,
                        late: Due::default(),
                    },
                    "srnic_cq"
                ),
                notify_work <- new_work!("srnic_cq_notify"),
                pollers <- new_mutex!((), "srnic_cq_pollers"),
                notify,
                users: AtomicU32::new(0),
                _charge: charge,
                _live: Live::new(Object::Cq),
            }),
            ACCOUNTED,
        )
    }

    /// Adds a completion; returns the notification it made due (an arming it
    /// matched, or the overflow), which the caller fires with [`Cq::notify`]
    /// once it holds no spinlock: pushes from under a queue's lock keep the
    /// completions in order, the notification comes after.
    pub(crate) fn push(&self, wc: SrnicWc) -> Due {
        let mut r = self.inner.lock();
        if r.wcs.push(wc).is_err() {
            let first = !r.overflowed;
            r.overflowed = true;
            return Due { completion: false, overflow: first };
        }
        let matches = r.armed & SRNIC_CQ_NEXT_COMP != 0
            || (r.armed & SRNIC_CQ_SOLICITED != 0
                && (wc.flags & SRNIC_WC_SOLICITED != 0 || wc.status != SRNIC_WC_SUCCESS));
        if matches {
            r.armed = 0;
        }
        Due { completion: matches, overflow: false }
    }

    /// [`Cq::push`] and [`Cq::notify`], for a caller that holds no spinlock.
    pub(crate) fn push_notify(self: &Arc<Self>, wc: SrnicWc) {
        let due = self.push(wc);
        self.notify(due);
    }

    /// Fires the notifications `due` (from [`Cq::push`]): now, or where the
    /// caller may not sleep (softirq, a bottom-half-safe lock held) from the
    /// CQ's work item.
    pub(crate) fn notify(self: &Arc<Self>, due: Due) {
        if !due.completion && !due.overflow {
            return;
        }
        if may_sleep() {
            self.deliver(due);
            return;
        }
        {
            let mut r = self.inner.lock();
            r.late = r.late.and(due);
        }
        // Already queued: it delivers these too.
        let _ = wq::dp_queue().enqueue(self.clone());
    }

    fn deliver(&self, due: Due) {
        if due.completion {
            self.notify.completion(self.handle);
        }
        if due.overflow {
            self.notify.overflow(self.handle);
        }
    }

    /// Copies the oldest completions, up to `out.len()`, into `out` without
    /// taking them; returns how many. A poller holds `pollers` from its peek
    /// to its [`Cq::consume`], so the completions it delivers are the ones
    /// it takes, and a fault while it writes them out loses none.
    pub(crate) fn peek(&self, out: &mut [SrnicWc]) -> usize {
        let r = self.inner.lock();
        let mut n = 0;
        for (k, o) in out.iter_mut().enumerate() {
            let Some(wc) = r.wcs.get(k) else { break };
            *o = *wc;
            n += 1;
        }
        n
    }

    /// Takes the `n` oldest completions (delivered after a [`Cq::peek`]).
    pub(crate) fn consume(&self, n: usize) {
        let mut r = self.inner.lock();
        for _ in 0..n {
            r.wcs.pop();
        }
    }

    /// Arms the CQ with `SRNIC_CQ_*` flags; returns whether completions are
    /// already waiting to be polled.
    pub(crate) fn arm(&self, flags: u32) -> bool {
        let mut r = self.inner.lock();
        // A solicited-only arming does not weaken an any-completion one.
        r.armed |= flags;
        !r.wcs.is_empty()
    }

    /// What the resource view reports of the CQ, but its owner.
    pub(crate) fn res(&self, r: &mut SrnicResCq) {
        {
            let i = self.inner.lock();
            r.cqe = i.wcs.capacity() as u32;
            r.queued = i.wcs.len() as u32;
        }
        r.users = self.users.load(Ordering::Relaxed);
    }

    /// Whether a queue pair or RMPP endpoint still uses this CQ (or one is
    /// being made with it, see [`CqUse`]).
    pub(crate) fn in_use(&self) -> bool {
        self.users.load(Ordering::Acquire) != 0
    }
}

impl_has_work! {
    impl HasWork<Self> for Cq { self.notify_work }
}

impl WorkItem for Cq {
    type Pointer = Arc<Cq>;

    /// Delivers the notifications [`Cq::push`] left.
    fn run(this: Arc<Cq>) {
        let _noio = NoIo::enter();
        let due = core::mem::take(&mut this.inner.lock().late);
        this.deliver(due);
    }
}

/// A use of a CQ held while an object that will use it is being made outside
/// the context's object lock (`DESTROY_CQ` answers `EBUSY` meanwhile);
/// released on drop.
pub(crate) struct CqUse(Arc<Cq>);

impl CqUse {
    /// Records a new user of `cq`.
    pub(crate) fn new(cq: &Arc<Cq>) -> Self {
        cq.users.fetch_add(1, Ordering::AcqRel);
        Self(cq.clone())
    }
}

impl Drop for CqUse {
    fn drop(&mut self) {
        self.0.users.fetch_sub(1, Ordering::AcqRel);
    }
}
