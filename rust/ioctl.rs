// SPDX-License-Identifier: GPL-2.0
//! ioctl dispatch for `/dev/srnic`.
//!
//! Every command is `_IOWR(SRNIC_IOCTL_MAGIC, nr, struct)`. The checks, in order:
//! a foreign magic or unknown number is `ENOTTY`; a known number with another
//! direction or size is `EINVAL`; an unreadable or unwritable argument is
//! `EFAULT`; a `size` field other than the structure's size, or a non-zero
//! reserved field, is `EINVAL`. Each command then has one small function.

use crate::{
    context::Context,
    limits,
    uapi::{SrnicQueryDevice, SRNIC_IOCTL_MAGIC, SRNIC_IOCTL_QUERY_DEVICE},
};
use kernel::{
    ioctl::{_IOC_NR, _IOC_TYPE},
    prelude::*,
    types::{AsBytes, FromBytes},
    uaccess::UserSlice,
};

// SAFETY: `SrnicQueryDevice` is `#[repr(C)]`, made only of integers, with no
// padding (asserted in `uapi/src/abi.rs`), so every bit pattern is valid.
unsafe impl FromBytes for SrnicQueryDevice {}
// SAFETY: as above: no padding, so every byte is initialised.
unsafe impl AsBytes for SrnicQueryDevice {}

/// An ioctl argument structure.
trait Arg: FromBytes + AsBytes {
    /// The full command number (`_IOWR` with this structure's size).
    const CMD: u32;
    /// The caller's `size` field.
    fn size(&self) -> u32;
    /// Whether every reserved field is zero.
    fn reserved_zero(&self) -> bool;
}

impl Arg for SrnicQueryDevice {
    const CMD: u32 = SRNIC_IOCTL_QUERY_DEVICE;
    fn size(&self) -> u32 {
        self.size
    }
    fn reserved_zero(&self) -> bool {
        self.reserved.iter().all(|&r| r == 0)
    }
}

/// Runs `f` on the validated argument of command `cmd` and copies it back.
fn with_arg<T: Arg>(
    cmd: u32,
    arg: usize,
    f: impl FnOnce(&mut T) -> Result<isize>,
) -> Result<isize> {
    if cmd != T::CMD {
        // Right number, wrong direction or size.
        return Err(EINVAL);
    }
    let len = core::mem::size_of::<T>();
    let (mut r, mut w) = UserSlice::new(arg, len).reader_writer();
    let mut val: T = r.read()?;
    if val.size() as usize != len || !val.reserved_zero() {
        return Err(EINVAL);
    }
    let ret = f(&mut val)?;
    w.write(&val)?;
    Ok(ret)
}

/// Dispatches one ioctl of `ctx`.
pub(crate) fn dispatch(_ctx: &Context, cmd: u32, arg: usize) -> Result<isize> {
    if _IOC_TYPE(cmd) != SRNIC_IOCTL_MAGIC {
        return Err(ENOTTY);
    }
    match _IOC_NR(cmd) {
        n if n == _IOC_NR(SRNIC_IOCTL_QUERY_DEVICE) => with_arg(cmd, arg, query_device),
        _ => Err(ENOTTY),
    }
}

/// `SRNIC_IOCTL_QUERY_DEVICE`.
fn query_device(q: &mut SrnicQueryDevice) -> Result<isize> {
    limits::fill(q);
    Ok(0)
}
