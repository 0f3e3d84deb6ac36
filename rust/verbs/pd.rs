// SPDX-License-Identifier: GPL-2.0
//! Protection domains.
//!
//! A PD groups the memory regions and queue pairs that may work together: a QP
//! reaches only memory regions of its own PD, locally and remotely. A PD cannot be
//! freed while a memory region or queue pair still uses it.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use crate::{
    sys::gfp::ACCOUNTED,
    verbs::budget::{self, Budget, Charge},
    verbs::stats::{Live, Object},
};
use kernel::{prelude::*, sync::Arc};

static NEXT_PD_ID: AtomicU64 = AtomicU64::new(1);

/// A protection domain.
pub(crate) struct Pd {
    /// Unique across the module's lifetime (handles are only unique per file).
    pub(crate) id: u64,
    /// Memory regions and queue pairs using this PD.
    users: AtomicU32,
    _charge: Charge,
    _live: Live,
}

impl Pd {
    /// A new protection domain, charged to `budget`.
    pub(crate) fn new(budget: &Arc<Budget>) -> Result<Arc<Self>> {
        let charge = budget.charge(budget::arc::<Self>())?;
        Arc::new(
            Self {
                id: NEXT_PD_ID.fetch_add(1, Ordering::Relaxed),
                users: AtomicU32::new(0),
                _charge: charge,
                _live: Live::new(Object::Pd),
            },
            ACCOUNTED,
        )
        .map_err(Into::into)
    }

    /// Whether a memory region or queue pair still uses this PD.
    pub(crate) fn in_use(&self) -> bool {
        self.users.load(Ordering::Acquire) != 0
    }
}

/// A use of a PD by a memory region or queue pair; released on drop.
pub(crate) struct PdUse(Arc<Pd>);

impl PdUse {
    /// Records a new user of `pd`.
    pub(crate) fn new(pd: &Arc<Pd>) -> Self {
        pd.users.fetch_add(1, Ordering::AcqRel);
        Self(pd.clone())
    }

    /// The PD's unique id.
    pub(crate) fn id(&self) -> u64 {
        self.0.id
    }

    /// The PD.
    pub(crate) fn pd(&self) -> &Arc<Pd> {
        &self.0
    }
}

impl Drop for PdUse {
    fn drop(&mut self) {
        self.0.users.fetch_sub(1, Ordering::AcqRel);
    }
}
