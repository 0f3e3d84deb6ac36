// SPDX-License-Identifier: GPL-2.0
//! A verbs context: the objects one client created.
//!
//! A context owns every object created through it, in handle tables, and frees
//! them all when it is dropped: queue pairs are disconnected, listeners stop,
//! pending connection requests are refused, and memory regions are unpinned (at
//! once, or when the last in-flight operation on them ends). It knows nothing of
//! files: the character device (`crate::chardev`) holds one per open file, the
//! kernel verbs API (`crate::kapi`) one per kernel client.

use crate::{
    iwarp::conn_req::ConnTable,
    sys::{gfp::ACCOUNTED, task::Owner},
    verbs::budget::{self, Budget, Charge},
    verbs::events::Events,
    verbs::limits,
    verbs::mr::MrTable,
    verbs::objects::{ObjectTable, Objects},
    verbs::qp::RxMode,
    verbs::registry::Registration,
    verbs::stats::{Live, Object},
    verbs::table::Table,
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::Arc,
};

/// What a context takes before it creates anything: itself, its event queue
/// and MR table (their buffers grow and are charged as they do) and the slots of
/// its handle tables at their limits.
const BASE: usize = budget::arc::<Events>()
    + budget::arc::<MrTable>()
    + budget::arc::<ObjectTable>()
    + core::mem::size_of::<Context>()
    + core::mem::size_of::<usize>()
        * (limits::MAX_PD
            + limits::MAX_CQ
            + limits::MAX_QP
            + limits::MAX_LISTENERS
            + limits::MAX_RMPP_ENDPOINTS
            + limits::MAX_CONN_REQS
            + limits::MAX_MR)
    + limits::MAX_MR;

/// A verbs context.
#[pin_data(PinnedDrop)]
pub(crate) struct Context {
    /// The kernel memory this context's objects take, against its cap.
    pub(crate) budget: Arc<Budget>,
    pub(crate) events: Arc<Events>,
    pub(crate) mrs: Arc<MrTable>,
    pub(crate) conns: Arc<ConnTable>,
    pub(crate) objs: Arc<ObjectTable>,
    /// Who opened it: the process that made it and its effective uid.
    pub(crate) owner: Owner,
    /// Where its QPs read their sockets: in the data-ready callback for a
    /// file's, in the receive work for a kernel client's ([`RxMode`]).
    pub(crate) rx_mode: RxMode,
    /// Its place in the registry of every context (the resource views).
    _reg: Registration,
    _base: Charge,
    _live: Live,
}

impl Context {
    /// A new context with no objects, whose QPs read as `rx_mode` says.
    pub(crate) fn new(rx_mode: RxMode) -> Result<impl PinInit<Self, Error>> {
        let budget = Budget::new()?;
        let base = budget.charge(BASE)?;
        let conns = Arc::pin_init(new_mutex!(Table::new(limits::MAX_CONN_REQS), "srnic_conns"), ACCOUNTED)?;
        let events = Events::new(budget.clone())?;
        let mrs = MrTable::new(limits::MAX_MR, budget.clone())?;
        let objs = Arc::pin_init(
            new_mutex!(Objects {
                pds: Table::new(limits::MAX_PD),
                cqs: Table::new(limits::MAX_CQ),
                qps: Table::new(limits::MAX_QP),
                listeners: Table::new(limits::MAX_LISTENERS),
                eps: Table::new(limits::MAX_RMPP_ENDPOINTS),
                vmtps: Table::new(limits::MAX_VMTP_ENTITIES),
            }, "srnic_objects"),
            ACCOUNTED,
        )?;
        let owner = Owner::current();
        let reg = Registration::new(owner, objs.clone(), mrs.clone())?;
        Ok(try_pin_init!(Self {
            budget,
            events,
            mrs,
            conns,
            objs,
            owner,
            rx_mode,
            _reg: reg,
            _base: base,
            _live: Live::new(Object::Context),
        }))
    }
}

impl Context {
    /// Ends every object of the context (as dropping it does): for a kernel
    /// client that closes. The context stays usable, empty.
    pub(crate) fn close(&self) {
        let (qps, listeners, eps, vmtps, cqs, pds) = {
            let mut o = self.objs.lock();
            (o.qps.drain(), o.listeners.drain(), o.eps.drain(), o.vmtps.drain(), o.cqs.drain(), o.pds.drain())
        };
        for ep in eps.iter() {
            ep.close();
        }
        for e in vmtps.iter() {
            e.close();
        }
        for l in listeners.iter() {
            l.stop();
        }
        for qp in qps.iter() {
            qp.teardown();
        }
        // Refuse (reset) every request nobody accepted.
        drop(self.conns.lock().drain());
        self.mrs.clear();
        drop((qps, listeners, eps, vmtps, cqs, pds));
    }
}

#[pinned_drop]
impl PinnedDrop for Context {
    fn drop(self: Pin<&mut Self>) {
        self.close();
    }
}
