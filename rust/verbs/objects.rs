// SPDX-License-Identifier: GPL-2.0
//! A context's objects by handle, behind one lock: owned by the context
//! (`verbs/context.rs`), read by the resource views through the registry
//! (`verbs/registry.rs`).

use crate::{
    iwarp::listener::Listener,
    rmpp::endpoint::Ep,
    vmtp::entity::Entity,
    verbs::{cq::Cq, pd::Pd, qp::Qp, table::Table},
};
use kernel::sync::{Arc, Mutex};

/// The objects of a context, by handle.
pub(crate) struct Objects {
    pub(crate) pds: Table<Arc<Pd>>,
    pub(crate) cqs: Table<Arc<Cq>>,
    pub(crate) qps: Table<Arc<Qp>>,
    pub(crate) listeners: Table<Arc<Listener>>,
    pub(crate) eps: Table<Arc<Ep>>,
    pub(crate) vmtps: Table<Arc<Entity>>,
}

/// A context's objects behind their lock, shared with the registry (the
/// resource views read them).
pub(crate) type ObjectTable = Mutex<Objects>;
