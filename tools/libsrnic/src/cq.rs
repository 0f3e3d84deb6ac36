// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Completion queues (ibverbs' `ibv_cq` with its completion channel).
//!
//! A CQ's ring is mapped into the process when the module offers it (see
//! `cq_ring.rs`): [`CompletionQueue::poll`] then reads shared memory and makes
//! no system call. Without it (an older module, or `SRNIC_CQ_NO_RING` set),
//! polling is `SRNIC_IOCTL_POLL_CQ`.
//!
//! The completion channel is the device fd itself: after [`CompletionQueue::req_notify`]
//! the module queues one `SRNIC_EVENT_CQ` record for the next matching completion,
//! and the device's event demultiplexer hands it to [`CompletionQueue::wait_event`]
//! of this CQ only.

use crate::context::{Context, ContextInner};
use crate::cq_ring::Ring;
use crate::error::{Error, Result};
use crate::event::{EventKind, ObjectKind};
use crate::wc::WorkCompletion;
use srnic_uapi as abi;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A completion queue. Cloning shares it; queue pairs using it hold it alive.
#[derive(Clone, Debug)]
pub struct CompletionQueue {
    pub(crate) inner: Arc<CqInner>,
}

#[derive(Debug)]
pub(crate) struct CqInner {
    pub(crate) ctx: Arc<ContextInner>,
    pub(crate) handle: u32,
    cqe: u32,
    /// The mapped ring, if any.
    ring: Option<Ring>,
}

impl CompletionQueue {
    /// Creates a CQ with room for at least `cqe` completions.
    pub fn new(ctx: &Context, cqe: u32) -> Result<Self> {
        let mut c = abi::SrnicCreateCq {
            size: std::mem::size_of::<abi::SrnicCreateCq>() as u32,
            cqe,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { ctx.inner.cmd(abi::SRNIC_IOCTL_CREATE_CQ, &mut c) }?;
        let ring = match Ring::map(ctx.inner.fd(), &c) {
            Ok(r) => r,
            Err(e) => {
                ctx.inner.destroy(abi::SRNIC_IOCTL_DESTROY_CQ, c.cq_handle);
                return Err(e);
            }
        };
        Ok(Self {
            inner: Arc::new(CqInner {
                ctx: ctx.inner.clone(),
                handle: c.cq_handle,
                cqe: c.cqe,
                ring,
            }),
        })
    }

    /// Whether polling reads a mapped ring (no system call) rather than
    /// using `SRNIC_IOCTL_POLL_CQ`.
    pub fn is_mapped(&self) -> bool {
        self.inner.ring.is_some()
    }

    /// The kernel handle.
    pub fn handle(&self) -> u32 {
        self.inner.handle
    }

    /// How many completions it holds (as the module rounded it).
    pub fn capacity(&self) -> u32 {
        self.inner.cqe
    }

    /// Whether anything besides this handle keeps the CQ alive (clones, QPs).
    pub fn in_use(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }

    /// Moves up to `wc.len()` completions into the front of `wc`; returns how many.
    pub fn poll(&self, wc: &mut [WorkCompletion]) -> Result<usize> {
        if wc.is_empty() {
            return Ok(0);
        }
        if let Some(ring) = &self.inner.ring {
            return ring.poll(wc);
        }
        let mut p = abi::SrnicPollCq {
            size: std::mem::size_of::<abi::SrnicPollCq>() as u32,
            cq_handle: self.inner.handle,
            num_entries: u32::try_from(wc.len()).unwrap_or(u32::MAX),
            wc_ptr: wc.as_mut_ptr() as u64,
            ..Default::default()
        };
        // SAFETY: wc_ptr points at num_entries writable srnic_wc records
        // (WorkCompletion is repr(transparent)), valid for the call.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_POLL_CQ, &mut p) }?;
        let n = p.num_entries as usize;
        if n > wc.len() {
            return Err(Error::Protocol(format!(
                "POLL_CQ returned {n} entries for {} slots",
                wc.len()
            )));
        }
        Ok(n)
    }

    /// Arms the CQ once: the next completion (or, with `solicited_only`, the next
    /// solicited or error completion) queues one event for [`Self::wait_event`].
    /// Returns `true` if the CQ already holds completions: poll it before sleeping.
    pub fn req_notify(&self, solicited_only: bool) -> Result<bool> {
        let mut r = abi::SrnicReqNotifyCq {
            size: std::mem::size_of::<abi::SrnicReqNotifyCq>() as u32,
            cq_handle: self.inner.handle,
            flags: if solicited_only {
                abi::SRNIC_CQ_SOLICITED
            } else {
                abi::SRNIC_CQ_NEXT_COMP
            },
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        let n = unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_REQ_NOTIFY_CQ, &mut r) }?;
        Ok(n > 0)
    }

    /// Waits up to `timeout` (`None`: forever) for this CQ's notification event
    /// (ibverbs' `ibv_get_cq_event`). `Ok(true)` when one arrived, `Ok(false)` on
    /// timeout, [`Error::CqOverflow`] if the CQ overflowed.
    pub fn wait_event(&self, timeout: Option<Duration>) -> Result<bool> {
        let h = self.inner.handle;
        let ev = self
            .inner
            .ctx
            .wait_event(|e| e.target() == (ObjectKind::Cq, h), timeout)?;
        match ev {
            None => Ok(false),
            Some(e) if e.kind == EventKind::CqError => Err(Error::CqOverflow { cq: h }),
            Some(_) => Ok(true),
        }
    }

    /// Polls into `wc`, sleeping on notifications until at least one completion
    /// arrives or `timeout` runs out (`Ok(0)`). Follows the race-free pattern:
    /// poll, arm, poll again if the module says completions are present, sleep.
    pub fn wait(&self, wc: &mut [WorkCompletion], timeout: Option<Duration>) -> Result<usize> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let n = self.poll(wc)?;
            if n > 0 || wc.is_empty() {
                return Ok(n);
            }
            if self.req_notify(false)? {
                continue;
            }
            let left = match deadline {
                None => None,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(0);
                    }
                    Some(left)
                }
            };
            // A stale event from an earlier arming only causes one more poll.
            self.wait_event(left)?;
        }
    }

    /// Waits like [`Self::wait`], but without a deadline for the whole wait:
    /// it gives up (`Ok(0)`) only once `stall` has passed with no completion
    /// and no change of `progress()`, a measure of the work moving (for a
    /// queue pair, [`crate::QueuePair::progress`]: the bytes it has sent and
    /// received). So a long transfer on a slow machine is waited for as long
    /// as it moves, and a stuck one fails after `stall`.
    ///
    /// `progress` is only called when nothing completed for
    /// [`PROGRESS_CHECK`]: a busy wait costs no extra system call.
    pub fn wait_progress(
        &self,
        wc: &mut [WorkCompletion],
        stall: Duration,
        mut progress: impl FnMut() -> Result<u64>,
    ) -> Result<usize> {
        let mut last: Option<u64> = None;
        let mut since = Instant::now();
        loop {
            let n = self.wait(wc, Some(PROGRESS_CHECK.min(stall)))?;
            if n > 0 || wc.is_empty() {
                return Ok(n);
            }
            let now = progress()?;
            if last != Some(now) {
                // The first look only sets the baseline: the time before it
                // counts as time without progress.
                if last.is_some() {
                    since = Instant::now();
                }
                last = Some(now);
            }
            if since.elapsed() >= stall {
                return Ok(0);
            }
        }
    }
}

/// How often [`CompletionQueue::wait_progress`] looks at its progress measure
/// while no completion arrives.
pub const PROGRESS_CHECK: Duration = Duration::from_secs(1);

impl Context {
    /// Creates a completion queue (same as [`CompletionQueue::new`]).
    pub fn create_cq(&self, cqe: u32) -> Result<CompletionQueue> {
        CompletionQueue::new(self, cqe)
    }
}

impl Drop for CqInner {
    fn drop(&mut self) {
        self.ctx.destroy(abi::SRNIC_IOCTL_DESTROY_CQ, self.handle);
        self.ctx.purge(ObjectKind::Cq, self.handle);
    }
}
