// SPDX-License-Identifier: GPL-2.0
//! The event queue of a context: what `read()` returns and `poll()` waits for.
//!
//! Every object of a context posts its events here (CQ notifications, connection
//! manager events, asynchronous QP and CQ errors). The queue is bounded; beyond
//! [`MAX_EVENTS`] (or when its buffer cannot grow within the context's memory
//! budget) further events are dropped and counted, which only a process that
//! never reads its events can cause. The buffer is charged to the budget as it
//! grows and given back when it is emptied.

use crate::{
    new_waitqueue,
    sys::waitqueue::{PollMask, PollTable, WaitQueue},
    sys::gfp::ACCOUNTED,
    uapi::{SrnicEvent, SRNIC_EVENT_CQ, SRNIC_EVENT_CQ_ERROR},
    verbs::budget::{Budget, Charge},
    verbs::cq::CqNotify,
};
use kernel::{
    alloc::KVec,
    new_condvar, new_mutex,
    prelude::*,
    sync::{Arc, CondVar, Mutex},
    uaccess::UserSliceWriter,
};

/// Most events a context holds unread.
pub(crate) const MAX_EVENTS: usize = 4096;

struct Ring {
    /// Unread events are `buf[head..]`.
    buf: KVec<SrnicEvent>,
    head: usize,
    dropped: u64,
    /// A reader is writing events to user memory; until it is done only it
    /// consumes events (it moves `head`).
    reading: bool,
    /// `buf`'s capacity, charged to the context's budget.
    charge: Charge,
}

const EVENT: usize = core::mem::size_of::<SrnicEvent>();

impl Ring {
    /// Makes room for one more event: moves the unread events to the front
    /// of a new buffer twice their number (within [`MAX_EVENTS`]), charged
    /// first. `ENOMEM` (nothing changed) when the budget or memory is short.
    fn grow(&mut self) -> Result {
        if self.buf.len() < self.buf.capacity() {
            return Ok(());
        }
        let unread = self.buf.len() - self.head;
        let want = unread.saturating_mul(2).clamp(16, MAX_EVENTS);
        let old = self.buf.capacity() * EVENT;
        self.charge.resize(old + want * EVENT)?;
        let mut buf = match KVec::with_capacity(want, ACCOUNTED) {
            Ok(b) => b,
            Err(e) => {
                // Shrinking cannot fail.
                let _ = self.charge.resize(old);
                return Err(e.into());
            }
        };
        // Within capacity: cannot fail.
        let _ = buf.extend_from_slice(&self.buf[self.head..], ACCOUNTED);
        self.buf = buf;
        self.head = 0;
        let _ = self.charge.resize(self.buf.capacity() * EVENT);
        Ok(())
    }

    /// Frees the buffer once every event in it was read.
    fn reset_if_read(&mut self) {
        if self.head == self.buf.len() {
            self.buf = KVec::new();
            self.head = 0;
            let _ = self.charge.resize(0);
        }
    }
}

/// Events a reader copies out of the ring at a time (5.5 KiB).
const READ_BATCH: usize = 16;

/// Told when an event is queued: a kernel client's dispatcher, which takes
/// the events ([`Events::take`]) and hands them to the client.
pub(crate) trait EventSink: Send + Sync {
    /// An event was queued.
    fn queued(&self);
}

/// A context's event queue, shared by the context and its objects.
///
/// `push` (from every object, on the shared workqueue too) takes `ring` only
/// briefly, and so does a reader: it copies events out under `ring` and
/// writes them to user memory after dropping it, marked as the reader
/// (`Ring::reading`). Other readers of the same file wait for that mark to
/// go, interruptibly: a reader whose buffer faults slowly (or never, with
/// userfaultfd) holds up nobody but them.
#[pin_data]
pub(crate) struct Events {
    #[pin]
    ring: Mutex<Ring>,
    /// Blocking readers sleep here.
    #[pin]
    readable: CondVar,
    /// `poll()` and `epoll` register here.
    #[pin]
    pollers: WaitQueue,
    /// A kernel client's dispatcher, told of every event (none for a file).
    /// Set after the client is made and cleared when it closes: the client
    /// owns this queue, so the link back is broken explicitly.
    #[pin]
    sink: Mutex<Option<Arc<dyn EventSink>>>,
}

impl Events {
    /// A new, empty queue whose buffer is charged to `budget`.
    pub(crate) fn new(budget: Arc<Budget>) -> Result<Arc<Self>> {
        let charge = budget.charge(0)?;
        Arc::pin_init(
            pin_init!(Self {
                ring <- new_mutex!(
                    Ring { buf: KVec::new(), head: 0, dropped: 0, reading: false, charge },
                    "srnic_events"
                ),
                readable <- new_condvar!("srnic_events_readable"),
                pollers <- new_waitqueue!("srnic_events_pollers"),
                sink <- new_mutex!(None, "srnic_events_sink"),
            }),
            ACCOUNTED,
        )
    }

    /// Queues `ev` and wakes readers and pollers.
    pub(crate) fn push(&self, ev: SrnicEvent) {
        {
            let mut r = self.ring.lock();
            if r.buf.len() - r.head >= MAX_EVENTS || r.grow().is_err() {
                r.dropped += 1;
                return;
            }
            // `grow` made room: this does not allocate.
            if r.buf.push(ev, ACCOUNTED).is_err() {
                r.dropped += 1;
                return;
            }
        }
        self.readable.notify_all();
        self.pollers.wake_up_all();
        if let Some(sink) = self.sink.lock().as_ref() {
            sink.queued();
        }
    }

    /// Sets (or with `None` clears) the dispatcher told of every event.
    pub(crate) fn set_sink(&self, sink: Option<Arc<dyn EventSink>>) -> Option<Arc<dyn EventSink>> {
        core::mem::replace(&mut *self.sink.lock(), sink)
    }

    /// Takes up to `out.len()` events without blocking (a kernel client's
    /// dispatcher: the only reader of its queue); returns how many.
    pub(crate) fn take(&self, out: &mut [SrnicEvent]) -> usize {
        let mut r = self.ring.lock();
        let mut n = 0;
        // (Element by element: `copy_from_slice`'s length check made objtool
        // of the plain 6.12 kernel report a fall-through after its panic call.)
        for (o, e) in out.iter_mut().zip(r.buf.iter().skip(r.head)) {
            *o = *e;
            n += 1;
        }
        r.head += n;
        r.reset_if_read();
        n
    }

    /// Moves as many whole events as fit into `out`; blocks for the first one
    /// unless `nonblock`. Returns the bytes written.
    pub(crate) fn read(&self, out: &mut UserSliceWriter, nonblock: bool) -> Result<usize> {
        let max = out.len() / EVENT;
        if max == 0 {
            return Err(EINVAL);
        }
        {
            let mut r = self.ring.lock();
            while r.reading || r.head == r.buf.len() {
                if nonblock {
                    return Err(EAGAIN);
                }
                if self.readable.wait_interruptible(&mut r) {
                    return Err(ERESTARTSYS);
                }
            }
            r.reading = true;
        }
        let _reading = Reading(self);
        let mut n = 0;
        while n < max {
            // Copy a batch out; only the reader consumes, so the events stay
            // unread (a push may move them to a new buffer, in order) until
            // `head` moves past them below.
            let Ok(mut batch) = KVec::with_capacity(READ_BATCH.min(max - n), ACCOUNTED) else {
                // What was written stays consumed: report it, or the failure.
                if n == 0 {
                    return Err(ENOMEM);
                }
                break;
            };
            {
                let r = self.ring.lock();
                let take = (r.buf.len() - r.head).min(max - n).min(batch.capacity());
                // Within capacity: cannot fail.
                let _ = batch.extend_from_slice(&r.buf[r.head..r.head + take], ACCOUNTED);
            }
            if batch.is_empty() {
                break;
            }
            let mut written = 0;
            let mut fault = None;
            for ev in batch.iter() {
                if let Err(e) = out.write(ev) {
                    fault = Some(e);
                    break;
                }
                written += 1;
            }
            {
                let mut r = self.ring.lock();
                r.head += written;
                r.reset_if_read();
            }
            n += written;
            if let Some(e) = fault {
                // Nothing consumed yet: report the fault; else what was read.
                if n == 0 {
                    return Err(e);
                }
                break;
            }
        }
        Ok(n * EVENT)
    }

    /// Registers on `table` and reports whether an event is pending.
    pub(crate) fn poll(&self, table: &PollTable) -> PollMask {
        table.register(&self.pollers);
        let r = self.ring.lock();
        if r.head < r.buf.len() {
            PollMask::IN
        } else {
            PollMask::NONE
        }
    }
}

/// The mark of the one reader writing events out; dropping it lets the next
/// reader in.
struct Reading<'a>(&'a Events);

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.0.ring.lock().reading = false;
        self.0.readable.notify_all();
    }
}

/// An event record of `event_type` about `handle`, everything else zero.
pub(crate) fn event(event_type: u32, handle: u32) -> SrnicEvent {
    SrnicEvent {
        event_type,
        handle,
        ..Default::default()
    }
}

/// A file's CQs notify through its context's event queue: its readers get
/// `SRNIC_EVENT_CQ` and `SRNIC_EVENT_CQ_ERROR`.
impl CqNotify for Events {
    fn completion(&self, cq: u32) {
        self.push(event(SRNIC_EVENT_CQ, cq));
    }

    fn overflow(&self, cq: u32) {
        self.push(event(SRNIC_EVENT_CQ_ERROR, cq));
    }
}
