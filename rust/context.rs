// SPDX-License-Identifier: GPL-2.0
//! One open file of `/dev/srnic`: a verbs context.
//!
//! A context owns every object created through its file, in handle tables, and
//! frees them all when the file is released: queue pairs are disconnected,
//! listeners stop, pending connection requests are refused, and memory regions
//! are unpinned (at once, or when the last in-flight operation on them ends).

use crate::{
    cm::{ConnTable, Listener},
    cq::Cq,
    events::Events,
    ioctl, limits,
    mr::MrTable,
    pd::Pd,
    post, qp::Qp,
    rmpp_ep::Ep,
    stats::{Live, Object},
    sys::{
        miscdev::MiscFile,
        waitqueue::{PollMask, PollTable},
    },
    table::Table,
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    uaccess::{UserSliceReader, UserSliceWriter},
};

/// The objects of a context, by handle.
pub(crate) struct Objects {
    pub(crate) pds: Table<Arc<Pd>>,
    pub(crate) cqs: Table<Arc<Cq>>,
    pub(crate) qps: Table<Arc<Qp>>,
    pub(crate) listeners: Table<Arc<Listener>>,
    pub(crate) eps: Table<Arc<Ep>>,
}

/// The per-open state of `/dev/srnic`.
#[pin_data(PinnedDrop)]
pub(crate) struct Context {
    pub(crate) events: Arc<Events>,
    pub(crate) mrs: Arc<MrTable>,
    pub(crate) conns: Arc<ConnTable>,
    #[pin]
    pub(crate) objs: Mutex<Objects>,
    _live: Live,
}

impl MiscFile for Context {
    fn open() -> Result<Pin<KBox<Self>>> {
        let conns = Arc::pin_init(new_mutex!(Table::new(limits::MAX_CONN_REQS), "srnic_conns"), GFP_KERNEL)?;
        let ctx = KBox::try_pin_init(
            try_pin_init!(Self {
                events: Events::new()?,
                mrs: MrTable::new(limits::MAX_MR)?,
                conns,
                objs <- new_mutex!(Objects {
                    pds: Table::new(limits::MAX_PD),
                    cqs: Table::new(limits::MAX_CQ),
                    qps: Table::new(limits::MAX_QP),
                    listeners: Table::new(limits::MAX_LISTENERS),
                    eps: Table::new(limits::MAX_RMPP_ENDPOINTS),
                }, "srnic_objects"),
                _live: Live::new(Object::Context),
            }),
            GFP_KERNEL,
        )?;
        Ok(ctx)
    }

    fn ioctl(&self, cmd: u32, arg: usize) -> Result<isize> {
        ioctl::dispatch(self, cmd, arg)
    }

    fn read(&self, buf: &mut UserSliceWriter, nonblock: bool) -> Result<usize> {
        self.events.read(buf, nonblock)
    }

    fn write(&self, buf: &mut UserSliceReader, _nonblock: bool) -> Result<usize> {
        post::write(self, buf)
    }

    fn poll(&self, table: &PollTable) -> PollMask {
        self.events.poll(table) | PollMask::OUT
    }
}

#[pinned_drop]
impl PinnedDrop for Context {
    fn drop(self: Pin<&mut Self>) {
        let (qps, listeners, eps, cqs, pds) = {
            let mut o = self.objs.lock();
            (o.qps.drain(), o.listeners.drain(), o.eps.drain(), o.cqs.drain(), o.pds.drain())
        };
        for ep in eps.iter() {
            ep.close();
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
        drop((qps, listeners, eps, cqs, pds));
    }
}
