// SPDX-License-Identifier: GPL-2.0
//! Completion queues.
//!
//! A CQ is a fixed ring of work completions, filled by its queue pairs (from the
//! receive path, the transmit work and the ioctls that post or flush) and
//! emptied by its poller. The ring lives in pages the owning process may map
//! (`struct srnic_cq_ring` in `uapi/srnic.h`): a poller that maps it takes
//! completions without a system call; `POLL_CQ` (and a kernel client's poll)
//! takes them from the same ring. The ring's consumer index is the poller's
//! to write: srnic reads it as an untrusted value (see [`Cq::held`]).
//! Arming it (`REQ_NOTIFY_CQ`) asks for one notification at the next
//! completion (or the next solicited or error completion). Overflow is an
//! error: the completion is lost, the CQ is marked and reported once.
//!
//! Notifications go through one interface, [`CqNotify`]: for a file, the
//! context's event queue (`SRNIC_EVENT_CQ` and `SRNIC_EVENT_CQ_ERROR` for its
//! readers, see `events.rs`); for a kernel client, its completion callback.

use crate::uapi::{CqRingIndex, SrnicCqRing, SrnicResCq, SrnicWc, SRNIC_CQ_NEXT_COMP, SRNIC_CQ_SOLICITED, SRNIC_WC_SOLICITED, SRNIC_WC_SUCCESS};
use crate::new_spinlock_bh;
use crate::sys::{
    gfp::{NoIo, ACCOUNTED},
    shared::{SharedPages, Vma},
    sync::{may_sleep, SpinLockBh},
    wq,
};
use crate::verbs::budget::{self, Budget, Charge};
use crate::verbs::stats::{Live, Object};
use core::{
    mem::{offset_of, size_of},
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::{
    impl_has_work,
    new_mutex,
    new_work,
    prelude::*,
    sync::{Arc, Mutex},
    workqueue::{Work, WorkItem},
};

/// The ring's layout: the header, then the entries.
const PROD: usize = offset_of!(SrnicCqRing, prod);
const CQE: usize = offset_of!(SrnicCqRing, cqe);
const CONS: usize = offset_of!(SrnicCqRing, cons);
const ENTRIES: usize = size_of::<SrnicCqRing>();

/// The CQ's mutable state.
struct Inner {
    /// Completions added, modulo twice the capacity: srnic's own count, of
    /// which the ring's `prod` is a copy for the poller.
    prod: u32,
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
    /// Its capacity and the ring's index arithmetic.
    idx: CqRingIndex,
    /// The ring (`struct srnic_cq_ring` and the entries), with the charge
    /// for it: a process's mapping of it may outlive the CQ.
    ring: Arc<SharedPages<Charge>>,
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
    /// What the ring of a CQ of `cqe` entries takes (the CQ itself takes
    /// `budget::arc::<Cq>()` more).
    fn ring_footprint(cqe: usize) -> Result<usize> {
        budget::sum(&[
            budget::arc::<SharedPages<Charge>>(),
            SharedPages::<Charge>::footprint(Self::ring_size(cqe)?),
        ])
    }

    /// The bytes of a ring of `cqe` entries.
    fn ring_size(cqe: usize) -> Result<usize> {
        budget::sum(&[ENTRIES, budget::array::<SrnicWc>(cqe)?])
    }

    /// A CQ with room for `cqe` completions (at most `u32::MAX / 2`),
    /// charged to `budget`.
    pub(crate) fn new(handle: u32, cqe: usize, notify: Arc<dyn CqNotify>, budget: &Arc<Budget>) -> Result<Arc<Self>> {
        let idx = u32::try_from(cqe).ok().and_then(CqRingIndex::new).ok_or(EINVAL)?;
        let charge = budget.charge(budget::arc::<Self>())?;
        let ring_charge = budget.charge(Self::ring_footprint(cqe)?)?;
        let ring = SharedPages::new(Self::ring_size(cqe)?, ring_charge)?;
        ring.store_u32(CQE, idx.cqe(), Ordering::Relaxed)?;
        Arc::pin_init(
            pin_init!(Self {
                handle,
                idx,
                ring,
                inner <- new_spinlock_bh!(
                    Inner {
                        prod: 0,
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
        let room = self.held(r.prod, self.cons()).is_some_and(|n| n < self.idx.cqe());
        if !room || self.ring.write(self.entry(r.prod), &wc).is_err() {
            let first = !r.overflowed;
            r.overflowed = true;
            return Due { completion: false, overflow: first };
        }
        r.prod = self.idx.advance(r.prod, 1);
        // The entry is in place before the poller sees the count.
        let _ = self.ring.store_u32(PROD, r.prod, Ordering::Release);
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

    /// The ring's consumer index, as the poller left it (unchecked).
    fn cons(&self) -> u32 {
        // The poller is done with what it took before srnic reuses it.
        self.ring.load_u32(CONS, Ordering::Acquire).unwrap_or(0)
    }

    /// How many completions the ring holds with srnic's producer index
    /// `prod` and the poller's consumer index `cons`; `None` when `cons` is
    /// impossible (not behind `prod` by at most the capacity): the ring then
    /// counts as full, and the poller, whose memory it is, loses completions.
    fn held(&self, prod: u32, cons: u32) -> Option<u32> {
        self.idx.held(prod, cons)
    }

    /// The offset of the entry for index `i`.
    fn entry(&self, i: u32) -> usize {
        ENTRIES + self.idx.slot(i) * size_of::<SrnicWc>()
    }

    /// Copies the oldest completions, up to `out.len()`, into `out` without
    /// taking them; returns how many. A poller holds `pollers` from its peek
    /// to its [`Cq::consume`], so the completions it delivers are the ones
    /// it takes, and a fault while it writes them out loses none.
    pub(crate) fn peek(&self, out: &mut [SrnicWc]) -> usize {
        let r = self.inner.lock();
        let cons = self.cons();
        let held = self.held(r.prod, cons).unwrap_or(0) as usize;
        let mut n = 0;
        for (k, o) in out.iter_mut().take(held).enumerate() {
            match self.ring.read(self.entry(self.idx.advance(cons, k as u32))) {
                Ok(wc) => *o = wc,
                Err(_) => break,
            }
            n += 1;
        }
        n
    }

    /// Takes the `n` oldest completions (delivered after a [`Cq::peek`]).
    pub(crate) fn consume(&self, n: usize) {
        let _r = self.inner.lock();
        let cons = self.idx.advance(self.cons(), n as u32);
        let _ = self.ring.store_u32(CONS, cons, Ordering::Release);
    }

    /// Arms the CQ with `SRNIC_CQ_*` flags; returns whether completions are
    /// already waiting to be polled.
    pub(crate) fn arm(&self, flags: u32) -> bool {
        let mut r = self.inner.lock();
        // A solicited-only arming does not weaken an any-completion one.
        r.armed |= flags;
        self.held(r.prod, self.cons()) != Some(0)
    }

    /// The bytes of its ring: the length to map.
    pub(crate) fn ring_bytes(&self) -> usize {
        self.ring.len()
    }

    /// Maps its ring into `vma` (`mmap()` on the device; `EINVAL` unless a
    /// shared mapping of [`Cq::ring_bytes`], `EPERM` if executable).
    pub(crate) fn map(&self, vma: &Vma<'_>) -> Result {
        self.ring.map(vma)
    }

    /// What the resource view reports of the CQ, but its owner.
    pub(crate) fn res(&self, r: &mut SrnicResCq) {
        r.cqe = self.idx.cqe();
        r.queued = self.held(self.inner.lock().prod, self.cons()).unwrap_or(self.idx.cqe());
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
