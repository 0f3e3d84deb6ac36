// SPDX-License-Identifier: GPL-2.0
//! A table a protocol engine indexes (`proto::rmpp`, `proto::vmtp`): a `KVec`
//! the engine sees as a slice, sized once at creation.

use crate::sys::gfp::ACCOUNTED;
use kernel::{alloc::KVec, prelude::*};

/// A table of `T`, sized at creation.
pub(crate) struct Slots<T>(KVec<T>);

impl<T: Clone> Slots<T> {
    /// `n` copies of `v`, charged to the caller's memory cgroup.
    pub(crate) fn filled(n: usize, v: T) -> Result<Self> {
        Ok(Self(KVec::from_elem(v, n, ACCOUNTED)?))
    }
}

impl<T> AsRef<[T]> for Slots<T> {
    fn as_ref(&self) -> &[T] {
        &self.0
    }
}

impl<T> AsMut<[T]> for Slots<T> {
    fn as_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

/// `n` empty entries, charged to the caller's memory cgroup.
pub(crate) fn none_vec<T>(n: usize) -> Result<KVec<Option<T>>> {
    let mut v = KVec::with_capacity(n, ACCOUNTED)?;
    for _ in 0..n {
        v.push(None, ACCOUNTED)?;
    }
    Ok(v)
}
