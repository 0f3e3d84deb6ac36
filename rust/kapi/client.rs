// SPDX-License-Identifier: GPL-2.0
//! A kernel client's context and the delivery of its notifications.
//!
//! A client's objects post their events (connection manager, CQ
//! notifications, asynchronous errors) to the context's event queue, as a
//! file's do. The queue tells the client's [`Sink`], which queues the
//! client's work item on the "srnic_kv" workqueue; the work item takes the
//! events and calls the client's `event` or `cq` callback for each, in
//! order, in process context, never from the caller's own calls.
//!
//! States: open (events delivered) and closed. [`Client::close`] moves to
//! closed under `inner` (the lock the delivery holds while it calls the
//! client, so a running callback is waited for and none starts afterwards),
//! then ends every object of the context at once.
//!
//! The [`Registry`] owns every open client, with the module that opened it;
//! the C caller holds a plain pointer to it, which names it until it is
//! closed. When a module goes away with clients still open (it forgot to
//! close them), srnic closes them then, with a warning.

use crate::{
    sys::{
        gfp::NoIo,
        global::{Global, Installed},
        kv_ops::Callbacks,
        module_ref::{ModuleId, ModuleWatch},
        wq,
    },
    uapi::SrnicEvent,
    verbs::{context::Context, events::EventSink, qp::RxMode},
};
use kernel::{
    alloc::KVec,
    impl_has_work, new_mutex, new_work,
    prelude::*,
    sync::{Arc, Mutex},
    workqueue::{Work, WorkItem},
};

/// The client's mutable state.
struct Inner {
    closed: bool,
}

/// A kernel client's context.
#[pin_data]
pub(crate) struct Client {
    #[pin]
    pub(crate) ctx: Context,
    /// The module that opened it.
    owner: ModuleId,
    notify: Callbacks,
    /// Held while callbacks run (see the module documentation).
    #[pin]
    inner: Mutex<Inner>,
    #[pin]
    work: Work<Client>,
}

impl_has_work! {
    impl HasWork<Self> for Client { self.work }
}

impl WorkItem for Client {
    type Pointer = Arc<Client>;
    fn run(this: Arc<Client>) {
        // The client's callbacks run inside its I/O path (see `gfp::NoIo`).
        let _noio = NoIo::enter();
        this.dispatch();
    }
}

/// What the context's event queue tells: the client, whose work it queues.
/// It holds the client, which holds the queue: [`Client::close`] breaks
/// that circle by taking the sink out of the queue.
struct Sink(Arc<Client>);

impl EventSink for Sink {
    fn queued(&self) {
        // Already queued: that run takes this event too.
        let _ = wq::kv_queue().enqueue(self.0.clone());
    }
}

impl Client {
    /// Opens a client for module `owner` that `notify` tells of its events.
    /// The registry owns it: the pointer returned names it (for the C
    /// caller) until [`Client::close_ptr`], or until its module goes away.
    pub(crate) fn open(owner: ModuleId, notify: Callbacks) -> Result<*const Self> {
        let reg = REGISTRY.get().ok_or(ENODEV)?;
        // Its callbacks run from a work item anyway: read there too.
        let ctx = Context::new(RxMode::Work)?;
        let c = Arc::pin_init(
            try_pin_init!(Self {
                ctx <- ctx,
                owner,
                notify,
                inner <- new_mutex!(Inner { closed: false }, "srnic_kv_client"),
                work <- new_work!("srnic_kv_client"),
            }),
            GFP_KERNEL,
        )?;
        let sink: Arc<dyn EventSink> = Arc::new(Sink(c.clone()), GFP_KERNEL)?;
        {
            let mut l = reg.clients.lock();
            match l.iter_mut().find(|s| s.is_none()) {
                Some(slot) => *slot = Some(c.clone()),
                None => l.push(Some(c.clone()), GFP_KERNEL)?,
            }
        }
        c.ctx.events.set_sink(Some(sink));
        Ok(core::ptr::from_ref::<Self>(&c))
    }

    /// Delivers the queued events, unless the client is closed.
    fn dispatch(&self) {
        // Two events at a time keep the work item's stack small.
        let mut evs = [SrnicEvent::default(); 2];
        let inner = self.inner.lock();
        if inner.closed {
            return;
        }
        loop {
            let n = self.ctx.events.take(&mut evs);
            if n == 0 {
                break;
            }
            for ev in &evs[..n] {
                self.notify.deliver(ev);
            }
        }
        drop(inner);
    }

    /// Closes the client `p` names (see [`Client::close`]); `EINVAL` when
    /// no open client has that pointer (closed already, or never opened).
    pub(crate) fn close_ptr(p: *const Self) -> Result {
        let c = take(|c| core::ptr::eq(&**c, p)).ok_or(EINVAL)?;
        Client::close(c);
        Ok(())
    }

    /// Closes the client, taken out of the registry already: no callback
    /// runs once this returns, and every object of its context is ended
    /// (queue pairs disconnected and flushed, listeners stopped, regions
    /// deregistered). Must not be called from the client's own callback (it
    /// waits for that callback to return).
    fn close(this: Arc<Self>) {
        let sink = this.ctx.events.set_sink(None);
        this.inner.lock().closed = true;
        drop(sink);
        this.ctx.close();
        // A queued run of the work item still holds the client; it sees it
        // closed and drops it.
    }
}

/// The open clients (a slot per client; closed ones leave `None`).
#[pin_data]
pub(crate) struct Registry {
    #[pin]
    clients: Mutex<KVec<Option<Arc<Client>>>>,
}

static REGISTRY: Global<Registry> = Global::new();

/// Takes the first open client for which `f` holds out of the registry.
fn take(f: impl Fn(&Arc<Client>) -> bool) -> Option<Arc<Client>> {
    let reg = REGISTRY.get()?;
    let mut l = reg.clients.lock();
    l.iter_mut().find(|s| s.as_ref().is_some_and(&f))?.take()
}

/// Closes the clients a module going away left open.
fn module_going(module: ModuleId) {
    while let Some(left) = take(|c| c.owner == module) {
        pr_warn!("a kernel client module went away without srnic_kv_close(): closing its context\n");
        Client::close(left);
    }
}

/// The kernel verbs API's state, from module init to module exit: the
/// registry and the watch on modules going away.
pub(crate) struct Registration {
    // Field order is drop order: no notification once the registry goes.
    _watch: ModuleWatch,
    _registry: Installed<Registry>,
}

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        let reg = Arc::pin_init(pin_init!(Registry { clients <- new_mutex!(KVec::new(), "srnic_kv_clients") }), GFP_KERNEL)?;
        let registry = REGISTRY.install(reg);
        Ok(Self { _watch: ModuleWatch::register(module_going)?, _registry: registry })
    }
}
