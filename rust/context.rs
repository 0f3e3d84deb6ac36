// SPDX-License-Identifier: GPL-2.0
//! One open file of `/dev/srnic`: a verbs context.
//!
//! A context owns everything created through its file and frees it when the file
//! is released. It also carries the event path shared by every object: events are
//! read with `read()` and signalled to `poll()`/`epoll` through its wait queue.

use crate::{
    ioctl, new_waitqueue,
    sys::{
        miscdev::MiscFile,
        waitqueue::{PollMask, PollTable, WaitQueue},
    },
};
use kernel::{
    new_condvar, new_mutex,
    prelude::*,
    sync::{CondVar, Mutex},
    uaccess::{UserSliceReader, UserSliceWriter},
};

/// State of a context behind its lock.
pub(crate) struct Inner {
    /// Events ready to be read. No object emits events yet in ABI version 1, so
    /// this stays zero; `read()` and `poll()` already follow the final protocol.
    pending_events: usize,
}

/// The per-open state of `/dev/srnic`.
#[pin_data]
pub(crate) struct Context {
    #[pin]
    inner: Mutex<Inner>,
    /// Blocking readers sleep here.
    #[pin]
    readable: CondVar,
    /// `poll()` and `epoll` register here.
    #[pin]
    pollers: WaitQueue,
}

impl MiscFile for Context {
    fn open() -> Result<Pin<KBox<Self>>> {
        KBox::try_pin_init(
            try_pin_init!(Self {
                inner <- new_mutex!(Inner { pending_events: 0 }, "srnic_context"),
                readable <- new_condvar!("srnic_context_readable"),
                pollers <- new_waitqueue!("srnic_context_pollers"),
            }),
            GFP_KERNEL,
        )
    }

    fn ioctl(&self, cmd: u32, arg: usize) -> Result<isize> {
        ioctl::dispatch(self, cmd, arg)
    }

    fn read(&self, _buf: &mut UserSliceWriter, nonblock: bool) -> Result<usize> {
        let mut inner = self.inner.lock();
        while inner.pending_events == 0 {
            if nonblock {
                return Err(EAGAIN);
            }
            if self.readable.wait_interruptible(&mut inner) {
                return Err(ERESTARTSYS);
            }
        }
        // Unreachable until objects emit events: `pending_events` is never raised.
        Err(EINVAL)
    }

    fn write(&self, _buf: &mut UserSliceReader, _nonblock: bool) -> Result<usize> {
        // ABI version 1 defines no work-request records yet.
        Err(EINVAL)
    }

    fn poll(&self, table: &PollTable) -> PollMask {
        table.register(&self.pollers);
        if self.inner.lock().pending_events > 0 {
            PollMask::IN
        } else {
            PollMask::NONE
        }
    }
}
