// SPDX-License-Identifier: GPL-2.0
//! The event queue of a context: what `read()` returns and `poll()` waits for.
//!
//! Every object of a context posts its events here (CQ notifications, connection
//! manager events, asynchronous QP and CQ errors). The queue is bounded; beyond
//! [`MAX_EVENTS`] further events are dropped and counted, which only a process
//! that never reads its events can cause.

use crate::{
    new_waitqueue,
    sys::waitqueue::{PollMask, PollTable, WaitQueue},
    uapi::{SrnicEvent, SRNIC_EVENT_CQ, SRNIC_EVENT_CQ_ERROR},
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
    buf: KVec<SrnicEvent>,
    head: usize,
    dropped: u64,
}

/// A context's event queue, shared by the context and its objects.
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
}

impl Events {
    /// A new, empty queue.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                ring <- new_mutex!(Ring { buf: KVec::new(), head: 0, dropped: 0 }, "srnic_events"),
                readable <- new_condvar!("srnic_events_readable"),
                pollers <- new_waitqueue!("srnic_events_pollers"),
            }),
            GFP_KERNEL,
        )
    }

    /// Queues `ev` and wakes readers and pollers.
    pub(crate) fn push(&self, ev: SrnicEvent) {
        {
            let mut r = self.ring.lock();
            if r.buf.len() - r.head >= MAX_EVENTS || r.buf.push(ev, GFP_KERNEL).is_err() {
                r.dropped += 1;
                return;
            }
        }
        self.readable.notify_all();
        self.pollers.wake_up_all();
    }

    /// Moves as many whole events as fit into `out`; blocks for the first one
    /// unless `nonblock`. Returns the bytes written.
    pub(crate) fn read(&self, out: &mut UserSliceWriter, nonblock: bool) -> Result<usize> {
        let rec = core::mem::size_of::<SrnicEvent>();
        let max = out.len() / rec;
        if max == 0 {
            return Err(EINVAL);
        }
        let mut r = self.ring.lock();
        while r.head == r.buf.len() {
            if nonblock {
                return Err(EAGAIN);
            }
            if self.readable.wait_interruptible(&mut r) {
                return Err(ERESTARTSYS);
            }
        }
        let mut n = 0;
        while n < max && r.head < r.buf.len() {
            let ev = r.buf[r.head];
            if let Err(e) = out.write(&ev) {
                // Nothing consumed yet: report the fault; else return what was read.
                if n == 0 {
                    return Err(e);
                }
                break;
            }
            r.head += 1;
            n += 1;
        }
        if r.head == r.buf.len() {
            r.buf = KVec::new();
            r.head = 0;
        }
        Ok(n * rec)
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
