// SPDX-License-Identifier: GPL-2.0
//! Every live context, device-wide, for the resource views
//! (`SRNIC_IOCTL_QUERY_RES`, see `verbs/resources.rs`).
//!
//! A context registers when it is made and leaves when it is dropped (its
//! [`Registration`] is one of its fields). The registry holds what the views
//! read, shared with the context: its owner, its object tables and its memory
//! regions; never the context itself, whose one owner stays its file (or its
//! kernel client). Lock order: the registry's lock is a leaf: a view takes a
//! snapshot of the entries under it, then reads each entry's tables without it.

use crate::{
    sys::{
        global::{Global, Installed},
        task::Owner,
    },
    verbs::{mr::MrTable, objects::ObjectTable},
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    alloc::KVec,
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// What the views see of one context.
pub(crate) struct Entry {
    /// The context's id: unique while the module is loaded.
    pub(crate) id: u32,
    pub(crate) owner: Owner,
    pub(crate) objs: Arc<ObjectTable>,
    pub(crate) mrs: Arc<MrTable>,
}

/// The live contexts; a context's slot is emptied when it goes, and reused
/// (the vector never grows beyond the most contexts alive at once).
#[pin_data]
pub(crate) struct Registry {
    #[pin]
    entries: Mutex<KVec<Option<Arc<Entry>>>>,
    next_id: AtomicU32,
}

static REGISTRY: Global<Registry> = Global::new();

/// Owns the registry from module init to module exit.
pub(crate) struct Installation {
    _registry: Installed<Registry>,
}

impl Installation {
    /// Creates the (empty) registry.
    pub(crate) fn new() -> Result<Self> {
        let r = Arc::pin_init(
            pin_init!(Registry {
                entries <- new_mutex!(KVec::new(), "srnic_contexts"),
                next_id: AtomicU32::new(1),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self { _registry: REGISTRY.install(r) })
    }
}

/// A context's place in the registry, given up on drop.
pub(crate) struct Registration {
    id: u32,
}

impl Registration {
    /// Registers a context of `owner` with its tables (its id is new).
    pub(crate) fn new(owner: Owner, objs: Arc<ObjectTable>, mrs: Arc<MrTable>) -> Result<Self> {
        let r = REGISTRY.get().ok_or(ENODEV)?;
        let id = r.next_id.fetch_add(1, Ordering::Relaxed);
        let e = Arc::new(Entry { id, owner, objs, mrs }, GFP_KERNEL)?;
        let mut v = r.entries.lock();
        match v.iter_mut().find(|s| s.is_none()) {
            Some(slot) => *slot = Some(e),
            None => v.push(Some(e), GFP_KERNEL)?,
        }
        Ok(Self { id })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(r) = REGISTRY.get() else { return };
        let gone = {
            let mut v = r.entries.lock();
            v.iter_mut().find(|s| s.as_ref().is_some_and(|e| e.id == self.id)).and_then(Option::take)
        };
        // The entry's tables are freed here, outside the lock, unless a view
        // still reads them.
        drop(gone);
    }
}

/// The entries the caller may see (`all`: every one; otherwise those whose
/// owner's uid is `uid`), as they are now.
pub(crate) fn snapshot(all: bool, uid: u32) -> Result<KVec<Arc<Entry>>> {
    let r = REGISTRY.get().ok_or(ENODEV)?;
    let v = r.entries.lock();
    let mut out = KVec::with_capacity(v.len(), GFP_KERNEL)?;
    for e in v.iter().flatten().filter(|e| all || e.owner.uid == uid) {
        out.push(e.clone(), GFP_KERNEL)?;
    }
    Ok(out)
}
