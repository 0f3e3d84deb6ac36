// SPDX-License-Identifier: GPL-2.0
//! The front door: the character device `/dev/srnic`.
//!
//! Each open file holds one verbs context ([`Context`]) and turns the file
//! operations into calls on it: `ioctl` creates, queries and destroys objects
//! ([`ioctl`]), `write` posts work requests ([`post`]), `read` and `poll` deliver
//! the context's events, `mmap` maps a CQ's ring. Nothing below this module
//! knows about files or user copies beyond the user-memory abstraction of
//! memory registration.

pub(crate) mod ioctl;
pub(crate) mod post;
pub(crate) mod vmtp;

use crate::{
    sys::{
        gfp::ACCOUNTED,
        miscdev::MiscFile,
        shared::Vma,
        waitqueue::{PollMask, PollTable},
    },
    verbs::{commands, context::Context, qp::RxMode},
};
use kernel::{
    prelude::*,
    uaccess::{UserSliceReader, UserSliceWriter},
};

/// One open file of `/dev/srnic`.
#[pin_data]
pub(crate) struct File {
    #[pin]
    ctx: Context,
}

impl MiscFile for File {
    fn open() -> Result<Pin<KBox<Self>>> {
        // A process polls or waits for its completions: no hop before them.
        let ctx = Context::new(RxMode::Callback)?;
        KBox::try_pin_init(try_pin_init!(Self { ctx <- ctx }), ACCOUNTED)
    }

    fn ioctl(&self, cmd: u32, arg: usize) -> Result<isize> {
        ioctl::dispatch(&self.ctx, cmd, arg)
    }

    fn read(&self, buf: &mut UserSliceWriter, nonblock: bool) -> Result<usize> {
        self.ctx.events.read(buf, nonblock)
    }

    fn write(&self, buf: &mut UserSliceReader, _nonblock: bool) -> Result<usize> {
        post::write(&self.ctx, buf)
    }

    fn poll(&self, table: &PollTable) -> PollMask {
        self.ctx.events.poll(table) | PollMask::OUT
    }

    fn mmap(&self, vma: &Vma<'_>) -> Result {
        commands::map_cq(&self.ctx, vma)
    }
}
